"""API traps an LF porter hits, each made a clear error or removed (docs/lf-users.md,
"Traps when porting an LF program")."""

from __future__ import annotations

import logging

import pytest

from reactorfed import (
    STARTUP,
    Environment,
    Input,
    PhysicalAction,
    Reactor,
    ValidationError,
    VirtualClock,
    bank,
    each,
    reaction,
)

from .util import run


@pytest.mark.parametrize("attr", ["name", "fqn"])
def test_assigning_the_runtime_names_in_init_is_a_clear_error(attr):
    """LF parameters called ``name`` are common (PeriodicTask.lf); ``self.name = name``
    would be silently replaced by the instance name at assembly, so it is refused."""

    class Task(Reactor):
        def __init__(self, value):
            setattr(self, attr, value)

    class Main(Reactor):
        def __init__(self):
            self.task = Task("task1")

    with pytest.raises(ValidationError, match=rf"Task .*self\.{attr} = 'task1': '{attr}' is the runtime's.*self\.label"):
        Main()


def test_name_is_still_chosen_with_name_and_read_as_before():
    class Task(Reactor):
        def __init__(self, label):
            self.label = label

    class Main(Reactor):
        def __init__(self):
            self.a = Task("x")
            self.b = Task("y", name="second")
            self.c = bank(Task, 2, "z")

    main = Main()
    run(main)
    assert [(r.name, r.fqn, r.bank_index) for r in main.children] == [
        ("a", "Main.a", None), ("second", "Main.second", None), ("c[0]", "Main.c[0]", 0), ("c[1]", "Main.c[1]", 1)]


def test_a_member_parameter_named_width_passes_through_bank():
    """bank's own ``cls`` and ``width`` are positional-only: LF's ``new[3] Cls(width = 8)``
    is ``bank(Cls, 3, width=8)`` (it was a TypeError, "multiple values for width")."""

    class Buffer(Reactor):
        inp = Input(int, width="width")

        def __init__(self, width, cls="?"):
            self.width = width
            self.cls = cls

    class Main(Reactor):
        def __init__(self):
            self.b = bank(Buffer, 3, width=each(lambda i: 2 + i), cls="c")

    main = Main()
    run(main)
    assert [(m.width, len(m.inp), m.cls) for m in main.b] == [(2, 2, "c"), (3, 3, "c"), (4, 4, "c")]


class _Late(Reactor):
    p = PhysicalAction(int)

    def __init__(self):
        self.handle = None

    @reaction(triggers=[STARTUP], effects=[p])
    def keep(self, p):
        self.handle = p  # LF hands it to a thread, which may call it after the end


def test_scheduling_after_the_program_ended_is_dropped_with_a_warning(caplog):
    """After the end, a physical action's schedule (through the reactor's attribute or a
    kept handle) is dropped with a warning saying so, as reactor-c drops a schedule after
    termination; not the 'before the program runs' error it used to be, and not an
    exception in a thread that merely raced the end."""
    main = _Late()
    Environment(clock=VirtualClock(), fast=True, keepalive=False).run(main)
    with caplog.at_level(logging.WARNING, logger="reactorfed.execution.scheduler"):
        main.p.schedule(value=1)
        main.handle.schedule(value=2)
    assert caplog.text.count("_Late.p is scheduled after the program ended: dropped") == 2
    with pytest.raises(ValidationError, match="before the program runs"):
        _Late().p.schedule(value=1)
