"""The research environments' spaces, per game, for docs/research/environments.md
(``<!-- gen: spaces -->``): read from the encodings the environments use, so the table cannot
drift from the code."""
from __future__ import annotations


def spaces_section() -> str:
    from referee_research.envs.encoding import encodings

    from referee.core import registry

    rows = [("| game | seats | actions (stable + overflow) | observation floats | "
             "move kinds enumerated | move kinds in the overflow block |"),
            "| --- | --- | --- | --- | --- | --- |"]
    for name in sorted(registry.games()):
        enc = encodings(name)
        spec = enc.game.spec
        acts = enc.actions
        stable = ", ".join(f"`{k.kind}` ({k.count})" for k in acts.kinds if k.stable)
        overflow = ", ".join(f"`{k.kind}`" for k in acts.kinds if not k.stable) or "none"
        rows.append(f"| {name} | {spec.min_seats}–{spec.max_seats} | {acts.size} "
                    f"({acts.stable} + {acts.overflow}) | {enc.observations.size} | {stable} | "
                    f"{overflow} |")
    return "\n".join(rows) + "\n"
