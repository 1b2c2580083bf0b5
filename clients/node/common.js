// What bot.js and session_bot.js share: their command-line parser, the seeded random number
// generator, JSON-line logging, the referee's protos loaded at run time, and the gRPC codes
// worth reconnecting after.
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

// Run `main` and exit with its status; a crash is logged and exits 1.
function run(main, log) {
  main().then((code) => process.exit(code), (err) => {
    log('error', 'crashed', { error: String(err && err.stack || err) });
    process.exit(1);
  });
}

module.exports = { RETRYABLE, parseArgs, rng, logger, bearer, loadReferee, run };
