"""The play page's calls in a cluster (issue 33 item 1): the web viewer runs on the home worker;
a seat of a match another worker runs is read and played through it, the call handed to the
owner as the gRPC calls are, its refusals passed back with their reason."""
from __future__ import annotations

import time

import grpc
import httpx

from referee.server.base import shard
from referee.server.cluster import free_port
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN


def test_a_seat_of_another_workers_match_is_played_through_the_web(make_cluster):
    port = free_port("127.0.0.1")
    c = make_cluster("--http-port", str(port))
    base = f"http://127.0.0.1:{port}"
    with grpc.insecure_channel(c.address) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        made = [stub.CreateMatch(pb.CreateMatchRequest(game="batavia", seats=3, seed=seed),
                                 metadata=(("authorization", f"Bearer {ADMIN}"),), timeout=30)
                for seed in range(6)]  # CreateMatch is spread over the workers in turn
        other = next(m for m in made if shard.of_match(m.match_id) == "w2")
        mid = other.match_id
        tokens = [s.token for s in sorted(other.seats, key=lambda s: s.seat)]
        deadline = time.monotonic() + 60
        while True:
            try:
                r = httpx.get(f"{base}/api/play/{mid}",
                              headers={"Authorization": f"Bearer {tokens[0]}"})
                break
            except httpx.TransportError:  # the viewer is still starting
                assert time.monotonic() < deadline, "the web viewer did not start"
                time.sleep(0.3)
        states = [httpx.get(f"{base}/api/play/{mid}",
                            headers={"Authorization": f"Bearer {t}"}).json() for t in tokens]
        assert r.status_code == 200 and [s["seat"] for s in states] == [0, 1, 2]
        seat = next(s["seat"] for s in states if s["decision"])
        d = states[seat]["decision"]
        url = f"{base}/api/play/{mid}/move"
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        stale = httpx.post(url, json={"move": d["moves"][0]["move"], "version": d["version"] + 3},
                           headers=auth)
        assert stale.status_code == 409 and stale.json()["reason"] == "STALE_STATE", stale.text
        played = httpx.post(url, json={"move": d["moves"][0]["move"], "version": d["version"]},
                            headers=auth)
        assert played.status_code == 200 and played.json()["accepted"], played.text
        # the owner played it: its GetView (through the cluster's proxy) says so
        view = stub.GetView(pb.GetViewRequest(match_id=mid),
                            metadata=(("authorization", f"Bearer {tokens[seat]}"),), timeout=30)
        assert view.state_version > d["version"]
