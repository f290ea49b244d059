"""Time coordination, pure: the federation's :mod:`.layout` (federates, links, path
delays, zero-delay cycles), the RTI's logic (:mod:`.rti_core`) and a federate's
(:mod:`.federate_core`), and a federate's clock error under clock synchronization
(:mod:`.clock_sync`). State machines that take messages and return decisions: no
sockets, no clock reads, no threads, unit-tested without a network.

May import :mod:`reactorfed.time.tag`, :mod:`reactorfed.assembly.partition` (a program's federates and links)
and :mod:`..wire`; never :mod:`..io` or :mod:`..process`.

Public: :class:`RtiCore` (its constructor and methods: the RTI's grants for the reports
it is given, what ``bench/rti_core.py`` measures in isolation), the :class:`Grant` s it
returns and the :class:`Layout` it is built from. Each loads its module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes

if TYPE_CHECKING:
    from .layout import Layout
    from .rti_core import RtiCore
    from .rti_state import Grant

#: public name -> the module (relative to this package) that defines it
_HOME = {"Grant": "rti_state", "Layout": "layout", "RtiCore": "rti_core"}

__all__ = ["Grant", "Layout", "RtiCore"]
assert sorted(__all__) == sorted(_HOME)

__getattr__ = lazy_attributes(__name__, globals(), _HOME)


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])
