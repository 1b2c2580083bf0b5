"""Each kit's Debian package list (clients/<kit>/debian-packages.txt) is complete on its own:
every file its build and its bot use from the system (compilers, protoc and its plugins,
pkg-config modules, headers, libraries, Go packages, node) belongs to a package that
`apt-get install` of that list alone brings in on a fresh machine. This holds whatever else is
installed and whichever kit was built first, unlike a green build, which a package pulled in by
another kit's list can hide (the C++ list once lacked libprotobuf-dev, which only the Go list's
protoc-gen-go brought in)."""
from __future__ import annotations

import re

import pytest

from .. import debian
from .toolchains import APT, KITS, USED_FILES


def _skip_off_debian() -> None:
    if not debian.is_debian():
        pytest.skip("not a Debian system: no package lists to check")


@pytest.mark.parametrize("kit", list(USED_FILES))
def test_kit_list_brings_in_every_package_its_build_uses(kit):
    _skip_off_debian()
    KITS[kit]()  # installs the kit's own list when missing (or skips), then builds
    files = USED_FILES[kit]()
    if not any(debian.owners(files).values()):
        pytest.skip(f"nothing the {kit} kit uses here comes from a Debian package")
    try:
        gaps = debian.unbrought(APT[kit], files)
    except RuntimeError as error:
        pytest.skip(str(error))
    if gaps:
        pytest.fail(debian.explain(debian.kit_list(kit), gaps), pytrace=False)


@pytest.mark.parametrize("kit", list(APT))
def test_kit_readme_names_its_list(kit):
    """The README's install line is the list, so a reader installs what the tests do."""
    readme = (debian.kit_list(kit).parent / "README.md").read_text()
    lines = re.findall(r"apt-get install ([^`\n]+)", readme)
    named = [[word for word in line.split() if not word.startswith("-")] for line in lines]
    assert named == [APT[kit]], (
        f"clients/{kit}/README.md should say `apt-get install {' '.join(APT[kit])}` once")


def test_the_check_names_a_package_a_list_lacks():
    """Proof the check can fail: the C++ list without libprotobuf-dev, which libgrpc++-dev
    does not depend on, is told it lacks it for the protobuf headers."""
    _skip_off_debian()
    if debian.missing(["libprotobuf-dev"]):
        pytest.skip("libprotobuf-dev is not installed here")
    header = "/usr/include/google/protobuf/port_def.inc"
    try:
        gaps = debian.unbrought([p for p in APT["cpp"] if p != "libprotobuf-dev"], [header])
    except RuntimeError as error:
        pytest.skip(str(error))
    assert gaps == {"libprotobuf-dev": [header]}
    assert "libprotobuf-dev" in debian.explain(debian.kit_list("cpp"), gaps)
