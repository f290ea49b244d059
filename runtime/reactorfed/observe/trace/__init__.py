"""Traces of runs in logical and physical time: a recorder per process, the run's files
merged into one trace Perfetto and Chrome open, and LF's federated sequence diagram."""

from .merge import Process, chrome_trace, load, write_chrome_trace
from .recorder import DEFAULT_CAPACITY, Recorder, read, trace_path
from .sequence import sequence_html, write_sequence

__all__ = [
    "DEFAULT_CAPACITY", "Process", "Recorder", "chrome_trace", "load", "read", "sequence_html",
    "trace_path", "write_chrome_trace", "write_sequence",
]
