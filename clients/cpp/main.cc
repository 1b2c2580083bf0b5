// Starter bot in C++ for the board-game referee.
//
//   make                      (generates C++ from ../../proto with protoc, builds bin/bot)
//   bin/bot --address 127.0.0.1:50051 --match MATCH_ID --token=SEAT_TOKEN [--seed N]
//           [--fallback first_legal]
//   bin/bot --session [--bot-token-file PATH] [--capacity N] [--max-matches N] [--seed N]
//           [--give-up-after S] [--fallback first_legal]     (session mode: see run_session)
//           [--accept-challenges [--games G,G] [--max-challenges N]]
//
// The token may also come from $REFEREE_TOKEN (the address from $REFEREE_ADDRESS, the match from
// $REFEREE_MATCH). The bot opens the Play stream with `authorization: Bearer <token>`, sends
// Join, and answers every Decision with the move `choose` returns, echoing the decision's
// state_version. After a broken stream (referee restart, network drop) it joins again with
// backoff; the referee then pushes the pending decision again. Exit status: 0 on GameOver,
// 1 on failure, 2 on bad usage. Logs are JSON lines on stderr.
//
// The move `choose` returns is sent as it is. If the referee refuses it (its reason and the
// rule's message come back), the bot logs "move rejected", counts it, calls `on_refused` and
// asks `choose` again for the same decision, at most kReasks times; then it stops answering that
// decision and the referee's time policy plays it (with --fallback first_legal it plays the first
// legal move instead, and for an answer not among legal_moves too, each use logged as an
// incident). `choose` may also give a note (plain text,
// recorded with the move, never shown to the other seats during the match): clean_note drops
// control characters but newline and tab and cuts it to kNoteLimit bytes of UTF-8.
#include <grpcpp/grpcpp.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <google/protobuf/util/message_differencer.h>

#include "referee/v1/referee.grpc.pb.h"

namespace pb = referee::v1;

// What `choose` answers: a move and an optional note about it ("" for none).
struct Answer {
  pb::Move move;
  std::string note;
};

// A move of yours the referee refused, given to `on_refused`.
struct Refusal {
  uint64_t state_version;
  std::string kind;
  pb::Move move;
  std::string reason, message;  // the referee's reason (ILLEGAL_MOVE, ...) and the rule
  int attempt;                  // 1 for the first answer to the decision
  bool final;                   // no more asks: the time policy plays the decision
};

// ============================================================================================
// YOUR STRATEGY GOES HERE.
// decision.legal_moves() lists every legal move; return one of them unchanged.
// decision.view() is everything your seat may see (fields in proto/referee/v1/<game>.proto),
// decision.kind() names the choice (e.g. "batavia.auction"). This starter picks at random,
// which is legal in every game, and says so in the move's note.
Answer choose(const pb::Decision& decision, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pick(0, decision.legal_moves_size() - 1);
  int i = pick(rng);
  return {decision.legal_moves(i), decision.kind() + ": move " + std::to_string(i + 1) + " of " +
                                       std::to_string(decision.legal_moves_size()) + ", at random"};
}

// Called when the referee refused a move of yours (refusal.reason, refusal.message). Unless
// refusal.final, `choose` is then asked again for the same decision.
void on_refused(const Refusal& refusal) { (void)refusal; }
// ============================================================================================

// After a refused move, `choose` is asked again at most this many times per decision.
constexpr int kReasks = 2;
// The most bytes of UTF-8 the referee takes in a note.
constexpr size_t kNoteLimit = 512;
// A move refused with STORE_UNAVAILABLE (the referee's database is away; nothing was played) is
// sent again unchanged after a delay doubling from 100 ms to 2 s (jittered), while the
// decision's deadline allows (60 s without one); then the time policy plays it. Safe: the move
// carries the decision's state_version, so it is played at most once.
constexpr int kStoreResendFirstMs = 100, kStoreResendMaxMs = 2000, kStoreResendLimitMs = 60000;

