// What bot.js and session_bot.js share: their command-line parser, the seeded random number
// generator, JSON-line logging, the referee's protos loaded at run time, the gRPC codes worth
// reconnecting after and the reconnection loop's bookkeeping.
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_ROOT = process.env.REFEREE_PROTO_DIR || path.resolve(__dirname, '..', '..', 'proto');

const RETRYABLE = new Set([grpc.status.UNAVAILABLE, grpc.status.CANCELLED, grpc.status.ABORTED,
  grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.DEADLINE_EXCEEDED]);

// Parse argv against `flags` ({'--flag': [key, convert]}), starting from `defaults`. A value
// follows its flag or is glued to it with `=` (`--token=-abc`: a token may begin with `-`).
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

// Run `main` and exit with its status; a crash is logged and exits 1.
function run(main, log) {
  main().then((code) => process.exit(code), (err) => {
    log('error', 'crashed', { error: String(err && err.stack || err) });
    process.exit(1);
  });
}

module.exports = { RETRYABLE, Reconnect, parseArgs, rng, logger, bearer, loadReferee, run };
