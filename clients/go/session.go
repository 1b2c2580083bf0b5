// Session mode (`bin/bot --session`): a persistent bot, e.g. a remote league entrant.
//
//	REFEREE_BOT_TOKEN=BOT_TOKEN bin/bot --session --address HOST:PORT [--capacity N]
//	    [--max-matches N] [--seed N] [--give-up-after S] [--fallback first_legal]
//
// The bot token comes from $REFEREE_BOT_TOKEN or --bot-token-file PATH ('-': standard input),
// never from the command line. The bot opens one Session stream (`authorization: Bearer <bot
// token>`), sends SessionHello{capacity, and with --accept-challenges the lobby's accept_challenges,
// challenge_games and max_challenges}, and acknowledges every Assignment the referee pushes;
// each new one is played on an ordinary Play stream with the assignment's seat token, over the
// same connection, with the same `choose` and refusal rules as a single match. An assignment
// the referee sends again (`resent`, after a reconnect or a referee restart) that is being
// played or is done is only acknowledged again: never two streams for one seat. A dropped
// session reconnects with backoff (giving up after --give-up-after seconds of failures); a
// refused bot token, or one replaced by registering the bot again (TOKEN_REPLACED), ends the
// bot with status 1 and a message saying so. SIGINT or SIGTERM stops it (status 0), as does
// --max-matches. Each match's result is logged ("game over": match, seat, rank, score).
package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "referee/refereepb"
)

// readTokenFile is the token in path ('-': standard input), surrounding blanks removed.
func readTokenFile(path string) (string, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", fmt.Errorf("%s: no token in it", path)
	}
	return token, nil
}

// matchSeed is the seed of one assignment's generator: --seed mixed with its match and seat,
// so a seeded session replays each match the same way whatever the order they come in.
func matchSeed(a args, match string, seat int32) int64 {
	if !a.seeded {
		return time.Now().UnixNano() ^ rand.Int63()
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s:%d", match, seat)
	return a.seed ^ int64(h.Sum64())
}

type seatKey struct {
	match string
	seat  int32
}

// session is the state shared by the session stream and the matches it plays.
type session struct {
	a        args
	conn     *grpc.ClientConn
	ctx      context.Context // cancelled on SIGINT/SIGTERM or after --max-matches
	stop     context.CancelFunc
	mu       sync.Mutex
	playing  map[seatKey]bool
	done     map[seatKey]bool
	finished int // matches played to their end
	failed   int // matches that could not be played
	wg       sync.WaitGroup
}

// errSessionEnded: the session stream ended for a reason not worth reconnecting after.
type errSessionEnded struct{ msg string }

func (e errSessionEnded) Error() string { return e.msg }

func runSession(a args) int {
	conn, err := newConn(a.address)
	if err != nil {
		logf("error", "failed", map[string]interface{}{"details": err.Error()})
		return 1
	}
	defer conn.Close()
	ctx, stop := context.WithCancel(context.Background())
	s := &session{a: a, conn: conn, ctx: ctx, stop: stop, playing: map[seatKey]bool{}, done: map[seatKey]bool{}}
	defer s.wg.Wait()
	defer stop()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	go func() {
		select {
		case sig := <-signals:
			name := map[os.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
			logf("info", "stopped", map[string]interface{}{"why": name, "finished": s.count()})
			stop()
		case <-ctx.Done():
		}
	}()
	retry := newRetrier(a.giveUpAfter)
	for {
		err := s.stream(retry)
		if ctx.Err() != nil {
			return 0 // a signal, or --max-matches reached
		}
		var ended errSessionEnded
		if errors.As(err, &ended) {
			logf("error", ended.msg, nil)
			return 1
		}
		st := status.Convert(err)
		delay, ok := retry.next()
		// until the referee has answered once, a failure is a wrong address or nothing
		// listening there yet, not a lost session
		unreachable := fmt.Sprintf("cannot reach the referee at %s: %s", a.address, st.Message())
		if !ok {
			if retry.reached {
				logf("error", fmt.Sprintf("gave up after %s reaching the referee", a.giveUpAfter),
					map[string]interface{}{"details": st.Message()})
			} else {
				logf("error", fmt.Sprintf("%s (gave up after %s)", unreachable, a.giveUpAfter), nil)
			}
			return 1
		}
		if retry.reached {
			logf("warning", "session lost; reconnecting", map[string]interface{}{"details": st.Message(), "retry_in_ms": delay.Milliseconds()})
		} else {
			logf("warning", unreachable+"; retrying", map[string]interface{}{"retry_in_ms": delay.Milliseconds()})
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		}
	}
}

func (s *session) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finished
}

// stream runs one Session stream until it breaks (returns why) or s.ctx ends.
func (s *session) stream(retry *retrier) error {
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+s.a.botToken)
	call, err := pb.NewRefereeClient(s.conn).Session(ctx)
	if err != nil {
		return err
	}
	hello := &pb.SessionHello{Capacity: uint32(s.a.capacity), Agent: "go-starter bin/bot --session",
		AcceptChallenges: s.a.acceptChallenges, ChallengeGames: s.a.challengeGames,
		MaxChallenges: uint32(s.a.maxChallenges)}
	if err := call.Send(&pb.SessionClientMessage{Msg: &pb.SessionClientMessage_Hello{Hello: hello}}); err != nil {
		return err
	}
	for {
		msg, err := call.Recv()
		if err == io.EOF {
			return status.Error(codes.Unavailable, "the referee closed the session")
		}
		if err != nil {
			return s.refusal(err, call.Trailer())
		}
		switch m := msg.Msg.(type) {
		case *pb.SessionServerMessage_Welcome:
			retry.up()
			logf("info", "session open", map[string]interface{}{"name": m.Welcome.BotName,
				"capacity": m.Welcome.Capacity, "pending": m.Welcome.Pending})
		case *pb.SessionServerMessage_Assignment:
			a := m.Assignment
			ack := &pb.AssignmentAck{MatchId: a.MatchId, Seat: a.Seat, Accept: true}
			if err := call.Send(&pb.SessionClientMessage{Msg: &pb.SessionClientMessage_Ack{Ack: ack}}); err != nil {
				return err
			}
			s.start(a)
		case *pb.SessionServerMessage_Notice:
			n := m.Notice
			logf("warning", "session notice", map[string]interface{}{"reason": n.Reason, "message": n.Message,
				"match": n.MatchId, "seat": n.Seat})
		}
	}
}

