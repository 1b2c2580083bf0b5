// Starter bot in C++ for the board-game referee.
//
//   make                      (generates C++ from ../../proto with protoc, builds bin/bot)
//   bin/bot --address 127.0.0.1:50051 --match MATCH_ID --token=SEAT_TOKEN [--seed N]
//
// The token may also come from $REFEREE_TOKEN (the address from $REFEREE_ADDRESS, the match from
// $REFEREE_MATCH). The bot opens the Play stream with `authorization: Bearer <token>`, sends
// Join, and answers every Decision with the move `choose` returns, echoing the decision's
// state_version. After a broken stream (referee restart, network drop) it joins again with
// backoff; the referee then pushes the pending decision again. Exit status: 0 on GameOver,
// 1 on failure, 2 on bad usage. Logs are JSON lines on stderr.
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

#include "referee/v1/referee.grpc.pb.h"

namespace pb = referee::v1;

// ============================================================================================
// YOUR STRATEGY GOES HERE.
// decision.legal_moves() lists every legal move; return one of them unchanged.
// decision.view() is everything your seat may see (fields in proto/referee/v1/<game>.proto),
// decision.kind() names the choice (e.g. "batavia.auction"). This starter picks at random,
// which is legal in every game.
pb::Move choose(const pb::Decision& decision, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pick(0, decision.legal_moves_size() - 1);
  return decision.legal_moves(pick(rng));
}
// ============================================================================================

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
};

const char* kUsage = "usage: bin/bot --address HOST:PORT --match ID --token=TOKEN [--seed N]";

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
    else if (flag == "-h" || flag == "--help") { std::cout << kUsage << std::endl; std::exit(0); }
    else { std::cerr << "unknown argument " << flag << "\n" << kUsage << std::endl; std::exit(2); }
  }
  if (a.match.empty() || a.token.empty()) { std::cerr << kUsage << std::endl; std::exit(2); }
  return a;
}

enum class Outcome { kGameOver, kBroken };

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
  int retries = 0;              // re-answers of `pending` after rejections
  auto submit = [&](const pb::Decision& d) {
    pb::ClientMessage msg;
    auto* sub = msg.mutable_submit();
    sub->set_state_version(d.state_version());
    *sub->mutable_move() = choose(d, rng);
    sub->set_request_id("cpp" + std::to_string(d.state_version()) + "-" + std::to_string(retries));
    stream->Write(msg);
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
        pending = d, retries = 0;
        submit(pending);
        break;
      }
      case pb::ServerMessage::kMoveResult: {
        const auto& r = msg.move_result();
        if (r.accepted()) break;
        log("warning", "move rejected", "\"reason\":" + quote(pb::Reason_Name(r.reason())) +
                                        ",\"message\":" + quote(r.message()));
        // The decision is still ours if the referee is at its version: answer it again.
        if (pending.legal_moves_size() && r.state_version() == pending.state_version() &&
            retries < 3) {
          ++retries;
          submit(pending);
        }
        break;
      }
      case pb::ServerMessage::kGameOver:
        log("info", "game over", "\"summary\":" + quote(msg.game_over().summary()));
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
