"""``referee sheet verify GAME``: walk the values of a game's component sheet that no source
gives (provisional, and on request inferred or single-source ones) with the box at hand, and
write a sheet of the printed values that ``referee serve --components GAME=FILE`` loads
(docs/organizers.md, "Verify a component sheet"; the file handling is referee.core.verify)."""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

HELP = (
    "At each value: Enter keeps the value shown (it is what is printed), a value replaces it "
    "(JSON: 3, [1, 2], {\"wood\": 1}, \"EN\"; @FILE reads the JSON from a file), s skips it "
    "(it stays provisional and is asked again next time), q stops: what you entered is saved, "
    "and the same command goes on from there. ? shows this again."
)


def add_parser(sub: Any) -> None:
    """The ``sheet`` command and its ``verify`` sub-command, on ``referee``'s parser."""
    s = sub.add_parser(
        "sheet", help="component sheets: verify one against the printed components",
        description="Work on a game's component sheet (the values its rulebook shows only in "
                    "pictures). `referee games` lists each sheet's provenance counts.")
    ss = s.add_subparsers(dest="sheet_command", metavar="SUBCOMMAND", required=True)
    v = ss.add_parser(
        "verify", help="enter the printed values of a sheet's provisional ones, with the box",
        description="Walk every provisional value of GAME's component sheet (and, with "
                    "--include, inferred, single-source or corroborated ones): which component "
                    "it is, where it is printed and the sheet's current guess. Type the printed "
                    "value, or Enter if the guess is right. " + HELP + " The result is a sheet "
                    "of its own (OUT), its checked values marked verified, which "
                    "`referee serve --components GAME=OUT` loads.")
    v.add_argument("game", metavar="GAME", help="the game (see `referee games`)")
    v.add_argument("--variant", default=None,
                   help="which of the game's sheets (Goa: the edition, 2012 or 2004; default: "
                        "the one its default options use)")
    v.add_argument("--sheet", default=None, metavar="FILE",
                   help="start from this sheet instead of the game's default")
    v.add_argument("--out", default=None, metavar="FILE",
                   help="the verified sheet to write (default: ./<sheet>-verified.json); if it "
                        "exists, the walk goes on from it")
    v.add_argument("--include", action="append", default=[], metavar="PROVENANCE",
                   choices=("inferred", "single-source", "corroborated"),
                   help="also ask for the values of this provenance (repeatable)")


    y = ss.add_parser(
        "vary", help="write copies of a sheet with its provisional values varied",
        description="Write COUNT copies of GAME's component sheet (the one OPTIONS play with) "
                    "whose provisional values are drawn again within what their notes "
                    "document: values sharing a note are shuffled among their components, a "
                    "documented range ('1 to 3') is drawn in; every copy is one the game "
                    "accepts (referee.core.sheet_vary). `referee serve --components GAME=FILE` "
                    "loads each; `referee-tournament report DIR --sensitivity N` replays an "
                    "event under them.")
    y.add_argument("game", metavar="GAME", help="the game (see `referee games`)")
    y.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a game option choosing the sheet (Goa: edition=2004); repeatable")
    y.add_argument("--count", type=int, default=5, help="how many copies (default 5)")
    y.add_argument("--seed", type=int, default=1, help="the draw's seed (default 1)")
    y.add_argument("--out", required=True, metavar="DIR",
                   help="folder for <sheet>+vary<i>.json and vary.json (what changed)")


class _Stop(Exception):
    pass


def cmd_sheet(args: argparse.Namespace, ask: Callable[[str], str] | None = None) -> int:
    try:
        if args.sheet_command == "vary":
            return _vary(args)
        return _verify(args, ask)
    except UsageError as exc:
        print(f"referee sheet {args.sheet_command}: {exc}", file=sys.stderr)
        return 2


def _vary(args: argparse.Namespace) -> int:
    import random
    import tempfile

    from referee.core import registry, sheet_vary

    try:
        game = registry.get(args.game)
    except KeyError as exc:
        raise UsageError(f"{exc.args[0]}") from None
    raw = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--option {item!r}: expected KEY=VALUE")
        raw[key] = value
    try:
        options = game.spec.parse_options(raw)
    except ValueError as exc:
        raise UsageError(f"--option: {exc}") from None
    if args.count < 1:
        raise UsageError("--count: at least 1")
    base = game.default_components(options).document
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)

    def valid(doc: dict[str, Any]) -> bool:
        with tempfile.NamedTemporaryFile("w", suffix=".json", dir=out, delete=False) as f:
            json.dump(doc, f)
        try:
            game.load_components(f.name)
            return True
        except (ValueError, OSError):
            return False
        finally:
            os.unlink(f.name)

    summary = []
    for i in range(1, args.count + 1):
        name = f"{base['sheet']}+vary{i}"
        doc, changed = sheet_vary.vary(base, rng, valid, name=name)
        path = out / f"{name}.json"
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
        summary.append({"file": path.name, "sheet": name, "changed": changed})
        print(f"{path}: {len(changed)} provisional value(s) changed")
    provisional = sum(1 for e in base["values"].values() if e.get("provenance") == "provisional")
    (out / "vary.json").write_text(json.dumps(
        {"game": game.spec.name, "base": base["sheet"], "provisional": provisional,
         "seed": args.seed, "sheets": summary}, indent=1), encoding="utf-8")
    return 0


