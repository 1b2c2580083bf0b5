// Starter bot in Go for the board-game referee.
//
//	make                      (generates refereepb from ../../proto, builds bin/bot)
//	bin/bot --address 127.0.0.1:50051 --match MATCH_ID --token=SEAT_TOKEN [--seed N]
//	        [--fallback first_legal]
//	bin/bot --session [--bot-token-file PATH] [--capacity N] [--max-matches N] [--seed N]
//	        [--give-up-after S] [--fallback first_legal]     (session mode: session.go)
//	        [--accept-challenges [--games G,G] [--max-challenges N]]
//
// The token may also come from $REFEREE_TOKEN (the address from $REFEREE_ADDRESS, the match from
// $REFEREE_MATCH). The bot opens the Play stream with `authorization: Bearer <token>`, sends
// Join, and answers every Decision with the move `choose` returns, echoing the decision's
// state_version. After a broken stream (referee restart, network drop) it joins again with
// backoff; the referee then pushes the pending decision again. Exit status: 0 on GameOver,
// 1 on failure, 2 on bad usage. Logs are JSON lines on stderr.
//
// The move `choose` returns is sent as it is. If the referee refuses it (its reason and the
// rule's message come back), the bot logs "move rejected", counts it, calls `onRefused` and
// asks `choose` again for the same decision, at most reasks times; then it stops answering that
// decision and the referee's time policy plays it (with --fallback first_legal it plays the first
// legal move instead, and for an answer not among legal_moves too, each use logged as an
// incident). `choose` may also return a note (plain text,
// recorded with the move, never shown to the other seats during the match): cleanNote drops
// control characters but newline and tab and cuts it to noteLimit bytes of UTF-8.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "referee/refereepb"
)

// ============================================================================================
// YOUR STRATEGY GOES HERE.
// decision.LegalMoves lists every legal move; return one of them unchanged.
// decision.View is everything your seat may see (fields in proto/referee/v1/<game>.proto),
// decision.Kind names the choice (e.g. "batavia.auction"). This starter picks at random,
// which is legal in every game. The second result is an optional note about the move (your
// reasoning; "" for none).
func choose(decision *pb.Decision, rng *rand.Rand) (*pb.Move, string) {
	moves := decision.GetLegalMoves()
	pick := rng.Intn(len(moves))
	return moves[pick], fmt.Sprintf("%s: move %d of %d, at random", decision.Kind, pick+1, len(moves))
}

// onRefused is called when the referee refused a move of yours: r.Reason and r.Message say
// why (the rule). Unless r.Final, choose is then asked again for the same decision.
func onRefused(r refusal) {}

// ============================================================================================

// reasks: after a refused move, choose is asked again at most this many times per decision.
const reasks = 2

// noteLimit: the most bytes of UTF-8 the referee takes in a note.
const noteLimit = 512

type refusal struct {
	StateVersion    uint64
	Kind            string
	Move            *pb.Move
	Reason, Message string
	Attempt         int  // 1 for the first answer to the decision
	Final           bool // no more asks: the time policy plays the decision
}

// cleanNote returns the note as the referee takes it: control characters other than newline
// and tab dropped (and bytes that are not UTF-8), cut to noteLimit bytes at a character
// boundary.
func cleanNote(note string) string {
	out := make([]byte, 0, len(note))
	for i, w := 0, 0; i < len(note); i += w {
		r, size := utf8.DecodeRuneInString(note[i:])
		w = size
		if (r == utf8.RuneError && size == 1) || (unicode.IsControl(r) && r != '\n' && r != '\t') {
			continue
		}
		if len(out)+size > noteLimit {
			break
		}
		out = append(out, note[i:i+size]...)
	}
	return string(out)
}

func isLegal(move *pb.Move, d *pb.Decision) bool {
	for _, m := range d.GetLegalMoves() {
		if proto.Equal(m, move) {
			return true
		}
	}
	return false
}

// substitute is the --fallback move for d (its first legal move), logged as an incident.
func substitute(p *seatPlay, d *pb.Decision, why string) *pb.Move {
	p.fallbacks++
	logf("error", why+"; playing the first legal move instead (--fallback first_legal)",
		p.fields(map[string]interface{}{"incident": "fallback", "state_version": d.StateVersion, "kind": d.Kind}))
	return d.GetLegalMoves()[0]
}

