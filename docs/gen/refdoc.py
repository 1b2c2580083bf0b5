"""Reference pages written from the code at each site build: every command's --help, the record
schema and the web viewer's HTTP routes. Nothing here is a copy to keep in step by hand."""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
from collections.abc import Callable, Iterator
from typing import Any

from protodoc import escape

# ------------------------------------------------------------------ command-line help

def _help(parser: argparse.ArgumentParser) -> str:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: one width for every build
    try:
        return parser.format_help().rstrip()
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _walk(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, str]]:
    yield path, _help(parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, f"{path} {name}")


def _help_of_main(main: Callable[[list[str]], Any]) -> str:
    """--help of a command whose parser is built inside its main()."""
    out = io.StringIO()
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main(["--help"])
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return out.getvalue().rstrip()


def commands() -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(command, what it is, [(command line, its --help)]) for every command of the project."""
    from referee_research import cli as research_cli
    from referee_tools import bot_cli, demo
    from referee_tournament import cli as tournament_cli

    from referee import cli as referee_cli

    return [
        ("referee", "the referee: serve, replay, games, sheet, and the Simulator (sim serve)",
         list(_walk(referee_cli.build_parser(), "referee"))),
        ("referee-bot", "the reference bots, match creation, sessions, `play` and `conformance`",
         list(_walk(bot_cli.build_parser(), "referee-bot"))),
        ("referee-tournament", "the tournament runner",
         list(_walk(tournament_cli.build_parser(), "referee-tournament"))),
        ("referee-research", "the search bot: duels against the greedy bots, play through a referee",
         list(_walk(research_cli.build_parser(), "referee-research"))),
        ("python -m referee_tools.demo", "the live match `make run` starts with",
         [("python -m referee_tools.demo", _help_of_main(demo.main))]),
    ]


def cli_page() -> str:
    lines = ["# Command-line reference", "",
             ("Every command's `--help`, as the installed commands print it: this page is written "
             "from their argument parsers at each build of the site. After `make setup` the "
             "commands are in `.venv/bin` (`source .venv/bin/activate`)."), ""]
    for name, what, helps in commands():
        lines += [f"## `{name}`", "", f"{what[0].upper()}{what[1:]}.", ""]
        for path, text in helps:
            if path != name:
                lines += [f"### `{path}`", ""]
            lines += ["```text", text, "```", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------ record schema

def _type(node: dict[str, Any]) -> str:
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return f"[`{name}`](#def-{name})"
    t = node.get("type", "")
    if isinstance(t, list):
        t = " or ".join(t)
    if t == "array" and isinstance(node.get("items"), dict):
        return f"array of {_type(node['items'])}"
    if "enum" in node:
        return f"{t + ' ' if t else ''}({' / '.join(f'`{json.dumps(v)}`' for v in node['enum'])})"
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "oneOf" in node or "anyOf" in node:
        return " or ".join(_type(n) for n in node.get("oneOf", node.get("anyOf", [])))
    return f"{t}" if t else "any"


def _cell(text: str) -> str:
    return " ".join(escape(str(text)).split()).replace("|", "\\|")


def _properties(node: dict[str, Any], prefix: str = "") -> list[str]:
    required = set(node.get("required", ()))
    rows = []
    for name, sub in node.get("properties", {}).items():
        rows.append(f"| `{prefix}{name}` | {_type(sub)} | {'yes' if name in required else ''} | "
                    f"{_cell(sub.get('description', ''))} |")
        inner = sub.get("items", sub) if sub.get("type") == "array" else sub
        if isinstance(inner, dict) and inner.get("properties"):
            sep = "[]." if sub.get("type") == "array" else "."
            rows += _properties(inner, f"{prefix}{name}{sep}")
    return rows


def schema_page(schema: dict[str, Any], source: str,
                role: str = "the schema the tests check every record against") -> str:
    lines = [f"# {schema.get('title', 'Record schema')}", "",
             (f"Written at each build of the site from `{source}` (JSON Schema, "
             f"`$id` `{schema.get('$id', '')}`), {role}."), "",
             escape(schema.get("description", "")), "",
             "| member | type | required | meaning |", "| --- | --- | --- | --- |",
             *_properties(schema), ""]
    for name, sub in schema.get("$defs", {}).items():
        lines += [f"## `{name}` {{ #def-{name} }}", "", escape(sub.get("description", "")), ""]
        if sub.get("properties"):
            lines += ["| member | type | required | meaning |", "| --- | --- | --- | --- |",
                      *_properties(sub), ""]
        else:
            lines += [f"Type: {_type(sub)}.", ""]
    lines += ["## The schema itself", "", "```json", json.dumps(schema, indent=2,
                                                               ensure_ascii=False), "```", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------ the viewer's HTTP routes

def routes() -> list[tuple[str, str]]:
    """(path, what it serves) for every route of the web viewer, from the app itself."""
    import inspect

    from starlette.routing import Mount, Route

    from referee.web.app import routes as app_routes

    out = []
    for r in app_routes:
        if isinstance(r, Route):
            out.append((r.path, inspect.getdoc(r.endpoint) or ""))
        elif isinstance(r, Mount):
            out.append((r.path + "/…", "static files (the viewer's scripts and styles)"))
    return out


def web_api_page() -> str:
    lines = ["# Web viewer: pages and JSON API", "",
             ("Served by `referee serve --http-port PORT` (off by default; it binds `--host`, "
             "127.0.0.1 unless told otherwise). The table is written from the viewer's routes "
             "and their docstrings (`referee/web/app.py`) at each build of the site. Spectators "
             "need no token and see only public information; a route under `/api/` answers an "
             "error as JSON `{\"error\": \"...\", \"status\": N}`, with `\"reason\"` (the "
             "referee's reason name) where the refusal has one: `MALFORMED` for a value that "
             "does not parse (a number in the address is ASCII digits within its bounds, a "
             "name in the path has no control character; a "
             "body is a JSON object of the documented members, its strings valid Unicode "
             "without control characters, its numbers JSON integers). Bad input never gives "
             "a 5xx. Every response carries a "
             "Content-Security-Policy (scripts, styles and connections from the viewer's origin "
             "only, no framing), `X-Content-Type-Options: nosniff` and "
             "`X-Frame-Options: DENY`."), "",
             "| path | what it serves |", "| --- | --- |"]
    lines += [f"| `{path}` | {_cell(doc) or '—'} |" for path, doc in routes()]
    lines += ["", ("A match's record, served at `/matches/<id>/record.json`, follows the "
              "[record schema](record-schema.md); a league's standings, served at "
              "`/api/leagues/<name>/standings`, the [standings schema](standings-schema.md). "
              "The league pages and their calls are described in "
              "[Leagues on the web](../organizer/league-web.md)."), ""]
    return "\n".join(lines)