def _verify(args: argparse.Namespace, ask: Callable[[str], str] | None) -> int:
    from rich.console import Console
    from rich.prompt import Prompt

    from referee.core import registry, verify
    from referee.core.components import SheetError

    console = Console(highlight=False)
    try:
        game = registry.get(args.game)
    except KeyError as exc:
        raise _usage(f"{exc.args[0]}") from None
    sheets = game.component_sheets()
    variant = args.variant
    if variant is None:
        variant = game.sheet_variant(game.spec.parse_options({}))
    if variant not in sheets:
        raise _usage(f"{game.spec.name} has no sheet variant {variant!r} "
                     f"(variants: {', '.join(sorted(sheets)) or 'none'})")
    try:
        start = (game.load_components(args.sheet) if args.sheet else sheets[variant]).document
    except (SheetError, OSError) as exc:
        raise _usage(f"--sheet: {exc}") from None
    out = Path(args.out or f"{start['sheet']}-verified.json")
    doc: dict[str, Any]
    if out.exists():
        try:
            resumed = game.load_components(str(out))
        except (SheetError, OSError) as exc:
            raise _usage(f"--out {out} exists but is not a {game.spec.name} sheet: {exc}") from None
        doc = copy.deepcopy(dict(resumed.document))
        console.print(f"Going on from {out}.")
    else:
        doc = copy.deepcopy(dict(start))
    table = verify.printed_table(_sheet_dir(game, variant))
    keys = verify.to_verify(doc, args.include)
    total = len(doc["values"])
    if not keys:
        console.print(f"{doc['sheet']}: nothing to verify ({total} values, none provisional"
                      + (f" or {', '.join(args.include)}" if args.include else "") + ").")
        return 0
    console.print(f"[bold]{doc['sheet']}[/]: {len(keys)} of {total} values to check against "
                  f"the printed components.\n{HELP}\n")
    read = ask or (lambda prompt: Prompt.ask(prompt, console=console, default="",
                                             show_default=False))
    when = time.strftime("%Y-%m-%d", time.gmtime())
    done = skipped = 0
    try:
        for i, key in enumerate(keys, 1):
            d = verify.describe(doc, key, table)
            console.print(f"[bold][{i}/{len(keys)}] {key}[/] ({d['provenance']})")
            if d["where"]:
                console.print(f"  printed on: {d['where']}")
            if d["note"]:
                console.print(f"  sheet's note: {d['note']}")
            if d["source"]:
                console.print(f"  sheet's source: {d['source']}")
            console.print(f"  current value: {d['value']}")
            candidate = _answer(read, console, game, doc, start, key, when)
            if candidate is None:
                skipped += 1
                continue
            doc = candidate
            verify.summarise(doc)
            _write(out, doc)
            done += 1
    except _Stop:
        console.print("Stopped.")
    counts = verify.summarise(doc)
    if done:
        _write(out, doc)
    left = counts["provisional"]
    console.print(
        f"{done} value(s) verified this time, {skipped} skipped; the sheet has "
        f"{counts[verify.VERIFIED]} verified and {left} provisional of {total}.")
    if out.exists():
        console.print(f"Written: {out}\nServe it with: referee serve --components "
                      f"{game.spec.name}={out}")
    if left:
        console.print(f"Run the same command again to go on ({left} provisional left).")
    return 0


def _answer(read: Callable[[str], str], console: Any, game: Any, doc: dict, start: Mapping[str, Any],
            key: str, when: str) -> dict | None:
    """The document with ``key`` verified, None if skipped; raises _Stop on q or the end of
    the input. Asks again until the value passes the game's checks."""
    from referee.core import verify
    from referee.core.components import SheetError

    while True:
        try:
            text = read("  printed value").strip()
        except (EOFError, KeyboardInterrupt):
            raise _Stop from None
        if text in ("q", "quit"):
            raise _Stop
        if text in ("s", "skip"):
            return None
        if text == "?":
            console.print(HELP)
            continue
        try:
            value = doc["values"][key]["value"] if text == "" else verify.parse_answer(text)
        except (OSError, ValueError) as exc:
            console.print(f"  [red]cannot read that[/]: {exc}")
            continue
        problem = game.sheet_schema[key](value)
        if problem:
            console.print(f"  [red]not a value for {key}[/]: {problem}")
            continue
        candidate = verify.verified_copy(doc, start, when)
        verify.set_verified(candidate, key, value, when)
        try:
            sheet = game.parse_components(candidate)
            compile_rules = getattr(game, "rules_for", None)
            if compile_rules is not None:  # what a match would build from it
                compile_rules(sheet)
        except (SheetError, ValueError, KeyError, TypeError, IndexError) as exc:
            console.print(f"  [red]the sheet would not hold together[/]: {exc}\n"
                          "  (check the value, or skip it and verify the values it depends on "
                          "first)")
            continue
        return candidate


def _sheet_dir(game: Any, variant: str) -> Path:
    paths = getattr(game, "default_sheets", {})
    return Path(paths[variant]).parent if variant in paths else Path(".")


def _write(path: Path, doc: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


class UsageError(Exception):
    """A flag whose value cannot be used: one line on stderr, exit code 2."""


def _usage(message: str) -> UsageError:
    return UsageError(message)