// refusal turns the error that ended a session stream into errSessionEnded when reconnecting
// is no use (the token refused or replaced), else returns it as is.
func (s *session) refusal(err error, trailer metadata.MD) error {
	st := status.Convert(err)
	if retryable(st.Code()) {
		return err
	}
	reason := ""
	if r := trailer.Get("referee-reason"); len(r) > 0 {
		reason = r[0]
	}
	if reason == "TOKEN_REPLACED" {
		return errSessionEnded{"session ended: this bot token was replaced (the bot was registered " +
			"again; only the new token opens a session) [TOKEN_REPLACED]"}
	}
	if reason == "" {
		reason = st.Code().String()
	}
	return errSessionEnded{fmt.Sprintf("session refused: %s [%s]", st.Message(), reason)}
}

// start plays a new assignment in its own goroutine; one being played or done is left alone.
func (s *session) start(a *pb.Assignment) {
	key := seatKey{a.MatchId, a.Seat}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.playing[key] || s.done[key] {
		event := "assignment resent; already playing it"
		if s.done[key] {
			event = "assignment resent; already played it"
		}
		logf("info", event, map[string]interface{}{"match": a.MatchId, "seat": a.Seat})
		return
	}
	if s.ctx.Err() != nil {
		return
	}
	s.playing[key] = true
	logf("info", "assignment", map[string]interface{}{"match": a.MatchId, "seat": a.Seat, "game": a.Game,
		"resent": a.Resent})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ok := s.play(a)
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.playing, key)
		if ok {
			s.done[key] = true // a failed match is not remembered: sent again, it is retried
			s.finished++
		} else if s.ctx.Err() == nil {
			s.failed++
		}
		if s.a.maxMatches > 0 && s.finished+s.failed >= s.a.maxMatches {
			s.stop()
		}
	}()
}

// play plays one assignment to its end, reconnecting its Play stream when it breaks.
func (s *session) play(a *pb.Assignment) bool {
	p := &seatPlay{match: a.MatchId, token: a.SeatToken, seat: a.Seat, session: true,
		fallback: s.a.fallback, rng: rand.New(rand.NewSource(matchSeed(s.a, a.MatchId, a.Seat)))}
	retry := newRetrier(s.a.giveUpAfter)
	for {
		err := playOnce(s.ctx, s.conn, p, retry.up)
		if err == errGameOver {
			return true
		}
		if s.ctx.Err() != nil {
			return false
		}
		st := status.Convert(err)
		if !retryable(st.Code()) {
			logf("error", "match failed", map[string]interface{}{"match": a.MatchId, "seat": a.Seat,
				"code": st.Code().String(), "details": st.Message()})
			return false
		}
		delay, ok := retry.next()
		if !ok {
			logf("error", "match failed: gave up reaching the referee", map[string]interface{}{"match": a.MatchId,
				"seat": a.Seat, "details": st.Message()})
			return false
		}
		select {
		case <-time.After(delay):
		case <-s.ctx.Done():
			return false
		}
	}
}
