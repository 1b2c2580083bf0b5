#!/usr/bin/env node
// A persistent random bot for the board-game referee, in Node.js: connect once, play every
// match the referee assigns (several at once).
//
//   npm install            (once, in clients/node)
//   node session_bot.js --address 127.0.0.1:50051 --bot-token=BOT_TOKEN [--capacity N]
//                       [--max-matches N] [--seed N] [--give-up-after S] [--fallback first_legal]
//
// The bot token comes from RegisterBot (`referee-bot register-bot --name NAME`). The bot opens
// the Session stream with `authorization: Bearer <bot token>`, sends SessionHello{capacity},
// and for every Assignment acknowledges it and plays the seat on an ordinary Play stream with
// the assignment's seat token, over the same client (one HTTP/2 connection). A dropped session
// reconnects with backoff; the referee sends every unfinished assignment again, and one already
// being played is only acknowledged again. Exit status: 0 after --max-matches matches (or
// never, without it), 1 failure, 2 bad usage.
'use strict';

const grpc = require('@grpc/grpc-js');
const {
  RETRYABLE, Reconnect, parseArgs, rng, logger, bearer, loadReferee, run, answerer,
} = require('./common');
const { choose, onRefused } = require('./strategy');

const USAGE = 'usage: node session_bot.js --address HOST:PORT --bot-token=TOKEN [--capacity N] '
  + '[--max-matches N] [--seed N] [--give-up-after S] [--fallback first_legal]';
const log = logger('node-session');

function parse(argv) {
  return parseArgs(argv, {
    usage: USAGE,
    flags: { '--address': ['address', String], '--bot-token': ['botToken', String],
             '--capacity': ['capacity', Number], '--max-matches': ['maxMatches', Number],
             '--seed': ['seed', Number], '--give-up-after': ['giveUpAfter', Number],
             '--fallback': ['fallback', String] },
    defaults: { address: process.env.REFEREE_ADDRESS || '127.0.0.1:50051',
                botToken: process.env.REFEREE_BOT_TOKEN, capacity: 1, maxMatches: 0,
                seed: undefined, giveUpAfter: 60, fallback: '' },
    valid: (args) => Boolean(args.botToken) && args.capacity >= 1 && args.capacity <= 256
      && args.giveUpAfter >= 0
      && ['', 'first_legal'].includes(args.fallback),
  });
}

// Play one seat to its GameOver on a Play stream; resolves {done} or {done: false, err}.
function playSeat(client, a, random, fallback) {
  return new Promise((resolve) => {
    const call = client.Play(bearer(a.seat_token));
    const answered = new Set();
    let finished = false;
    const stats = { refused: 0 };
    const answering = answerer(call, { choose: (d) => choose(d, random), onRefused, log,
                                       tag: 'n', stats, fallback,
                                       fields: { match: a.match_id } });
    call.on('data', (msg) => {
      if (msg.decision) {
        const d = msg.decision;
        const version = String(d.state_version || '0');
        if (answered.has(version) || (d.legal_moves || []).length === 0) return;
        answered.add(version);
        answering.decide(d);
      } else if (msg.move_result) {
        answering.result(msg.move_result);
      } else if (msg.game_over) {
        finished = true;
        log('info', 'game over', { match: a.match_id, seat: a.seat || 0,
                                   winners: msg.game_over.winners, refused: stats.refused });
        call.end();
        resolve({ done: true });
      }
    });
    call.on('error', (err) => { if (!finished) resolve({ done: false, err }); });
    call.on('end', () => {
      if (!finished) resolve({ done: false, err: { code: grpc.status.UNAVAILABLE } });
    });
    call.write({ join: { match_id: a.match_id } });
  });
}

async function playAssignment(client, a, random, fallback) {
  let delay = 100;
  for (;;) {
    const res = await playSeat(client, a, random, fallback);
    if (res.done) return true;
    const err = res.err || {};
    if (err.code === grpc.status.FAILED_PRECONDITION) return true; // over while we were away
    if (!RETRYABLE.has(err.code)) {
      log('error', 'match failed', { match: a.match_id, code: err.code, details: err.details });
      return false;
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 2000);
  }
}

async function main() {
  const args = parse(process.argv.slice(2));
  const random = rng(args.seed);
  const referee = loadReferee();
  // one client (one connection) for the session and every match; short reconnection backoff
  const client = new referee.Referee(args.address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 2000,
  });
  const playing = new Set();
  const done = new Set();
  let finished = 0;
  const reconnect = new Reconnect(args.address, log,
    { maxMs: 2000, giveUpMs: args.giveUpAfter * 1000 });

  return new Promise((resolveMain) => {
    let session = null;
    const stop = (code) => { if (session) session.cancel(); client.close(); resolveMain(code); };

    const open = () => {
      session = client.Session(bearer(args.botToken));
      let ended = false;
      const retry = (err) => {
        if (ended) return;
        ended = true;
        if (err && !RETRYABLE.has(err.code)) {
          log('error', 'session refused', { code: err.code, details: err.details });
          stop(1);
          return;
        }
        const delay = reconnect.failed(err || {}, 'session lost; reconnecting');
        if (delay === null) { stop(1); return; }
        setTimeout(open, delay);
      };
      session.on('data', (msg) => {
        if (msg.welcome) {
          reconnect.up();
          log('info', 'session open', { name: msg.welcome.bot_name, capacity: msg.welcome.capacity });
        } else if (msg.assignment) {
          const a = msg.assignment;
          const key = `${a.match_id}:${a.seat || 0}`;
          session.write({ ack: { match_id: a.match_id, seat: a.seat || 0, accept: true } });
          if (playing.has(key) || done.has(key)) return;
          playing.add(key);
          log('info', 'assignment', { match: a.match_id, seat: a.seat || 0, game: a.game });
          playAssignment(client, a, random, args.fallback).then((ok) => {
            playing.delete(key);
            if (ok) { done.add(key); finished += 1; }
            if (args.maxMatches && finished >= args.maxMatches) stop(0);
          });
        } else if (msg.notice) {
          log('warning', 'session notice', { reason: msg.notice.reason, message: msg.notice.message });
        }
      });
      session.on('error', retry);
      session.on('end', () => retry({ code: grpc.status.UNAVAILABLE }));
      session.write({ hello: { capacity: args.capacity, agent: 'node session_bot.js' } });
    };
    open();
  });
}

run(main, log);
