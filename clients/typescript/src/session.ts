// Session mode (`node dist/bot.js --session`): a persistent bot, e.g. a remote league entrant.
//
//   REFEREE_BOT_TOKEN=BOT_TOKEN node dist/bot.js --session --address HOST:PORT [--capacity N]
//       [--max-matches N] [--seed N] [--give-up-after S] [--fallback first_legal]
//       [--accept-challenges [--games G,G] [--max-challenges N]]
//
// The bot token comes from $REFEREE_BOT_TOKEN or --bot-token-file PATH ('-': standard input),
// never from the command line. The bot opens one Session stream (`authorization: Bearer <bot
// token>`), sends SessionHello{capacity} (with --accept-challenges also the lobby's
// accept_challenges, challenge_games and max_challenges: while the session is open the referee
// seats the bot in challenges naming it and in seeks that let bots join), and acknowledges every Assignment the referee pushes;
// each new one is played on an ordinary Play stream with the assignment's seat token, over the
// same connection, with bot.ts's `choose` and refusal rules. An assignment sent again
// (`resent`, after a reconnect or a referee restart) that is being played or is done is only
// acknowledged again: never two streams for one seat. A dropped session reconnects with
// backoff (giving up after --give-up-after seconds of failures); a refused bot token, or one
// replaced by registering the bot again (TOKEN_REPLACED), ends the bot with status 1 and a
// message saying so. SIGINT or SIGTERM stops it (status 0), as does --max-matches. Each
// match's result is logged ("game over": match, seat, rank, score).
import * as fs from 'fs';
import * as grpc from '@grpc/grpc-js';

import type { Assignment__Output as Assignment } from './generated/referee/v1/Assignment';
import type { RefereeClient } from './generated/referee/v1/Referee';
import type { SessionClientMessage } from './generated/referee/v1/SessionClientMessage';
import type {
  SessionServerMessage__Output as SessionServerMessage,
} from './generated/referee/v1/SessionServerMessage';

/** The gRPC codes worth reconnecting after (docs/bot/protocol.md, "Reconnecting"): UNAVAILABLE
 * (a referee restarting, NOT_OWNER, STORE_UNAVAILABLE) and what a stream cut by a dying referee
 * or proxy ends with (INTERNAL: nginx resets the stream, RST_STREAM code 2; UNKNOWN, CANCELLED,
 * ABORTED, DEADLINE_EXCEEDED), and RESOURCE_EXHAUSTED (the rate limit). */
export const RETRYABLE = new Set([grpc.status.UNAVAILABLE, grpc.status.CANCELLED,
  grpc.status.ABORTED, grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.DEADLINE_EXCEEDED,
  grpc.status.RESOURCE_EXHAUSTED]);

export type Outcome = { over: true }
  | { over: false; code: grpc.status; details: string; reason?: string };

/** One seat being played: where, with which token, and what happened so far. */
export interface SeatPlay {
  match: string;
  token: string;
  seat: number;
  session: boolean;          // log lines name the match and seat
  fallback: string;
  random: () => number;
  refused: number;           // moves of this bot the referee refused, over the whole match
  fallbacks: number;         // substitute moves played with --fallback first_legal
  cancel?: () => void;       // ends the Play stream in progress
}

export interface SessionArgs {
  address: string;
  botToken: string;
  capacity: number;
  maxMatches: number;        // 0: until stopped
  seed?: number;
  giveUpAfter: number;       // seconds; 0: never
  fallback: string;
  acceptChallenges: boolean; // the lobby: take challenges while the session is open
  challengeGames: string[];  // with acceptChallenges: the games accepted (empty: every game)
  maxChallenges: number;     // with acceptChallenges: lobby matches at once (0: capacity)
}

/** What the session needs from bot.ts. */
export interface Deps {
  playOnce(client: RefereeClient, p: SeatPlay, onJoined: () => void): Promise<Outcome>;
  refereeClient(address: string, options?: grpc.ChannelOptions): RefereeClient;
  makeRandom(seed?: number): () => number;
  log(level: string, event: string, fields?: Record<string, unknown>): void;
}

/** The token in `path` ('-': standard input), surrounding blanks removed. */
export function readTokenFile(path: string): string {
  const token = fs.readFileSync(path === '-' ? 0 : path, 'utf8').trim();
  if (!token) throw new Error(`${path}: no token in it`);
  return token;
}

// The seed of one assignment's generator: --seed mixed with its match and seat (FNV-1a), so a
// seeded session plays each match the same way whatever order they come in.
function matchSeed(seed: number | undefined, match: string, seat: number): number | undefined {
  if (seed === undefined || Number.isNaN(seed)) return undefined;
  let h = 0x811c9dc5;
  for (const ch of Buffer.from(`${match}:${seat}`)) h = Math.imul(h ^ ch, 0x01000193) >>> 0;
  return (seed ^ h) >>> 0;
}

