"""The terminal tables keep their columns at 80 characters (issue 37 item 6).

Every rich table a command prints (``referee games``, ``python -m bench``, the tournament
runner's leaderboard, event standings and smoke check, the league runner's live standings,
``referee-tournament sensitivity``, ``make run``'s demo, ``referee-bot conformance``) is rendered
on an 80-column console with representative data and long names, and then: no line is wider
than 80, every header is on one line whole, no cell is cut to an ellipsis, the numbers are each
on one line whole, and a long name may be folded over lines but keeps every character."""
from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from rich.console import Console

WIDTH = 80
#: the box's own characters, taken out before looking for a folded name
_BOX = re.compile(r"[\s│┃|─━┼╇╈┡┩┏┓┗┛┌┐└┘├┤┬┴╭╮╰╯═║╔╗╚╝╠╣╦╩╬]")

LONG = "santa-maria-ismcts-deep-search-v2.3"  # 35 characters: an entrant's name, a bot's
LONGER = "alice-greedy-monte-carlo-with-rollouts-v12"


def render(renderable: Any, width: int = WIDTH) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None,
                      highlight=False)
    console.print(renderable)
    return console.export_text()


def check(renderable: Any, *, headers: list[str], whole: list[str] = (),  # type: ignore[assignment]
          names: list[str] = ()) -> str:  # type: ignore[assignment]
    """The rules of the module's docstring; the text, for more checks."""
    text = render(renderable)
    lines = text.splitlines()
    wide = [ln for ln in lines if len(ln) > WIDTH]
    assert not wide, "wider than 80:\n" + "\n".join(wide)
    assert "…" not in text, "a cell or header cut to an ellipsis:\n" + text
    for h in headers:
        assert any(h in ln for ln in lines), f"header {h!r} not whole on one line:\n{text}"
    for w in whole:
        assert any(w in ln for ln in lines), f"{w!r} not whole on one line:\n{text}"
    for n in names:
        assert folded(lines, n), f"{n!r} lost characters:\n{text}"
    return text


def folded(lines: list[str], name: str) -> bool:
    """Whether ``name`` is in one column of ``lines``, whole or folded over the lines below
    (each line's part at the same place and no wider than the first's; spaces aside)."""
    target = name.replace(" ", "")
    for i, ln in enumerate(lines):
        x = ln.find(name[:4])
        while x >= 0:
            for width in range(len(ln) - x, 0, -1):
                acc = ""
                for below in lines[i:]:
                    part = below[x:x + width].strip()
                    if not part or _BOX.sub("", part) != part.replace(" ", ""):
                        break  # the column's end, or a border
                    acc += part.replace(" ", "")
                    if len(acc) >= len(target):
                        break
                if acc.startswith(target):
                    return True
            x = ln.find(name[:4], x + 1)
    return False


# ---------------------------------------------------------------------- referee games
def test_referee_games_tables():
    from referee.cli import game_table
    from referee.server.front.service import list_games

    for g in list_games({}).games:
        check(game_table(g), headers=["option", "type", "default", "values", "description"],
              whole=[o.name for o in g.options] + [o.type for o in g.options],
              names=[o.description for o in g.options] + [g.name])


# ---------------------------------------------------------------------- the tournament runner
def _entry(i: int, name: str, models: bool = False) -> dict[str, Any]:
    e = {"place": i, "name": name, "note": "sandboxed" if i == 2 else "", "ordinal": 12.345 - i,
         "mu": 25.1, "sigma": 3.2, "matches": 1200, "wins": 640 - i, "win_rate": 0.533,
         "win_rate_ci95": [0.505, 0.561], "avg_score": 47.25, "avg_score_ci95": [46.1, 48.4],
         "avg_rank": 1.87, "avg_rank_ci95": [1.81, 1.93], "place_ci95": [1, 3],
         "timeouts": 12, "crashes": 3, "hangs": 1, "rejected": 104}
    if models:
        e.update(llm_tokens=123456, llm_asks=900, llm_reasks=37, llm_illegal=4,
                 llm_tokens_per_move=1234.5, llm_illegal_per_100=0.44)
    return e


