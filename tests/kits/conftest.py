import pytest

from . import toolchains


@pytest.fixture(scope="session", autouse=True)
def every_toolchain():
    """Every kit's Debian packages, each from its own list, before any kit is built: no build
    depends on which other kit happened to install first (test_packages.py proves each list
    brings in what its own build uses)."""
    toolchains.install_every_list()
