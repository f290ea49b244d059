"""Headless Chromium for the tests that look at what a browser draws: Debian's
``chromium`` (``scripts/chromium.sh`` installs it) driven by Playwright with that
executable (Playwright's own browser download is not used). Missing either: a skip on a
developer's machine, a failure under CI."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..kind.prereq import missing


def chromium_path() -> str | None:
    """``REACTORFED_CHROMIUM``, else ``chromium`` on the PATH."""
    return os.environ.get("REACTORFED_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (Playwright's ``Browser``), closed at the end."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed (the dev extra: scripts/setup.sh)")
    exe = chromium_path()
    if exe is None:
        missing("no chromium (scripts/chromium.sh installs Debian's)")
    with sync_playwright() as pw:
        # --no-sandbox: the tests run as root in CI, where Chromium's sandbox refuses to start
        browser = pw.chromium.launch(executable_path=exe, headless=True, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


#: Chromium's own log line for a request cut because the host's network interfaces changed
#: (a Docker or kind network created meanwhile): the host's doing, not the page's; a page
#: that polls must carry on after it, which the tests check by its numbers moving on
HOST_NETWORK_CHANGED = "net::ERR_NETWORK_CHANGED"


def watch_console(page: Any) -> list[str]:
    """The page's console errors and uncaught exceptions, as they come (less requests the
    host's network changes cut)."""
    errors: list[str] = []

    def console(m: Any) -> None:
        if m.type == "error" and HOST_NETWORK_CHANGED not in m.text:
            errors.append(m.text)

    page.on("console", console)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors
