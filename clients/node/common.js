// What bot.js and session_bot.js share: their command-line parser, the seeded random number
// generator, JSON-line logging, the referee's protos loaded at run time, the gRPC codes worth
// reconnecting after, the reconnection loop's bookkeeping, and how a decision is answered
// (refused moves asked again a bounded number of times, notes cleaned).
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_ROOT = process.env.REFEREE_PROTO_DIR || path.resolve(__dirname, '..', '..', 'proto');

// The statuses after which a stream is opened again (docs/bot/protocol.md, "Reconnecting"):
// UNAVAILABLE (a referee restarting, NOT_OWNER, STORE_UNAVAILABLE), and what a stream cut by a
// dying referee or proxy ends with: INTERNAL (nginx resets the stream, RST_STREAM code 2),
// UNKNOWN, CANCELLED, ABORTED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED (the rate limit).
const RETRYABLE = new Set([grpc.status.UNAVAILABLE, grpc.status.CANCELLED, grpc.status.ABORTED,
  grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.DEADLINE_EXCEEDED,
  grpc.status.RESOURCE_EXHAUSTED]);

// Parse argv against `flags` ({'--flag': [key, convert]}), starting from `defaults`. A value
// follows its flag or is glued to it with `=` (`--token=-abc`: a token may begin with `-`).
// A flag whose convert is Boolean is a switch (no value: present means true).
// --help prints `usage` and exits 0; an unknown argument, a flag without its value, or
// `valid(args)` false prints it and exits 2.
function parseArgs(argv, { usage, flags, defaults, valid }) {
  const args = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let value;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) { value = a.slice(eq + 1); a = a.slice(0, eq); }
    if (a === '-h' || a === '--help') {
      console.log(usage);
      process.exit(0);
    }
    const flag = Object.prototype.hasOwnProperty.call(flags, a) ? flags[a] : undefined;
    if (flag === undefined) {
      console.error(`unknown argument ${a}\n${usage}`);
      process.exit(2);
    }
    const [key, convert] = flag;
    if (convert === Boolean) { // a switch: present or not, no value
      if (value !== undefined) {
        console.error(`${a} takes no value\n${usage}`);
        process.exit(2);
      }
      args[key] = true;
      continue;
    }
    const raw = value !== undefined ? value : argv[++i];
    if (raw === undefined) {
      console.error(`${a} needs a value\n${usage}`);
      process.exit(2);
    }
    args[key] = convert(raw);
  }
  if (!valid(args)) {
    console.error(usage);
    process.exit(2);
  }
  return args;
}

