"""The RTI's live page (``/`` of its status port): the program's diagram with each
federate's logical time and lag on it, the elastic banks' membership and the training
curves, kept up to date from ``/status`` and ``/history`` by a small script. One HTML
file in the package: no build step, nothing fetched from anywhere else."""

from .live import live_html, live_pages

__all__ = ["live_html", "live_pages"]