// The note as the referee takes it: control characters other than newline and tab dropped
// (C0, DEL, C1), and bytes that are not UTF-8; cut to kNoteLimit bytes at a character boundary.
std::string clean_note(const std::string& note) {
  std::string out;
  for (size_t i = 0; i < note.size();) {
    unsigned char c = static_cast<unsigned char>(note[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= note.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(note[i + k]) >> 6) == 0x2;
    if (!ok) { ++i; continue; }  // not UTF-8: dropped
    bool control = len == 1 ? ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)
                            : (c == 0xC2 && static_cast<unsigned char>(note[i + 1]) < 0xA0);
    if (!control) {
      if (out.size() + len > kNoteLimit) break;
      out.append(note, i, len);
    }
    i += len;
  }
  return out;
}

namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) out += ' ';
    else out += c;
  }
  return out + "\"";
}

std::mutex log_mutex;

// One JSON line on stderr; `fields` is already JSON (e.g. "\"seat\":1"), or empty.
void log(const std::string& level, const std::string& event, const std::string& fields = "") {
  std::string line = "{\"level\":" + quote(level) + ",\"event\":" + quote(event) +
                     ",\"bot\":\"cpp-starter\"" + (fields.empty() ? "" : ",") + fields + "}\n";
  std::lock_guard<std::mutex> lock(log_mutex);
  std::cerr << line << std::flush;
}

struct Args {
  std::string address = "127.0.0.1:50051", match, token;
  bool seeded = false;
  uint64_t seed = 0;
  bool fallback = false;  // --fallback first_legal: play a substitute for an illegal answer
  bool session = false;   // --session: play every match assigned to a bot token
  std::string bot_token;  // session mode: $REFEREE_BOT_TOKEN or --bot-token-file
  int capacity = 1, max_matches = 0;
  double give_up_after = 120;  // seconds (session mode); 0: never
  // session mode, the lobby (issue 33): take challenges and seats in seeks that let bots join
  // while the session is open; the games accepted (empty: every game) and the lobby matches
  // played at once (0: the capacity). Sent in SessionHello.
  bool accept_challenges = false;
  std::vector<std::string> challenge_games;
  int max_challenges = 0;
};

const char* kUsage =
    "usage: bin/bot --address HOST:PORT --match ID [--token=TOKEN] [--seed N] "
    "[--fallback first_legal]\n"
    "       bin/bot --session [--address HOST:PORT] [--bot-token-file PATH] [--capacity N]\n"
    "               [--max-matches N] [--seed N] [--give-up-after S] [--fallback first_legal]\n"
    "               [--accept-challenges [--games G,G] [--max-challenges N]]\n"
    "The seat token comes from $REFEREE_TOKEN, the bot token of --session from "
    "$REFEREE_BOT_TOKEN.";

[[noreturn]] void usage_error(const std::string& why) {
  std::cerr << why << "\n" << kUsage << std::endl;
  std::exit(2);
}

// The token in `path` ("-": standard input), surrounding blanks removed; "" if unreadable.
std::string read_token_file(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(path);
    if (!in) usage_error("--bot-token-file: cannot read " + path);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const char* blanks = " \t\r\n";
  auto first = text.find_first_not_of(blanks);
  if (first == std::string::npos) usage_error("--bot-token-file: " + path + ": no token in it");
  return text.substr(first, text.find_last_not_of(blanks) - first + 1);
}

