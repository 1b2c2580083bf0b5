"""Per-game reference sections written from the engines at each site build: the decision kinds a
bot meets (from seeded random games played with the engine itself), the component sheets with
the provenance of every value, and where each rule lives in the code with the rulebook passages
its docstrings and comments quote."""
from __future__ import annotations

import ast
import io
import random
import re
import tokenize
from collections import defaultdict
from pathlib import Path
from typing import Any


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def decision_kinds(name: str, seats: int, seeds: tuple[int, ...] = (1, 2, 3),
                   options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every decision kind met in random games on ``seeds``, in the order first met: the kind,
    the move number and game it first came at, its prompt then, how many legal moves it had,
    and how often it came in all."""
    from referee.core import registry
    from referee.core.rng import Streams
    from referee.sim import playout, uniform

    game = registry.get(name)
    opts = game.spec.parse_options(options or {})
    seen: dict[str, dict[str, Any]] = {}
    for n, seed in enumerate(seeds):
        state = game.setup(opts, seats, Streams(seed), game.default_components(opts))
        pick = random.Random(seed)
        met = 0

        def watch(dec: Any, n: int = n) -> None:
            nonlocal met
            met += 1
            row = seen.setdefault(dec.kind, {"kind": dec.kind, "game": n + 1, "move": met,
                                             "prompt": dec.prompt, "moves": len(dec.moves),
                                             "count": 0})
            row["count"] += 1

        playout(game, state, uniform(pick), watch=watch)
    return list(seen.values())


def decisions_section(name: str, seats: int, seeds: tuple[int, ...] = (1, 2, 3),
                      options: dict[str, Any] | None = None) -> str:
    rows = decision_kinds(name, seats, seeds, options)
    opts = ", ".join(f"`{k}={v}`" for k, v in (options or {}).items()) or "default options"
    lines = [(f"Played by the engine at each build of the site: {len(seeds)} games of {seats} "
             f"seats with {opts}, every move drawn at random among the legal ones (seeds "
             f"{', '.join(map(str, seeds))}). Each kind is listed where a bot first meets it; "
             "`Decision.kind` carries it and `Decision.prompt` the text shown here (from that "
             "first time)."), "",
             ("| # | `Decision.kind` | first met (game, move) | prompt then | legal moves then "
             "| times met |"), "| --- | --- | --- | --- | --- | --- |"]
    for i, r in enumerate(rows, 1):
        lines.append(f"| {i} | `{r['kind']}` | {r['game']}, {r['move']} | {_cell(r['prompt'])} "
                     f"| {r['moves']} | {r['count']} |")
    return "\n".join(lines) + "\n"


def text_example(name: str, seats: int, seed: int = 3, after: int = 60,
                 options: dict[str, Any] | None = None) -> tuple[str, int, int]:
    """A seeded random game of ``name`` played ``after`` moves on, then to the first decision
    with more than one legal move: the deciding seat's text (``describe_state``: its view and
    its decision), and the characters of the whole and of the view alone."""
    from referee.core import registry, text
    from referee.core.rng import Streams

    game = registry.get(name)
    opts = game.spec.parse_options(options or {})
    state = game.setup(opts, seats, Streams(seed), game.default_components(opts))
    pick = random.Random(seed)
    played = 0
    while True:
        d = game.decision(state)
        if d is None:
            raise ValueError(f"{name}: the game ended before move {after}")
        if played >= after and len(d.moves) > 1:
            break
        game.apply(state, d.seat, d.moves[pick.randrange(len(d.moves))])
        played += 1
    whole = text.describe_state(game, state, d.seat)
    view = text.describe_view(game.view(state, d.seat), game)
    return whole, len(whole), len(view)


def text_section(name: str, seats: int, options: dict[str, Any] | None = None) -> str:
    """The text view of a mid-game decision (as DescribeSeat and ``describe_state`` give it),
    and each Move kind with its line and the rulebook passage it cites."""
    from referee.core import registry

    whole, chars, view_chars = text_example(name, seats, options=options)
    opts = ", ".join(f"`{k}={v}`" for k, v in (options or {}).items()) or "default options"
    lines = [(f"Written at each build of the site from a seeded random game ({seats} seats, "
              f"{opts}), at its first decision with a choice after 60 moves: the deciding "
              f"seat's text, {chars} characters ({view_chars} of them the view). "
              "`DescribeSeat` returns the same view and moves (each move also as the `Move` "
              "to submit) and the public events since a version; the declarations are in "
              f"`referee/games/{name}/text.py`."), "", "```text", whole, "```", ""]
    table = registry.get(name).text_table
    if table is not None:
        lines += ["| move kind | line (fields in braces) | rulebook passage |",
                  "| --- | --- | --- |"]
        for kind, decl in table.moves.items():
            said = decl.text if isinstance(decl.text, str) else "(from the move and the view)"
            lines.append(f"| `{kind}` | {_cell(said)} | {_cell(decl.rule)} |")
    return "\n".join(lines) + "\n"


def sheets_section(name: str) -> str:
    """Each default component sheet: its provenance counts, then every value's provenance."""
    from referee.core import registry
    from referee.core.components import PROVENANCES

    game = registry.get(name)
    sheets = game.component_sheets()
    lines = ["Written from the sheets (`referee/games/" + name + "/components/*.json`) at each "
             "build of the site; `referee games` and `ListGames` report the same counts.", "",
             "| sheet | " + " | ".join(PROVENANCES) + " |",
             "| --- | " + " | ".join("---" for _ in PROVENANCES) + " |"]
    for sheet in sheets.values():
        counts = sheet.provenance_counts
        lines.append(f"| `{sheet.name}` | " + " | ".join(str(counts[p]) for p in PROVENANCES)
                     + " |")
    lines.append("")
    for sheet in sheets.values():
        doc = sheet.document
        lines += [f'??? note "Every value of `{sheet.name}` with its provenance"', ""]
        sources = doc.get("sources", {})
        if sources:
            lines += ["    Sources: " + "; ".join(f"**{k}** {_cell(v)}"
                                                  for k, v in sources.items()), ""]
        lines += ["    | value | provenance | source | note |", "    | --- | --- | --- | --- |"]
        for key, entry in doc.get("values", {}).items():
            lines.append(f"    | `{key}` | {entry.get('provenance', '')} | "
                         f"{_cell(entry.get('source', ''))} | {_cell(entry.get('note', ''))} |")
        lines.append("")
    return "\n".join(lines)


