// Starter bot in C++ for the board-game referee.
//
//   make                      (generates C++ from ../../proto with protoc, builds bin/bot)
//   bin/bot --address 127.0.0.1:50051 --match MATCH_ID --token=SEAT_TOKEN [--seed N]
//           [--fallback first_legal]
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

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>

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

// One JSON line on stderr; `fields` is already JSON (e.g. "\"seat\":1"), or empty.
void log(const std::string& level, const std::string& event, const std::string& fields = "") {
  std::cerr << "{\"level\":" << quote(level) << ",\"event\":" << quote(event)
            << ",\"bot\":\"cpp-starter\"" << (fields.empty() ? "" : ",") << fields << "}"
            << std::endl;
}

struct Args {
  std::string address = "127.0.0.1:50051", match, token;
  bool seeded = false;
  uint64_t seed = 0;
  bool fallback = false;  // --fallback first_legal: play a substitute for an illegal answer
};

const char* kUsage = "usage: bin/bot --address HOST:PORT --match ID --token=TOKEN [--seed N] "
                     "[--fallback first_legal]";

Args parse_args(int argc, char** argv) {
  Args a;
  if (const char* v = std::getenv("REFEREE_ADDRESS"); v && *v) a.address = v;
  if (const char* v = std::getenv("REFEREE_MATCH")) a.match = v;
  if (const char* v = std::getenv("REFEREE_TOKEN")) a.token = v;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i], value;
    bool inline_value = false;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1), flag = flag.substr(0, eq), inline_value = true;
    }
    auto take = [&]() -> std::string {
      if (inline_value) return value;
      if (i + 1 >= argc) { std::cerr << kUsage << std::endl; std::exit(2); }
      return argv[++i];
    };
    if (flag == "--address") a.address = take();
    else if (flag == "--match") a.match = take();
    else if (flag == "--token") a.token = take();  // use --token=VALUE: a token may begin with '-'
    else if (flag == "--seed") a.seed = std::stoull(take()), a.seeded = true;
    else if (flag == "--fallback") {
      if (take() != "first_legal") { std::cerr << kUsage << std::endl; std::exit(2); }
      a.fallback = true;
    }
    else if (flag == "-h" || flag == "--help") { std::cout << kUsage << std::endl; std::exit(0); }
    else { std::cerr << "unknown argument " << flag << "\n" << kUsage << std::endl; std::exit(2); }
  }
  if (a.match.empty() || a.token.empty()) { std::cerr << kUsage << std::endl; std::exit(2); }
  return a;
}

enum class Outcome { kGameOver, kBroken };

int refused = 0;    // moves of this bot the referee refused, over the whole match
int fallbacks = 0;  // substitute moves played with --fallback first_legal

bool is_legal(const pb::Move& move, const pb::Decision& d) {
  for (const auto& m : d.legal_moves()) {
    if (google::protobuf::util::MessageDifferencer::Equals(m, move)) return true;
  }
  return false;
}

// The --fallback move for `d` (its first legal move), logged as an incident.
pb::Move substitute(const pb::Decision& d, const std::string& why) {
  ++fallbacks;
  log("error", why + "; playing the first legal move instead (--fallback first_legal)",
      "\"incident\":\"fallback\",\"state_version\":" + std::to_string(d.state_version()) +
          ",\"kind\":" + quote(d.kind()));
  return d.legal_moves(0);
}