// refusedReasons: the refusals of the bot's own move (not a late or out-of-turn one).
var refusedReasons = map[pb.Reason]bool{pb.Reason_ILLEGAL_MOVE: true, pb.Reason_MALFORMED: true,
	pb.Reason_WRONG_GAME: true, pb.Reason_REASON_UNSPECIFIED: true, pb.Reason_INTERNAL: true}

// A move refused with STORE_UNAVAILABLE (the referee's database is away; nothing was played) is
// sent again unchanged after a delay doubling from 100 ms to 2 s (jittered), while the
// decision's deadline allows (60 s without one); then the time policy plays it. Safe: the move
// carries the decision's state_version, so it is played at most once.
const (
	storeResendFirst = 100 * time.Millisecond
	storeResendMax   = 2 * time.Second
	storeResendLimit = 60 * time.Second
)

func logf(level, event string, fields map[string]interface{}) {
	if fields == nil {
		fields = map[string]interface{}{}
	}
	fields["level"], fields["event"], fields["bot"] = level, event, "go-starter"
	line, _ := json.Marshal(fields)
	fmt.Fprintln(os.Stderr, string(line))
}

type args struct {
	address, match, token string
	seed                  int64
	seeded                bool
	fallback              string // "first_legal": play a substitute for an illegal answer
	session               bool   // --session: play every match assigned to a bot token
	botToken              string // session mode: $REFEREE_BOT_TOKEN or --bot-token-file
	capacity, maxMatches  int
	giveUpAfter           time.Duration
	// session mode, the lobby (issue 33): take challenges and seats in seeks that let bots
	// join while the session is open; the games accepted (empty: every game) and the lobby
	// matches played at once (0: the capacity). Sent in SessionHello.
	acceptChallenges bool
	challengeGames   []string
	maxChallenges    int
}

const usage = `usage: bin/bot --address HOST:PORT --match ID [--token=TOKEN] [--seed N] [--fallback first_legal]
       bin/bot --session [--address HOST:PORT] [--bot-token-file PATH] [--capacity N]
               [--max-matches N] [--seed N] [--give-up-after S] [--fallback first_legal]
               [--accept-challenges [--games G,G] [--max-challenges N]]
The seat token comes from $REFEREE_TOKEN, the bot token of --session from $REFEREE_BOT_TOKEN.`