Args parse_args(int argc, char** argv) {
  Args a;
  if (const char* v = std::getenv("REFEREE_ADDRESS"); v && *v) a.address = v;
  if (const char* v = std::getenv("REFEREE_MATCH")) a.match = v;
  if (const char* v = std::getenv("REFEREE_TOKEN")) a.token = v;
  if (const char* v = std::getenv("REFEREE_BOT_TOKEN")) a.bot_token = v;
  for (int i = 1; i < argc; ++i) a.session = a.session || std::string(argv[i]) == "--session";
  const std::set<std::string> session_only = {"--bot-token-file", "--capacity", "--max-matches",
                                              "--give-up-after", "--accept-challenges", "--games",
                                              "--max-challenges"};
  bool lobby_flag = false;  // --games or --max-challenges given
  const std::set<std::string> match_only = {"--match", "--token"};
  std::string token_file;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string flag = argv[i], value;
      bool inline_value = false;
      if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
        value = flag.substr(eq + 1), flag = flag.substr(0, eq), inline_value = true;
      }
      if ((session_only.count(flag) && !a.session) || (match_only.count(flag) && a.session)) {
        usage_error(flag + " does not go with" + (a.session ? "" : "out") + " --session");
      }
      auto take = [&]() -> std::string {
        if (inline_value) return value;
        if (i + 1 >= argc) usage_error(flag + " needs a value");
        return argv[++i];
      };
      if (flag == "--session") continue;
      else if (flag == "--address") a.address = take();
      else if (flag == "--match") a.match = take();
      else if (flag == "--token") a.token = take();  // use --token=VALUE: a token may begin with '-'
      else if (flag == "--seed") a.seed = std::stoull(take()), a.seeded = true;
      else if (flag == "--fallback") {
        if (take() != "first_legal") usage_error("--fallback takes first_legal");
        a.fallback = true;
      }
      else if (flag == "--bot-token-file") token_file = take();
      else if (flag == "--capacity") a.capacity = std::stoi(take());
      else if (flag == "--max-matches") a.max_matches = std::stoi(take());
      else if (flag == "--give-up-after") a.give_up_after = std::stod(take());
      else if (flag == "--accept-challenges") {
        if (inline_value) usage_error("--accept-challenges takes no value");
        a.accept_challenges = true;
      }
      else if (flag == "--games") {
        std::stringstream list(take());
        for (std::string g; std::getline(list, g, ',');) {
          auto first = g.find_first_not_of(" \t");
          if (first != std::string::npos) {
            a.challenge_games.push_back(g.substr(first, g.find_last_not_of(" \t") - first + 1));
          }
        }
        lobby_flag = true;
      }
      else if (flag == "--max-challenges") a.max_challenges = std::stoi(take()), lobby_flag = true;
      else if (flag == "-h" || flag == "--help") { std::cout << kUsage << std::endl; std::exit(0); }
      else usage_error("unknown argument " + flag);
    }
  } catch (const std::logic_error&) {  // std::stoi and friends: not a number
    usage_error("a flag's value is not a number");
  }
  if (a.session) {
    if (!token_file.empty()) a.bot_token = read_token_file(token_file);
    if (a.bot_token.empty()) usage_error("no bot token: set $REFEREE_BOT_TOKEN or pass --bot-token-file");
    if (a.capacity < 1 || a.capacity > 256 || a.max_matches < 0 || !(a.give_up_after >= 0)) {
      usage_error("--capacity is 1 to 256, --max-matches and --give-up-after at least 0");
    }
    if (lobby_flag && !a.accept_challenges) {
      usage_error("--games and --max-challenges go with --accept-challenges");
    }
    if (a.max_challenges < 0 || a.max_challenges > 256) usage_error("--max-challenges is 0 to 256");
  } else if (a.match.empty() || a.token.empty()) {
    usage_error("no match or no seat token");
  }
  return a;
}

enum class Outcome { kGameOver, kBroken };

// One seat being played: where, with which token, and what happened so far.
struct SeatPlay {
  std::string match, token;
  int seat = 0;
  bool session = false;   // log lines name the match and seat
  bool fallback = false;
  std::mt19937_64 rng;
  int refused = 0;        // moves of this bot the referee refused, over the whole match
  int fallbacks = 0;      // substitute moves played with --fallback first_legal
  std::mutex mu;          // guards ctx
  grpc::ClientContext* ctx = nullptr;  // the Play stream in progress (cancelled on stop)
  bool cancelled = false;

  // A log line's fields, with the match and seat in session mode.
  std::string fields(const std::string& more) const {
    if (!session) return more;
    return "\"match\":" + quote(match) + ",\"seat\":" + std::to_string(seat) +
           (more.empty() ? "" : ",") + more;
  }
  void cancel() {
    std::lock_guard<std::mutex> lock(mu);
    cancelled = true;
    if (ctx) ctx->TryCancel();
  }
};

bool is_legal(const pb::Move& move, const pb::Decision& d) {
  for (const auto& m : d.legal_moves()) {
    if (google::protobuf::util::MessageDifferencer::Equals(m, move)) return true;
  }
  return false;
}

