"""Matches created at once and joined at once all reach their end (issue 31 item 8).

Found from outside: 300 four-seat Batavia matches created together and joined by one client
over 32 channels; 255 finished in about 30 s, the other 45 never moved again, the referee idle.
grpc.aio takes a new call only a few event-loop turns after the last one, and while the loop is
busy with the moves of the matches already joined, the latecomers of a burst of Play streams
wait in gRPC core's queue of calls not yet started. Core drops a call that waited there longer
than ``grpc.server_max_unrequested_time_in_server`` (30 s by default): the client's stream
ends CANCELLED, the referee never sees it, and a match missing a seat waits for it forever.
The referee now lets a call wait ``--max-call-wait`` seconds (an hour by default; the queue is
still bounded by ``--max-pending-calls``), and registers each of its methods with gRPC core, so
that the calls of other methods do not queue behind a burst of Play streams."""
from __future__ import annotations

import pytest

from referee.cli import build_parser
from referee.server.app import server_options
from referee.server.config import DEFAULT_MAX_CALL_WAIT_S, ServerConfig


def test_an_arrived_call_may_wait_an_hour_to_start():
    """Issue 31 item 8: the server's calls may wait --max-call-wait (default 3600 s) to be
    started, not gRPC core's 30 s."""
    opts = dict(server_options(ServerConfig()))
    assert opts["grpc.server_max_unrequested_time_in_server"] == 3600 == DEFAULT_MAX_CALL_WAIT_S
    args = build_parser().parse_args(["serve", "--max-call-wait", "90.5"])
    assert args.max_call_wait == 90.5
    opts = dict(server_options(ServerConfig(max_call_wait_s=args.max_call_wait)))
    assert opts["grpc.server_max_unrequested_time_in_server"] == 91  # whole seconds, rounded up


@pytest.mark.slow
def test_a_burst_of_matches_joined_at_once_all_finish():
    """Issue 31 item 8: 600 four-seat Batavia matches created at once, their 2,400 Play streams
    opened at once by one process over 32 channels (random legal moves) against a `referee
    serve` process with its default settings: every match ends, no stream ends with an error.
    Before the fix a burst like this lost the streams still queued after 30 s (CANCELLED) and
    their matches stalled (600 rather than the reported 300 so that it happens on a quiet
    machine too: the first thousand or so streams are started before the matches get going)."""
    from bench.burst import measure_burst

    # generous bounds, no time asserted: a stall is 90 s without a move of any unfinished match
    out = measure_burst(matches=600, seats=4, channels=32, limit_s=900.0, stall_s=90.0)
    assert out["unfinished"] == 0, out
    assert out["streams"] == {"game_over": 2400}, out
    # Issue 31 item 8: a unary call made while the burst's streams wait to be started is not
    # started after them all (each method has its own queue): when it is answered, many of
    # the burst's streams still wait for their Welcome (held back behind them, a fresh
    # ListGames waited 60 s, past the tournament runner's 30 s deadline on CreateMatch and
    # GetRecord, and was answered with about none left). How many still wait depends on how
    # busy the machine is (1,895 of 2,400 on a quiet one, 160 in a clean-checkout CI run next to
    # the other tests), so the bound is 1% of the streams: above "about none", well below
    # what a loaded machine still shows
    assert out["waiting_at_probe"] >= 24, out