// The retry loop's bookkeeping: a delay doubling from 100 ms to 2 s, giving up after
// `giveUpMs` of failures in a row (0: never).
class Retry {
  reached = false;  // the referee has answered at least once
  private delay = 100;
  private failingSince: number | null = null;
  constructor(private readonly giveUpMs: number) {}
  up(): void { this.reached = true; this.delay = 100; this.failingSince = null; }
  next(): number | null {
    this.failingSince ??= Date.now();
    if (this.giveUpMs && Date.now() - this.failingSince > this.giveUpMs) return null;
    const d = this.delay * (0.5 + Math.random() / 2);
    this.delay = Math.min(this.delay * 2, 2000);
    return d;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function runSession(args: SessionArgs, deps: Deps): Promise<number> {
  const { log } = deps;
  // one client (one connection) for the session and every match; short reconnection backoff
  const client = deps.refereeClient(args.address, {
    'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 2000 });
  const playing = new Map<string, SeatPlay>();
  const done = new Set<string>();
  let finished = 0;
  let failed = 0;
  let stopped = false;
  const retry = new Retry(args.giveUpAfter * 1000);

  return new Promise((resolveMain) => {
    let call: grpc.ClientDuplexStream<SessionClientMessage, SessionServerMessage> | null = null;
    const stop = (code: number) => {
      if (stopped) return;
      stopped = true;
      for (const p of playing.values()) p.cancel?.();
      call?.cancel();
      client.close();
      resolveMain(code);
    };
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.once(sig, () => {
        log('info', 'stopped', { why: sig, finished });
        stop(0);
      });
    }

    const play = async (a: Assignment, key: string) => {
      const seat = a.seat ?? 0;
      const p: SeatPlay = { match: a.match_id ?? '', token: a.seat_token ?? '', seat,
                            session: true, fallback: args.fallback, refused: 0, fallbacks: 0,
                            random: deps.makeRandom(matchSeed(args.seed, a.match_id ?? '', seat)) };
      playing.set(key, p);
      const seatRetry = new Retry(args.giveUpAfter * 1000);
      let ok = false;
      while (!stopped) {
        const outcome = await deps.playOnce(client, p, () => seatRetry.up());
        if (outcome.over) { ok = true; break; }
        if (stopped) break;
        const delay = RETRYABLE.has(outcome.code) ? seatRetry.next() : null;
        if (delay === null) {
          log('error', 'match failed', { match: p.match, seat, code: grpc.status[outcome.code],
                                         details: outcome.details });
          break;
        }
        await sleep(delay);
      }
      playing.delete(key);
      if (stopped) return;
      if (ok) { done.add(key); finished += 1; } else failed += 1;  // a failed one is retried if sent again
      if (args.maxMatches && finished + failed >= args.maxMatches) stop(0);
    };

    const open = () => {
      if (stopped) return;
      const md = new grpc.Metadata();
      md.add('authorization', `Bearer ${args.botToken}`);
      const session = client.Session(md);
      call = session;
      let ended = false;
      const lost = (code: grpc.status, details: string, reason: string) => {
        if (ended || stopped) return;
        ended = true;
        if (reason === 'TOKEN_REPLACED') {
          log('error', 'session ended: this bot token was replaced (the bot was registered '
            + 'again; only the new token opens a session) [TOKEN_REPLACED]');
          stop(1);
          return;
        }
        if (!RETRYABLE.has(code)) {
          log('error', `session refused: ${details} [${reason || grpc.status[code]}]`);
          stop(1);
          return;
        }
        const delay = retry.next();
        // until the referee has answered once, a failure is a wrong address or nothing
        // listening there yet, not a lost session
        const unreachable = `cannot reach the referee at ${args.address}: ${
          details.replace(/^No connection established\. Last error: (?:Error: )?|\.? Resolution note: $/g, '')}`;
        if (delay === null) {
          if (retry.reached) {
            log('error', `gave up after ${args.giveUpAfter}s reaching the referee`, { details });
          } else log('error', `${unreachable} (gave up after ${args.giveUpAfter}s)`);
          stop(1);
          return;
        }
        if (retry.reached) {
          log('warning', 'session lost; reconnecting', { details, retry_in_ms: Math.round(delay) });
        } else log('warning', `${unreachable}; retrying`, { retry_in_ms: Math.round(delay) });
        setTimeout(open, delay);
      };
      session.on('data', (msg: SessionServerMessage) => {
        if (msg.welcome) {
          retry.up();
          log('info', 'session open', { name: msg.welcome.bot_name, capacity: msg.welcome.capacity,
                                        pending: msg.welcome.pending });
        } else if (msg.assignment) {
          const a = msg.assignment;
          const seat = a.seat ?? 0;
          const key = `${a.match_id}:${seat}`;
          session.write({ ack: { match_id: a.match_id, seat, accept: true } });
          if (playing.has(key) || done.has(key)) {
            log('info', `assignment resent; already ${done.has(key) ? 'played' : 'playing'} it`,
              { match: a.match_id, seat });
            return;
          }
          log('info', 'assignment', { match: a.match_id, seat, game: a.game, resent: !!a.resent });
          void play(a, key);
        } else if (msg.notice) {
          const n = msg.notice;
          log('warning', 'session notice', { reason: n.reason, message: n.message,
                                             match: n.match_id, seat: n.seat ?? 0 });
        }
      });
      session.on('error', (err: grpc.ServiceError) => {
        lost(err.code, err.details, String(err.metadata?.get('referee-reason')?.[0] ?? ''));
      });
      session.on('end', () => lost(grpc.status.UNAVAILABLE, 'the referee closed the session', ''));
      session.write({ hello: {
        capacity: args.capacity, agent: 'typescript-starter --session',
        accept_challenges: args.acceptChallenges, challenge_games: args.challengeGames,
        max_challenges: args.maxChallenges,
      } });
    };
    open();
  });
}