// The --fallback move for `d` (its first legal move), logged as an incident.
pb::Move substitute(SeatPlay& p, const pb::Decision& d, const std::string& why) {
  ++p.fallbacks;
  log("error", why + "; playing the first legal move instead (--fallback first_legal)",
      p.fields("\"incident\":\"fallback\",\"state_version\":" + std::to_string(d.state_version()) +
               ",\"kind\":" + quote(d.kind())));
  return d.legal_moves(0);
}

// One Play stream, from Join to GameOver or to the stream breaking (status in `status`).
Outcome play_once(pb::Referee::Stub& stub, SeatPlay& p, bool& joined, grpc::Status& status) {
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", "Bearer " + p.token);
  {
    std::lock_guard<std::mutex> lock(p.mu);
    if (p.cancelled) ctx.TryCancel();
    p.ctx = &ctx;
  }
  struct Unset {  // p.ctx never outlives ctx
    SeatPlay& p;
    ~Unset() { std::lock_guard<std::mutex> lock(p.mu); p.ctx = nullptr; }
  } unset{p};
  auto stream = stub.Play(&ctx);
  pb::ClientMessage join;
  join.mutable_join()->set_match_id(p.match);
  // When this seat acts again right after its own move, the referee sends that next Decision
  // inside the move's MoveResult (`next`) instead of a message of its own.
  join.mutable_join()->set_combine_decision(true);
  stream->Write(join);

  std::set<uint64_t> answered;  // versions answered on this stream
  pb::Decision pending;         // the decision we are answering
  pb::Move sent;                // the last answer to `pending`
  bool answering = false;       // `sent` awaits the referee's word
  int attempts = 0;             // answers sent to `pending`
  std::string sent_note;        // the note sent with `sent`
  int store_delay_ms = kStoreResendFirstMs, resends = 0;  // STORE_UNAVAILABLE resends of `sent`
  int64_t store_since_ms = 0;
  auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch()).count();
  };
  auto write = [&](const pb::Decision& d, const pb::Move& move, const std::string& note) {
    pb::ClientMessage msg;
    auto* sub = msg.mutable_submit();
    sub->set_state_version(d.state_version());
    *sub->mutable_move() = move;
    sub->set_note(clean_note(note));
    sub->set_request_id("cpp" + std::to_string(d.state_version()) + "-" + std::to_string(attempts) +
                        "-" + std::to_string(resends));
    stream->Write(msg);
  };
  auto send = [&](const pb::Decision& d, const Answer& answer) {
    sent = answer.move, sent_note = answer.note, answering = true, ++attempts;
    store_delay_ms = kStoreResendFirstMs, store_since_ms = 0;
    write(d, sent, sent_note);
  };
  // STORE_UNAVAILABLE: the same move again after a short delay, bounded by the move clock
  auto resend = [&](const pb::Decision& d, const std::string& message) {
    int64_t now = now_ms();
    if (store_since_ms == 0) store_since_ms = now;
    int delay = store_delay_ms / 2 +
                std::uniform_int_distribution<int>(0, store_delay_ms / 2)(p.rng);
    store_delay_ms = std::min(store_delay_ms * 2, kStoreResendMaxMs);
    bool late = d.deadline_unix_ms() ? now + delay >= d.deadline_unix_ms()
                                     : now + delay - store_since_ms > kStoreResendLimitMs;
    if (late) {
      log("error", "the referee's store stayed unavailable until the move clock ran out; its "
                   "time policy plays this decision",
          p.fields("\"incident\":\"store_unavailable\",\"state_version\":" +
                   std::to_string(d.state_version()) + ",\"message\":" + quote(message)));
      answering = false;
      return;
    }
    log("warning", "the referee's store is unavailable; sending the move again",
        p.fields("\"state_version\":" + std::to_string(d.state_version()) +
                 ",\"retry_in_ms\":" + std::to_string(delay)));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    ++resends;
    write(d, sent, sent_note);
  };
  auto submit = [&](const pb::Decision& d) {
    Answer answer = choose(d, p.rng);
    if (p.fallback && !is_legal(answer.move, d)) {
      answer.move = substitute(p, d, "choose returned a move that is not among legal_moves");
    }
    send(d, answer);
  };
  auto take = [&](const pb::Decision& d) {  // a Decision, or one inside a MoveResult
    if (answered.count(d.state_version()) || d.legal_moves_size() == 0) return;
    answered.insert(d.state_version());
    pending = d, attempts = 0;
    submit(pending);
  };
  pb::ServerMessage msg;
  while (stream->Read(&msg)) {
    switch (msg.msg_case()) {
      case pb::ServerMessage::kWelcome:
        joined = true;
        log("info", "joined", "\"match\":" + quote(p.match) +
                              ",\"seat\":" + std::to_string(msg.welcome().seat()) +
                              ",\"game\":" + quote(msg.welcome().game()));
        break;
      case pb::ServerMessage::kDecision:
        take(msg.decision());
        break;
      case pb::ServerMessage::kMoveResult: {
        const auto& r = msg.move_result();
        if (r.accepted()) {
          if (r.has_next()) take(r.next());  // this seat acts again: its next Decision
          break;
        }
        if (r.reason() == pb::STORE_UNAVAILABLE && answering &&
            r.state_version() == pending.state_version()) {
          resend(pending, r.message());
          break;
        }
        // A refused move leaves the decision pending (it is not pushed again). A late or
        // out-of-turn answer (STALE_STATE, NOT_YOUR_TURN) needs nothing: a newer decision comes.
        bool own = r.reason() == pb::ILLEGAL_MOVE || r.reason() == pb::MALFORMED ||
                   r.reason() == pb::WRONG_GAME || r.reason() == pb::REASON_UNSPECIFIED ||
                   r.reason() == pb::INTERNAL;
        if (!own || !answering || r.state_version() != pending.state_version()) {
          log("warning", "move not accepted",
              p.fields("\"reason\":" + quote(pb::Reason_Name(r.reason())) +
                       ",\"message\":" + quote(r.message())));
          break;
        }
        ++p.refused, answering = false;
        Refusal refusal{pending.state_version(), pending.kind(), sent, pb::Reason_Name(r.reason()),
                        r.message(), attempts, attempts > kReasks};
        log("error", "move rejected",
            p.fields("\"incident\":\"refused\",\"reason\":" + quote(refusal.reason) +
                     ",\"message\":" + quote(refusal.message) +
                     ",\"state_version\":" + std::to_string(refusal.state_version) +
                     ",\"kind\":" + quote(refusal.kind) + ",\"attempt\":" + std::to_string(attempts)));
        on_refused(refusal);
        if (refusal.final && p.fallback && attempts == kReasks + 1) {  // a refused substitute is final
          send(pending, {substitute(p, pending, "the referee refused every answer"), ""});
          break;
        }
        if (refusal.final) {
          log("error", "stopped answering after refused moves; the referee's time policy plays "
                       "this decision",
              p.fields("\"incident\":\"gave_up\",\"state_version\":" +
                       std::to_string(refusal.state_version)));
          break;
        }
        submit(pending);
        break;
      }
      case pb::ServerMessage::kGameOver: {
        std::string mine;
        for (const auto& seat : msg.game_over().seats()) {
          if (p.session && seat.seat() == p.seat) {
            mine = ",\"rank\":" + std::to_string(seat.rank()) + ",\"score\":" + std::to_string(seat.score());
          }
        }
        log("info", "game over", p.fields("\"summary\":" + quote(msg.game_over().summary()) +
                                          ",\"refused\":" + std::to_string(p.refused) +
                                          ",\"fallbacks\":" + std::to_string(p.fallbacks) + mine));
        ctx.TryCancel();
        stream->Finish();
        return Outcome::kGameOver;
      }
      default:
        break;
    }
  }
  status = stream->Finish();
  auto trailers = ctx.GetServerTrailingMetadata();
  auto reason = trailers.find("referee-reason");
  if (reason != trailers.end() && std::string(reason->second.data(), reason->second.size()) == "MATCH_OVER") {
    return Outcome::kGameOver;  // the match ended while we were away
  }
  if (status.ok()) status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream closed before the game ended");
  return Outcome::kBroken;
}

