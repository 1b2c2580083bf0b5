// Starter bot in TypeScript for the board-game referee.
//
//   npm ci                      (installs, generates types from ../../proto, compiles to dist/)
//   node dist/bot.js --address 127.0.0.1:50051 --match MATCH_ID --token=SEAT_TOKEN [--seed N]
//                    [--fallback first_legal]
//   node dist/bot.js --session [--bot-token-file PATH] [--capacity N] [--max-matches N]
//                    [--seed N] [--give-up-after S] [--fallback first_legal]   (src/session.ts)
//                    [--accept-challenges [--games G,G] [--max-challenges N]]
//
// The token may also come from $REFEREE_TOKEN (and the address from $REFEREE_ADDRESS, the match
// from $REFEREE_MATCH). The bot opens the Play stream with `authorization: Bearer <token>`,
// sends Join, and answers every Decision with the move `choose` returns, echoing the decision's
// state_version. After a broken stream (referee restart, network drop) it joins again with
// backoff; the referee then pushes the pending decision again. It exits 0 on GameOver, 1 on
// failure, 2 on bad usage. Logs are JSON lines on stderr.
//
// The move `choose` returns is sent as it is. If the referee refuses it (its reason and the
// rule's message come back), the bot logs "move rejected", counts it, calls `onRefused` and
// asks `choose` again for the same decision, at most REASKS times; then it stops answering that
// decision and the referee's time policy plays it (with --fallback first_legal it plays the first
// legal move instead, and for an answer not among legal_moves too, each use logged as an
// incident). `choose` may also give a note (plain text,
// recorded with the move, never shown to the other seats during the match): cleanNote drops
// control characters but newline and tab and cuts it to NOTE_LIMIT bytes of UTF-8.
import * as path from 'path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

import type { ProtoGrpcType } from './generated/referee';
import type { ClientMessage } from './generated/referee/v1/ClientMessage';
import type { Decision__Output as Decision } from './generated/referee/v1/Decision';
import type { Move__Output as Move } from './generated/referee/v1/Move';
import type { RefereeClient } from './generated/referee/v1/Referee';
import type { ServerMessage__Output as ServerMessage } from './generated/referee/v1/ServerMessage';
import { Outcome, RETRYABLE, SeatPlay, SessionArgs, readTokenFile, runSession } from './session';

/** What `choose` answers: a move, and an optional note about it. */
export interface Answer { move: Move; note?: string }

/** A move of yours the referee refused, given to `onRefused`. */
export interface Refusal {
  stateVersion: string;
  kind: string;
  move: Move;
  reason: string;    // the referee's reason: ILLEGAL_MOVE, MALFORMED, ...
  message: string;   // the rule
  attempt: number;   // 1 for the first answer to the decision
  final: boolean;    // no more asks: the time policy plays the decision
}

// ============================================================================================
// YOUR STRATEGY GOES HERE.
// `decision.legal_moves` lists every legal move; return one of them unchanged.
// `decision.view` is everything your seat may see (its fields are in proto/referee/v1/<game>.proto),
// `decision.kind` names the choice (e.g. "batavia.auction"). This starter picks at random,
// which is legal in every game, and says so in the move's note.
export function choose(decision: Decision, random: () => number): Answer {
  const moves = decision.legal_moves ?? [];
  const pick = Math.floor(random() * moves.length);
  return { move: moves[pick], note: `${decision.kind}: move ${pick + 1} of ${moves.length}, at random` };
}

// Called when the referee refused a move of yours (`refusal.reason`, `refusal.message`).
// Unless `refusal.final`, `choose` is then asked again for the same decision.
export function onRefused(refusal: Refusal): void {
  void refusal;
}
// ============================================================================================

/** After a refused move, `choose` is asked again at most this many times per decision. */
export const REASKS = 2;
/** The most bytes of UTF-8 the referee takes in a note. */
export const NOTE_LIMIT = 512;
const NOTE_DROPS = /[\p{Cc}\p{Cs}]/u;
// The refusals of the bot's own move (not a late or out-of-turn one, which needs nothing).
const OWN_REFUSALS = new Set(['ILLEGAL_MOVE', 'MALFORMED', 'WRONG_GAME', 'REASON_UNSPECIFIED',
  'INTERNAL']);
