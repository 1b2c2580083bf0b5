#!/usr/bin/env node
// A persistent random bot for the board-game referee, in Node.js: connect once, play every
// match the referee assigns (several at once), e.g. as a remote league entrant.
//
//   npm install            (once, in clients/node)
//   REFEREE_BOT_TOKEN=BOT_TOKEN node session_bot.js --address 127.0.0.1:50051 [--capacity N]
//       [--max-matches N] [--seed N] [--give-up-after S] [--fallback first_legal]
//       [--accept-challenges [--games G,G] [--max-challenges N]]
//   (or node bot.js --session ..., the same flags as every kit's session mode)
//
// The bot token (from `referee-bot register`, or `register-bot` for an organizer) comes from
// $REFEREE_BOT_TOKEN or --bot-token-file PATH ('-': standard input), never from the command
// line. The bot opens the Session stream with `authorization: Bearer <bot token>`, sends
// SessionHello{capacity} (with --accept-challenges also the lobby's accept_challenges,
// challenge_games from --games, every game when none, and max_challenges, 0 = the capacity:
// while the session is open the referee's lobby seats it in challenges naming the bot and in
// seeks that let bots join, each one an ordinary Assignment), and for every Assignment acknowledges it and plays the seat on an
// ordinary Play stream with the assignment's seat token, over the same client (one HTTP/2
// connection), with strategy.js's `choose` and common.js's refusal rules. A dropped session
// reconnects with backoff; the referee sends every unfinished assignment again (`resent`), and
// one already being played or done is only acknowledged again: never two streams for one seat.
// A refused bot token, or one replaced by registering the bot again (TOKEN_REPLACED), ends it
// with a message saying so. SIGINT or SIGTERM stops it. Each match's result is logged ("game
// over": match, seat, rank, score). Exit status: 0 after --max-matches matches or a signal,
// 1 failure, 2 bad usage.
'use strict';

const fs = require('fs');
const grpc = require('@grpc/grpc-js');
const {
  RETRYABLE, Reconnect, parseArgs, rng, logger, bearer, loadReferee, run, answerer,
} = require('./common');
const { choose, onRefused } = require('./strategy');

const USAGE = 'usage: node session_bot.js [--address HOST:PORT] [--bot-token-file PATH] '
  + '[--capacity N] [--max-matches N] [--seed N] [--give-up-after S] [--fallback first_legal]\n'
  + '       [--accept-challenges [--games G,G] [--max-challenges N]]\n'
  + 'The bot token comes from $REFEREE_BOT_TOKEN, or the file given (-: standard input).';
const log = logger('node-session');

// The token in `path` ('-': standard input), surrounding blanks removed.
function readTokenFile(path) {
  const token = fs.readFileSync(path === '-' ? 0 : path, 'utf8').trim();
  if (!token) throw new Error(`${path}: no token in it`);
  return token;
}

function parse(argv) {
  const args = parseArgs(argv.filter((a) => a !== '--session'), {
    usage: USAGE,
    flags: { '--address': ['address', String], '--bot-token-file': ['botTokenFile', String],
             '--capacity': ['capacity', Number], '--max-matches': ['maxMatches', Number],
             '--seed': ['seed', Number], '--give-up-after': ['giveUpAfter', Number],
             '--fallback': ['fallback', String],
             '--accept-challenges': ['acceptChallenges', Boolean], '--games': ['games', String],
             '--max-challenges': ['maxChallenges', Number] },
    defaults: { address: process.env.REFEREE_ADDRESS || '127.0.0.1:50051', botTokenFile: '',
                capacity: 1, maxMatches: 0, seed: undefined, giveUpAfter: 120, fallback: '',
                acceptChallenges: false, games: undefined, maxChallenges: undefined },
    valid: (a) => Number.isInteger(a.capacity) && a.capacity >= 1 && a.capacity <= 256
      && Number.isInteger(a.maxMatches) && a.maxMatches >= 0 && a.giveUpAfter >= 0
      && ['', 'first_legal'].includes(a.fallback)
      // --games and --max-challenges go with --accept-challenges
      && (a.acceptChallenges || (a.games === undefined && a.maxChallenges === undefined))
      && (a.maxChallenges === undefined
          || (Number.isInteger(a.maxChallenges) && a.maxChallenges >= 0 && a.maxChallenges <= 256)),
  });
  args.botToken = process.env.REFEREE_BOT_TOKEN || '';
  if (args.botTokenFile) {
    try {
      args.botToken = readTokenFile(args.botTokenFile);
    } catch (err) {
      console.error(`--bot-token-file: ${err.message}\n${USAGE}`);
      process.exit(2);
    }
  }
  if (!args.botToken) {
    console.error(`no bot token: set $REFEREE_BOT_TOKEN or pass --bot-token-file\n${USAGE}`);
    process.exit(2);
  }
  return args;
}