// The statuses after which a stream is opened again (docs/bot/protocol.md, "Reconnecting"):
// UNAVAILABLE (a referee restarting, NOT_OWNER, STORE_UNAVAILABLE), what a stream cut by a dying
// referee or proxy ends with (INTERNAL: nginx resets the stream, RST_STREAM code 2; UNKNOWN,
// CANCELLED, ABORTED, DEADLINE_EXCEEDED), and RESOURCE_EXHAUSTED (the rate limit).
bool retryable(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::UNAVAILABLE: case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::ABORTED: case grpc::StatusCode::INTERNAL:
    case grpc::StatusCode::UNKNOWN: case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return true;
    default:
      return false;
  }
}

// The bookkeeping of a reconnection loop: a delay doubling from 100 ms to 2 s (jittered),
// giving up after `give_up` seconds of failures in a row (0: never).
class Retry {
 public:
  explicit Retry(double give_up_s) : give_up_(give_up_s), jitter_(std::random_device{}()) {}
  bool reached = false;  // the referee has answered at least once
  // The referee answered: the delay and the give-up clock start again.
  void up() { reached = true, failing_ = false, delay_ = std::chrono::milliseconds(100); }
  // The delay before the next attempt, or a negative one past the give-up budget.
  std::chrono::milliseconds next() {
    auto now = std::chrono::steady_clock::now();
    if (!failing_) failing_ = true, since_ = now;
    if (give_up_ > 0 && std::chrono::duration<double>(now - since_).count() > give_up_) {
      return std::chrono::milliseconds(-1);
    }
    std::uniform_int_distribution<long> half(0, delay_.count() / 2);
    auto d = delay_ / 2 + std::chrono::milliseconds(half(jitter_));
    delay_ = std::min(delay_ * 2, std::chrono::milliseconds(2000));
    return d;
  }

