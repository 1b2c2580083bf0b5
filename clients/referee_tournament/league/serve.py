"""``referee-tournament league serve LEAGUE.toml``: run a league until it is stopped.

On start the league is opened on the referee (``OpenLeague``: created, or its description and
settings updated; its stored state is kept), the run folder's database is opened
(:mod:`.store`) and every match it left running is followed again. Then, every
``schedule.poll_s``:

* the stored league state is read (``GetLeague``): RUNNING plays, PAUSED starts no new match,
  STOPPED lets the running matches finish and ends the runner;
* the league's bots are read (``ListLeagueBots``); each new hosted version (VERSION_PENDING) is
  smoke-checked, as ``referee-tournament check`` does (an unlisted match, its other seats played
  by the time policy; it passes when the bot makes a move of its own) and marked READY or
  FAILED with its error line (``SetBotStatus``);
* eligible bots (BOT_ACTIVE, and connected for a remote bot, a READY current version for a
  hosted one; not already in ``schedule.per_bot`` matches) are seated by the pairing rule
  (:func:`..ladder.pair`: the least-played anchors the table, its neighbours in mu join it) and
  the seat rotation rule, at most ``schedule.concurrency`` matches at once and
  ``schedule.matches_per_minute``;
* each match binds every seat to its bot (``seat_bots``, ``seat_bot_versions``); the referee
  assigns remote seats to their sessions, the runner starts each hosted seat's bot in the
  sandbox with its seat token in ``$REFEREE_TOKEN`` (:mod:`.hosted`), follows the match to its
  end (:func:`..play.play_match`), then rates it (OpenSkill, per version), commits it and
  publishes the standings (coalesced: once per poll at most);
* with ``challenges = true``, the lobby's finished challenges to its entrants are taken in,
  each once, apart from its own matches, and rated only with ``rate_challenges``
  (:mod:`.challenges`).

A hosted version whose bot crashes before its first move in ``hosted.crash_limit`` matches in
a row is marked FAILED with the error line (the bot plays its older READY version, if any).
SIGINT / SIGTERM stop the runner at once: its hosted bots end, its matches go on at the
referee and a restarted runner follows them to their end. A match it was creating (its
CreateMatch sent, no reply yet) it sends again with the stored request_id: the referee answers
with the match the first call made, or makes it now.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import os
import random
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import grpc
from rich.markup import escape
from rich.table import Table

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

from ..ladder import Rating, _atomic, pair, rate
from ..play import CHANNEL_OPTIONS, MatchJob, _Bot, _end_bots, _tail, error_line, play_match
from ..registry import game_problems, list_games, sheet_warnings
from ..report import did_not_play
from ..runner import _open_log
from . import challenges, hosted, metrics, standings
from .config import LeagueConfig, LeagueGame, settings_json
from .events import (
    LeagueEvent,
    Plan,
    arena_seed,
    event_seed,
    events_json,
    from_json,
    new_event_problems,
)
from .store import LeagueStore, Running, key_of, split_key

#: How often the runner asks the referee for finished challenges (``ListLeagueChallenges``), at
#: least: the referee reads its finished lobby matches since the last one taken in, a read the
#: runner's fast polls need not repeat
CHALLENGE_POLL_S = 5.0

REGISTRATION = {"invite": pb.REGISTRATION_INVITE, "open": pb.REGISTRATION_OPEN,
                "closed": pb.REGISTRATION_CLOSED}


@dataclass(frozen=True)
class _Choice:
    game: str
    seats: int
    options: tuple[tuple[str, str], ...]


class LeagueError(Exception):
    """The league cannot run (the referee refused it, or is unreachable at start)."""


@dataclass
class Entry:
    """An eligible bot as the scheduler sees it."""

    bot: str
    version: int  # 0: remote
    hosted: bool

    @property
    def key(self) -> str:
        return key_of(self.bot, self.version)


def admin_md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def eligible(bots: list[pb.LeagueBot]) -> list[Entry]:
    """The bots that may play now: active, and connected (remote) or with a READY current
    version (hosted)."""
    out = []
    for b in bots:
        if b.status != pb.BOT_ACTIVE:
            continue
        if b.kind != pb.BOT_KIND_HOSTED:  # REMOTE; 0 from a 0.1.0 referee, where 0 was REMOTE
            if b.connected:
                out.append(Entry(b.name, 0, False))
            continue
        ready = {v.version for v in b.versions if v.status == pb.VERSION_READY}
        if b.current_version and b.current_version in ready:
            out.append(Entry(b.name, b.current_version, True))
    return out


def choose_game(games: tuple[LeagueGame, ...], played: dict[str, int],
                available: int) -> LeagueGame | None:
    """The game whose share of matches lags its weight most, among those with enough bots."""
    fits = [g for g in games if g.seats <= available]
    if not fits:
        return None
    return min(fits, key=lambda g: (played.get(g.name, 0) / g.weight, games.index(g)))


def balanced(table: list[str], seat_counts: dict[str, list[int]], rng: random.Random
             ) -> list[str]:
    """``table`` seated so that the bots' counts of the seats they get are the smallest
    (each bot to the seat it has played least; ties by a seeded draw)."""
    n = len(table)
    if n > 6:  # 720 orders: beyond that a shuffle is fair enough
        out = list(table)
        rng.shuffle(out)
        return out
    best: tuple[int, float] | None = None
    chosen: tuple[str, ...] = tuple(table)
    for order in itertools.permutations(table):
        counts = [seat_counts.get(k, []) for k in order]
        cost = (sum(c[s] if s < len(c) else 0 for s, c in enumerate(counts)), rng.random())
        if best is None or cost < best:
            best, chosen = cost, order
    return list(chosen)


def match_seed(league: str, seed: int, idx: int) -> int:
    digest = hashlib.sha256(f"referee-league:{league}:{seed}:{idx}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def seat_incidents(outcome: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    """(rating key, kind, message) of every incident in a match's seat outcomes."""
    out = []
    for s in (outcome or {}).get("seats", []):
        k = s.get("entrant", "")
        err = s.get("error") or ""
        if s.get("crashed"):
            out.append((k, "crash", err or f"exited with code {s.get('exit_code')}"))
        if s.get("hung"):
            out.append((k, "hung", err or "still running after the match; killed"))
        if s.get("abandoned") == "never joined":
            out.append((k, "timeout", err or "never joined"))
        elif s.get("timeouts"):
            out.append((k, "timeout", f"{s['timeouts']} move(s) played by the time policy"))
        if s.get("rejected"):
            out.append((k, "refused", s.get("refusal") or f"{s['rejected']} move(s) refused"))
        if s.get("forfeited"):
            out.append((k, "forfeit", "forfeited"))
    return out