// The seed of one assignment's generator: --seed mixed with its match and seat (FNV-1a), so a
// seeded session plays each match the same way whatever order they come in.
function matchSeed(seed, match, seat) {
  if (seed === undefined || Number.isNaN(seed)) return undefined;
  let h = 0x811c9dc5;
  for (const ch of Buffer.from(`${match}:${seat}`)) h = Math.imul(h ^ ch, 0x01000193) >>> 0;
  return (seed ^ h) >>> 0;
}

// Play one seat to its GameOver on a Play stream; resolves {done} or {done: false, err}.
// `seat.cancel` ends the stream in progress.
function playSeat(client, a, seat, args) {
  return new Promise((resolve) => {
    const call = client.Play(bearer(a.seat_token));
    let finished = false;
    const fields = { match: a.match_id, seat: a.seat || 0 };
    const answering = answerer(call, { choose: (d) => choose(d, seat.random), onRefused, log,
                                       tag: 'n', stats: seat.stats, fallback: args.fallback,
                                       fields });
    seat.cancel = () => call.cancel();
    call.on('data', (msg) => {
      if (msg.welcome) {
        seat.joined();
        log('info', 'joined', { ...fields, game: msg.welcome.game });
      } else if (msg.decision) {
        answering.take(msg.decision);
      } else if (msg.move_result) {
        answering.result(msg.move_result);
      } else if (msg.game_over) {
        finished = true;
        const over = msg.game_over;
        const mine = (over.seats || []).find((s) => (s.seat || 0) === (a.seat || 0)) || {};
        log('info', 'game over', { ...fields, winners: over.winners, summary: over.summary,
                                   rank: mine.rank || 0, score: Number(mine.score || 0),
                                   refused: seat.stats.refused,
                                   fallbacks: seat.stats.fallbacks || 0 });
        call.cancel();
        resolve({ done: true });
      }
    });
    call.on('error', (err) => {
      if (finished) return;
      const reason = String((err.metadata && err.metadata.get('referee-reason')[0]) || '');
      // the match ended while we were away
      if (err.code === grpc.status.FAILED_PRECONDITION && reason === 'MATCH_OVER') {
        finished = true;
        resolve({ done: true });
      }
      resolve({ done: false, err });
    });
    call.on('end', () => {
      if (!finished) resolve({ done: false, err: { code: grpc.status.UNAVAILABLE } });
    });
    call.write({ join: { match_id: a.match_id, combine_decision: true } });  // as bot.js
  });
}