 private:
  double give_up_;
  bool failing_ = false;
  std::chrono::steady_clock::time_point since_;
  std::chrono::milliseconds delay_{100};
  std::mt19937_64 jitter_;
};

std::shared_ptr<grpc::Channel> make_channel(const std::string& address, bool fresh) {
  grpc::ChannelArguments ch_args;
  ch_args.SetMaxReceiveMessageSize(64 << 20);
  if (fresh) ch_args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a fresh connection per attempt
  ch_args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  ch_args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  ch_args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), ch_args);
}

int run_single(const Args& a) {
  SeatPlay p;
  p.match = a.match, p.token = a.token, p.fallback = a.fallback;
  p.rng.seed(a.seeded ? a.seed : std::random_device{}());
  Retry retry(60);
  for (;;) {
    auto stub = pb::Referee::NewStub(make_channel(a.address, true));
    bool joined = false;
    grpc::Status status;
    if (play_once(*stub, p, joined, status) == Outcome::kGameOver) return 0;
    if (joined) retry.up();
    if (!retryable(status.error_code())) {
      log("error", "failed", "\"code\":" + std::to_string(status.error_code()) +
                             ",\"details\":" + quote(status.error_message()));
      return 1;
    }
    auto delay = retry.next();
    if (delay.count() < 0) {
      log("error", "gave up reaching the referee", "\"details\":" + quote(status.error_message()));
      return 1;
    }
    log("warning", "connection lost; reconnecting",
        "\"details\":" + quote(status.error_message()) +
        ",\"retry_in_ms\":" + std::to_string(delay.count()));
    std::this_thread::sleep_for(delay);
  }
}

// ---- session mode (bin/bot --session): a persistent bot, e.g. a remote league entrant.
//
// The bot token comes from $REFEREE_BOT_TOKEN or --bot-token-file PATH ("-": standard input),
// never from the command line. One Session stream (`authorization: Bearer <bot token>`):
// SessionHello{capacity} (with --accept-challenges also the lobby's accept_challenges,
// challenge_games and max_challenges: while the session is open the referee seats the bot in
// challenges naming it and in seeks that let bots join), then every Assignment is acknowledged and, if new, played on a Play
// stream of its own thread with the assignment's seat token, over the same channel, with the
// same `choose` and refusal rules as a single match. An assignment sent again (`resent`, after a
// reconnect or a referee restart) that is being played or is done is only acknowledged again:
// never two streams for one seat. A dropped session reconnects with backoff (giving up after
// --give-up-after seconds of failures); a refused bot token, or one replaced by registering the
// bot again (TOKEN_REPLACED), ends the bot with status 1 and a message saying so. SIGINT or
// SIGTERM stops it (status 0), as does --max-matches. Each match's result is logged ("game
// over": match, seat, rank, score).
class Session {
 public:
  explicit Session(const Args& a) : a_(a), channel_(make_channel(a.address, false)),
                                    stub_(pb::Referee::NewStub(channel_)) {}