def test_tournament_leaderboard_at_80_columns():
    from referee_tournament.report import leaderboard_table

    for models in (False, True):
        data = {"leaderboard": [_entry(1, LONG, models), _entry(2, LONGER),
                                _entry(3, "random")]}
        table = leaderboard_table(data, f"{LONG} — santa_maria leaderboard", compact=True)
        headers = [c.header for c in table.columns]
        check(table, headers=headers, whole=["11.35", "1200", "639", "53%", "47.2", "1.87",
                                             "12·3·1·104"] + (["1234·0.4·37"] if models else []),
              names=[LONG, LONGER + " (sandboxed)"])


def test_tournament_event_standings_at_80_columns():
    from referee_tournament.report import event_table

    for kind, row in (("swiss", {"points": 17.5, "buchholz": 123.5, "direct": 2, "seed": 12,
                                 "tables": 9, "byes": 1}),
                      ("knockout", {"out_in_round": 3, "points_at_last_table": 7.5, "seed": 12}),
                      ("arena", {"score": 140, "matches": 61, "wins": 30, "seed": 12})):
        data = {"event": {"type": kind, "complete": False, "standings": [
            {"place": 1, "name": LONG, "withdrawn": True, "on_fire": True, **row},
            {"place": 2, "name": LONGER, **row}]}}
        table = event_table(data)
        check(table, headers=[c.header for c in table.columns],
              whole=[f"{v:g}" if isinstance(v, float) else str(v + (k == "out_in_round"))
                     for k, v in row.items()],
              names=[f"{LONG} (withdrawn) (on fire)", LONGER])


def test_tournament_smoke_check_at_80_columns():
    from referee_tournament.check import Smoke, smoke_table

    table = smoke_table([
        Smoke(LONG, "persistent ×2, sandboxed", True, "joined in 0.4 s"),
        Smoke(LONGER, "per match", False, "exited with code 1 before joining: Traceback (most "
              "recent call last): ModuleNotFoundError: No module named 'numpy'")])
    check(table, headers=["entrant", "started", "result", "detail"],
          whole=["OK", "FAIL"],
          names=[LONG, LONGER, "persistent ×2, sandboxed", "ModuleNotFoundError: No module named 'numpy'"])


def test_sensitivity_table_at_80_columns():
    from referee_tournament.sensitivity import table

    data = {"count": 24, "runs_changing_ranking": 5,
            "control": {"places": [{"place": 1, "changed": 0}, {"place": 2, "changed": 1}]},
            "places": [{"place": 1, "baseline": LONG, "changed": 3, "of": 24,
                        "instead": {LONGER: 2, "random": 1}},
                       {"place": 2, "baseline": LONGER, "changed": 0, "of": 24, "instead": {}}]}
    check(table(data), headers=["place", "entrant", "another there", "instead", "control"],
          whole=["3 of 24", "changed", "same"], names=[LONG, LONGER, f"{LONGER} ×2"])


# ---------------------------------------------------------------------- the league runner
def test_league_live_standings_at_80_columns():
    from referee_tournament.ladder import Rating
    from referee_tournament.league.serve import standings_table

    ratings = []
    for i, name in enumerate((LONG, LONGER, "random")):
        r = Rating(name, 25.0 + i, 1.5)
        r.matches, r.wins = 1234, 567.5
        ratings.append(r)
    check(standings_table(f"Winter league {LONGER}", 12, 34567, True, ratings),
          headers=["#", "bot", "rating", "matches", "wins"],
          whole=["1234", "567.5", f"{ratings[2].ordinal:.2f}"], names=[LONG, LONGER])


