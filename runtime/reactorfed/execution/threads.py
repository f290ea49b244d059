"""The thread count of the numeric libraries, a setting of the run.

torch splits a float reduction (a sum, a matrix product) over its intra-op threads, and
float addition is not associative: the thread count changes the last bits of the sums,
and so the weights one seed gives. Left to torch, that count follows the cores a process
may use, so the same run gives other weights on a machine (or a Kubernetes node, or a
``taskset``) of another size. Here it is a setting of the run instead: ``--threads`` on
``run``, ``launch``, ``rti`` and ``federate`` (``spec.program.threads`` of a
ReactorFederation), the same default everywhere, :data:`DEFAULT_THREADS`.

:func:`apply_threads` sets it in a process before the program is imported: torch's
intra-op and inter-op threads (at once if torch is loaded, else the moment it is), and
``OMP_NUM_THREADS``/``MKL_NUM_THREADS``/``OPENBLAS_NUM_THREADS`` for the libraries that
read those when they load, and for the processes this one starts. A learner's checkpoint
records the count it ran with (:func:`record`), and a resume with another count is
refused (:func:`check_resume`) unless the run allows it (``--allow-thread-change``).

This module imports neither torch nor numpy.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import logging
import os
import sys
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import ValidationError

__all__ = [
    "ALLOW_FLAG",
    "CHECKPOINT_KEY",
    "DEFAULT_THREADS",
    "ENV_VARS",
    "FLAG",
    "ThreadsChanged",
    "apply_threads",
    "check_resume",
    "current_threads",
    "record",
    "thread_env",
]

log = logging.getLogger("reactorfed.execution.threads")

#: the thread count of every process unless the run says otherwise: one. The models here
#: are small (a few layers of 64-256 units): a matrix product of one minibatch is far below
#: what pays for waking a second thread, and a federation already runs a process per
#: sampler and learner on the machine's cores; more threads per process only compete for
#: them (the benchmarks all run one thread per process, peers included).
DEFAULT_THREADS = 1
#: the environment variables numeric libraries read their thread count from when they load
ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
#: the key of a checkpoint that holds the torch threads of the run that wrote it
CHECKPOINT_KEY = "torch_threads"
#: the command line's flags (named in messages)
FLAG = "--threads"
ALLOW_FLAG = "--allow-thread-change"


class ThreadsChanged(ValidationError):
    """A checkpoint written with another thread count than this run's, without
    :data:`ALLOW_FLAG`."""


_setting: dict[str, Any] = {"threads": None, "allow_change": False}


def thread_env(threads: int) -> dict[str, str]:
    """The environment that gives a process started with it ``threads`` threads in every
    library that reads it (the ``reactorfed`` commands also set torch's explicitly)."""
    return dict.fromkeys(ENV_VARS, str(threads))


def apply_threads(threads: int = DEFAULT_THREADS, *, allow_change: bool = False,
                  environ: MutableMapping[str, str] | None = None) -> None:
    """Give this process ``threads`` threads (torch's intra-op and inter-op pools, the
    libraries that read :data:`ENV_VARS`), and remember whether a resume may change the
    count (``allow_change``). Call it before the program is imported: torch is set now if
    it is loaded, else as soon as it is imported."""
    if threads < 1:
        raise ValidationError(f"{FLAG}: expected a number >= 1, got {threads}")
    environ = os.environ if environ is None else environ
    ignored = {k: environ[k] for k in ENV_VARS if environ.get(k) not in (None, "", str(threads))}
    if ignored:
        log.warning("%s ignored: the run's thread count is %s %d (the same on every machine)",
                    ", ".join(f"{k}={v}" for k, v in ignored.items()), FLAG, threads)
    environ.update(thread_env(threads))
    _setting.update(threads=threads, allow_change=allow_change)
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "set_num_threads"):
        _set_torch(torch)
    elif not any(isinstance(f, _WhenTorchLoads) for f in sys.meta_path):
        sys.meta_path.insert(0, _WhenTorchLoads())


def _set_torch(torch: Any) -> None:
    n = _setting["threads"]
    if n is None:
        return
    torch.set_num_threads(n)
    if torch.get_num_interop_threads() != n:
        try:
            torch.set_num_interop_threads(n)
        except RuntimeError:  # its pool already runs (a process forked from one that used it)
            log.debug("torch's inter-op threads stay %d (already started)", torch.get_num_interop_threads())


class _WhenTorchLoads(importlib.abc.MetaPathFinder):
    """Sets torch's threads as soon as ``import torch`` has run, before anything uses it
    (a process that never imports torch does not pay for importing it)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "torch":
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
        loader = getattr(spec, "loader", None)
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            _set_torch(module)

        setattr(loader, "exec_module", exec_module)  # noqa: B010  (this loader is torch's alone)
        return spec


def current_threads() -> int | None:
    """The intra-op threads torch runs with in this process (the setting while torch is
    not loaded; None when neither is known)."""
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "get_num_threads"):
        return int(torch.get_num_threads())
    threads: int | None = _setting["threads"]
    return threads


def record(state: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """``state`` (a checkpoint's) with this process's thread count, :data:`CHECKPOINT_KEY`."""
    state[CHECKPOINT_KEY] = current_threads()
    return state


def check_resume(state: Mapping[str, Any], path: str | Path) -> None:
    """Refuse to resume from the checkpoint ``state`` (read from ``path``) when it was
    written with another thread count than this process has, unless the run allows it:
    the resumed run would not end with the weights of the uninterrupted one."""
    saved, now = state.get(CHECKPOINT_KEY), current_threads()
    if saved is None or now is None:
        if saved is None:
            log.warning("%s records no thread count (written by an older version): resuming without checking it",
                        path)
        return
    if int(saved) == now:
        return
    what = (f"checkpoint {path} was written by a run with {saved} torch threads and this run has {now} "
            f"({FLAG}, spec.program.threads on Kubernetes): the thread count changes torch's float sums, so "
            f"the resumed run would not end with the weights of an uninterrupted one")
    if _setting["allow_change"]:
        log.warning("%s; resuming anyway (%s)", what, ALLOW_FLAG)
        return
    raise ThreadsChanged(f"{what}. Resume with {FLAG} {saved}, or pass {ALLOW_FLAG} to resume with {now}")
