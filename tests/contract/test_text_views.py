"""Text views (referee/core/text.py, issue 34 item 1), checked for every registered game with no
game named here:

* every field of the game's View and Move messages is declared in its text table (a new game's
  text works at once through the generic rendering; this test lists what it still has to
  declare), and every Move kind has a one-line text and the rulebook passage that allows it;
* no text carries what its seat may not see: redrawing what the seat may not see
  (``hooks.rerandomise``, as for the protobuf views) leaves the seat's text (its view, and its
  decision when it is to act) unchanged;
* the text stays compact: a mid-game decision's text is measured and bounded;
* a game without a table still gets every field, in the messages' own names.
"""
from __future__ import annotations

import random
import statistics

import pytest

from referee.core import registry, text

from . import hooks
from .test_game_contract import GAMES, random_games

#: characters of a seat's whole text (view and decision) a mid-game decision may take; the
#: figures per game are in docs/bots/text-views.md
MAX_CHARS = 9_000


@pytest.mark.parametrize("name", GAMES)
def test_every_field_and_move_kind_is_declared(name):
    game = registry.get(name)
    assert game.text_table is not None, f"{name} declares no text table (its text.py)"
    assert text.undeclared(game) == [], f"{name}: fields its text table does not declare"
    kinds = {f.name for f in game.move_message.DESCRIPTOR.fields}
    assert set(game.text_table.moves) == kinds
    assert all(k.rule for k in game.text_table.moves.values()), "every kind cites its rule"


@pytest.mark.parametrize("name", GAMES)
def test_texts_do_not_depend_on_hidden_information(name):
    rerandomise = hooks.require(name, "rerandomise")
    rnd = random.Random(11)
    checked = 0
    for game, state in random_games(name, 6, 3000):
        if game.decision(state) is None or rnd.random() > 0.06:
            continue
        for seat in [*range(game.seat_count(state)), None]:
            want = text.describe_state(game, state, seat)
            other = rerandomise(state, seat, rnd)
            got = text.describe_state(game, other, seat)
            assert got == want, (f"{name}: the text of seat {seat} depends on what it may not "
                                 f"see; it was:\n{want}\nand is, redrawn:\n{got}")
            checked += 1
    assert checked > 50


@pytest.mark.parametrize("name", GAMES)
def test_every_decision_reads_with_distinct_ids_and_the_text_stays_compact(name):
    """The whole text (view and decision) at the median decision, and the view's text at every
    one, stay within bounds (a decision's list grows with its moves, one line each)."""
    sizes, views = [], []
    for game, state in random_games(name, 4, 4000):
        d = game.decision(state)
        if d is None:
            continue
        described = text.describe_state(game, state, d.seat)  # raises on an id shared
        assert "{" not in described, described  # no template left unfilled
        sizes.append(len(described))
        views.append(len(text.describe_view(game.view(state, d.seat), game)))
    mid = statistics.median(sizes)
    assert mid <= MAX_CHARS, f"{name}: median text {mid} characters"
    assert max(views) <= 2 * MAX_CHARS, f"{name}: largest view text {max(views)} characters"


def test_a_game_without_a_table_gets_every_field_generically():
    game = registry.get(GAMES[0])
    bare = type(game)()
    bare.text_table = None  # type: ignore[misc]
    assert "View.seat" in text.undeclared(bare)
    state = bare.setup(bare.spec.parse_options({}), bare.spec.min_seats, __import__(
        "referee.core.rng", fromlist=["Streams"]).Streams(1),
        bare.default_components(bare.spec.parse_options({})))
    rendered = text.describe_view(bare.view(state, 0), bare)
    assert rendered.startswith("Seat: 0\n")
    for f in bare.view_message.DESCRIPTOR.fields:
        if f.is_repeated or f.type != f.TYPE_MESSAGE:
            continue
        if bare.view(state, 0).HasField(f.name):
            assert text.words(f.name).capitalize() in rendered


@pytest.mark.parametrize("name", GAMES)
def test_moves_whose_short_ids_collide_get_long_distinct_ids(name, monkeypatch):
    """Short ids are hashes: two legal moves of one decision can share one (rarely at six
    characters). Forced here with one-character ids, a decision still reads with distinct ids,
    each colliding move's long id begins with its short one, and a move with no collision keeps
    its short id."""
    game, state = next((g, s) for g, s in random_games(name, 1, 4000)
                       if (d := g.decision(s)) is not None and len(d.moves) > 20)
    monkeypatch.setattr(text, "MOVE_ID_LENGTH", 1)
    d = game.decision(state)
    wire = [game.move_to_proto(m) for m in d.moves]
    described = text._decision_text(d.seat, d.kind, d.prompt, wire, game, None)
    ids = [m.id for m in described.moves]
    assert len(set(ids)) == len(ids)
    assert any(len(i) == text.LONG_MOVE_ID_LENGTH for i in ids)  # 20 moves, 32 letters
    for m in described.moves:
        assert m.id.startswith(text.move_id(m.move)) and described.by_id(m.id) is m
