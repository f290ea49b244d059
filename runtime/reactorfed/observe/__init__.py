"""Watching a running program: Prometheus metrics and the status endpoint (served by ``run``, by each federate and by the RTI)."""
