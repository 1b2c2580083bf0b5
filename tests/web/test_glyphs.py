"""The viewer's own pages use no character that the fonts Debian installs by default
(fonts-dejavu-core: DejaVu Sans) cannot draw: without an emoji font the trophy was an empty
box. The board renderers (static/<game>.js) are held to the same."""
from __future__ import annotations

from pathlib import Path

import pytest

from referee.web import render

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
WEB = Path(render.__file__).parent
FILES = [*sorted((WEB / "templates").glob("*.html")),
         *sorted((WEB / "static").glob("*.js")), WEB / "static" / "viewer.css"]


def test_every_character_of_the_viewer_is_in_dejavu_sans():
    if not DEJAVU.is_file():
        pytest.skip("DejaVu Sans is not installed (Debian package fonts-dejavu-core)")
    ttlib = pytest.importorskip("fontTools.ttLib")  # matplotlib's, in the dev extras
    cmap = ttlib.TTFont(DEJAVU).getBestCmap()
    missing = sorted({(f.name, c) for f in FILES for c in f.read_text(encoding="utf-8")
                      if ord(c) > 127 and ord(c) not in cmap})
    assert not missing, [f"{name}: {c!r} U+{ord(c):04X}" for name, c in missing]