# ---------------------------------------------------------------------- make run's demo
def test_demo_tables_at_80_columns():
    from referee_tools import demo
    from rich.progress import Progress

    from referee.v1 import batavia_pb2, referee_pb2

    view = batavia_pb2.View(round=3)
    for seat in range(4):
        p = view.players.add(seat=seat, gold=123, bills=14, hand_size=7, merchant_space=35,
                             crates_left=2)
        p.seals.extend([1, 2, 3, 4])
    names = [LONG, LONGER, "random", "greedy"]
    state = demo.MatchState(version=1234, view=view, current_seat=1,
                            events=["seat 1 places a crate on the Amsterdam space"])
    progress = Progress()
    progress.add_task("round", total=36)
    check(demo.render(state, names, progress),
          headers=["seat", "bot", "gold", "bills", "hand", "merchant", "seals", "tiles",
                   "crates"], whole=["1234", "123", "14", "35"], names=names)

    over = referee_pb2.GameOver(summary=f"{LONG} wins with 87 points")
    bots = []
    for seat, name in enumerate(names):
        over.seats.add(seat=seat, rank=seat + 1, name=name, score=87 - seat,
                       details_json='{"total": 87, "goods": {"pepper": 12, "tea": 9}, '
                                    '"shares": 25, "expeditions": 14, "seals": 6}')
        bots.append(demo.BotProcess(seat, name, "ismcts (python)", Path("x.log"), None))
    check(demo.results_table(over, bots),
          headers=["rank", "seat", "name", "bot", "gold", "breakdown"],
          whole=["87", "86"], names=names + ["goods 12 pepper+9 tea, shares 25, expeditions 14"])


# ---------------------------------------------------------------------- referee-bot conformance
def test_conformance_table_at_80_columns():
    from referee_tools.conformance import Row, print_table

    out = io.StringIO()
    rows = [Row("santa_maria", "plays every decision kind to the end", True, ""),
            Row("goa", "answers an illegal move's refusal with another move", False,
                "the bot sent move 3 again after ILLEGAL_MOVE: {\"kind\": \"bid\", \"amount\": "
                "12}")]
    # what a terminal of 80 columns shows: the console is given that width by rich itself
    import rich.console

    real = rich.console.Console

    def narrow(*a: Any, **kw: Any) -> Console:
        kw.setdefault("width", WIDTH)
        kw.setdefault("color_system", None)
        return real(*a, **kw)

    rich.console.Console = narrow  # type: ignore[misc]
    try:
        print_table(rows, ["python", "-m", "mybot", "--name", LONGER], file=out)
    finally:
        rich.console.Console = real  # type: ignore[misc]
    text = out.getvalue()
    assert all(len(ln) <= WIDTH for ln in text.splitlines()), text
    for h in ("game", "check", "result", "detail", "PASS", "FAIL", "santa_maria"):
        assert any(h in ln for ln in text.splitlines()), (h, text)


# ---------------------------------------------------------------------- python -m bench
def test_bench_summary_at_80_columns():
    from bench.run import summary_table

    table = summary_table()
    table.add_row("cluster.cpu_per_move_by_workers (ms)", "1: 0.412 / 2: 0.431 / 4: 0.502",
                  "the workers' CPU per move (nginx apart) with 1, 2, 4 workers under the "
                  "same load; vs one: 1: x1.0, 2: x1.046, 4: x1.218")
    table.add_row("grpc.load300.moves_per_s / p99_ms", "12,345 / 45.6",
                  "300 Batavia matches at once x 4 random bots")
    table.add_row("engine.santa_maria.decisions_per_s", "123,456", "")
    check(table, headers=["measure", "value", "notes"],
          whole=["123,456", "12,345 / 45.6", "0.412", "0.431", "0.502"],
          names=["cluster.cpu_per_move_by_workers (ms)",
                 "engine.santa_maria.decisions_per_s", "300 Batavia matches at once x 4 random bots"])