// A move refused with STORE_UNAVAILABLE (the referee's database is away; nothing was played) is
// sent again unchanged after a delay doubling from 100 ms to 2 s (jittered), while the
// decision's deadline allows (60 s without one); then the time policy plays it. Safe: the move
// carries the decision's state_version, so it is played at most once.
const STORE_RESEND_MS = [100, 2000];
const STORE_RESEND_LIMIT_MS = 60_000;

/** A note as the referee takes it: control characters other than newline and tab dropped
 * (and lone surrogates), cut to NOTE_LIMIT bytes of UTF-8 at a character boundary. */
export function cleanNote(note: string | undefined): string {
  let out = '';
  let bytes = 0;
  for (const ch of note ?? '') {
    if (ch !== '\n' && ch !== '\t' && NOTE_DROPS.test(ch)) continue;
    const size = Buffer.byteLength(ch, 'utf8');
    if (bytes + size > NOTE_LIMIT) break;
    out += ch;
    bytes += size;
  }
  return out;
}

function isLegal(move: Move, decision: Decision): boolean {
  return (decision.legal_moves ?? []).some(
    (m) => m === move || JSON.stringify(m) === JSON.stringify(move));
}

// The --fallback move for `decision` (its first legal move), logged as an incident.
function substitute(p: SeatPlay, decision: Decision, why: string): Move {
  p.fallbacks += 1;
  log('error', `${why}; playing the first legal move instead (--fallback first_legal)`,
      fields(p, { incident: 'fallback', state_version: decision.state_version, kind: decision.kind }));
  return (decision.legal_moves ?? [])[0];
}

// A log line's fields, with the match and seat in session mode (several matches at once).
function fields(p: SeatPlay, more: Record<string, unknown>): Record<string, unknown> {
  return p.session ? { match: p.match, seat: p.seat, ...more } : more;
}

interface Args { address: string; match: string; token: string; seed?: number; fallback: string }

const USAGE = 'usage: node dist/bot.js --address HOST:PORT --match ID [--token=TOKEN] [--seed N] '
  + '[--fallback first_legal]\n'
  + '       node dist/bot.js --session [--address HOST:PORT] [--bot-token-file PATH] [--capacity N]\n'
  + '                        [--max-matches N] [--seed N] [--give-up-after S] [--fallback first_legal]\n'
  + '                        [--accept-challenges [--games G,G] [--max-challenges N]]\n'
  + 'The seat token comes from $REFEREE_TOKEN, the bot token of --session from $REFEREE_BOT_TOKEN.';

function usageError(why: string): never {
  console.error(`${why}\n${USAGE}`);
  process.exit(2);
}