// One Play stream, from Join to GameOver or to the stream breaking (status in `status`).
Outcome play_once(pb::Referee::Stub& stub, const Args& a, std::mt19937_64& rng,
                  bool& joined, grpc::Status& status) {
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", "Bearer " + a.token);
  auto stream = stub.Play(&ctx);
  pb::ClientMessage join;
  join.mutable_join()->set_match_id(a.match);
  stream->Write(join);

  std::set<uint64_t> answered;  // versions answered on this stream
  pb::Decision pending;         // the decision we are answering
  pb::Move sent;                // the last answer to `pending`
  bool answering = false;       // `sent` awaits the referee's word
  int attempts = 0;             // answers sent to `pending`
  auto send = [&](const pb::Decision& d, const Answer& answer) {
    sent = answer.move, answering = true, ++attempts;
    pb::ClientMessage msg;
    auto* sub = msg.mutable_submit();
    sub->set_state_version(d.state_version());
    *sub->mutable_move() = answer.move;
    sub->set_note(clean_note(answer.note));
    sub->set_request_id("cpp" + std::to_string(d.state_version()) + "-" + std::to_string(attempts));
    stream->Write(msg);
  };
  auto submit = [&](const pb::Decision& d) {
    Answer answer = choose(d, rng);
    if (a.fallback && !is_legal(answer.move, d)) {
      answer.move = substitute(d, "choose returned a move that is not among legal_moves");
    }
    send(d, answer);
  };
  pb::ServerMessage msg;
  while (stream->Read(&msg)) {
    switch (msg.msg_case()) {
      case pb::ServerMessage::kWelcome:
        joined = true;
        log("info", "joined", "\"match\":" + quote(a.match) +
                              ",\"seat\":" + std::to_string(msg.welcome().seat()) +
                              ",\"game\":" + quote(msg.welcome().game()));
        break;
      case pb::ServerMessage::kDecision: {
        const auto& d = msg.decision();
        if (answered.count(d.state_version()) || d.legal_moves_size() == 0) break;
        answered.insert(d.state_version());
        pending = d, attempts = 0;
        submit(pending);
        break;
      }
      case pb::ServerMessage::kMoveResult: {
        const auto& r = msg.move_result();
        if (r.accepted()) break;
        // A refused move leaves the decision pending (it is not pushed again). A late or
        // out-of-turn answer (STALE_STATE, NOT_YOUR_TURN) needs nothing: a newer decision comes.
        bool own = r.reason() == pb::ILLEGAL_MOVE || r.reason() == pb::MALFORMED ||
                   r.reason() == pb::WRONG_GAME || r.reason() == pb::REASON_UNSPECIFIED;
        if (!own || !answering || r.state_version() != pending.state_version()) {
          log("warning", "move not accepted", "\"reason\":" + quote(pb::Reason_Name(r.reason())) +
                                              ",\"message\":" + quote(r.message()));
          break;
        }
        ++refused, answering = false;
        Refusal refusal{pending.state_version(), pending.kind(), sent, pb::Reason_Name(r.reason()),
                        r.message(), attempts, attempts > kReasks};
        log("error", "move rejected",
            "\"incident\":\"refused\",\"reason\":" + quote(refusal.reason) +
            ",\"message\":" + quote(refusal.message) +
            ",\"state_version\":" + std::to_string(refusal.state_version) +
            ",\"kind\":" + quote(refusal.kind) + ",\"attempt\":" + std::to_string(attempts));
        on_refused(refusal);
        if (refusal.final && a.fallback && attempts == kReasks + 1) {  // a refused substitute is final
          send(pending, {substitute(pending, "the referee refused every answer"), ""});
          break;
        }
        if (refusal.final) {
          log("error", "stopped answering after refused moves; the referee's time policy plays "
                       "this decision",
              "\"incident\":\"gave_up\",\"state_version\":" +
                  std::to_string(refusal.state_version));
          break;
        }
        submit(pending);
        break;
      }
      case pb::ServerMessage::kGameOver:
        log("info", "game over", "\"summary\":" + quote(msg.game_over().summary()) +
                                 ",\"refused\":" + std::to_string(refused) +
                                 ",\"fallbacks\":" + std::to_string(fallbacks));
        ctx.TryCancel();
        stream->Finish();
        return Outcome::kGameOver;
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

}  // namespace

int main(int argc, char** argv) {
  Args a = parse_args(argc, argv);
  std::mt19937_64 rng(a.seeded ? a.seed : std::random_device{}());
  std::mt19937_64 jitter(std::random_device{}());
  auto delay = std::chrono::milliseconds(100);
  auto failing_since = std::chrono::steady_clock::time_point{};
  for (;;) {
    grpc::ChannelArguments ch_args;
    ch_args.SetMaxReceiveMessageSize(64 << 20);
    ch_args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a fresh connection per attempt
    ch_args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    ch_args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
    auto channel = grpc::CreateCustomChannel(a.address, grpc::InsecureChannelCredentials(), ch_args);
    auto stub = pb::Referee::NewStub(channel);
    bool joined = false;
    grpc::Status status;
    if (play_once(*stub, a, rng, joined, status) == Outcome::kGameOver) return 0;
    if (joined) failing_since = {}, delay = std::chrono::milliseconds(100);
    if (!retryable(status.error_code())) {
      log("error", "failed", "\"code\":" + std::to_string(status.error_code()) +
                             ",\"details\":" + quote(status.error_message()));
      return 1;
    }
    auto now = std::chrono::steady_clock::now();
    if (failing_since == std::chrono::steady_clock::time_point{}) failing_since = now;
    if (now - failing_since > std::chrono::minutes(1)) {
      log("error", "gave up reaching the referee", "\"details\":" + quote(status.error_message()));
      return 1;
    }
    log("warning", "connection lost; reconnecting",
        "\"details\":" + quote(status.error_message()) +
        ",\"retry_in_ms\":" + std::to_string(delay.count()));
    std::uniform_int_distribution<long> half(0, delay.count() / 2);
    std::this_thread::sleep_for(delay / 2 + std::chrono::milliseconds(half(jitter)));
    delay = std::min(delay * 2, std::chrono::milliseconds(2000));
  }
}
