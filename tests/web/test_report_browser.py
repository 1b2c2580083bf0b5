"""A tournament report in a real browser: a readable leaderboard with confidence intervals,
sortable tables, state in words, and every finished match linking to a static replay page that
works from the files alone (opened as file://, no referee running)."""
from __future__ import annotations

import json

from tests.tournament.conftest import RANDOM, run_cli, write_toml

from .browser import save_screenshot


def test_report_links_every_match_to_a_replay_that_works_from_files(page, tmp_path):
    out = tmp_path / "results"
    toml = write_toml(tmp_path / "t.toml", f"""
        name = "web-report"
        seed = 3
        output = "{out}"
        [game]
        name = "santa_maria"
        seats = 2
        [[entrants]]
        name = "alpha"
        command = "{RANDOM}"
        [[entrants]]
        name = "beta"
        command = "{RANDOM}"
        [format]
        type = "round_robin"
        rounds = 1
        [run]
        concurrency = 2
    """)
    proc = run_cli("run", str(toml), "--no-progress", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((out / "results.json").read_text())
    done = [m for m in data["matches"] if m["status"] == "done"]
    assert done
    page.goto((out / "index.html").as_uri())
    assert f"{len(done)} done" in page.inner_text("#summary")
    board = page.locator("#leaderboard tbody tr")
    assert board.count() == 2
    assert "[" in board.first.inner_text()  # the 95% intervals, as in the terminal
    assert "{" not in page.inner_text("body")  # no raw dict anywhere
    # sortable: sort the matches by index, descending
    page.click("#matches th:first-child")
    page.click("#matches th:first-child")
    first = page.locator("#matches tbody tr").first.get_attribute("data-index")
    assert int(first) == max(m["index"] for m in data["matches"])
    links = page.locator("#matches a.replay")
    assert links.count() == len(done)
    for m in done:
        assert (out / "replays" / (m["record"].split("/")[-1][:-5] + ".html")).is_file()
    page.set_viewport_size({"width": 1200, "height": 600})  # the log box ends below the fold
    links.first.click()
    page.wait_for_function("document.getElementById('board').dataset.version !== ''")
    assert page.url.startswith("file://") and "/replays/" in page.url
    # "hide the result until the end" is ticked: the replay opens at its set-up (issue 33)
    assert page.get_attribute("#board", "data-version") == "0"
    assert page.locator("#result").is_hidden()
    page.click("#last")
    last = int(page.get_attribute("#board", "data-version"))
    assert last > 10 and page.locator("#scores tr").count() == 2
    # at its last version, the page stays at its top (the log box scrolls, not the page)
    assert page.evaluate("window.scrollY") == 0
    before = page.inner_html("#board")
    page.click("#first")
    assert page.get_attribute("#board", "data-version") == "0"
    page.click("#next")
    assert page.get_attribute("#board", "data-version") == "1"
    assert page.inner_html("#board") != before
    save_screenshot(page.locator("body"), tmp_path, "report-replay.png")
    assert not page.errors, page.errors
