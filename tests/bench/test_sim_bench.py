"""bench/sim.py measures the forward model per game (issue 21's `sim.<game>.clones_per_s`,
`deepcopy_clones_per_s`, `samples_per_s`) on live positions of random games."""
from __future__ import annotations

from bench import sim
from referee.core import registry


def test_positions_are_live_and_independent_of_the_playout():
    game = registry.get("goa")
    pos = sim.positions(game, 12)
    assert len(pos) == 12
    for state, history, seat in pos:
        d = game.decision(state)
        assert d is not None and d.seat == seat
        assert all(e.kind for e in history)
    assert len({game.hash_state(s) for s, _h, _seat in pos}) == 12


def test_every_game_gets_its_figures():
    results = {"sim": sim.run_phase(registry.games(), 0.05)}
    flat = sim.flat(results)
    for name in registry.games():
        assert flat[f"sim.{name}.clones_per_s"] > 0
        assert flat[f"sim.{name}.deepcopy_clones_per_s"] > 0
        samples = flat[f"sim.{name}.samples_per_s"]
        assert samples is None or samples > 0
        assert results["sim"][name]["positions"] == 60
    assert set(sim.target(results)) == {f"sim.{n}.clone_speedup >= 10" for n in registry.games()}
