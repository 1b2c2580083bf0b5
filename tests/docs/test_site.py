"""The documentation site (issue 23): it builds in strict mode (a broken link or a missing
reference fails), its references are written from the source (a `.proto` comment changed in a
copy of proto/ shows up in the generated page), and the tutorials' commands marked runnable work
when typed word for word: the Python bot tutorial plays real matches on a local referee."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BIN = Path(sys.executable).parent
sys.path.insert(0, str(DOCS / "gen"))

import gamedoc  # noqa: E402
import protodoc  # noqa: E402

#: the pages whose runnable blocks the test runs, in the order a reader meets them (one folder:
#: the conformance page checks the bot the first tutorial wrote)
TUTORIALS = ["bot/first-bot.md", "bot/conformance.md", "researcher.md",
             "research/forward-model.md", "organizer/component-sheets.md"]
MARK = "<!-- docs-test: run -->"
BLOCK = re.compile(r"^" + re.escape(MARK) + r"\n```(\w+)([^\n]*)\n(.*?)\n```$", re.M | re.S)


def runnable_blocks(markdown: str) -> list[tuple[str, str | None, str]]:
    """(language, file name from title="...", code) of each block marked runnable."""
    out = []
    for lang, attrs, code in BLOCK.findall(markdown):
        title = re.search(r'title="([^"]+)"', attrs)
        out.append((lang, title.group(1) if title else None, code))
    assert markdown.count(MARK) == len(out), "a runnable mark not followed by a fenced block"
    return out


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REFEREE_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"  # as after `source .venv/bin/activate`
    env["NO_MKDOCS_2_WARNING"] = "1"
    return env


def test_site_builds_in_strict_mode(tmp_path):
    site = tmp_path / "site"
    run = subprocess.run([str(BIN / "mkdocs"), "build", "--strict", "--site-dir", str(site)],
                         cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    for page in ("index.html", "bot/first-bot.html", "reference/protocol/referee.html",
                 "reference/python-sdk.html", "reference/cli.html",
                 "reference/record-schema.html", "reference/web-api.html",
                 "games/goa.html", "ARCHITECTURE.html"):
        assert (site / page).is_file(), page
    # Issue 37, item 6: the site works opened from a file, as the README says. A link to a
    # folder shows a folder listing there (a server would have answered with its index.html),
    # and the search reads its index from a script, not by fetching JSON (no fetch from file:).
    pages = {p: p.read_text(encoding="utf-8") for p in site.rglob("*.html")}
    for path, page in pages.items():
        for href in re.findall(r'href="([^"#:?]*)"', page):
            assert not href or (not href.endswith("/") and href != ".."), (path, href)
    assert (site / "search" / "search_index.js").is_file()
    html = "".join(pages.values())
    assert "fonts.googleapis" not in html and "fonts.gstatic" not in html  # nothing fetched
    assert "<!-- gen:" not in html  # every generated section was filled
    sdk = (site / "reference/python-sdk.html").read_text(encoding="utf-8")
    assert "run_bot" in sdk and "Play one seat to the end of the match" in sdk  # docstrings
    cli = (site / "reference/cli.html").read_text(encoding="utf-8")
    for command in ("referee serve", "referee-bot play", "referee-tournament run"):
        assert f"usage: {command}" in cli
    goa = (site / "games/goa.html").read_text(encoding="utf-8")
    assert "goa.place_flag" in goa and "provisional" in goa  # decisions and provenance
    assert "Which row does a spied action use?" in goa  # RULINGS.md, included
    assert "Sampling what a seat cannot see" in goa  # SAMPLING.md, or why there is none
    sampling = (ROOT / "referee/games/goa/SAMPLING.md")
    if sampling.exists():  # included like RULINGS.md: its first paragraph is on the page
        first = next(p for p in sampling.read_text(encoding="utf-8").split("\n\n")[1:]
                     if p.strip() and not p.startswith("#"))
        text = " ".join(re.sub(r"<[^>]+>", "", goa).split())  # the page's text, no markup
        assert " ".join(first.replace("`", "").split()[:6]) in text
    else:
        assert "no sampler yet" in goa


def test_protocol_reference_covers_every_message_field_and_enum_value():
    from referee.v1 import batavia_pb2, goa_pb2, referee_pb2, santa_maria_pb2, sim_pb2

    pages = protodoc.render(ROOT / "proto")
    for module in (referee_pb2, batavia_pb2, goa_pb2, santa_maria_pb2, sim_pb2):
        fd = module.DESCRIPTOR
        page = pages[Path(fd.name).stem + ".md"]

        def walk(messages, enums, page=page, package=fd.package):
            for e in enums:
                assert f"enum `{e.full_name.removeprefix(package + '.')}`" in page
                for v in e.values:
                    assert f"| `{v.name}` | {v.number} |" in page, v.full_name
            for m in messages:
                if m.GetOptions().map_entry:
                    continue
                assert f"#{protodoc.anchor('.' + m.full_name)} }}" in page, m.full_name
                for f in m.fields:
                    assert f"| `{f.name}` | {f.number} |" in page, f.full_name
                walk(m.nested_types, m.enum_types)

        walk(fd.message_types_by_name.values(), fd.enum_types_by_name.values())
        for s in fd.services_by_name.values():
            for method in s.methods:
                assert f"| `{method.name}` |" in page
    reasons = pages["referee.md"]
    assert "| `SEAT_ABANDONED` | 7 | The seat was abandoned by the host" in reasons


def test_a_changed_proto_comment_shows_in_the_reference(tmp_path):
    """No page holds a copy of the protocol: edit a comment in a copy of proto/ and the
    generated page says the new thing, for a field, an enum value and a method."""
    proto = tmp_path / "proto"
    shutil.copytree(ROOT / "proto", proto)
    path = proto / "referee" / "v1" / "referee.proto"
    text = path.read_text(encoding="utf-8")
    edits = [("  string request_id = 3;       // echoed in the MoveResult",
              "  string request_id = 3;       // FIELD-MARK echoed back"),
             ("  STALE_STATE = 3;", "  STALE_STATE = 3;  // ENUM-MARK the view moved on"),
             ("  // Unary equivalent of a `Submit` on the Play stream.",
              "  // METHOD-MARK a unary Submit.")]
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    before = protodoc.render(ROOT / "proto")["referee.md"]
    after = protodoc.render(proto)["referee.md"]
    assert "| `request_id` | 3 | `string` | FIELD-MARK echoed back |" in after
    assert "| `STALE_STATE` | 3 | ENUM-MARK the view moved on |" in after
    assert re.search(r"\| `SubmitMove` \|[^\n]*\| METHOD-MARK a unary Submit\. \|", after)
    assert "MARK" not in before


def test_comment_blocks_keep_lists_and_drawings():
    text = ("Intro line:\n  * first item\n    goes on\n  * second\n\nA table:\n"
            "  A   one\n  B   two\nEnd.")
    out = protodoc._block(text)
    assert "Intro line:\n\n* first item\n  goes on\n* second" in out
    assert "```text\n  A   one\n  B   two\n```" in out
    # "<data-dir>" is prose, not an HTML tag the page would swallow; in code it stays as it is
    assert protodoc._block("to <data-dir>/records, `x<y>`") == "to &lt;data-dir&gt;/records, `x<y>`"


def test_decision_kinds_come_from_the_engine_in_the_order_met():
    rows = gamedoc.decision_kinds("batavia", 3, seeds=(5,))
    kinds = [r["kind"] for r in rows]
    assert kinds[0] == "batavia.auction"  # "A. Vente aux enchères" opens every round
    assert len(kinds) == len(set(kinds)) and all(k.startswith("batavia.") for k in kinds)
    assert [r["move"] for r in rows] == sorted(r["move"] for r in rows)


def test_cited_passages_are_rulebook_quotes_not_code():
    texts = [('Follows the rules, "Jouer des cartes" and \'Fin du jeu\'; see "State" in '
             'docs/ARCHITECTURE.md, "Component data"'), "x = 'a_b'", "'Utilisation de l'Or'",
             "(RULINGS.md, 'Stalemate')", "rules, '1. Place auction tokens'"]
    assert gamedoc.cited_passages(texts) == ["Jouer des cartes", "Fin du jeu", "State",
                                             "Utilisation de l'Or", "1. Place auction tokens"]


def test_tutorials_run_word_for_word(tmp_path):
    """Each runnable block, in the reader's order, in one folder that looks like a checkout
    (the repository's files linked in, nothing written into the repository)."""
    for name in ("referee", "clients", "examples", "proto"):
        (tmp_path / name).symlink_to(ROOT / name)
    ran = []
    for page in TUTORIALS:
        blocks = runnable_blocks((DOCS / page).read_text(encoding="utf-8"))
        assert blocks, f"{page} has no runnable block"
        for lang, title, code in blocks:
            if title:
                (tmp_path / title).write_text(code + "\n", encoding="utf-8")
                continue
            assert lang == "sh", f"{page}: a runnable {lang} block needs a title (its file)"
            run = subprocess.run(["bash", "-e", "-c", code], cwd=tmp_path, env=_env(),
                                 capture_output=True, text=True, timeout=120)
            assert run.returncode == 0, (f"{page}: `{code}` exited {run.returncode}\n"
                                         f"{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
            ran.append((page, code, run.stdout))
    plays = [out for page, code, out in ran if "referee-bot play" in code]
    assert len(plays) == 2 and all("#1 seat" in out and "record:" in out for out in plays)
    assert any("6 of 6 checks passed" in out for _, _, out in ran)
    assert any(out.strip() == "True False" for _, _, out in ran)
    assert any("batavia-queen-2008-checked" in out for _, _, out in ran)


def test_readme_commands_and_links_lead_somewhere():
    """The README shrank to what a newcomer needs (issue 23): what it is, `make run`, `make
    test`, and where the documentation is and how to build it. Each `make X` it names is a target
    `make help` lists, and each file it links exists; what it used to say lives on the site."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^make ([\w-]+)", readme, re.M))
    assert {"run", "test", "docs", "docs-serve"} <= targets
    for target in targets:
        assert re.search(rf"^{re.escape(target)}:", makefile, re.M), target
        assert f'@echo "make {target} ' in makefile, f"make help does not list {target}"
    links = re.findall(r"\]\(([^)#]+)\)", readme)
    assert "docs/index.md" in links
    for link in links:
        assert (ROOT / link).is_file(), link
    assert len(readme.splitlines()) < 60


def test_a_games_text_view_section_is_written_from_its_engine_and_table():
    section = gamedoc.text_section("batavia", 3)
    assert "```text\nBatavia, 3 players" in section
    assert "to decide (batavia." in section
    from referee.core import registry

    for kind in registry.get("batavia").text_table.moves:
        assert f"| `{kind}` |" in section
