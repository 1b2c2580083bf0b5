"""MkDocs hooks (mkdocs.yml, `hooks:`): the pages written from the source at each build.

* ``on_files`` adds the reference pages: the gRPC protocol (one page per `.proto`, from the
  descriptors and their comments), every command's --help, the record schema and the web
  viewer's routes.
* ``on_page_markdown`` fills a page's ``<!-- gen: WHAT ARGS -->`` lines: the decision kinds of a
  game (played by its engine), its text view at a mid-game decision (``text GAME SEATS``), its component sheets with their provenance, its modules and the
  rulebook passages they quote, or a file of the repository included as it is
  (``include PATH``, headings moved one level down), or the research environments' spaces
  (``spaces``).

Nothing is fetched: everything comes from this tree.
"""
from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for p in (HERE, ROOT, ROOT / "clients"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import envdoc  # noqa: E402
import gamedoc  # noqa: E402
import protodoc  # noqa: E402
import refdoc  # noqa: E402

#: Pages other work adds to the site; until they exist, a stub keeps the nav whole.
PLANNED = {
    "bot-authors.md": "Refused moves, notes and `referee-bot play` exit codes",
    "viewer.md": "The web viewer",
    "boards.md": "How each board is drawn",
}

DIRECTIVE = re.compile(r"^<!-- gen: (.+?) -->$", re.M)


def generated_pages() -> dict[str, str]:
    from referee.schema import RECORD_SCHEMA, STANDINGS_SCHEMA, record_schema, standings_schema

    pages = {f"reference/protocol/{name}": text
             for name, text in protodoc.render(ROOT / "proto").items()}
    pages["reference/cli.md"] = refdoc.cli_page()
    pages["reference/record-schema.md"] = refdoc.schema_page(
        record_schema(), str(RECORD_SCHEMA.relative_to(ROOT)))
    pages["reference/standings-schema.md"] = refdoc.schema_page(
        standings_schema(), str(STANDINGS_SCHEMA.relative_to(ROOT)),
        "what `PublishStandings` checks every league's standings against before keeping them")
    pages["reference/web-api.md"] = refdoc.web_api_page()
    return pages


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, text in generated_pages().items():
        files.append(File.generated(config, path, content=text))
    for path, title in PLANNED.items():
        if files.get_file_from_path(path) is None:
            files.append(File.generated(config, path, content=(
                f"# {title}\n\nThis page is being written; until then, see the "
                "[bot author's path](bot/index.md).\n")))
    return files


def include(path: str, shift: int = 1, body: bool = False) -> str:
    """A Markdown file of the repository, its headings ``shift`` levels down (none inside code
    blocks); ``body``: without its title."""
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    if body and lines and lines[0].startswith("# "):
        lines = lines[1:]
    out, fenced = [], False
    for line in lines:
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"(#+) ", line)):
            line = "#" * min(len(m.group(1)) + shift, 6) + line[len(m.group(1)):]
        out.append(line)
    return "\n".join(out) + "\n"


def sampling(game: str) -> str:
    """The game's ``SAMPLING.md`` (how its sampler draws what a seat cannot see, what it
    promises), included like RULINGS.md; a line saying there is none yet when it is absent."""
    path = f"referee/games/{game}/SAMPLING.md"
    if (ROOT / path).exists():
        return include(path, 1, body=True)
    return ("This game has no sampler yet: `Game.sample_state` raises `NotImplementedError`, "
            "so `Simulation.from_views`, the Simulator's `FromViews` and a start with "
            "`redraw_hidden` refuse it (see [the forward model](../research/forward-model.md)).\n")


def strategy(path: str, language: str) -> str:
    """The part of a kit's source between "YOUR STRATEGY GOES HERE" and the rule that closes it,
    as a code block named after the file."""
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if "YOUR STRATEGY GOES HERE" in ln)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("// ====="))
    return "\n".join([f'```{language} title="{path}"', *lines[start:end], "```", ""])


def expand(what: str) -> str:
    """The Markdown for one ``<!-- gen: ... -->`` line."""
    args = shlex.split(what)
    kind, rest = args[0], args[1:]
    if kind == "include":
        return include(rest[0], int(rest[1]) if len(rest) > 1 else 1, "body" in rest[2:])
    if kind == "strategy":
        return strategy(rest[0], rest[1])
    if kind == "decisions":
        options = dict(a.split("=", 1) for a in rest[2:])
        return gamedoc.decisions_section(rest[0], int(rest[1]), options=options or None)
    if kind == "sheets":
        return gamedoc.sheets_section(rest[0])
    if kind == "text":
        options = dict(a.split("=", 1) for a in rest[2:])
        return gamedoc.text_section(rest[0], int(rest[1]), options or None)
    if kind == "modules":
        return gamedoc.modules_section(rest[0], ROOT)
    if kind == "options":
        return gamedoc.options_section(rest[0])
    if kind == "passages":
        return gamedoc.passages_section(rest[0], ROOT)
    if kind == "sampling":
        return sampling(rest[0])
    if kind == "spaces":
        return envdoc.spaces_section()
    if kind == "planes":
        return envdoc.planes_section(ROOT)
    raise ValueError(f"unknown generator {kind!r} in <!-- gen: {what} -->")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return DIRECTIVE.sub(lambda m: expand(m.group(1)), markdown)


ROLE = re.compile(r":(?:class|func|meth|attr|exc|mod|data):<code>~?([\w.]+)</code>")


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """The SDK's docstrings cross-reference in reStructuredText (``:class:`Bot```), which the
    Markdown of the site shows as it is: make each a link to the object's entry on the page when
    it has one, else plain code."""
    ids = set(re.findall(r'id="(referee_client\.[\w.]+)"', html))

    def link(m: re.Match[str]) -> str:
        name = m.group(1)
        target = next((i for i in (f"referee_client.{name}", name) if i in ids), None)
        if target is None:  # a method of the class being described: Bot.choose -> choose
            target = next((i for i in sorted(ids) if i.endswith("." + name)), None)
        code = f"<code>{name}</code>"
        return f'<a href="#{target}">{code}</a>' if target else code

    return ROLE.sub(link, html)