def next_streaks(now: dict[str, int], outcome: dict[str, Any] | None) -> dict[str, int]:
    """The hosted versions' consecutive start crashes after a match (only those it changes):
    a seat that crashed or could not start without a move of its own adds one, a seat its bot
    played resets it. Remote seats (version 0) have none."""
    out: dict[str, int] = {}
    for s in (outcome or {}).get("seats", []):
        k = s.get("entrant", "")
        if not split_key(k)[1]:
            continue
        own = s.get("moves", 0) - s.get("timeouts", 0)
        if (s.get("crashed") or s.get("start_error")) and own <= 0:
            out[k] = out.get(k, now.get(k, 0)) + 1
        elif own > 0 and not did_not_play(s):
            out[k] = 0
    return out


class LeagueRunner:
    def __init__(self, cfg: LeagueConfig, admin_token: str, *, out: Path | None = None,
                 console=None, log_json: bool = False):
        from openskill.models import PlackettLuce

        self.cfg = cfg
        self.token = admin_token
        self.admin = admin_md(admin_token)
        self.out = Path(out) if out else cfg.output_dir()
        for sub in ("records", "bots", "hosted"):
            (self.out / sub).mkdir(parents=True, exist_ok=True)
        self.store = LeagueStore(self.out / "league.sqlite")
        self.store.set_meta({"name": cfg.name, "toml": cfg.source, "base_dir": cfg.base_dir,
                             "format": "league", "settings": settings_json(cfg)})
        self.logf, self.log = _open_log(self.out / "league.log", echo=log_json)
        self.console = console
        self.model = PlackettLuce()
        self.ratings: dict[str, Rating] = self.store.ratings()
        self.rng = random.Random(f"{cfg.name}:{cfg.schedule.seed}:{self.store.next_index()}")
        self.busy: dict[str, int] = {}  # bot name -> matches in flight
        self.tasks: dict[asyncio.Task, int] = {}
        self.smoking: dict[asyncio.Task, tuple[str, int]] = {}
        self.checked: set[tuple[str, int]] = set()  # smoke-checked by this run
        self.dirty = True
        self.last_error = ""
        self.paused = False
        self.started = 0
        self.last_start = 0.0
        self.current: dict[str, int] = {}
        self.hosted_kinds: dict[str, bool] = {}
        self.folders_lock = asyncio.Lock()
        self.channel: grpc.aio.Channel | None = None
        self.stub: Any = None
        self.live: Any = None
        #: monotonic times of the first match start and the last match end (for the bench)
        self.first_start: float | None = None
        self.last_end: float | None = None
        self.signing_key: bytes | None = None  # the referee's (GetSigningKey), read once
        self.challenges_due = 0.0  # monotonic time of the next ListLeagueChallenges

    # ------------------------------------------------------------------ referee calls
    async def _open(self) -> None:
        cfg = self.cfg
        league = pb.League(name=cfg.name, title=cfg.title, description=cfg.description,
                           games=[g.name for g in cfg.games],
                           registration=REGISTRATION[cfg.registration], approval=cfg.approval,
                           settings_json=settings_json(cfg))
        try:
            got = await self.stub.OpenLeague(pb.OpenLeagueRequest(league=league),
                                             metadata=self.admin, timeout=30)
        except grpc.aio.AioRpcError as err:
            raise LeagueError(f"OpenLeague failed: {err.code().name}: {err.details()}") from None
        self.log.info("league_open", league=cfg.name, state=pb.LeagueState.Name(got.state))

    async def _check_games(self) -> None:
        """The league's games, seats and options against the referee's (a bad one stops the
        runner before any match); a provisional component sheet warns the organizer."""
        try:
            hosted_games = await list_games(self.cfg.address)
        except grpc.aio.AioRpcError as err:
            raise LeagueError(f"cannot reach the referee at {self.cfg.address}: "
                              f"{err.code().name}: {err.details()}") from None
        problems = []
        for i, g in enumerate(self.cfg.games):
            choice = _Choice(g.name, g.seats, g.options)
            problems += [p.replace("game.", f"games[{i}].", 1)
                         for p in game_problems(choice, hosted_games)]
            for warning in sheet_warnings(choice, hosted_games):
                self.log.warning("provisional_sheet", detail=warning)
                if self.console is not None:
                    self.console.print(f"[yellow]warning[/]: {escape(warning)}")
        if problems:
            raise LeagueError("; ".join(problems))

    async def _state(self) -> int | None:
        try:
            got = await self.stub.GetLeague(pb.GetLeagueRequest(name=self.cfg.name), timeout=30)
        except grpc.aio.AioRpcError as err:
            self._error(f"GetLeague failed: {err.code().name}: {err.details()}")
            return None
        return got.state

    async def _bots(self) -> list[pb.LeagueBot] | None:
        try:
            got = await self.stub.ListLeagueBots(pb.ListLeagueBotsRequest(league=self.cfg.name),
                                                 metadata=self.admin, timeout=30)
        except grpc.aio.AioRpcError as err:
            self._error(f"ListLeagueBots failed: {err.code().name}: {err.details()}")
            return None
        return list(got.bots)

    async def _set_version(self, bot: str, version: int, status: pb.VersionStatus,
                           message: str) -> bool:
        try:
            await self.stub.SetBotStatus(pb.SetBotStatusRequest(
                bot=bot, version=version, version_status=status, message=message[:300]),
                metadata=self.admin, timeout=30)
        except grpc.aio.AioRpcError as err:
            self._error(f"SetBotStatus {bot} v{version} failed: {err.code().name}: "
                        f"{err.details()}")
            return False
        self.log.info("version_status", bot=bot, version=version,
                      status=pb.VersionStatus.Name(status), message=message[:300])
        return True

    def _error(self, text: str) -> None:
        if text != self.last_error:
            self.log.warning("league_error", error=text)
        self.last_error = text

    # ------------------------------------------------------------------ hosted versions
    async def _folder(self, bot: str, version: int) -> Path:
        """The version's unpacked folder (fetched and checked once)."""
        folder = self.out / "hosted" / bot / f"v{version}"
        runtime = folder.parent / f"v{version}.runtime"  # written once the folder is complete
        async with self.folders_lock:
            if not (runtime.exists() and folder.is_dir()):
                h = self.cfg.hosted
                header, data = await hosted.fetch(self.stub, self.admin, bot, version,
                                                  h.max_unpacked_mb * 1024 * 1024)
                hosted.unpack(data, folder, max_bytes=h.max_unpacked_mb * 1024 * 1024,
                              max_files=h.max_files)
                runtime.write_text(header.runtime or "")
        return folder

    async def _hosted_command(self, bot: str, version: int) -> tuple[list[str], str]:
        folder = await self._folder(bot, version)
        rt = folder.parent / f"v{version}.runtime"
        runtime = rt.read_text().strip() if rt.exists() else "python"
        return hosted.command(folder, runtime, node=self.cfg.hosted.node), str(folder)

    def _job(self, idx: int, game: LeagueGame, seating: list[str], seed: int,
             commands: dict[int, tuple[list[str], str]], unlisted: bool = False,
             event: str = "") -> MatchJob:
        bots = [split_key(k)[0] for k in seating]
        versions = [split_key(k)[1] for k in seating]
        sandbox = asdict(self.cfg.hosted.sandbox)
        n = len(seating)
        return MatchJob(
            idx=idx, game=game.name, seats=n, options=dict(game.options), seed=seed,
            seating=seating,
            commands=[commands[s][0] if s in commands else [] for s in range(n)],
            cwds=[commands[s][1] if s in commands else None for s in range(n)],
            envs=[{} for _ in range(n)], time_policy=dict(self.cfg.time_policy),
            address=self.cfg.address, admin_token=self.token, bot_seeds=[0] * n,
            match_wall_s=self.cfg.schedule.match_wall_s,
            join_timeout_s=max(30.0, self.cfg.time_policy.get("join_ms", 0) / 1000 + 20),
            log_dir=str(self.out / "bots"),
            sandboxes=[sandbox if s in commands else None for s in range(n)],
            unix_socket=self.cfg.unix_socket,
            seat_bots=["" if s in commands else bots[s] for s in range(n)], event=event,
            extra={"league": {"name": self.cfg.name, "seat_bots": bots, "unlisted": unlisted,
                              "seat_bot_versions": versions}})

    # ------------------------------------------------------------------ smoke checks
    async def _smoke(self, bot: str, version: int) -> None:
        from ..check import _watch

        cfg = self.cfg
        game = next((g for g in cfg.games if g.name == cfg.smoke.game), cfg.games[0])
        try:
            argv, cwd = await self._hosted_command(bot, version)
        except hosted.FetchError as exc:
            self._error(f"smoke check of {bot} v{version}: {exc}")
            self.checked.discard((bot, version))  # tried again at the next poll
            return
        except hosted.BadArchive as exc:
            await self._set_version(bot, version, pb.VERSION_FAILED, str(exc))
            return
        seating = [key_of(bot, version)] + [""] * (game.seats - 1)
        job = self._job(0, game, seating, cfg.schedule.seed, {0: (argv, cwd)}, unlisted=True)
        job.seating = [bot] + [f"policy-{i}" for i in range(1, game.seats)]
        job.extra["league"]["seat_bots"] = [bot] + [""] * (game.seats - 1)
        job.extra["league"]["seat_bot_versions"] = [version] + [0] * (game.seats - 1)
        job.seat_bots = []
        job.time_policy = {**job.time_policy, "move_ms": int((cfg.smoke.join_timeout_s + 30)
                                                             * 1000), "strikes": 0,
                           "on_expiry": "random_legal"}
        from ..play import match_request, start_seat_bot

        bots: list[_Bot] = []
        match_id = None
        try:
            created = await self.stub.CreateMatch(match_request(job), metadata=self.admin,
                                                  timeout=30)
            match_id = created.match_id
            tokens = {s.seat: s.token for s in created.seats}
            for seat in range(1, game.seats):
                await self.stub.AbandonSeat(pb.AbandonSeatRequest(
                    match_id=match_id, seat=seat, reason="smoke check: played by the policy"),
                    metadata=self.admin, timeout=30)
            b = _Bot(0, bot, self.out / "bots" / f"smoke-{bot}-v{version}.log")
            bots.append(b)
            await start_seat_bot(job, b, match_id, tokens[0])
            if b.start_error:
                verdict_ok, detail = False, b.start_error
            else:
                smoke = await _watch(self.stub, self.admin, match_id, bots, bot, "hosted",
                                     cfg.smoke.join_timeout_s)
                verdict_ok, detail = smoke.ok, smoke.detail
        except grpc.aio.AioRpcError as err:
            self._error(f"smoke check of {bot} v{version}: {err.code().name}: {err.details()}")
            self.checked.discard((bot, version))  # tried again at the next poll
            return
        finally:
            await _end_bots(bots, 0.0)
            if match_id is not None:
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await self.stub.AbandonSeat(pb.AbandonSeatRequest(
                        match_id=match_id, seat=0, reason="smoke check done"),
                        metadata=self.admin, timeout=10)
        if not verdict_ok and bots:
            line = error_line(_tail(bots[0].log_path)[0])
            if line and line not in detail:
                detail = f"{detail}: {line}"
        await self._set_version(bot, version,
                                pb.VERSION_READY if verdict_ok else pb.VERSION_FAILED,
                                "smoke check passed: " + detail if verdict_ok else detail)

    # ------------------------------------------------------------------ matches
    def _launch(self, idx: int, game: LeagueGame, seating: list[str], seed: int,
                resume: Running | None = None, resend: str = "",
                event: tuple[str, int, bool] | None = None) -> None:
        """Play a match in a task of its own: a new one, one left running by a previous run
        (``resume``), or one it left being created (``resend``: its stored request_id)."""
        for k in set(seating):
            bot = split_key(k)[0]
            self.busy[bot] = self.busy.get(bot, 0) + 1
        task = asyncio.create_task(self._play(idx, game, seating, seed, resume, resend, event))
        self.tasks[task] = idx

    async def _play(self, idx: int, game: LeagueGame, seating: list[str], seed: int,
                    resume: Running | None = None, resend: str = "",
                    event: tuple[str, int, bool] | None = None) -> None:
        try:
            await self._play_match(idx, game, seating, seed, resume, resend, event)
        finally:
            for k in set(seating):
                self.busy[split_key(k)[0]] -= 1

    def _lose(self, idx: int, error: str) -> None:
        self.store.lose(idx, error)
        self.dirty = True
        self.log.warning("match_lost", idx=idx, error=error)

    async def _play_match(self, idx: int, game: LeagueGame, seating: list[str], seed: int,
                          resume: Running | None, resend: str = "",
                          event: tuple[str, int, bool] | None = None) -> None:
        commands: dict[int, tuple[list[str], str]] = {}
        start_errors: dict[int, str] = {}
        for s, k in enumerate(seating):
            bot, version = split_key(k)
            if not version:
                continue
            try:
                commands[s] = await self._hosted_command(bot, version)
            except (hosted.FetchError, hosted.BadArchive) as exc:
                if resume is None and not resend:  # no match yet: none is created
                    self._error(f"{k}: {exc}")
                    if isinstance(exc, hosted.BadArchive):
                        await self._set_version(bot, version, pb.VERSION_FAILED, str(exc))
                    return
                # the match exists: the time policy plays the seat; counted as a start crash
                start_errors[s] = str(exc)
                commands[s] = (["/nonexistent-bot"], str(self.out / "hosted"))
        # a resent request names the event it named the first time (the same request gets the
        # same match); a followed match sends none
        job = self._job(idx, game, seating, seed, commands,
                        event=event[0] if event else self.store.event_of(idx) if resend else "")
        tokens: dict[int, str] = dict(resume.hosted_tokens) if resume else {}

        def keep(match_id: str, seat_tokens: dict[int, str]) -> None:
            if resume is None and not tokens:  # a new match: kept before any bot starts
                tokens.update(seat_tokens)
                self.store.start(idx, match_id, seat_tokens)
                self.log.info("match_start", idx=idx, match_id=match_id, game=game.name,
                              seating=seating)

        existing = (resume.match_id, tokens) if resume else None
        if resume is None:
            # stored before the call is sent: the same call again (after a restart, or while
            # the referee is unreachable) gets the match the first one made, never a second
            job.request_id = resend or self.store.intend(idx, game.name, seating, seed, event)
        while True:
            result = await play_match(job, existing=existing, on_tokens=keep)
            if result.get("match_id") is None:  # CreateMatch refused or failed: nothing kept
                error = result.get("error") or "CreateMatch failed"
                if result.get("referee_down"):  # it may have made the match: ask again
                    self._error(error)
                    await asyncio.sleep(5 * self.cfg.schedule.poll_s)
                    continue
                if resend:
                    self._lose(idx, "sent again after the runner restarted, CreateMatch was "
                               f"refused: {error}")
                else:
                    self.store.forget(idx)
                    self._error(error)
                return
            if not result.get("referee_down"):
                break
            # the referee is unreachable: the match is not over for it; follow it again
            self._error(result.get("error") or "the referee is unreachable")
            await asyncio.sleep(5 * self.cfg.schedule.poll_s)
            existing = (result["match_id"], tokens)
        for s, err in start_errors.items():  # the archive's problem, not the binary's
            for seat in (result.get("outcome") or {}).get("seats", []):
                if seat.get("seat") == s:
                    seat["error"] = seat["start_error"] = err
        text = result.pop("record_json", None)
        if text:
            rel = f"records/league-{idx:06d}-{result['match_id']}.json"
            _atomic(self.out / rel, text)
            result["record_path"] = rel
        changed = []
        if result.get("ranks") and self.store.rated(idx):  # an unrated event's match: not rated
            for k in seating:
                if k not in self.ratings:
                    r = self.model.rating(name=k)
                    self.ratings[k] = Rating(k, r.mu, r.sigma)
            changed = rate(self.model, self.ratings, seating, result["ranks"])
        streaks = next_streaks(self.store.streaks(), result.get("outcome"))
        incidents = seat_incidents(result.get("outcome"))
        self.store.finish(idx, result, changed, incidents, streaks)
        metrics.ended(bool(result.get("ranks")), incidents)
        self.last_end = time.monotonic()
        self.dirty = True
        self.log.info("match_end", idx=idx, match_id=result.get("match_id"),
                      ranks=result.get("ranks"), error=result.get("error"),
                      ratings={r.name: round(r.ordinal, 3) for r in changed})

    async def _enforce_crash_limit(self, bots: list[pb.LeagueBot]) -> None:
        limit = self.cfg.hosted.crash_limit
        streaks = self.store.streaks()
        for b in bots:
            for v in b.versions:
                k = key_of(b.name, v.version)
                if v.status != pb.VERSION_READY or streaks.get(k, 0) < limit:
                    continue
                last = self.store.incidents(per_key=5).get(k, [])
                line = next((i["message"] for i in last if i["kind"] == "crash"), "")
                msg = (f"crashed at start in {streaks[k]} matches in a row"
                       + (f": {line}" if line else ""))
                if await self._set_version(b.name, v.version, pb.VERSION_FAILED, msg):
                    v.status = pb.VERSION_FAILED
                    self.dirty = True

    def _start_matches(self, entries: list[Entry]) -> None:
        cfg = self.cfg
        sch = cfg.schedule
        while len(self.tasks) < sch.concurrency:
            if sch.max_matches and self.started >= sch.max_matches:
                return
            gap = 60.0 / sch.matches_per_minute
            if time.monotonic() - self.last_start < gap:
                return
            free = [e for e in entries if self.busy.get(e.bot, 0) < sch.per_bot]
            played = dict(self.store.db.execute("SELECT game, COUNT(*) FROM matches"
                                                " GROUP BY game"))
            game = choose_game(cfg.games, played, len(free))
            if game is None:
                return
            pool = {}
            for e in free:
                r = self.ratings.get(e.key)
                if r is None:
                    m = self.model.rating(name=e.key)
                    r = Rating(e.key, m.mu, m.sigma)
                pool[e.key] = r
            load = {e.key: self.busy.get(e.bot, 0) for e in free}
            if sch.pairing == "rating":
                table = pair(pool, load, game.seats, self.rng)
            else:
                table = self.rng.sample(sorted(pool), game.seats)
            if sch.rotation == "balanced":
                table = balanced(table, self._seat_counts(game.name, game.seats), self.rng)
            idx = self.next_idx
            self.next_idx += 1
            self._launch(idx, game, table, match_seed(cfg.name, sch.seed, idx))
            self.started += 1
            self.last_start = time.monotonic()
            if self.first_start is None:
                self.first_start = self.last_start

    # ------------------------------------------------------------------ events
    def _store_events(self) -> None:
        """The file's events, stored once each: a new one may not start in the past (a stored
        one that started is resumed). An event the file no longer has goes on as stored."""
        known = {e["name"] for e in self.store.events()}
        problems = new_event_problems(self.cfg.events, known)
        if problems:
            raise LeagueError("; ".join(problems))
        for ev in self.cfg.events:
            if ev.name not in known:
                seed = event_seed(self.cfg.name, self.cfg.schedule.seed, ev.name)
                ev = replace(ev, seed=seed)
                self.store.add_event(ev.name, ev.to_json())
                self.log.info("event_scheduled", name=ev.name, format=ev.format,
                              start_unix=ev.start_unix)

    def _draw(self, ev: LeagueEvent, bots: list[pb.LeagueBot]) -> tuple[list[str], str]:
        """The event's entrants by its rule, best rated first (its seeds), or why none."""
        def ordinal(k: str) -> float:
            r = self.ratings.get(k)
            return r.ordinal if r is not None else float("-inf")

        if ev.entrants == "ready":
            keys = [e.key for e in eligible(bots)]
            if len(keys) < ev.seats:
                return [], (f"{len(keys)} bot(s) ready at the start; a {ev.format} of "
                            f"{ev.game} needs at least {ev.seats}")
        else:
            ranked = []
            for b in bots:
                if b.status != pb.BOT_ACTIVE:
                    continue
                k = key_of(b.name, b.current_version) if b.kind == pb.BOT_KIND_HOSTED \
                    else b.name
                if k in self.ratings:
                    ranked.append(k)
            if len(ranked) < ev.top:
                return [], (f"top {ev.top} asked, but the standings hold {len(ranked)} active "
                            "rated bot(s)")
            keys = sorted(ranked, key=lambda k: (-ordinal(k), k))[: ev.top]
        keys.sort(key=lambda k: (-ordinal(k), k))
        try:
            Plan(ev, keys)
        except ValueError as exc:
            return [], str(exc)
        return keys, ""

    def _drive_events(self, bots: list[pb.LeagueBot]) -> set[str]:
        """Start the events whose time has come, create the matches their rounds (or arena)
        want now, close those that are over; returns the bots the running events hold."""
        held: set[str] = set()
        now = time.time()
        for row in self.store.events():
            if row["status"] not in ("scheduled", "running"):
                continue
            ev = from_json(row["spec"])
            if row["status"] == "scheduled":
                if now < ev.start_unix:
                    continue
                entrants, why = self._draw(ev, bots)
                self.dirty = True
                if why:
                    self.store.set_event(ev.name, "cancelled", error=why)
                    self.log.warning("event_cancelled", name=ev.name, error=why)
                    continue
                self.store.set_event(ev.name, "running", entrants=entrants)
                self.log.info("event_start", name=ev.name, entrants=entrants)
                row["entrants"], row["started"] = entrants, now
            held |= {split_key(k)[0] for k in row["entrants"]}
            self._advance(ev, row["entrants"], row["started"] or now)
        return held

    def _advance(self, ev: LeagueEvent, entrants: list[str], started: float) -> None:
        plan = Plan(ev, entrants)
        rows = [r for r, _ in self.store.event_rows(ev.name)]
        stored = {r.idx for r in rows}
        busy = any(r.status in ("creating", "running") for r in rows)
        league_game = next((g for g in self.cfg.games if g.name == ev.game), None)
        game = LeagueGame(ev.game, ev.seats, league_game.options if league_game else ())
        limit = self.cfg.schedule.concurrency

        def free(k: str) -> bool:
            return self.busy.get(split_key(k)[0], 0) == 0

        def launch(eidx: int, seating: tuple[str, ...], seed: int) -> None:
            idx = self.next_idx
            self.next_idx += 1
            self._launch(idx, game, list(seating), seed, event=(ev.name, eidx, ev.rated))
            self.log.info("event_match", name=ev.name, event_idx=eidx, idx=idx,
                          seating=list(seating))
            self.last_start = time.monotonic()
            if self.first_start is None:
                self.first_start = self.last_start

        if plan.arena is not None:
            nxt = max(stored, default=-1) + 1
            if time.time() < started + ev.duration_s:
                while len(self.tasks) < limit:
                    table = plan.arena_table([k for k in entrants if free(k)], rows)
                    if table is None:
                        break
                    launch(nxt, table, arena_seed(ev.seed, nxt))
                    nxt += 1
            elif not busy:
                self._close_event(ev)
            return
        specs, complete, _ = plan.state(rows)
        if complete and not busy:
            self._close_event(ev)
            return
        for p in specs:
            if len(self.tasks) >= limit:
                break
            if p.idx not in stored and all(free(k) for k in p.seating):
                launch(p.idx, p.seating, p.seed)

    def _close_event(self, ev: LeagueEvent) -> None:
        self.store.set_event(ev.name, "done")
        self.dirty = True
        self.log.info("event_end", name=ev.name)

    def _events_json(self) -> list[dict[str, Any]]:
        return events_json(self.store)

    def _game(self, name: str, seating: list[str]) -> LeagueGame:
        """The league's game ``name`` (as its file says now), or one with its default options
        for a game the file no longer has."""
        return next((g for g in self.cfg.games if g.name == name),
                    LeagueGame(name, len(seating)))

    def _seat_counts(self, game: str, seats: int) -> dict[str, list[int]]:
        counts: dict[str, list[int]] = {}
        for (seating,) in self.store.db.execute(
                "SELECT seating FROM matches WHERE game=? AND challenge=0", (game,)):
            for s, k in enumerate(json.loads(seating)):
                counts.setdefault(k, [0] * seats)[min(s, seats - 1)] += 1
        return counts

    async def _publish(self, running: int) -> None:
        doc = standings.build(self.store, self.cfg.name, [g.name for g in self.cfg.games],
                              running=running, paused=self.paused, last_error=self.last_error,
                              current=self.current, events=self._events_json(),
                              challenge_mode=self.cfg.rate_challenges if self.cfg.challenges
                              else None)
        text = json.dumps(doc, separators=(",", ":"))
        _atomic(self.out / "standings.json", json.dumps(doc, indent=1) + "\n")
        try:
            await self.stub.PublishStandings(pb.PublishStandingsRequest(
                league=self.cfg.name, standings_json=text), metadata=self.admin, timeout=30)
        except grpc.aio.AioRpcError as err:
            self._error(f"PublishStandings failed: {err.code().name}: {err.details()}")
            return
        self.dirty = False
        self.log.info("standings_published", entries=len(doc["entries"]),
                      matches=doc["health"]["matches_total"], running=running)

    # ------------------------------------------------------------------ challenges
    async def _take_challenges(self, bots: list[pb.LeagueBot]) -> None:
        """The lobby's finished challenges to this league's entrants taken in, each once
        (:mod:`.challenges`): rated with ``rate_challenges``, else kept apart."""
        try:
            if self.signing_key is None:
                key = await self.stub.GetSigningKey(pb.GetSigningKeyRequest(), timeout=30)
                if key.algorithm != challenges.ALGORITHM or len(key.public_key) != 32:
                    self._error("the referee serves no Ed25519 signing key: challenges are "
                                "not taken in")
                    return
                self.signing_key = bytes(key.public_key)
            got = await self.stub.ListLeagueChallenges(pb.ListLeagueChallengesRequest(
                league=self.cfg.name,
                # from 1 ms before the newest taken in: one finished in the same ms is not
                # missed (those taken in already are skipped below)
                finished_after_unix_ms=max(0, self.store.challenge_cursor() - 1)),
                metadata=self.admin, timeout=30)
        except grpc.aio.AioRpcError as err:
            self._error(f"ListLeagueChallenges failed: {err.code().name}: {err.details()}")
            return
        entrants = {b.name for b in bots}
        for c in got.challenges:
            if self.store.has_challenge(c.match_id):
                continue
            try:
                rec = await self.stub.GetRecord(pb.GetRecordRequest(match_id=c.match_id),
                                                metadata=self.admin, timeout=30)
            except grpc.aio.AioRpcError as err:
                self._error(f"GetRecord {c.match_id} failed: {err.code().name}: "
                            f"{err.details()}")
                return  # asked again from the same time at the next poll
            try:
                record = json.loads(rec.record_json)
            except ValueError:
                record = {}
            ch = challenges.read(c.match_id, record if isinstance(record, dict) else {},
                                 self.cfg.name, entrants, self.signing_key)
            rel = f"records/challenge-{c.match_id}.json"
            _atomic(self.out / rel, rec.record_json)
            changed = challenges.take_in(self.store, self.model, self.ratings, ch,
                                         c.finished_unix_ms, rated=self.cfg.rate_challenges,
                                         record_path=rel)
            self.dirty = True
            self.log.info("challenge_taken", match_id=c.match_id, seating=ch.seating,
                          ranks=ch.result.get("ranks"), rated=bool(changed),
                          problem=ch.problem or None,
                          ratings={r.name: round(r.ordinal, 3) for r in changed})

    # ------------------------------------------------------------------ the loop
    async def run(self) -> dict[str, Any]:
        self.channel = grpc.aio.insecure_channel(self.cfg.address, options=CHANNEL_OPTIONS)
        self.stub = pb_grpc.RefereeStub(self.channel)
        self.next_idx = self.store.next_index()
        self.started = self.store.count()  # max_matches counts the league's matches, all runs
        try:
            await self._check_games()
            self._store_events()
            await self._open()
            for c in self.store.creating():  # left by a run stopped before CreateMatch answered
                if not c.request_id:
                    self._lose(c.idx, "the runner stopped while creating it (a league database "
                               "from before request ids: it cannot be asked for again); if the "
                               "referee created it, its time policy plays its hosted seats and "
                               "it is not rated")
                    continue
                # the same call again: the referee answers with the match the first one made
                self._launch(c.idx, self._game(c.game, c.seating), c.seating, c.seed,
                             resend=c.request_id)
                self.log.info("match_resend", idx=c.idx)
            for r in self.store.running():  # left by a previous run: follow them to the end
                self._launch(r.idx, self._game(r.game, r.seating), r.seating, r.seed, r)
                self.log.info("match_resume", idx=r.idx, match_id=r.match_id)
            stopping = False
            while True:
                state = await self._state()
                if state == pb.LEAGUE_STOPPED:
                    stopping = True
                self.paused = state == pb.LEAGUE_PAUSED
                bots = await self._bots() if not stopping else None
                if bots is not None:
                    self.current = {b.name: b.current_version for b in bots
                                    if b.kind == pb.BOT_KIND_HOSTED}
                    await self._enforce_crash_limit(bots)
                    if self.cfg.challenges and time.monotonic() >= self.challenges_due:
                        self.challenges_due = time.monotonic() + max(self.cfg.schedule.poll_s,
                                                                     CHALLENGE_POLL_S)
                        await self._take_challenges(bots)
                    for b in bots:
                        if b.status != pb.BOT_ACTIVE or b.kind != pb.BOT_KIND_HOSTED:
                            continue
                        for v in b.versions:
                            key = (b.name, v.version)
                            if (v.status == pb.VERSION_PENDING and key not in self.checked
                                    and key not in self.smoking.values()):
                                self.checked.add(key)
                                t = asyncio.create_task(self._smoke(*key))
                                self.smoking[t] = key
                    if state == pb.LEAGUE_RUNNING:
                        held = self._drive_events(bots)
                        # an event's entrants play its matches only while it runs
                        self._start_matches([e for e in eligible(bots) if e.bot not in held])
                if self.dirty:
                    await self._publish(len(self.tasks))
                self._show()
                limit_hit = (self.cfg.schedule.max_matches
                             and self.started >= self.cfg.schedule.max_matches)
                if (stopping or limit_hit) and not self.tasks and not self.smoking:
                    break
                waiting = set(self.tasks) | set(self.smoking)
                if waiting:
                    done, _ = await asyncio.wait(waiting, timeout=self.cfg.schedule.poll_s,
                                                 return_when=asyncio.FIRST_COMPLETED)
                    for t in done:
                        self.tasks.pop(t, None)
                        smoked = self.smoking.pop(t) if t in self.smoking else None
                        if smoked is not None and t.exception() is not None:
                            self.checked.discard(smoked)  # tried again
                        exc = t.exception()
                        if exc is not None:
                            self._error(f"{type(exc).__name__}: {exc}")
                else:
                    await asyncio.sleep(self.cfg.schedule.poll_s)
            if self.dirty:
                await self._publish(0)
            self.log.info("league_end", matches=self.store.count(), stopped=stopping)
            return {"matches": self.store.count(), "done": self.store.count("done"),
                    "failed": self.store.count("failed"), "stopped": stopping,
                    "out": str(self.out)}
        finally:
            for t in [*self.tasks, *self.smoking]:
                t.cancel()
            await asyncio.gather(*self.tasks, *self.smoking, return_exceptions=True)
            if self.live is not None:
                self.live.stop()
            await self.channel.close(grace=None)
            self.store.close()
            self.logf.close()

    def _show(self) -> None:
        """The live standings table on a terminal (nothing otherwise: the log has it all)."""
        if self.console is None or not self.console.is_terminal:
            return
        from rich.live import Live

        # the challengers' pool is rated but is no entrant: never on the board
        t = standings_table(self.cfg.title, len(self.tasks), self.store.count("done"),
                            self.paused, [r for r in self.ratings.values()
                                          if not challenges.is_pool(r.name)])
        if self.live is None:
            self.live = Live(t, console=self.console, refresh_per_second=2, transient=False)
            self.live.start()
        else:
            self.live.update(t)


