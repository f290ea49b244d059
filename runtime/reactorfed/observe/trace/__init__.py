"""Traces of runs in logical and physical time: a recorder per process, the run's files
merged into one trace Perfetto and Chrome open, and LF's federated sequence diagram.

Names load their module on first use: the scheduler reads the record kinds
(:mod:`.records`) without loading the recorder's serialiser."""

from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes

if TYPE_CHECKING:
    from .merge import Process, chrome_trace, load, write_chrome_trace
    from .recorder import DEFAULT_CAPACITY, Recorder, read, trace_path
    from .sequence import sequence_html, write_sequence

__all__ = [
    "DEFAULT_CAPACITY", "Process", "Recorder", "chrome_trace", "load", "read", "sequence_html",
    "trace_path", "write_chrome_trace", "write_sequence",
]

__getattr__ = lazy_attributes(__name__, globals(), {
    "Process": "merge", "chrome_trace": "merge", "load": "merge", "write_chrome_trace": "merge",
    "DEFAULT_CAPACITY": "recorder", "Recorder": "recorder", "read": "recorder", "trace_path": "recorder",
    "sequence_html": "sequence", "write_sequence": "sequence",
})