function parseArgs(argv: string[]): { single?: Args; session?: SessionArgs } {
  const env = process.env;
  let address = env.REFEREE_ADDRESS || '127.0.0.1:50051';
  let match = env.REFEREE_MATCH || '';
  let token = env.REFEREE_TOKEN || '';
  let seed: number | undefined;
  let fallback = '';  // 'first_legal': play a substitute for an answer that is not legal
  const session = argv.includes('--session');
  let botTokenFile = '';
  let capacity = 1;
  let maxMatches = 0;
  let giveUpAfter = 120;
  // the lobby (issue 33): take challenges, the games accepted ('': every game), the lobby
  // matches played at once (0: the capacity)
  let acceptChallenges = false;
  let games: string | undefined;
  let maxChallenges: number | undefined;
  const SESSION_ONLY = ['--bot-token-file', '--capacity', '--max-matches', '--give-up-after',
                        '--accept-challenges', '--games', '--max-challenges'];
  const MATCH_ONLY = ['--match', '--token'];
  for (let i = 0; i < argv.length; i++) {
    let flag = argv[i];
    let value: string | undefined;
    const eq = flag.indexOf('=');
    if (flag.startsWith('--') && eq > 0) { value = flag.slice(eq + 1); flag = flag.slice(0, eq); }
    if ((SESSION_ONLY.includes(flag) && !session) || (MATCH_ONLY.includes(flag) && session)) {
      usageError(`${flag} does not go with${session ? '' : 'out'} --session`);
    }
    const take = () => (value !== undefined ? value : argv[++i] ?? '');
    switch (flag) {
      case '--session': break;
      case '--address': address = take(); break;
      case '--match': match = take(); break;
      case '--token': token = take(); break;  // use --token=VALUE: a token may begin with '-'
      case '--seed': seed = Number(take()); break;
      case '--fallback': fallback = take(); break;
      case '--bot-token-file': botTokenFile = take(); break;
      case '--capacity': capacity = Number(take()); break;
      case '--max-matches': maxMatches = Number(take()); break;
      case '--give-up-after': giveUpAfter = Number(take()); break;
      case '--accept-challenges':
        if (value !== undefined) usageError('--accept-challenges takes no value');
        acceptChallenges = true;
        break;
      case '--games': games = take(); break;
      case '--max-challenges': maxChallenges = Number(take()); break;
      case '-h': case '--help': console.log(USAGE); process.exit(0);
      default: usageError(`unknown argument ${flag}`);
    }
  }
  if (!['', 'first_legal'].includes(fallback)) usageError('--fallback takes first_legal');
  if (session) {
    let botToken = env.REFEREE_BOT_TOKEN || '';
    if (botTokenFile) {
      try {
        botToken = readTokenFile(botTokenFile);
      } catch (err) {
        usageError(`--bot-token-file: ${(err as Error).message}`);
      }
    }
    if (!botToken) usageError('no bot token: set $REFEREE_BOT_TOKEN or pass --bot-token-file');
    if (!(Number.isInteger(capacity) && capacity >= 1 && capacity <= 256)
        || !(Number.isInteger(maxMatches) && maxMatches >= 0) || !(giveUpAfter >= 0)) {
      usageError('--capacity is 1 to 256, --max-matches and --give-up-after at least 0');
    }
    if (!acceptChallenges && (games !== undefined || maxChallenges !== undefined)) {
      usageError('--games and --max-challenges go with --accept-challenges');
    }
    if (maxChallenges !== undefined
        && !(Number.isInteger(maxChallenges) && maxChallenges >= 0 && maxChallenges <= 256)) {
      usageError('--max-challenges is 0 to 256');
    }
    const challengeGames = (games ?? '').split(',').map((g) => g.trim()).filter(Boolean);
    return { session: { address, botToken, capacity, maxMatches, seed, giveUpAfter, fallback,
                        acceptChallenges, challengeGames, maxChallenges: maxChallenges ?? 0 } };
  }
  if (!match || !token) usageError('no match or no seat token');
  return { single: { address, match, token, seed, fallback } };
}

