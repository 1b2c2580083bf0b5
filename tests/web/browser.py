"""Playwright (Python) driving the system Chromium (Debian package `chromium`), or a clear skip."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("REFEREE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: where a copy of each board screenshot goes, besides the test's own tmp_path (e.g. docs/)
SCREENSHOT_DIR = os.environ.get("REFEREE_WEB_SCREENSHOTS")


def skip_reason() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "browser tests skipped: Playwright for Python is not installed (pip install -e '.[dev]')"
    if not Path(CHROMIUM).exists():
        return ("browser tests skipped: no Chromium at /usr/bin/chromium; `make test` installs the "
                "Debian package `chromium` when it runs as root (apt-get install chromium)")
    return None


# Module scope, not session: while sync_playwright() is open its event loop counts as running
# in this thread, so every later test that calls asyncio.run() (tests/sessions, ...) on the same
# xdist worker failed with "asyncio.run() cannot be called from a running event loop".
@pytest.fixture(scope="module")
def browser():
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    # a script, style or connection the page's Content-Security-Policy refused
    pg.on("console", lambda m: pg.errors.append(m.text)
          if "Content Security Policy" in m.text else None)
    pg.set_default_timeout(30_000)
    yield pg
    ctx.close()


def save_screenshot(locator, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    locator.screenshot(path=str(path))
    if SCREENSHOT_DIR:
        Path(SCREENSHOT_DIR).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(SCREENSHOT_DIR) / name)
    print(f"screenshot: {path}")
    return path


def wait_until(page, expression: str, timeout: float = 30_000) -> None:
    """``page.wait_for_function(expression)`` for pages with the viewer's Content-Security-Policy:
    Playwright's own polling evaluates the expression with eval() inside the page, which that
    policy refuses, so poll it from here (page.evaluate is not subject to the page's CSP)."""
    deadline = time.monotonic() + timeout / 1000
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise TimeoutError(f"still false after {timeout / 1000:.0f} s: {expression}")
        page.wait_for_timeout(50)