func parseArgs() args {
	a := args{address: envOr("REFEREE_ADDRESS", "127.0.0.1:50051"), match: os.Getenv("REFEREE_MATCH"),
		token: os.Getenv("REFEREE_TOKEN"), botToken: os.Getenv("REFEREE_BOT_TOKEN")}
	fs := flag.NewFlagSet("bot", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintln(os.Stderr, usage) }
	fs.StringVar(&a.address, "address", a.address, "referee host:port")
	fs.StringVar(&a.match, "match", a.match, "match id")
	fs.StringVar(&a.token, "token", a.token, "seat token (use --token=VALUE; default $REFEREE_TOKEN)")
	seed := fs.Int64("seed", 0, "seed for the bot's own randomness")
	fs.StringVar(&a.fallback, "fallback", "", "first_legal: play the first legal move for an answer that is not legal (each use logged as an incident; default: none)")
	fs.BoolVar(&a.session, "session", false, "session mode: play every match the referee assigns to this bot")
	tokenFile := fs.String("bot-token-file", "", "session mode: read the bot token from PATH ('-': standard input; default $REFEREE_BOT_TOKEN)")
	fs.IntVar(&a.capacity, "capacity", 1, "session mode: matches played at once (1 to 256)")
	fs.IntVar(&a.maxMatches, "max-matches", 0, "session mode: stop after N matches (0: until stopped)")
	giveUp := fs.Float64("give-up-after", 120, "session mode: stop after S seconds without reaching the referee (0: never)")
	fs.BoolVar(&a.acceptChallenges, "accept-challenges", false, "session mode: take challenges from the referee's lobby, and seats in seeks that let bots join, while the session is open")
	games := fs.String("games", "", "with --accept-challenges: the games accepted, comma-separated (default: every game)")
	fs.IntVar(&a.maxChallenges, "max-challenges", 0, "with --accept-challenges: lobby matches played at once (0 to 256; 0: --capacity)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if a.fallback != "" && a.fallback != "first_legal" {
		fmt.Fprintln(os.Stderr, "--fallback takes first_legal")
		os.Exit(2)
	}
	sessionOnly := map[string]bool{"bot-token-file": true, "capacity": true, "max-matches": true, "give-up-after": true,
		"accept-challenges": true, "games": true, "max-challenges": true}
	matchOnly := map[string]bool{"match": true, "token": true}
	bad, badLobby := "", ""
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "seed" {
			a.seeded = true
		}
		if (sessionOnly[f.Name] && !a.session) || (matchOnly[f.Name] && a.session) {
			bad = f.Name
		}
		if (f.Name == "games" || f.Name == "max-challenges") && !a.acceptChallenges && bad == "" {
			badLobby = f.Name
		}
	})
	if badLobby != "" && bad == "" {
		fmt.Fprintf(os.Stderr, "--%s goes with --accept-challenges\n%s\n", badLobby, usage)
		os.Exit(2)
	}
	if bad != "" {
		fmt.Fprintf(os.Stderr, "--%s does not go with%s --session\n%s\n", bad, map[bool]string{true: "", false: "out"}[a.session], usage)
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected argument %q\n%s\n", fs.Arg(0), usage)
		os.Exit(2)
	}
	a.seed = *seed
	for _, g := range strings.Split(*games, ",") {
		if g = strings.TrimSpace(g); g != "" {
			a.challengeGames = append(a.challengeGames, g)
		}
	}
	a.giveUpAfter = time.Duration(*giveUp * float64(time.Second))
	if a.session {
		if *tokenFile != "" {
			token, err := readTokenFile(*tokenFile)
			if err != nil {
				fmt.Fprintf(os.Stderr, "--bot-token-file: %v\n", err)
				os.Exit(2)
			}
			a.botToken = token
		}
		if a.botToken == "" || a.capacity < 1 || a.capacity > 256 || a.maxMatches < 0 || *giveUp < 0 ||
			a.maxChallenges < 0 || a.maxChallenges > 256 {
			fmt.Fprintln(os.Stderr, "no bot token ($REFEREE_BOT_TOKEN or --bot-token-file), or a value out of range")
			fmt.Fprintln(os.Stderr, usage)
			os.Exit(2)
		}
		return a
	}
	if a.match == "" || a.token == "" {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	return a
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

var errGameOver = errors.New("game over")

// seatPlay is one seat being played: where, with what token, and what happened so far.
type seatPlay struct {
	match, token string
	seat         int32 // session mode: the assignment's seat (logged)
	session      bool
	fallback     string
	rng          *rand.Rand
	refused      int // moves of this bot the referee refused, over the whole match
	fallbacks    int // substitute moves played with --fallback first_legal
}

// fields adds the match (and, in session mode, the seat) to a log line's fields.
func (p *seatPlay) fields(f map[string]interface{}) map[string]interface{} {
	if p.session {
		f["match"], f["seat"] = p.match, p.seat
	}
	return f
}

// playOnce runs one Play stream from Join to GameOver (returns errGameOver) or to the stream
// breaking (returns the error).
func playOnce(ctx context.Context, conn *grpc.ClientConn, p *seatPlay, joined func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+p.token)
	stream, err := pb.NewRefereeClient(conn).Play(ctx)
	if err != nil {
		return err
	}
	// CombineDecision: when this seat acts again right after its own move, the referee sends
	// that next Decision inside the move's MoveResult (Next) instead of a message of its own.
	join := &pb.ClientMessage{Msg: &pb.ClientMessage_Join{Join: &pb.Join{MatchId: p.match,
		CombineDecision: true}}}
	if err := stream.Send(join); err != nil {
		return err
	}
	answered := map[uint64]bool{} // versions answered on this stream
	var pending *pb.Decision      // the decision we are answering
	var sent *pb.Move             // the last answer to pending (nil once refused for good)
	attempts := 0                 // answers sent to pending
	sentNote := ""                // the note sent with it
	storeDelay, storeSince, resends := storeResendFirst, time.Time{}, 0
	write := func(d *pb.Decision, move *pb.Move, note string) error {
		sub := &pb.Submit{StateVersion: d.StateVersion, Move: move, Note: cleanNote(note),
			RequestId: fmt.Sprintf("go%d-%d-%d", d.StateVersion, attempts, resends)}
		return stream.Send(&pb.ClientMessage{Msg: &pb.ClientMessage_Submit{Submit: sub}})
	}
	send := func(d *pb.Decision, move *pb.Move, note string) error {
		sent, sentNote, attempts = move, note, attempts+1
		storeDelay, storeSince = storeResendFirst, time.Time{}
		return write(d, move, note)
	}
	// resend: STORE_UNAVAILABLE; the same move again after a short delay, bounded by the move clock
	resend := func(d *pb.Decision, message string) error {
		now := time.Now()
		if storeSince.IsZero() {
			storeSince = now
		}
		delay := storeDelay/2 + time.Duration(p.rng.Int63n(int64(storeDelay/2)+1))
		if storeDelay *= 2; storeDelay > storeResendMax {
			storeDelay = storeResendMax
		}
		late := now.Add(delay).Sub(storeSince) > storeResendLimit
		if d.DeadlineUnixMs != 0 {
			late = now.Add(delay).UnixMilli() >= d.DeadlineUnixMs
		}
		if late {
			logf("error", "the referee's store stayed unavailable until the move clock ran out; its time policy plays this decision",
				p.fields(map[string]interface{}{"incident": "store_unavailable", "state_version": d.StateVersion, "message": message}))
			sent = nil
			return nil
		}
		logf("warning", "the referee's store is unavailable; sending the move again",
			p.fields(map[string]interface{}{"state_version": d.StateVersion, "retry_in_ms": delay.Milliseconds()}))
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
		resends++
		return write(d, sent, sentNote)
	}
	submit := func(d *pb.Decision) error {
		move, note := choose(d, p.rng)
		if p.fallback != "" && !isLegal(move, d) {
			move = substitute(p, d, "choose returned a move that is not among legal_moves")
		}
		return send(d, move, note)
	}
	take := func(d *pb.Decision) error { // a Decision, or one inside a MoveResult
		if answered[d.StateVersion] || len(d.LegalMoves) == 0 {
			return nil
		}
		answered[d.StateVersion], pending, attempts = true, d, 0
		return submit(d)
	}
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return status.Error(codes.Unavailable, "stream closed before the game ended")
		}
		if err != nil {
			if r := stream.Trailer().Get("referee-reason"); len(r) > 0 && r[0] == "MATCH_OVER" {
				return errGameOver // the match ended while we were away
			}
			return err
		}
		switch m := msg.Msg.(type) {
		case *pb.ServerMessage_Welcome:
			joined()
			logf("info", "joined", map[string]interface{}{"match": p.match, "seat": m.Welcome.Seat, "game": m.Welcome.Game})
		case *pb.ServerMessage_Decision:
			if err := take(m.Decision); err != nil {
				return err
			}
		case *pb.ServerMessage_MoveResult:
			r := m.MoveResult
			if r.Accepted {
				if r.Next != nil { // this seat acts again: its next Decision
					if err := take(r.Next); err != nil {
						return err
					}
				}
				continue
			}
			if r.Reason == pb.Reason_STORE_UNAVAILABLE && pending != nil && sent != nil && r.StateVersion == pending.StateVersion {
				if err := resend(pending, r.Message); err != nil {
					return err
				}
				continue
			}
			// A refused move leaves the decision pending (it is not pushed again). A late or
			// out-of-turn answer (STALE_STATE, NOT_YOUR_TURN) needs nothing: a newer decision comes.
			if !refusedReasons[r.Reason] || pending == nil || sent == nil || r.StateVersion != pending.StateVersion {
				logf("warning", "move not accepted", p.fields(map[string]interface{}{"reason": r.Reason.String(), "message": r.Message}))
				continue
			}
			p.refused++
			ref := refusal{StateVersion: pending.StateVersion, Kind: pending.Kind, Move: sent,
				Reason: r.Reason.String(), Message: r.Message, Attempt: attempts, Final: attempts > reasks}
			sent = nil
			logf("error", "move rejected", p.fields(map[string]interface{}{"incident": "refused", "reason": ref.Reason,
				"message": ref.Message, "state_version": ref.StateVersion, "kind": ref.Kind, "attempt": ref.Attempt}))
			onRefused(ref)
			if ref.Final && p.fallback != "" && ref.Attempt == reasks+1 { // once: a refused substitute is final
				if err := send(pending, substitute(p, pending, "the referee refused every answer"), ""); err != nil {
					return err
				}
				continue
			}
			if ref.Final {
				logf("error", "stopped answering after refused moves; the referee's time policy plays this decision",
					p.fields(map[string]interface{}{"incident": "gave_up", "state_version": ref.StateVersion, "attempts": ref.Attempt}))
				continue
			}
			if err := submit(pending); err != nil {
				return err
			}
		case *pb.ServerMessage_GameOver:
			over := m.GameOver
			fields := p.fields(map[string]interface{}{"winners": over.Winners, "summary": over.Summary,
				"refused": p.refused, "fallbacks": p.fallbacks})
			if p.session { // this seat's result
				for _, s := range over.Seats {
					if s.Seat == p.seat {
						fields["rank"], fields["score"] = s.Rank, s.Score
					}
				}
			}
			logf("info", "game over", fields)
			return errGameOver
		}
	}
}