  // `signals` (SIGINT, SIGTERM) are blocked in every thread, gRPC's included (before any
  // started): a thread of our own takes them (sigwait) and stops the session.
  int run(sigset_t signals) {
    std::thread([this, signals] {
      int sig = 0;
      sigwait(&signals, &sig);
      log("info", "stopped", std::string("\"why\":") + (sig == SIGINT ? "\"SIGINT\"" : "\"SIGTERM\"") +
                             ",\"finished\":" + std::to_string(finished_.load()));
      stop();
    }).detach();
    int code = loop();
    stop();
    std::unique_lock<std::mutex> lock(mu_);  // the matches' threads see stopping_ and end
    wake_.wait(lock, [this] { return active_ == 0; });
    return code;
  }

 private:
  int loop() {
    Retry retry(a_.give_up_after);
    for (;;) {
      grpc::Status status;
      std::string reason;
      stream(retry, status, reason);
      if (stopping_) return 0;  // a signal, or --max-matches reached
      if (reason == "TOKEN_REPLACED") {
        log("error", "session ended: this bot token was replaced (the bot was registered again; "
                     "only the new token opens a session) [TOKEN_REPLACED]");
        return 1;
      }
      if (!retryable(status.error_code())) {
        log("error", "session refused: " + status.error_message() + " [" +
                         (reason.empty() ? "code " + std::to_string(status.error_code()) : reason) + "]");
        return 1;
      }
      auto delay = retry.next();
      // until the referee has answered once, a failure is a wrong address or nothing
      // listening there yet, not a lost session
      std::string unreachable = "cannot reach the referee at " + a_.address + ": " + status.error_message();
      if (delay.count() < 0) {
        std::ostringstream after;
        after << a_.give_up_after << "s";
        if (retry.reached) {
          log("error", "gave up after " + after.str() + " reaching the referee",
              "\"details\":" + quote(status.error_message()));
        } else {
          log("error", unreachable + " (gave up after " + after.str() + ")");
        }
        return 1;
      }
      if (retry.reached) {
        log("warning", "session lost; reconnecting", "\"details\":" + quote(status.error_message()) +
                                                     ",\"retry_in_ms\":" + std::to_string(delay.count()));
      } else {
        log("warning", unreachable + "; retrying", "\"retry_in_ms\":" + std::to_string(delay.count()));
      }
      wait_for(delay);
    }
  }

