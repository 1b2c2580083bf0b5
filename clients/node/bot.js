#!/usr/bin/env node
// A random-legal-move bot for the board-game referee, in Node.js (strategy.js is its strategy).
//
//   npm install            (once, in clients/node)
//   node bot.js --address 127.0.0.1:50051 --match MATCH_ID --token=SEAT_TOKEN [--seed N]
//               [--give-up-after S] [--fallback first_legal]
//   node bot.js --session ...   (session mode: session_bot.js, which see)
//
// It loads the project's .proto files from ../../proto at run time (@grpc/proto-loader), opens
// the Play stream with `authorization: Bearer <token>`, sends Join, and answers every Decision
// with one of its legal_moves, unchanged, echoing the decision's state_version. Any game works:
// a bot never has to understand a move to pick one. Exit status: 0 the match ended, 1 failure,
// 2 bad usage. The move `choose` returns is sent as it is; a move the referee refuses is logged
// as "move rejected" with the referee's reason and message (the tournament runner counts
// them), `onRefused` is called, and the decision is asked again, at most REASKS (2) times; then
// the referee's time policy plays it (--fallback first_legal: the first legal move, logged as an
// incident). A note given with the move is cleaned (common.js,
// cleanNote) and recorded with it, never shown to the other seats during the match.
'use strict';

const grpc = require('@grpc/grpc-js');
const {
  RETRYABLE, Reconnect, parseArgs, rng, logger, bearer, loadReferee, run, answerer,
} = require('./common');
const { choose, onRefused } = require('./strategy');


const USAGE = 'usage: node bot.js --address HOST:PORT --match ID --token=TOKEN [--seed N] '
  + '[--give-up-after S] [--fallback first_legal]';
const log = logger('node-random');

function parse(argv) {
  return parseArgs(argv, {
    usage: USAGE,
    flags: { '--address': ['address', String], '--match': ['match', String],
             '--token': ['token', String], '--seed': ['seed', Number],
             '--give-up-after': ['giveUpAfter', Number],
             '--fallback': ['fallback', String] },
    defaults: { address: process.env.REFEREE_ADDRESS || '127.0.0.1:50051',
                token: process.env.REFEREE_TOKEN, match: undefined, seed: undefined,
                giveUpAfter: 60, fallback: '' },
    valid: (args) => Boolean(args.match && args.token) && args.giveUpAfter >= 0
      && ['', 'first_legal'].includes(args.fallback),
  });
}

function playOnce(client, args, random, reconnect, stats) {
  return new Promise((resolve) => {
    const call = client.Play(bearer(args.token));
    let finished = false;
    const answering = answerer(call, { choose: (d) => choose(d, random), onRefused, log,
                                       tag: 'n', stats, fallback: args.fallback });
    call.on('data', (msg) => {
      if (msg.welcome) {
        reconnect.up();
        log('info', 'joined', { match: args.match, seat: msg.welcome.seat || 0, game: msg.welcome.game });
      } else if (msg.decision) {
        answering.take(msg.decision);
      } else if (msg.move_result) {
        answering.result(msg.move_result);
      } else if (msg.game_over) {
        finished = true;
        const go = msg.game_over;
        log('info', 'game over', { winners: go.winners, summary: go.summary, refused: stats.refused,
                                 fallbacks: stats.fallbacks || 0 });
        call.end();
        resolve({ done: true });
      }
    });
    call.on('error', (err) => {
      if (finished) return;
      resolve({ done: false, err });
    });
    call.on('end', () => {
      if (!finished) resolve({ done: false, err: { code: grpc.status.UNAVAILABLE, details: 'stream closed' } });
    });
    // combine_decision: when this seat acts again right after its own move, its next Decision
    // comes inside that move's MoveResult (answering.result takes it)
    call.write({ join: { match_id: args.match, combine_decision: true } });
  });
}

async function main() {
  const args = parse(process.argv.slice(2));
  const random = rng(args.seed);
  const referee = loadReferee();
  const reconnect = new Reconnect(args.address, log,
    { maxMs: 2000, giveUpMs: args.giveUpAfter * 1000 });
  const stats = { refused: 0 };  // moves of this bot the referee refused
  for (;;) {
    const client = new referee.Referee(args.address, grpc.credentials.createInsecure(),
      { 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
    const res = await playOnce(client, args, random, reconnect, stats);
    client.close();
    if (res.done) return 0;
    const err = res.err || {};
    if (!RETRYABLE.has(err.code)) {
      log('error', 'failed', { code: err.code, details: err.details || String(err) });
      return 1;
    }
    const delay = reconnect.failed(err, 'connection lost; reconnecting');
    if (delay === null) return 1;
    await new Promise((r) => setTimeout(r, delay));
  }
}

if (process.argv.slice(2).includes('--session')) {
  const session = require('./session_bot');
  run(session.main, logger('node-session'));
} else {
  run(main, log);
}