// mulberry32: a small seeded PRNG, so a seeded bot is reproducible (no seed: a random one).
function rng(seed) {
  let a = (seed === undefined || Number.isNaN(seed)) ? (Math.random() * 2 ** 32) >>> 0 : seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A logger writing one JSON object per line on stderr, tagged with the bot's name.
function logger(bot) {
  return (level, event, fields = {}) => {
    process.stderr.write(JSON.stringify({ level, event, bot, ...fields }) + '\n');
  };
}

function bearer(token) {
  const md = new grpc.Metadata();
  md.add('authorization', `Bearer ${token}`);
  return md;
}

// The referee.v1 package, from the .proto files (no generated code).
function loadReferee() {
  const def = protoLoader.loadSync('referee/v1/referee.proto', {
    includeDirs: [PROTO_ROOT], keepCase: true, longs: String, enums: String,
    defaults: false, oneofs: true,
  });
  return grpc.loadPackageDefinition(def).referee.v1;
}

const FIRST_DELAY_MS = 100;
// grpc-js's wording around why a connection failed ("No connection established. Last error:
// Error: connect ECONNREFUSED 127.0.0.1:1. Resolution note: " says "connect ECONNREFUSED ...")
const CONNECT_NOISE =
  /^No connection established\. Last error: (?:Error: )?|\.? Resolution note: $/g;

// The retry loop of a stream to the referee (bot.js's Play, session_bot.js's Session): a delay
// doubling from FIRST_DELAY_MS up to `maxMs`, giving up after `giveUpMs` of failures (0:
// never), and whether the referee has answered at all. Until it has (`up()`), a failure is
// logged as "cannot reach the referee at ADDRESS: reason" (a wrong address, or nothing listens
// there yet); after, as the lost connection it is.
class Reconnect {
  constructor(address, log, { maxMs, giveUpMs }) {
    Object.assign(this, { address, log, maxMs, giveUpMs });
    this.reached = false;
    this.failingSince = null;
    this.delay = FIRST_DELAY_MS;
  }

  // The referee answered: the delay and the give-up clock start again.
  up() {
    this.reached = true;
    this.failingSince = null;
    this.delay = FIRST_DELAY_MS;
  }

  unreachable(err) {
    const why = String(err.details || 'the stream ended').replace(CONNECT_NOISE, '');
    return `cannot reach the referee at ${this.address}: ${why}`;
  }

  // One failed attempt (`err`): logs it (as `lost` once the referee had answered) and returns
  // the delay before the next, or null past the give-up budget (logged as an error).
  failed(err, lost) {
    const now = Date.now();
    if (this.failingSince === null) this.failingSince = now;
    else if (this.giveUpMs && now - this.failingSince > this.giveUpMs) {
      const after = `gave up after ${this.giveUpMs / 1000}s`;
      if (this.reached) {
        this.log('error', `${after} reaching the referee`, { details: err.details });
      } else this.log('error', `${this.unreachable(err)} (${after})`);
      return null;
    }
    const delay = this.delay;
    this.delay = Math.min(this.delay * 2, this.maxMs);
    if (this.reached) this.log('warning', lost, { details: err.details, retry_in_ms: delay });
    else this.log('warning', `${this.unreachable(err)}; retrying`, { retry_in_ms: delay });
    return delay;
  }
}

// After a refused move the bot is asked again for the same decision at most REASKS times; then
// it stops answering that decision and the referee's time policy plays it.
const REASKS = 2;
// The most bytes of UTF-8 the referee takes in a move's note.
const NOTE_LIMIT = 512;
// The refusals of the bot's own move (not a late or out-of-turn one, which needs nothing).
const OWN_REFUSALS = new Set(['ILLEGAL_MOVE', 'MALFORMED', 'WRONG_GAME', 'REASON_UNSPECIFIED',
  'INTERNAL']);
// A move refused with STORE_UNAVAILABLE (the referee's database is away; nothing was played) is
// sent again unchanged after a delay doubling from 100 ms to 2 s (jittered), while the
// decision's deadline allows (60 s without one); then the time policy plays it. Safe: the move
// carries the decision's state_version, so it is played at most once.
const STORE_RESEND_MS = [100, 2000];
const STORE_RESEND_LIMIT_MS = 60000;
const NOTE_DROPS = /[\p{Cc}\p{Cs}]/u;

// A note as the referee takes it: control characters other than newline and tab dropped (and
// lone surrogates), cut to NOTE_LIMIT bytes of UTF-8 at a character boundary.
function cleanNote(note) {
  let out = '';
  let bytes = 0;
  for (const ch of String(note || '')) {
    if (ch !== '\n' && ch !== '\t' && NOTE_DROPS.test(ch)) continue;
    const size = Buffer.byteLength(ch, 'utf8');
    if (bytes + size > NOTE_LIMIT) break;
    out += ch;
    bytes += size;
  }
  return out;
}

// The answering side of one Play stream: `take(d)` answers a decision with what `choose(d)`
// returns ({move, note}), unless the stream answered its version already (a re-push);
// `result(r)` handles a MoveResult: an accepted one may carry this seat's next Decision
// (`next`, Join.combine_decision), which is taken like any other; a refused move is logged
// ("move rejected", with the referee's reason and message), counted in `stats.refused`, given
// to `onRefused(refusal)`, and the decision answered again, at most REASKS times. With
// `fallback` ('first_legal') an answer not among legal_moves, and the last refused one, are
// replaced by the first legal move, each use logged as an incident and counted in
// `stats.fallbacks`.
function answerer(call, { choose, onRefused, log, tag, stats, fields = {}, fallback = '' }) {
  let pending = null;  // the decision being answered
  let sent = null;     // the last answer to it (null once refused and not answered again)
  let attempts = 0;
  const answered = new Set();  // versions answered on this stream
  const substitute = (why) => {
    stats.fallbacks = (stats.fallbacks || 0) + 1;
    log('error', `${why}; playing the first legal move instead (--fallback first_legal)`,
      { ...fields, incident: 'fallback', state_version: String(pending.state_version || '0'),
        kind: pending.kind });
    return pending.legal_moves[0];
  };
  let sentNote = '';
  let storeDelay = STORE_RESEND_MS[0];
  let storeSince = null;
  let resends = 0;
  const write = (move, note) => {
    const version = String(pending.state_version || '0');
    call.write({ submit: { state_version: version, move, note: cleanNote(note),
                           request_id: `${tag}${version}-${attempts}-${resends}` } });
  };
  const send = (move, note) => {
    sent = move;
    sentNote = note;
    attempts += 1;
    storeDelay = STORE_RESEND_MS[0];
    storeSince = null;
    write(move, note);
  };
  // STORE_UNAVAILABLE: the same move again after a short delay, bounded by the move clock
  const resend = (r) => {
    const now = Date.now();
    if (storeSince === null) storeSince = now;
    const delay = Math.round(storeDelay / 2 + Math.random() * storeDelay / 2);
    storeDelay = Math.min(storeDelay * 2, STORE_RESEND_MS[1]);
    const deadline = Number(pending.deadline_unix_ms || 0);
    const late = deadline ? now + delay >= deadline : now + delay - storeSince > STORE_RESEND_LIMIT_MS;
    const version = String(pending.state_version || '0');
    if (late) {
      log('error', "the referee's store stayed unavailable until the move clock ran out; its "
        + 'time policy plays this decision', { ...fields, incident: 'store_unavailable',
                                               state_version: version, message: r.message });
      sent = null;
      return;
    }
    log('warning', "the referee's store is unavailable; sending the move again",
      { ...fields, state_version: version, retry_in_ms: delay });
    const [move, note, decision] = [sent, sentNote, pending];
    setTimeout(() => {
      if (pending !== decision || sent !== move) return;  // a newer decision meanwhile
      resends += 1;
      stats.store_resends = (stats.store_resends || 0) + 1;
      try { write(move, note); } catch (err) { /* the stream ended: the reconnect resends */ }
    }, delay);
  };
  const submit = () => {
    const { move, note } = choose(pending);
    const legal = (pending.legal_moves || []).some(
      (m) => m === move || JSON.stringify(m) === JSON.stringify(move));
    send(fallback && !legal ? substitute('choose returned a move that is not among legal_moves')
      : move, note);
  };
  return {
    take(d) {
      const version = String(d.state_version || '0');
      if (answered.has(version) || (d.legal_moves || []).length === 0) return;
      answered.add(version);
      pending = d;
      attempts = 0;
      submit();
    },
    result(r) {
      if (r.accepted) {
        if (r.next) this.take(r.next);  // this seat acts again: its next Decision
        return;
      }
      const reason = r.reason || 'REASON_UNSPECIFIED';
      if (reason === 'STORE_UNAVAILABLE' && pending && sent !== null
          && String(r.state_version || '0') === String(pending.state_version || '0')) {
        resend(r);
        return;
      }
      if (!OWN_REFUSALS.has(reason) || !pending || sent === null
          || String(r.state_version || '0') !== String(pending.state_version || '0')) {
        log('warning', 'move not accepted', { ...fields, reason, message: r.message });
        return;
      }
      stats.refused += 1;
      const refusal = { state_version: String(pending.state_version || '0'), kind: pending.kind,
                        move: sent, reason, message: r.message || '', attempt: attempts,
                        final: attempts > REASKS };
      sent = null;
      log('error', 'move rejected', { ...fields, incident: 'refused', reason,
                                      message: refusal.message, kind: refusal.kind,
                                      state_version: refusal.state_version, attempt: attempts });
      onRefused(refusal);
      if (refusal.final && fallback && attempts === REASKS + 1) {  // a refused substitute is final
        send(substitute('the referee refused every answer'), '');
        return;
      }
      if (refusal.final) {
        log('error', "stopped answering after refused moves; the referee's time policy plays "
          + 'this decision', { ...fields, incident: 'gave_up', state_version: refusal.state_version });
        return;
      }
      submit();
    },
  };
}

// Run `main` and exit with its status; a crash is logged and exits 1.
function run(main, log) {
  main().then((code) => process.exit(code), (err) => {
    log('error', 'crashed', { error: String(err && err.stack || err) });
    process.exit(1);
  });
}

module.exports = {
  RETRYABLE, Reconnect, parseArgs, rng, logger, bearer, loadReferee, run,
  REASKS, NOTE_LIMIT, cleanNote, answerer,
};
