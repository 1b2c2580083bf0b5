#!/usr/bin/env node
// A random-legal-move bot for the board-game referee, in Node.js.
//
//   npm install            (once, in clients/node)
//   node bot.js --address 127.0.0.1:50051 --match MATCH_ID --token=SEAT_TOKEN [--seed N]
//               [--give-up-after S]
//
// It loads the project's .proto files from ../../proto at run time (@grpc/proto-loader), opens
// the Play stream with `authorization: Bearer <token>`, sends Join, and answers every Decision
// with one of its legal_moves, unchanged, echoing the decision's state_version. Any game works:
// a bot never has to understand a move to pick one. Exit status: 0 the match ended, 1 failure,
// 2 bad usage. Rejected moves are logged as "move rejected" (the tournament runner counts them)
// and the decision is answered again.
'use strict';

const grpc = require('@grpc/grpc-js');
const {
  RETRYABLE, Reconnect, parseArgs, rng, logger, bearer, loadReferee, run,
} = require('./common');

const USAGE = 'usage: node bot.js --address HOST:PORT --match ID --token=TOKEN [--seed N] '
  + '[--give-up-after S]';
const log = logger('node-random');

function parse(argv) {
  return parseArgs(argv, {
    usage: USAGE,
    flags: { '--address': ['address', String], '--match': ['match', String],
             '--token': ['token', String], '--seed': ['seed', Number],
             '--give-up-after': ['giveUpAfter', Number] },
    defaults: { address: process.env.REFEREE_ADDRESS || '127.0.0.1:50051',
                token: process.env.REFEREE_TOKEN, match: undefined, seed: undefined,
                giveUpAfter: 60 },
    valid: (args) => Boolean(args.match && args.token) && args.giveUpAfter >= 0,
  });
}

function playOnce(client, args, random, reconnect) {
  return new Promise((resolve) => {
    const call = client.Play(bearer(args.token));
    let finished = false;
    const answered = new Set();
    let pending = null;  // the decision being answered
    let retries = 0;     // re-answers of `pending` after rejections
    const submit = (d) => {
      const moves = d.legal_moves || [];
      const move = moves[Math.floor(random() * moves.length)];
      const version = String(d.state_version || '0');
      call.write({ submit: { state_version: version, move, request_id: `n${version}-${retries}` } });
    };
    call.on('data', (msg) => {
      if (msg.welcome) {
        reconnect.up();
        log('info', 'joined', { match: args.match, seat: msg.welcome.seat || 0, game: msg.welcome.game });
      } else if (msg.decision) {
        const d = msg.decision;
        const version = String(d.state_version || '0');
        if (answered.has(version)) return;
        answered.add(version);
        if ((d.legal_moves || []).length === 0) return;
        pending = d;
        retries = 0;
        submit(d);
      } else if (msg.move_result) {
        if (!msg.move_result.accepted) {
          log('warning', 'move rejected', { reason: msg.move_result.reason,
                                            message: msg.move_result.message });
          // The decision is still ours if the referee is at its version: answer it again
          // (a rejected decision is not pushed again).
          if (pending && String(msg.move_result.state_version || '0') === String(pending.state_version || '0')
              && retries < 3) {
            retries += 1;
            submit(pending);
          }
        }
      } else if (msg.game_over) {
        finished = true;
        const go = msg.game_over;
        log('info', 'game over', { winners: go.winners, summary: go.summary });
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
    call.write({ join: { match_id: args.match } });
  });
}

async function main() {
  const args = parse(process.argv.slice(2));
  const random = rng(args.seed);
  const referee = loadReferee();
  const reconnect = new Reconnect(args.address, log,
    { maxMs: 3000, giveUpMs: args.giveUpAfter * 1000 });
  for (;;) {
    const client = new referee.Referee(args.address, grpc.credentials.createInsecure(),
      { 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
    const res = await playOnce(client, args, random, reconnect);
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

run(main, log);
