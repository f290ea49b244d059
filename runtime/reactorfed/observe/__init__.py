"""Watching a running program: Prometheus metrics and the status endpoint (served by ``run``, by each federate and by the RTI), traces (:mod:`.trace`), diagrams (:mod:`.diagram`), and where learning curves go."""

#: the environment variable naming where learners write TensorBoard curves (set by the
#: command line's --logdir; read by :mod:`reactorfed.rl.curves`)
LOGDIR_ENV = "REACTORFED_LOGDIR"

__all__ = ["LOGDIR_ENV"]