  // One Session stream, until it breaks (`status`, and the referee's reason if any).
  void stream(Retry& retry, grpc::Status& status, std::string& reason) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + a_.bot_token);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      session_ctx_ = &ctx;
    }
    auto call = stub_->Session(&ctx);
    pb::SessionClientMessage hello;
    hello.mutable_hello()->set_capacity(a_.capacity);
    hello.mutable_hello()->set_agent("cpp-starter bin/bot --session");
    hello.mutable_hello()->set_accept_challenges(a_.accept_challenges);
    for (const auto& g : a_.challenge_games) hello.mutable_hello()->add_challenge_games(g);
    hello.mutable_hello()->set_max_challenges(a_.max_challenges);
    call->Write(hello);
    pb::SessionServerMessage msg;
    while (call->Read(&msg)) {
      if (msg.has_welcome()) {
        retry.up();
        log("info", "session open", "\"name\":" + quote(msg.welcome().bot_name()) +
                                    ",\"capacity\":" + std::to_string(msg.welcome().capacity()) +
                                    ",\"pending\":" + std::to_string(msg.welcome().pending()));
      } else if (msg.has_assignment()) {
        const auto& a = msg.assignment();
        pb::SessionClientMessage ack;
        ack.mutable_ack()->set_match_id(a.match_id());
        ack.mutable_ack()->set_seat(a.seat());
        ack.mutable_ack()->set_accept(true);
        call->Write(ack);
        start(a);
      } else if (msg.has_notice()) {
        const auto& n = msg.notice();
        log("warning", "session notice", "\"reason\":" + quote(n.reason()) + ",\"message\":" +
                                         quote(n.message()) + ",\"match\":" + quote(n.match_id()) +
                                         ",\"seat\":" + std::to_string(n.seat()));
      }
    }
    status = call->Finish();
    {
      std::lock_guard<std::mutex> lock(mu_);
      session_ctx_ = nullptr;
    }
    auto trailers = ctx.GetServerTrailingMetadata();
    if (auto r = trailers.find("referee-reason"); r != trailers.end()) {
      reason.assign(r->second.data(), r->second.size());
    }
    if (status.ok()) status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "the referee closed the session");
  }

  // A new assignment is played in a thread of its own; one being played or done is left alone.
  void start(const pb::Assignment& a) {
    std::string key = a.match_id() + ":" + std::to_string(a.seat());
    std::lock_guard<std::mutex> lock(mu_);
    if (playing_.count(key) || done_.count(key)) {
      log("info", std::string("assignment resent; already ") + (done_.count(key) ? "played" : "playing") + " it",
          "\"match\":" + quote(a.match_id()) + ",\"seat\":" + std::to_string(a.seat()));
      return;
    }
    if (stopping_) return;
    log("info", "assignment", "\"match\":" + quote(a.match_id()) + ",\"seat\":" + std::to_string(a.seat()) +
                              ",\"game\":" + quote(a.game()) + ",\"resent\":" + (a.resent() ? "true" : "false"));
    auto p = std::make_shared<SeatPlay>();
    p->match = a.match_id(), p->token = a.seat_token(), p->seat = a.seat();
    p->session = true, p->fallback = a_.fallback;
    // --seed mixed with the match and seat, so a seeded session replays each match the same way
    p->rng.seed(a_.seeded ? a_.seed ^ std::hash<std::string>{}(key) : std::random_device{}());
    playing_[key] = p;
    ++active_;
    // detached, so a long session keeps no finished thread; run() waits for active_ == 0
    std::thread([this, p, key] {
      bool ok = play(*p);
      std::lock_guard<std::mutex> lock(mu_);
      playing_.erase(key);
      if (!stopping_) {
        if (ok) done_.insert(key), ++finished_;  // a failed one is retried if sent again
        else ++failed_;
        if (a_.max_matches > 0 && finished_ + failed_ >= a_.max_matches) stop_locked();
      }
      --active_;
      wake_.notify_all();
    }).detach();
  }

  // Plays one assignment to its end, its Play stream reconnected when it breaks.
  bool play(SeatPlay& p) {
    Retry retry(a_.give_up_after);
    while (!stopping_) {
      bool joined = false;
      grpc::Status status;
      if (play_once(*stub_, p, joined, status) == Outcome::kGameOver) return true;
      if (joined) retry.up();
      if (stopping_) return false;
      auto delay = retryable(status.error_code()) ? retry.next() : std::chrono::milliseconds(-1);
      if (delay.count() < 0) {
        log("error", "match failed", p.fields("\"code\":" + std::to_string(status.error_code()) +
                                              ",\"details\":" + quote(status.error_message())));
        return false;
      }
      wait_for(delay);
    }
    return false;
  }

  void wait_for(std::chrono::milliseconds delay) {
    std::unique_lock<std::mutex> lock(mu_);
    wake_.wait_for(lock, delay, [this] { return stopping_.load(); });
  }

  void stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stop_locked();
  }

  void stop_locked() {
    stopping_ = true;
    if (session_ctx_) session_ctx_->TryCancel();
    for (auto& [key, p] : playing_) p->cancel();
    wake_.notify_all();
  }

  Args a_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::Referee::Stub> stub_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::atomic<bool> stopping_{false};
  grpc::ClientContext* session_ctx_ = nullptr;
  std::map<std::string, std::shared_ptr<SeatPlay>> playing_;
  std::set<std::string> done_;
  std::atomic<int> finished_{0};
  int failed_ = 0;
  int active_ = 0;  // matches' threads running (guarded by mu_)
};

}  // namespace

int main(int argc, char** argv) {
  Args a = parse_args(argc, argv);
  if (a.session) {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    return Session(a).run(signals);
  }
  return run_single(a);
}
