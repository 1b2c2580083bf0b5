"""The research environments' spaces and observation planes, per game, for
docs/research/environments.md (``<!-- gen: spaces -->``, ``<!-- gen: planes -->``): read from the
encodings and the planes the environments use, so the tables cannot drift from the code."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def spaces_section() -> str:
    from referee_research.envs.encoding import encodings

    from referee.core import registry

    rows = [("| game | seats | actions (stable + overflow) | observation floats (default; "
             "the View encoded) | move kinds enumerated | move kinds in the overflow block |"),
            "| --- | --- | --- | --- | --- | --- |"]
    for name in sorted(registry.games()):
        enc = encodings(name)
        spec = enc.game.spec
        acts = enc.actions
        stable = ", ".join(f"`{k.kind}` ({k.count})" for k in acts.kinds if k.stable)
        overflow = ", ".join(f"`{k.kind}`" for k in acts.kinds if not k.stable) or "none"
        declared = enc.game.observation_planes()
        size = (f"{declared.planes.width} planes; {enc.observations.size}" if declared
                else f"{enc.observations.size}")
        rows.append(f"| {name} | {spec.min_seats}–{spec.max_seats} | {acts.size} "
                    f"({acts.stable} + {acts.overflow}) | {size} | {stable} | {overflow} |")
    return "\n".join(rows) + "\n"


def _kind(plane: Any) -> str:
    """What a plane's slots hold, in a few words."""
    from google.protobuf.descriptor import FieldDescriptor as F

    field = plane.field
    if field.type == F.TYPE_MESSAGE:
        one = f"`{field.message_type.name}` ({plane.each} slots)"
        if field.is_repeated:
            return f"length, then {plane.cap} × (presence flag, {one})"
        return f"presence flag, then {one}"
    if field.type == F.TYPE_ENUM:
        one = f"one-hot over `{field.enum_type.name}` ({plane.each})"
    elif field.type == F.TYPE_STRING:
        one = f"one-hot over {plane.each - 1} strings and “other”"
    elif field.type == F.TYPE_BOOL:
        one = "0/1"
    elif field.type == F.TYPE_BYTES:
        one = "not encoded"
    else:
        one = "the number"
    if field.is_repeated:
        return f"length, then {plane.cap} × (presence flag, {one})"
    return one


def _field_comments(root: Path, proto: str, message: str) -> dict[str, str]:
    """``message``'s field name -> the first sentence of its comment in ``proto``."""
    from protodoc import descriptor_set

    out: dict[str, str] = {}
    for fd in descriptor_set(root / "proto", [proto]).file:
        if fd.name != proto:
            continue
        for i, msg in enumerate(fd.message_type):
            if msg.name != message:
                continue
            comments = {tuple(loc.path): (loc.leading_comments or loc.trailing_comments)
                        for loc in fd.source_code_info.location}
            for j, field in enumerate(msg.field):
                text = " ".join(comments.get((4, i, 2, j), "").split())
                out[field.name] = text.split(". ")[0].rstrip(".").replace("|", "\\|")
    return out


def planes_section(root: Path) -> str:
    """Per game, its observation's planes: where the game declares feature planes
    (``Game.observation_planes``, the environments' default observation), each plane's name,
    slice, width and the meaning the game declares; else one plane per field of its View, with
    its slice, what its slots hold and the field's comment in the game's .proto."""
    from referee_research.envs.encoding import encodings

    from referee.core import registry

    parts = []
    for name in sorted(registry.games()):
        declared = registry.get(name).observation_planes()
        if declared is not None:
            layout = declared.planes
            parts += [(f"**{name}**: feature planes ({layout.width:,} floats, {len(layout)} "
                      "planes; the default observation)"), "",
                      "| plane | slice | slots | what each slot holds |",
                      "| --- | --- | --- | --- |"]
            for fp in layout:
                # a meaning is plain text: a "[slot: ...]" in it is no Markdown link
                meaning = (" ".join(fp.meaning.split()).replace("|", "\\|")
                           .replace("[", "\\[").replace("]", "\\]"))
                parts.append(f"| `{fp.name}` | {fp.start}–{fp.stop} | {fp.width} | {meaning} |")
            parts.append("")
            continue
        obs = encodings(name).observations
        desc = obs.view_message.DESCRIPTOR
        comments = _field_comments(root, desc.file.name, desc.name)
        parts += [(f"**{name}**: its View encoded ({obs.size:,} floats, {len(obs.planes)} planes; "
                  "the game declares no feature planes)"), "",
                  "| plane (View field) | slice | slots | what |", "| --- | --- | --- | --- |"]
        for p in obs.planes:
            parts.append(f"| `{p.name}` | {p.start}–{p.start + p.width} | {_kind(p)} | "
                         f"{comments.get(p.name, '')} |")
        parts.append("")
    return "\n".join(parts) + "\n"
