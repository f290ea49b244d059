"""The file that hands an RTI its federation without the program: the layout (federates,
links, delays, elastic banks, the program's digest that every federate must match) and
the program's drawing for the live page. ``reactorfed layout`` writes it; ``reactorfed rti
--layout`` reads it, and so imports neither the program nor what the program imports
(torch, gymnasium): ``reactorfed launch`` starts its RTI so, and an RTI pod can run an
image without them."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import ValidationError
from ..coordination.layout import Layout

if TYPE_CHECKING:
    from ...model.reactor import Reactor

__all__ = ["LayoutFile"]


@dataclass(frozen=True)
class LayoutFile:
    layout: Layout
    #: the program drawn as a federation (SVG), for the RTI's live page (None: not drawn)
    diagram: str | None = None

    @classmethod
    def of(cls, main: Reactor, *, diagram: bool = True) -> LayoutFile:
        """The layout of a (not yet assembled) main reactor, and its drawing if ``diagram``."""
        from .runner import diagram_of, layout_of

        return cls(layout_of(main), diagram_of(main) if diagram else None)

    def write(self, path: Path) -> None:
        """Write it whole, then rename: a reader never sees half a file."""
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({"layout": self.layout.json(), "diagram": self.diagram}) + "\n")
        os.replace(tmp, path)

    @classmethod
    def read(cls, path: Path) -> LayoutFile:
        """What :meth:`write` wrote; a missing or malformed file is a
        :class:`~reactorfed.errors.ValidationError` naming it."""
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise ValidationError(f"layout file {path}: {e}") from None
        if not isinstance(data, dict) or "layout" not in data:
            raise ValidationError(f"layout file {path}: not a layout file (no 'layout'): write it with `reactorfed layout`")
        diagram = data.get("diagram")
        if diagram is not None and not isinstance(diagram, str):
            raise ValidationError(f"layout file {path}: 'diagram' must be an SVG document or null")
        return cls(Layout.from_json(data["layout"], f"layout file {path}"), diagram)
