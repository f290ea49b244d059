"""Starting Ray for the benchmarks, the same way for every workload.

Ray runs locally with one CPU slot per actor (so no actor waits for a slot),
without the dashboard, and with the repository on the workers' import path so the
actor classes defined in the benchmark modules (``bench.sampling`` ...) load in the
workers.  Every
process (driver and actors) uses one torch thread, as Ray's actors do by
default (``OMP_NUM_THREADS=1``); the reactorfed side does the same.

Each Ray measurement starts Ray and shuts it down when it is done
(:func:`shutdown_ray`), outside the timed part: the measurements of reactorfed and
of the raw ceilings that follow do not share the machine with Ray's idle daemons
(GCS server, raylet, agents: ~3% of a CPU here, and their periodic wakeups). Every
system is measured on a machine running nothing else.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def init_ray(num_cpus: int) -> Any:
    """Start (or restart with more CPU slots) a local Ray instance; return the module."""
    paths = [str(ROOT), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import ray

    if ray.is_initialized():
        if int(ray.cluster_resources().get("CPU", 0)) >= num_cpus:
            return ray
        ray.shutdown()
    ray.init(
        num_cpus=num_cpus,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        object_store_memory=2 * 1024**3,
    )
    return ray


def shutdown_ray() -> None:
    import ray

    if ray.is_initialized():
        ray.shutdown()
