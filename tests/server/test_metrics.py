"""The referee's Prometheus metrics (issue 37 item 1): served on --metrics-listen and on the web
port's /metrics to the admin token only, counting moves, refusals by reason and latencies, with
no token in any label; a real Prometheus scrapes them (skipped where Debian's prometheus is
missing); the shipped alert rules pass promtool, and the dashboard names only exported series."""
from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import grpc
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from referee_tournament.league import metrics as league_metrics

from referee.server.base import metrics
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

from .conftest import ADMIN
from .helpers import create, md, play_match, reason_of

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "deploy/prometheus/alerts.yml"
ALERT_TESTS = ROOT / "deploy/prometheus/alerts_test.yml"
DASHBOARD = ROOT / "deploy/grafana/referee.json"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


def value(text: str, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    return sum(v for (n, ls), v in samples(text).items()
               if n == name and set(labels.items()) <= set(ls))


async def refused_then_played(target: str) -> tuple[str, list[str]]:
    """A match with one move refused (a stale state version: STALE_STATE), then played out."""
    async with grpc.aio.insecure_channel(target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        match_id, tokens = await create(stub)
        d = None
        for t in tokens:  # the seat to move is the one whose Decision has legal moves
            d = await stub.GetLegalMoves(pb.GetLegalMovesRequest(match_id=match_id),
                                         metadata=md(t))
            if d.legal_moves:
                token = t
                break
        assert d is not None and d.legal_moves
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.SubmitMove(pb.SubmitMoveRequest(
                match_id=match_id, state_version=d.state_version + 7, move=d.legal_moves[0]),
                metadata=md(token))
        assert reason_of(refused.value) == "STALE_STATE"
    await play_match(target, match_id, tokens)
    return match_id, tokens


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return r.read().decode()


@pytest.fixture
def metered(make_server):
    return make_server(metrics_listen="127.0.0.1:0", http_port=0)


def test_a_match_is_counted_on_the_metrics_address(metered):
    port = metered.server.metrics_port
    before = scrape(port)
    match_id, tokens = asyncio.run(refused_then_played(metered.target))
    text = scrape(port)
    moved = value(text, "referee_moves_total", game="batavia") - value(
        before, "referee_moves_total", game="batavia")
    assert moved > 0
    assert value(text, "referee_refusals_total", reason="STALE_STATE") - value(
        before, "referee_refusals_total", reason="STALE_STATE") == 1
    # one latency sample per move committed by a bot (every move here)
    assert value(text, "referee_move_seconds_count", game="batavia") - value(
        before, "referee_move_seconds_count", game="batavia") == moved
    assert value(text, "referee_commit_seconds_count", store="sqlite") > 0
    assert value(text, "referee_matches", game="batavia", state="finished") >= 1
    assert value(text, "referee_matches_created_total", game="batavia") >= 1
    assert value(text, "referee_matches_finished_total", game="batavia") >= 1
    # no label carries a token or a match id
    secrets = [ADMIN, match_id, *tokens]
    for (_name, labels), _v in samples(text).items():
        for _k, v in labels:
            assert not any(s in v for s in secrets), labels


def test_web_metrics_need_the_admin_token(metered):
    base = f"http://127.0.0.1:{metered.server.http_port}/metrics"
    r = httpx.get(base)
    assert r.status_code == 401 and r.json()["reason"] == "UNAUTHENTICATED"
    r = httpx.get(base, headers={"Authorization": "Bearer not-the-admin-token"})
    assert r.status_code == 403 and r.json()["reason"] == "PERMISSION_DENIED"
    r = httpx.get(base, headers={"Authorization": f"Bearer {ADMIN}"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    assert "referee_moves_total" in r.text or "referee_moves" in r.text
    assert ADMIN not in r.text
    # the web server counts its own answers: the 401 and the 403 above
    assert value(r.text, "referee_web_requests_total", status="4xx") >= 2


def test_metrics_are_off_by_default(make_server):
    h = make_server()
    assert h.server.metrics_server is None and h.server.metrics_port is None


def test_names_lists_every_exported_series(metered):
    """metrics.names() (what the dashboard test compares with) is every family the registry
    exports, so a new series cannot be missed by it."""
    exported = {s.name for fam in text_string_to_metric_families(scrape(
        metered.server.metrics_port)) for s in fam.samples}
    described = set()
    for fam in metrics.REGISTRY.collect():
        described.add(fam.name)
    assert exported <= metrics.names()
    # every family has its samples' names listed (a counter's family is its name less _total,
    # a histogram's less _bucket)
    bases = {re.sub(r"_(total|bucket|sum|count|created)$", "", n) for n in metrics.names()}
    assert bases >= {n for n in described if n.startswith("referee_")}


# ------------------------------------------------------------------ a real Prometheus
PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
NO_PROMETHEUS = "Debian's prometheus is not installed (tests/debian-packages.txt; make packages)"


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _query(port: int, expr: str) -> list[dict]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        doc = json.load(r)
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


def _ready(proc: subprocess.Popen, port: int, log: Path) -> None:
    """Wait for Prometheus's /-/ready (it starts in seconds, more on a loaded machine)."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()[-2000:]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise AssertionError("prometheus not ready: " + log.read_text()[-2000:])


def _until(port: int, expr: str, deadline: float) -> list[dict]:
    while True:
        result = _query(port, expr)
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.5)


@pytest.mark.skipif(PROMETHEUS is None, reason=NO_PROMETHEUS)
def test_prometheus_scrapes_a_match(metered, tmp_path):
    target = f"127.0.0.1:{metered.server.metrics_port}"
    port = _free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: [{json.dumps(str(ALERTS))}]\n"
        "scrape_configs:\n"
        "  - job_name: referee\n"
        f"    static_configs: [{{targets: [{json.dumps(target)}]}}]\n")
    proc = subprocess.Popen(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
        stdout=subprocess.DEVNULL, stderr=(tmp_path / "prometheus.log").open("w"))
    try:
        _ready(proc, port, tmp_path / "prometheus.log")
        asyncio.run(refused_then_played(metered.target))
        deadline = time.monotonic() + 60
        moves = _until(port, 'referee_moves_total{game="batavia"} > 0', deadline)
        assert moves, (tmp_path / "prometheus.log").read_text()[-2000:]
        refused = _until(port, 'referee_refusals_total{reason="STALE_STATE"} >= 1', deadline)
        assert refused and refused[0]["metric"]["job"] == "referee"
        latency = _until(port, 'referee_move_seconds_count{game="batavia"} > 0', deadline)
        assert latency
        buckets = _query(port, 'referee_move_seconds_bucket{game="batavia",le="+Inf"}')
        assert float(buckets[0]["value"][1]) == float(latency[0]["value"][1])
        up = _until(port, 'up{job="referee"} == 1', deadline)
        assert up
        # the shipped rules load into this Prometheus (and the scrape is healthy)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/rules", timeout=10) as r:
            groups = json.load(r)["data"]["groups"]
        assert any(rule["name"] == "RefereeDown" for g in groups for rule in g["rules"])
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.mark.skipif(PROMTOOL is None, reason=NO_PROMETHEUS)
def test_alert_rules_pass_promtool():
    out = subprocess.run([PROMTOOL, "check", "rules", str(ALERTS)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.skipif(PROMTOOL is None, reason=NO_PROMETHEUS)
def test_alert_rules_unit_tests():
    out = subprocess.run([PROMTOOL, "test", "rules", str(ALERT_TESTS)], capture_output=True,
                         text=True, timeout=60, cwd=ALERT_TESTS.parent)
    assert out.returncode == 0, out.stdout + out.stderr


#: PromQL words that are not metric names (functions, keywords, label names in by/without)
_NOT_METRICS = {"sum", "rate", "irate", "increase", "histogram_quantile", "by", "without", "le",
                "avg", "max", "min", "count", "on", "ignoring", "group_left", "group_right",
                "and", "or", "unless", "bool", "offset", "topk", "bottomk", "clamp_min",
                "absent", "delta", "deriv", "time", "vector", "scalar", "abs", "sort_desc",
                "max_over_time", "min_over_time", "avg_over_time", "changes", "resets"}


def metric_names(expr: str) -> set[str]:
    """The metric names of a PromQL expression: identifiers outside label matchers, `by (...)`
    groupings and strings, less the functions and keywords."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", "", expr)
    expr = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", "", expr)
    expr = re.sub(r"\[[^\]]*\]", "", expr)
    expr = re.sub(r"\boffset\s+\w+", "", expr)
    words = set(re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", expr))
    return {w for w in words if w not in _NOT_METRICS and not w.startswith("$")}


def _exprs(node: object) -> list[str]:
    if isinstance(node, dict):
        return ([node["expr"]] if isinstance(node.get("expr"), str) else []) + [
            e for v in node.values() for e in _exprs(v)]
    if isinstance(node, list):
        return [e for v in node for e in _exprs(v)]
    return []


def test_dashboard_names_only_exported_series():
    doc = json.loads(DASHBOARD.read_text())
    exprs = _exprs(doc["panels"])
    assert len(exprs) >= 8
    known = metrics.names() | league_metrics.names() | {"up"}
    for expr in exprs:
        names = metric_names(expr)
        assert names, expr
        assert names <= known, (expr, names - known)


def test_the_dashboard_check_catches_an_unknown_series():
    assert metric_names('sum(rate(referee_movez_total{game="goa"}[5m])) by (game)') == {
        "referee_movez_total"}
    assert not metric_names("sum(rate(referee_movez_total[5m]))") <= metrics.names()


def test_alert_rules_name_only_exported_series():
    exprs = re.findall(r"^\s*expr:\s*(.+)$", ALERTS.read_text(), flags=re.M)
    assert len(exprs) >= 6
    for expr in exprs:
        assert metric_names(expr) <= metrics.names() | {"up"}, expr


def test_league_runner_counts_matches_and_incidents():
    before = league_metrics.REGISTRY.get_sample_value(
        "referee_league_incidents_total", {"kind": "timeout"}) or 0
    league_metrics.ended(True, [("bot@1", "timeout", "2 move(s) played by the time policy"),
                                ("bot@2", "no-such-kind", "x")])
    assert league_metrics.REGISTRY.get_sample_value(
        "referee_league_incidents_total", {"kind": "timeout"}) == before + 1
    assert league_metrics.REGISTRY.get_sample_value(
        "referee_league_incidents_total", {"kind": "other"}) >= 1
    assert league_metrics.REGISTRY.get_sample_value(
        "referee_league_matches_total", {"outcome": "rated"}) >= 1
    exported = {s.name for fam in league_metrics.REGISTRY.collect() for s in fam.samples}
    assert exported <= league_metrics.names()


def test_each_cluster_worker_gets_its_own_metrics_port():
    from referee.server.cluster import metrics_address

    shards = ["w1", "w2", "w3"]
    assert [metrics_address("127.0.0.1:9464", shards, s) for s in shards] == [
        "127.0.0.1:9465", "127.0.0.1:9466", "127.0.0.1:9467"]
    assert metrics_address("[::1]:0", shards, "w2") == "[::1]:0"


def test_a_bad_metrics_address_stops_the_start(make_server):
    from referee.server.startup import StartupError

    with pytest.raises(StartupError, match="--metrics-listen"):
        make_server(metrics_listen="no-port-here")


# ------------------------------------------------------------------ tracing (--otel)
def test_otel_instruments_the_server(make_server, monkeypatch):
    """--otel puts OpenTelemetry's interceptor on the server: it sees every call (the spans go to
    whatever tracer provider the SDK was configured with; none here, so they are no-ops)."""
    otel = pytest.importorskip("opentelemetry.instrumentation.grpc",
                               reason="the otel extra is not installed")
    seen: list[str] = []
    real = otel.aio_server_interceptor

    def spied(*args, **kwargs):
        interceptor = real(*args, **kwargs)
        through = interceptor.intercept_service

        async def intercept_service(continuation, details):
            seen.append(details.method)
            return await through(continuation, details)

        interceptor.intercept_service = intercept_service
        return interceptor

    monkeypatch.setattr(otel, "aio_server_interceptor", spied)
    h = make_server(otel=True)

    async def games() -> int:
        async with grpc.aio.insecure_channel(h.target) as ch:
            return len((await referee_pb2_grpc.RefereeStub(ch).ListGames(
                pb.ListGamesRequest())).games)

    assert asyncio.run(games()) >= 3
    assert "/referee.v1.Referee/ListGames" in seen


def test_otel_without_the_package_says_which_extra(make_server, monkeypatch):
    import sys

    from referee.server.startup import StartupError

    monkeypatch.setitem(sys.modules, "opentelemetry.instrumentation.grpc", None)
    with pytest.raises(StartupError, match=r"boardgame-referee\[otel\]"):
        make_server(otel=True)
