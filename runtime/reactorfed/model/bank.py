"""Banks: ``width`` instances of one reactor class, each knowing its ``bank_index``
(LF's ``new[width] Cls(...)``), made by :func:`bank` inside a reactor's ``__init__``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

from ..errors import ValidationError

if TYPE_CHECKING:
    from .reactor import Reactor

__all__ = ["Bank", "bank", "each", "take_member_index"]

R = TypeVar("R", bound="Reactor")

#: the index of the bank member being constructed on this thread (None: not a member)
_building = threading.local()


def take_member_index() -> int | None:
    """The bank index of the reactor being constructed now on this thread (None: it is not
    a bank member), read once by the reactor's construction: the reactors it contains
    are not members of its bank."""
    i: int | None = getattr(_building, "index", None)
    _building.index = None
    return i


class each:
    """Marks a bank parameter computed per member: ``bank(W, 4, seed=each(lambda i: 100 + i))``."""

    def __init__(self, fn: Callable[[int], Any]) -> None:
        self.fn = fn


class Bank(Sequence[R]):
    """A bank of reactors: ``width`` instances of one class, each knowing its ``bank_index``.

    ``bank.port`` is the list of that port of every member, for :meth:`Reactor.connect`.
    """

    def __init__(self, members: list[R]) -> None:
        self._members = members

    @overload
    def __getitem__(self, i: int) -> R: ...
    @overload
    def __getitem__(self, i: slice) -> list[R]: ...
    def __getitem__(self, i: int | slice) -> R | list[R]:
        return self._members[i]

    def __len__(self) -> int:
        return len(self._members)

    def __iter__(self) -> Iterator[R]:
        return iter(self._members)

    def __getattr__(self, attr: str) -> list[Any]:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return [getattr(m, attr) for m in self._members]

    def __repr__(self) -> str:
        return f"<bank of {len(self)} {self._members[0].__class__.__name__ if self._members else '?'}>"


def bank(cls: Callable[..., R], width: int, /, *args: Any, **kwargs: Any) -> Bank[R]:
    """Create ``width`` members of ``cls`` inside the reactor being built. Arguments are
    passed to every member; wrap one in :class:`each` to compute it from the index.

    ``cls`` and ``width`` are positional-only, so a member parameter may have either name:
    ``bank(Cls, 4, width=8)`` is LF's ``new[4] Cls(width = 8)``."""
    if not isinstance(width, int) or isinstance(width, bool) or width < 0:
        raise ValidationError(f"bank width must be an int >= 0, got {width!r}")
    members: list[R] = []
    for i in range(width):
        kw = {k: (v.fn(i) if isinstance(v, each) else v) for k, v in kwargs.items()}
        _building.index = i
        try:
            members.append(cls(*args, **kw))
        finally:
            _building.index = None
    return Bank(members)