// mulberry32: a small seeded PRNG, so a seeded bot replays the same game.
export function makeRandom(seed?: number): () => number {
  let a = seed === undefined || Number.isNaN(seed) ? (Math.random() * 2 ** 32) >>> 0 : seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function log(level: string, event: string, fields: Record<string, unknown> = {}): void {
  process.stderr.write(JSON.stringify({ level, event, bot: 'typescript-starter', ...fields }) + '\n');
}

export function refereeClient(address: string, options: grpc.ChannelOptions = {}): RefereeClient {
  const protoDir = process.env.REFEREE_PROTO_DIR || path.resolve(__dirname, '..', '..', '..', 'proto');
  const def = protoLoader.loadSync('referee/v1/referee.proto', {
    includeDirs: [protoDir], keepCase: true, longs: String, enums: String, oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as ProtoGrpcType;
  return new pkg.referee.v1.Referee(address, grpc.credentials.createInsecure(),
    { 'grpc.max_receive_message_length': 64 * 1024 * 1024, ...options });
}

// One Play stream, from Join to GameOver or to the stream breaking.
export function playOnce(client: RefereeClient, p: SeatPlay,
                         onJoined: () => void): Promise<Outcome> {
  return new Promise((resolve) => {
    const md = new grpc.Metadata();
    md.add('authorization', `Bearer ${p.token}`);
    const call = client.Play(md);
    let done = false;
    const finish = (o: Outcome) => {
      if (!done) { done = true; p.cancel = undefined; resolve(o); }
    };
    p.cancel = () => call.cancel();
    const answered = new Set<string>();  // versions answered on this stream
    let pending: Decision | undefined;   // the decision we are answering
    let sent: Move | undefined;          // the last answer to it (undefined once refused)
    let attempts = 0;                    // answers sent to `pending`
    let sentNote: string | undefined;    // the note sent with `sent`
    let storeDelay = STORE_RESEND_MS[0]; // STORE_UNAVAILABLE resends of `sent`: next delay,
    let storeSince: number | null = null; // since when
    let resends = 0;
    const write = (d: Decision, move: Move, note?: string) => {
      const msg: ClientMessage = { submit: {
        state_version: d.state_version, move, note: cleanNote(note),
        request_id: `ts${d.state_version}-${attempts}-${resends}` } };
      call.write(msg);
    };
    const send = (d: Decision, move: Move, note?: string) => {
      sent = move;
      sentNote = note;
      attempts += 1;
      storeDelay = STORE_RESEND_MS[0];
      storeSince = null;
      write(d, move, note);
    };
    // STORE_UNAVAILABLE: the same move again after a short delay, bounded by the move clock
    const resend = (d: Decision, move: Move, message: string) => {
      const now = Date.now();
      storeSince ??= now;
      const delay = Math.round(storeDelay / 2 + (Math.random() * storeDelay) / 2);
      storeDelay = Math.min(storeDelay * 2, STORE_RESEND_MS[1]);
      const deadline = Number(d.deadline_unix_ms ?? 0);
      const late = deadline ? now + delay >= deadline
        : now + delay - storeSince > STORE_RESEND_LIMIT_MS;
      if (late) {
        log('error', "the referee's store stayed unavailable until the move clock ran out; its "
          + 'time policy plays this decision', fields(p, { incident: 'store_unavailable',
            state_version: d.state_version, message }));
        sent = undefined;
        return;
      }
      log('warning', "the referee's store is unavailable; sending the move again",
          fields(p, { state_version: d.state_version, retry_in_ms: delay }));
      const note = sentNote;
      setTimeout(() => {
        if (done || pending !== d || sent !== move) return;  // ended, or a newer decision
        resends += 1;
        write(d, move, note);
      }, delay);
    };
    const submit = (d: Decision) => {
      const { move, note } = choose(d, p.random);
      send(d, p.fallback && !isLegal(move, d)
        ? substitute(p, d, 'choose returned a move that is not among legal_moves') : move, note);
    };
    const take = (d: Decision) => {  // a Decision, or one inside a MoveResult
      const version = String(d.state_version ?? '0');
      if (answered.has(version) || !(d.legal_moves ?? []).length) return;
      answered.add(version);
      pending = d;
      attempts = 0;
      submit(d);
    };
    call.on('data', (msg: ServerMessage) => {
      if (msg.welcome) {
        onJoined();
        log('info', 'joined', { match: p.match, seat: msg.welcome.seat ?? 0, game: msg.welcome.game });
      } else if (msg.decision) {
        take(msg.decision);
      } else if (msg.move_result?.accepted) {
        if (msg.move_result.next) take(msg.move_result.next);  // this seat acts again
      } else if (msg.move_result) {
        const r = msg.move_result;
        const reason = String(r.reason ?? 'REASON_UNSPECIFIED');
        if (reason === 'STORE_UNAVAILABLE' && pending && sent !== undefined
            && String(r.state_version ?? '0') === String(pending.state_version ?? '0')) {
          resend(pending, sent, r.message ?? '');
          return;
        }
        // A refused move leaves the decision pending (it is not pushed again). A late or
        // out-of-turn answer (STALE_STATE, NOT_YOUR_TURN) needs nothing: a newer decision comes.
        if (!OWN_REFUSALS.has(reason) || !pending || sent === undefined
            || String(r.state_version ?? '0') !== String(pending.state_version ?? '0')) {
          log('warning', 'move not accepted', fields(p, { reason, message: r.message }));
          return;
        }
        p.refused += 1;
        const refusal: Refusal = {
          stateVersion: String(pending.state_version ?? '0'), kind: pending.kind ?? '', move: sent,
          reason, message: r.message ?? '', attempt: attempts, final: attempts > REASKS,
        };
        sent = undefined;
        log('error', 'move rejected', fields(p, {
          incident: 'refused', reason, message: refusal.message, kind: refusal.kind,
          state_version: refusal.stateVersion, attempt: attempts }));
        onRefused(refusal);
        if (refusal.final && p.fallback && attempts === REASKS + 1) {  // once: then it is final
          send(pending, substitute(p, pending, 'the referee refused every answer'));
          return;
        }
        if (refusal.final) {
          log('error', "stopped answering after refused moves; the referee's time policy plays "
            + 'this decision', fields(p, { incident: 'gave_up', state_version: refusal.stateVersion }));
          return;
        }
        submit(pending);
      } else if (msg.game_over) {
        const over = msg.game_over;
        const mine = (over.seats ?? []).find((s) => (s.seat ?? 0) === p.seat);
        log('info', 'game over', fields(p, {
          winners: over.winners, summary: over.summary, refused: p.refused, fallbacks: p.fallbacks,
          ...(p.session && mine ? { rank: mine.rank ?? 0, score: Number(mine.score ?? 0) } : {}) }));
        finish({ over: true });
        call.cancel();
      }
    });
    call.on('error', (err: grpc.ServiceError) => {
      const reason = String(err.metadata?.get('referee-reason')?.[0] ?? '');
      if (err.code === grpc.status.FAILED_PRECONDITION && reason === 'MATCH_OVER') {
        finish({ over: true });  // the match ended while we were away
      }
      finish({ over: false, code: err.code, details: err.details, reason });
    });
    call.on('end', () => finish({ over: false, code: grpc.status.UNAVAILABLE, details: 'stream closed' }));
    // combine_decision: when this seat acts again right after its own move, its next Decision
    // comes inside that move's MoveResult (`next`) instead of a message of its own
    call.write({ join: { match_id: p.match, combine_decision: true } });
  });
}

async function main(): Promise<number> {
  const parsed = parseArgs(process.argv.slice(2));
  if (parsed.session) {
    return runSession(parsed.session, { playOnce, refereeClient, makeRandom, log });
  }
  const args = parsed.single as Args;
  const p: SeatPlay = { match: args.match, token: args.token, seat: 0, session: false,
                        fallback: args.fallback, random: makeRandom(args.seed), refused: 0,
                        fallbacks: 0 };
  let delay = 100;
  let failingSince: number | null = null;
  for (;;) {
    const client = refereeClient(args.address);
    const outcome = await playOnce(client, p, () => { failingSince = null; delay = 100; });
    client.close();
    if (outcome.over) return 0;
    if (!RETRYABLE.has(outcome.code)) {
      log('error', 'failed', { code: grpc.status[outcome.code], details: outcome.details });
      return 1;
    }
    failingSince ??= Date.now();
    if (Date.now() - failingSince > 60_000) {
      log('error', 'gave up reaching the referee', { details: outcome.details });
      return 1;
    }
    log('warning', 'connection lost; reconnecting', { details: outcome.details, retry_in_ms: delay });
    await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random() / 2)));
    delay = Math.min(delay * 2, 2000);
  }
}

main().then((code) => process.exit(code), (err) => {
  log('error', 'crashed', { error: String((err && err.stack) || err) });
  process.exit(1);
});
