// Starter bot in TypeScript for the board-game referee.
//
//   npm ci                      (installs, generates types from ../../proto, compiles to dist/)
//   node dist/bot.js --address 127.0.0.1:50051 --match MATCH_ID --token=SEAT_TOKEN [--seed N]
//
// The token may also come from $REFEREE_TOKEN (and the address from $REFEREE_ADDRESS, the match
// from $REFEREE_MATCH). The bot opens the Play stream with `authorization: Bearer <token>`,
// sends Join, and answers every Decision with the move `choose` returns, echoing the decision's
// state_version. After a broken stream (referee restart, network drop) it joins again with
// backoff; the referee then pushes the pending decision again. It exits 0 on GameOver, 1 on
// failure, 2 on bad usage. Logs are JSON lines on stderr.
import * as path from 'path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

import type { ProtoGrpcType } from './generated/referee';
import type { ClientMessage } from './generated/referee/v1/ClientMessage';
import type { Decision__Output as Decision } from './generated/referee/v1/Decision';
import type { Move__Output as Move } from './generated/referee/v1/Move';
import type { RefereeClient } from './generated/referee/v1/Referee';
import type { ServerMessage__Output as ServerMessage } from './generated/referee/v1/ServerMessage';

// ============================================================================================
// YOUR STRATEGY GOES HERE.
// `decision.legal_moves` lists every legal move; return one of them unchanged.
// `decision.view` is everything your seat may see (its fields are in proto/referee/v1/<game>.proto),
// `decision.kind` names the choice (e.g. "batavia.auction"). This starter picks at random,
// which is legal in every game.
export function choose(decision: Decision, random: () => number): Move {
  const moves = decision.legal_moves ?? [];
  return moves[Math.floor(random() * moves.length)];
}
// ============================================================================================

interface Args { address: string; match: string; token: string; seed?: number }

const USAGE = 'usage: node dist/bot.js --address HOST:PORT --match ID --token=TOKEN [--seed N]';

function parseArgs(argv: string[]): Args {
  const env = process.env;
  let address = env.REFEREE_ADDRESS || '127.0.0.1:50051';
  let match = env.REFEREE_MATCH || '';
  let token = env.REFEREE_TOKEN || '';
  let seed: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    let flag = argv[i];
    let value: string | undefined;
    const eq = flag.indexOf('=');
    if (flag.startsWith('--') && eq > 0) { value = flag.slice(eq + 1); flag = flag.slice(0, eq); }
    const take = () => (value !== undefined ? value : argv[++i] ?? '');
    switch (flag) {
      case '--address': address = take(); break;
      case '--match': match = take(); break;
      case '--token': token = take(); break;  // use --token=VALUE: a token may begin with '-'
      case '--seed': seed = Number(take()); break;
      case '-h': case '--help': console.log(USAGE); process.exit(0);
      default: console.error(`unknown argument ${flag}\n${USAGE}`); process.exit(2);
    }
  }
  if (!match || !token) { console.error(USAGE); process.exit(2); }
  return { address, match, token, seed };
}

// mulberry32: a small seeded PRNG, so a seeded bot replays the same game.
function makeRandom(seed?: number): () => number {
  let a = seed === undefined || Number.isNaN(seed) ? (Math.random() * 2 ** 32) >>> 0 : seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function log(level: string, event: string, fields: Record<string, unknown> = {}): void {
  process.stderr.write(JSON.stringify({ level, event, bot: 'typescript-starter', ...fields }) + '\n');
}

function refereeClient(address: string): RefereeClient {
  const protoDir = process.env.REFEREE_PROTO_DIR || path.resolve(__dirname, '..', '..', '..', 'proto');
  const def = protoLoader.loadSync('referee/v1/referee.proto', {
    includeDirs: [protoDir], keepCase: true, longs: String, enums: String, oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as ProtoGrpcType;
  return new pkg.referee.v1.Referee(address, grpc.credentials.createInsecure(),
    { 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
}

type Outcome = { over: true } | { over: false; code: grpc.status; details: string };

// One Play stream, from Join to GameOver or to the stream breaking.
function playOnce(client: RefereeClient, args: Args, random: () => number,
                  onJoined: () => void): Promise<Outcome> {
  return new Promise((resolve) => {
    const md = new grpc.Metadata();
    md.add('authorization', `Bearer ${args.token}`);
    const call = client.Play(md);
    let done = false;
    const finish = (o: Outcome) => { if (!done) { done = true; resolve(o); } };
    const answered = new Set<string>();  // versions answered on this stream
    let pending: Decision | undefined;   // the decision we are answering
    let retries = 0;                     // re-answers of `pending` after rejections
    const submit = (d: Decision) => {
      const move = choose(d, random);
      const msg: ClientMessage = { submit: { state_version: d.state_version, move,
                                             request_id: `ts${d.state_version}-${retries}` } };
      call.write(msg);
    };
    call.on('data', (msg: ServerMessage) => {
      if (msg.welcome) {
        onJoined();
        log('info', 'joined', { match: args.match, seat: msg.welcome.seat ?? 0, game: msg.welcome.game });
      } else if (msg.decision) {
        const d = msg.decision;
        const version = String(d.state_version ?? '0');
        if (answered.has(version) || !(d.legal_moves ?? []).length) return;
        answered.add(version);
        pending = d;
        retries = 0;
        submit(d);
      } else if (msg.move_result && !msg.move_result.accepted) {
        const r = msg.move_result;
        log('warning', 'move rejected', { reason: r.reason, message: r.message });
        // The decision is still ours if the referee is at its version: answer it again.
        if (pending && String(r.state_version ?? '0') === String(pending.state_version ?? '0')
            && retries < 3) {
          retries += 1;
          submit(pending);
        }
      } else if (msg.game_over) {
        log('info', 'game over', { winners: msg.game_over.winners, summary: msg.game_over.summary });
        finish({ over: true });
        call.cancel();
      }
    });
    call.on('error', (err: grpc.ServiceError) => {
      const reason = err.metadata?.get('referee-reason')?.[0];
      if (err.code === grpc.status.FAILED_PRECONDITION && String(reason) === 'MATCH_OVER') {
        finish({ over: true });  // the match ended while we were away
      }
      finish({ over: false, code: err.code, details: err.details });
    });
    call.on('end', () => finish({ over: false, code: grpc.status.UNAVAILABLE, details: 'stream closed' }));
    call.write({ join: { match_id: args.match } });
  });
}

const RETRYABLE = new Set([grpc.status.UNAVAILABLE, grpc.status.CANCELLED, grpc.status.ABORTED,
  grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.DEADLINE_EXCEEDED,
  grpc.status.RESOURCE_EXHAUSTED]);

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const random = makeRandom(args.seed);
  let delay = 100;
  let failingSince: number | null = null;
  for (;;) {
    const client = refereeClient(args.address);
    const outcome = await playOnce(client, args, random, () => { failingSince = null; delay = 100; });
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
