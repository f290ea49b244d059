"""The live page's routes on a :class:`~reactorfed.observe.status.StatusServer`: ``/`` the
page (``live.html``, package data), ``/diagram.svg`` the program's diagram and
``/history`` the progress reports over time (JSON). The page reads ``/status`` as well;
``?interval=MS`` in its address sets how often (default: every second)."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import Any

from ..status import Page

__all__ = ["live_html", "live_pages"]


def live_html() -> bytes:
    """The page: one HTML file with its style and script inline."""
    return resources.files(__package__).joinpath("live.html").read_bytes()


def live_pages(diagram_svg: str, history: Callable[[], dict[str, Any]]) -> dict[str, Page]:
    """The routes: the page and the diagram (made once), the history (at each request)."""
    page, svg = live_html(), diagram_svg.encode()
    return {
        "/": lambda: (page, "text/html; charset=utf-8"),
        "/diagram.svg": lambda: (svg, "image/svg+xml"),
        "/history": lambda: (json.dumps(history()).encode(), "application/json"),
    }