// retryable: the statuses after which a stream is opened again (docs/bot/protocol.md,
// "Reconnecting"): UNAVAILABLE (a referee restarting, NOT_OWNER, STORE_UNAVAILABLE), what a
// stream cut by a dying referee or proxy ends with (INTERNAL: nginx resets the stream,
// RST_STREAM code 2; UNKNOWN, CANCELLED, ABORTED, DEADLINE_EXCEEDED), RESOURCE_EXHAUSTED.
func retryable(code codes.Code) bool {
	switch code {
	case codes.Unavailable, codes.Canceled, codes.Aborted, codes.Internal, codes.Unknown,
		codes.DeadlineExceeded, codes.ResourceExhausted:
		return true
	}
	return false
}

// newConn is a connection to the referee whose own reconnection backoff is short: gRPC's
// default (1 s growing to 120 s) would leave every stream failing long after a restarted
// referee is back.
func newConn(address string) (*grpc.ClientConn, error) {
	return grpc.Dial(address, grpc.WithInsecure(),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{
			BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second},
			MinConnectTimeout: 5 * time.Second}))
}

// retrier is the bookkeeping of a reconnection loop: a delay doubling from 100 ms to 2 s, and
// giving up after `giveUp` of failures in a row (0: never).
type retrier struct {
	reached      bool // the referee has answered at least once
	delay        time.Duration
	failingSince time.Time
	giveUp       time.Duration
}

func newRetrier(giveUp time.Duration) *retrier {
	return &retrier{delay: 100 * time.Millisecond, giveUp: giveUp}
}

// up: the referee answered; the delay and the give-up clock start again.
func (r *retrier) up() { r.reached, r.failingSince, r.delay = true, time.Time{}, 100*time.Millisecond }

// next is the (jittered) delay before the next attempt, or false past the give-up budget.
func (r *retrier) next() (time.Duration, bool) {
	if r.failingSince.IsZero() {
		r.failingSince = time.Now()
	}
	if r.giveUp > 0 && time.Since(r.failingSince) > r.giveUp {
		return 0, false
	}
	d := r.delay/2 + time.Duration(rand.Int63n(int64(r.delay/2)+1))
	if r.delay *= 2; r.delay > 2*time.Second {
		r.delay = 2 * time.Second
	}
	return d, true
}

func run() int {
	a := parseArgs()
	if a.session {
		return runSession(a)
	}
	seed := time.Now().UnixNano()
	if a.seeded {
		seed = a.seed
	}
	p := &seatPlay{match: a.match, token: a.token, fallback: a.fallback, rng: rand.New(rand.NewSource(seed))}
	retry := newRetrier(time.Minute)
	for {
		conn, err := newConn(a.address)
		if err != nil {
			logf("error", "failed", map[string]interface{}{"details": err.Error()})
			return 1
		}
		err = playOnce(context.Background(), conn, p, retry.up)
		conn.Close()
		if err == errGameOver {
			return 0
		}
		st, _ := status.FromError(err)
		if !retryable(st.Code()) {
			logf("error", "failed", map[string]interface{}{"code": st.Code().String(), "details": st.Message()})
			return 1
		}
		delay, ok := retry.next()
		if !ok {
			logf("error", "gave up reaching the referee", map[string]interface{}{"details": st.Message()})
			return 1
		}
		logf("warning", "connection lost; reconnecting", map[string]interface{}{"details": st.Message(), "retry_in_ms": delay.Milliseconds()})
		time.Sleep(delay)
	}
}

func main() { os.Exit(run()) }