def standings_table(title: str, running: int, rated: int, paused: bool,
                    ratings: list[Rating]) -> Table:
    """The live standings on a terminal (the top 20 by ordinal)."""
    t = Table(title=f"{title}: {running} running, {rated} rated"
                    + (" (paused)" if paused else ""))
    for col in ("#", "bot", "rating", "matches", "wins"):
        t.add_column(col, justify="left" if col == "bot" else "right")
    board = sorted(ratings, key=lambda r: -r.ordinal)
    for i, r in enumerate(board[:20], 1):
        t.add_row(str(i), r.name, f"{r.ordinal:.2f}", str(r.matches), f"{r.wins:g}")
    return t


def admin_token(cfg: LeagueConfig, token_file: str | None = None) -> str:
    """The referee's admin token: ``--admin-token-file``, else ``$REFEREE_ADMIN_TOKEN``, else
    the file's ``referee.admin_token_file`` (never the command line, never the league file)."""
    from referee_client.tokens import read_token_file

    from .config import resolve_path

    if token_file:
        return read_token_file(token_file)
    env = os.environ.get("REFEREE_ADMIN_TOKEN")
    if env:
        return env.strip()
    if cfg.admin_token_file:
        return read_token_file(str(resolve_path(cfg, cfg.admin_token_file)))
    raise LeagueError("no admin token: set $REFEREE_ADMIN_TOKEN or referee.admin_token_file")


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use: referee-tournament league serve LEAGUE.toml")