async function main(argv = process.argv.slice(2)) {
  const args = parse(argv);
  const referee = loadReferee();
  // one client (one connection) for the session and every match; short reconnection backoff
  const client = new referee.Referee(args.address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 2000,
  });
  const playing = new Map();  // key -> the seat being played
  const done = new Set();
  let finished = 0;
  let failed = 0;
  let stopped = false;
  const reconnect = new Reconnect(args.address, log,
    { maxMs: 2000, giveUpMs: args.giveUpAfter * 1000 });

  return new Promise((resolveMain) => {
    let session = null;
    const stop = (code) => {
      if (stopped) return;
      stopped = true;
      for (const seat of playing.values()) if (seat.cancel) seat.cancel();
      if (session) session.cancel();
      client.close();
      resolveMain(code);
    };
    for (const sig of ['SIGINT', 'SIGTERM']) {
      process.once(sig, () => { log('info', 'stopped', { why: sig, finished }); stop(0); });
    }

    const playAssignment = async (a, key) => {
      const seat = { random: rng(matchSeed(args.seed, a.match_id, a.seat || 0)),
                     stats: { refused: 0 }, cancel: null, joined: () => retry.up() };
      const retry = new Reconnect(args.address, () => {},
        { maxMs: 2000, giveUpMs: args.giveUpAfter * 1000 });
      playing.set(key, seat);
      let ok = false;
      while (!stopped) {
        const res = await playSeat(client, a, seat, args);
        if (res.done) { ok = true; break; }
        if (stopped) break;
        const err = res.err || {};
        const delay = RETRYABLE.has(err.code) ? retry.failed(err, '') : null;
        if (delay === null) {
          log('error', 'match failed', { match: a.match_id, seat: a.seat || 0, code: err.code,
                                         details: err.details });
          break;
        }
        await new Promise((r) => setTimeout(r, delay));
      }
      playing.delete(key);
      if (stopped) return;
      if (ok) { done.add(key); finished += 1; } else failed += 1;  // a failed one is retried if sent again
      if (args.maxMatches && finished + failed >= args.maxMatches) stop(0);
    };

    const open = () => {
      if (stopped) return;
      session = client.Session(bearer(args.botToken));
      let ended = false;
      const lost = (err) => {
        if (ended || stopped) return;
        ended = true;
        const reason = String((err.metadata && err.metadata.get('referee-reason')[0]) || '');
        if (reason === 'TOKEN_REPLACED') {
          log('error', 'session ended: this bot token was replaced (the bot was registered '
            + 'again; only the new token opens a session) [TOKEN_REPLACED]');
          stop(1);
          return;
        }
        if (!RETRYABLE.has(err.code)) {
          log('error', `session refused: ${err.details} [${reason || grpc.status[err.code]
            || err.code}]`);
          stop(1);
          return;
        }
        const delay = reconnect.failed(err, 'session lost; reconnecting');
        if (delay === null) { stop(1); return; }
        setTimeout(open, delay);
      };
      session.on('data', (msg) => {
        if (msg.welcome) {
          reconnect.up();
          log('info', 'session open', { name: msg.welcome.bot_name, capacity: msg.welcome.capacity,
                                        pending: msg.welcome.pending || 0 });
        } else if (msg.assignment) {
          const a = msg.assignment;
          const key = `${a.match_id}:${a.seat || 0}`;
          session.write({ ack: { match_id: a.match_id, seat: a.seat || 0, accept: true } });
          if (playing.has(key) || done.has(key)) {
            log('info', `assignment resent; already ${done.has(key) ? 'played' : 'playing'} it`,
              { match: a.match_id, seat: a.seat || 0 });
            return;
          }
          log('info', 'assignment', { match: a.match_id, seat: a.seat || 0, game: a.game,
                                      resent: Boolean(a.resent) });
          playAssignment(a, key);
        } else if (msg.notice) {
          log('warning', 'session notice', { reason: msg.notice.reason, message: msg.notice.message,
                                             match: msg.notice.match_id, seat: msg.notice.seat || 0 });
        }
      });
      session.on('error', lost);
      session.on('end', () => lost({ code: grpc.status.UNAVAILABLE,
                                     details: 'the referee closed the session' }));
      session.write({ hello: {
        capacity: args.capacity, agent: 'node session_bot.js',
        accept_challenges: args.acceptChallenges,
        challenge_games: (args.games || '').split(',').map((g) => g.trim()).filter(Boolean),
        max_challenges: args.maxChallenges || 0,
      } });
    };
    open();
  });
}

module.exports = { main };

if (require.main === module) run(main, log);
