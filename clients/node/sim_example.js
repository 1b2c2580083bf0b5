#!/usr/bin/env node
// Search from Node.js with the referee's own rules: a flat Monte-Carlo choice over the Simulator
// service (proto/referee/v1/sim.proto, started with `referee sim serve --port 50052`).
//
//   node sim_example.js --address 127.0.0.1:50052 [--game batavia] [--seats 3] [--seed N]
//                       [--rollouts K]
//
// It creates a game state (New), lists the legal moves of its first decision (LegalMoves), and
// values each move by K random rollouts of a copy (Clone, Apply, Rollout with a seed, Release):
// the mean rank of the seat to act, lower is better. It plays the best move, rolls the game out
// to its end and prints one JSON line: the move values, the move chosen and the final result.
// A bot does the same from its Decision with FromViews (the game's sampler) instead of New.
// Exit status: 0 done, 1 a call failed (its status and the referee's reason are printed), 2 bad
// usage.
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { parseArgs, rng } = require('./common');

const PROTO_ROOT = process.env.REFEREE_PROTO_DIR || path.resolve(__dirname, '..', '..', 'proto');
const USAGE = 'usage: node sim_example.js --address HOST:PORT [--game NAME] [--seats N] '
  + '[--seed N] [--rollouts K]';

function loadSimulator() {
  const def = protoLoader.loadSync('referee/v1/sim.proto', {
    includeDirs: [PROTO_ROOT], keepCase: true, longs: String, enums: String,
    defaults: true, oneofs: true,
  });
  return grpc.loadPackageDefinition(def).referee.v1;
}

// One unary call as a promise; a refusal carries its `referee-reason` trailer.
function call(client, method, request) {
  return new Promise((resolve, reject) => {
    client[method](request, (err, reply) => {
      if (!err) return resolve(reply);
      const reason = err.metadata ? err.metadata.get('referee-reason')[0] : undefined;
      err.message = `${method}: ${grpc.status[err.code]} ${reason || ''} ${err.details}`;
      return reject(err);
    });
  });
}

async function main() {
  const args = parseArgs(process.argv.slice(2), {
    usage: USAGE,
    flags: { '--address': ['address', String], '--game': ['game', String],
             '--seats': ['seats', Number], '--seed': ['seed', Number],
             '--rollouts': ['rollouts', Number] },
    defaults: { address: '127.0.0.1:50052', game: 'batavia', seats: 0, seed: 1, rollouts: 4 },
    valid: (a) => a.rollouts > 0 && Number.isInteger(a.seats) && Number.isInteger(a.seed),
  });
  const v1 = loadSimulator();
  const sim = new v1.Simulator(args.address, grpc.credentials.createInsecure());
  const draw = rng(args.seed);
  const seed = () => String(Math.floor(draw() * 2 ** 31));

  const root = await call(sim, 'New', { game: args.game, seats: args.seats, seed: String(args.seed) });
  const decision = await call(sim, 'LegalMoves', { handle: root.handle });
  const values = [];
  for (const move of decision.legal_moves) {
    let ranks = 0;
    for (let k = 0; k < args.rollouts; k++) {
      const copy = await call(sim, 'Clone', { handle: root.handle });
      await call(sim, 'Apply', { handle: copy.handle, move });
      const end = await call(sim, 'Rollout', { handle: copy.handle, seed: seed() });
      ranks += end.ranks[decision.seat];
      await call(sim, 'Release', { handle: copy.handle });
    }
    values.push(ranks / args.rollouts);
  }
  const best = values.indexOf(Math.min(...values));
  await call(sim, 'Apply', { handle: root.handle, move: decision.legal_moves[best] });
  const end = await call(sim, 'Rollout', { handle: root.handle, seed: seed() });
  const released = (await call(sim, 'Release', { handle: root.handle })).released;
  console.log(JSON.stringify({
    game: args.game, seat: decision.seat, kind: decision.kind,
    moves: decision.legal_moves.length, mean_rank: values, chosen: best,
    result: { scores: end.scores.map(Number), ranks: end.ranks, winners: end.winners,
              moves: end.moves },
    released,
  }));
  sim.close();
}

main().catch((err) => {
  console.error(`sim_example: ${err.message}`);
  process.exit(1);
});