#: a quote in '...' (an apostrophe inside a word, as in 'Utilisation de l'Or', does not close it),
#: "..." or “...”
QUOTED = re.compile(r"""'((?:[^'\n`]|'(?=\w)){3,60})'(?!\w)|"([^"\n`]{3,60})"|“([^”\n]{3,60})”""")
#: a rulebook section or sentence: capitalised words, maybe after "(A) ", nothing code-like
PASSAGE = re.compile(r"(\([A-Z0-9]\) |[A-Z0-9]{1,2}\. )?[A-ZÉ][a-zéèêàç']+( \S+)*")
CODE_LIKE = re.compile(r"[_=(){}<>]|\.\.\.")


def _texts(source: str) -> list[str]:
    """Docstrings and comments of a module: where the engine says which passage it follows."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=True)
            if doc:
                out.append(doc)
    out += [t.string.lstrip("# ") for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type == tokenize.COMMENT]
    return out


def cited_passages(texts: list[str]) -> list[str]:
    """The rulebook passages quoted in ``texts``: capitalised phrases in quotes (section titles
    such as 'Jouer des cartes', or a sentence), not code, not the project's own documents."""
    found: list[str] = []
    for text in texts:
        flat = " ".join(text.split())
        for m in QUOTED.finditer(flat):
            quote = next(g for g in m.groups() if g)
            before = flat[max(0, m.start() - 40):m.start()]
            if (PASSAGE.fullmatch(quote) and not CODE_LIKE.search(quote[3:])
                    and not re.search(r"ARCHITECTURE|RULINGS", before) and quote not in found):
                found.append(quote)
    return found


def modules_section(name: str, root: Path) -> str:
    """Each module of the engine with the first sentence of its docstring and the rulebook
    passages its docstrings and comments quote."""
    pkg = root / "referee" / "games" / name
    lines = ["Written from the engine's modules at each build of the site.", "",
             "| module | what it holds | rulebook passages it quotes |", "| --- | --- | --- |"]
    everywhere: dict[str, list[str]] = defaultdict(list)  # passage -> modules quoting it
    for path in sorted(pkg.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        doc = ast.get_docstring(ast.parse(source)) or ""
        first = " ".join(doc.split("\n\n")[0].split())
        cites = cited_passages(_texts(source))
        for c in cites:
            everywhere[c].append(path.stem)
        lines.append(f"| `{path.name}` | {_cell(first)} | "
                     f"{'; '.join('“' + _cell(c) + '”' for c in cites)} |")
    return "\n".join(lines) + "\n"


def passages_section(name: str, root: Path) -> str:
    """The rulebook passages the engine quotes, each with the modules that quote it."""
    pkg = root / "referee" / "games" / name
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(pkg.glob("*.py")):
        for c in cited_passages(_texts(path.read_text(encoding="utf-8"))):
            where[c].append(f"`{path.name}`")
    lines = [("Quoted in the engine's docstrings and comments (found there at each build of the "
             "site), with the modules that quote them:"), "",
             "| rulebook passage | quoted in |", "| --- | --- |"]
    lines += [f"| “{_cell(c)}” | {', '.join(m)} |" for c, m in where.items()]
    return "\n".join(lines) + "\n"


def options_section(name: str) -> str:
    """The game's seats and match options, from its GameSpec (what ListGames reports)."""
    from referee.core import registry

    spec = registry.get(name).spec
    lines = [(f"{spec.title}: {spec.min_seats} to {spec.max_seats} seats. Rulebook followed: "
             f"{spec.rulebook}. Options (`--option NAME=VALUE` of `referee-bot create-match` "
             "and `referee-bot play`, `[game] options` of a tournament file), from the "
             "engine's own list:"), "",
             "| option | type | default | values | meaning |", "| --- | --- | --- | --- | --- |"]
    for o in spec.options:
        values = ", ".join(f"`{c}`" for c in o.choices)
        if o.kind == "int":
            values = f"{'' if o.min is None else o.min}..{'' if o.max is None else o.max}"
        elif o.kind == "bool":
            values = "`true`, `false`"
        default = str(o.default).lower() if isinstance(o.default, bool) else o.default
        lines.append(f"| `{o.name}` | {o.kind} | `{default}` | {values} | "
                     f"{_cell(o.description)} |")
    return "\n".join(lines) + "\n"
