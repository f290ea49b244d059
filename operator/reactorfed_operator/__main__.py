"""``python -m reactorfed_operator``: run the operator (Kopf) with peering.

Namespace-scoped (``--namespace``, repeatable) or cluster-wide (``--all-namespaces``).
With peering (the default) two operators with the same peering name never both act:
the one with the higher ``--priority`` wins, the other pauses.
"""

from __future__ import annotations

import argparse
import os
import sys

import kopf

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reactorfed-operator", description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("-n", "--namespace", action="append", default=[], help="namespace to watch (repeatable)")
    where.add_argument("-A", "--all-namespaces", action="store_true", help="watch every namespace")
    parser.add_argument("--peering", default=os.environ.get("REACTORFED_PEERING", "reactorfed-operator"),
                        help="Kopf peering object name (a KopfPeering, or ClusterKopfPeering with -A)")  # fmt: skip
    parser.add_argument("--standalone", action="store_true", help="no peering (development only)")
    parser.add_argument("--priority", type=int, default=0, help="peering priority")
    parser.add_argument("--liveness", default=None, help="liveness endpoint, e.g. http://0.0.0.0:8080/healthz")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    namespaces = args.namespace or ([] if args.all_namespaces else [os.environ.get("WATCH_NAMESPACE", "default")])
    kopf.configure(verbose=args.verbose)
    from . import handlers  # noqa: F401  (registers the handlers)

    kopf.run(
        clusterwide=args.all_namespaces,
        namespaces=namespaces,
        standalone=args.standalone,
        priority=args.priority,
        peering_name=None if args.standalone else args.peering,
        liveness_endpoint=args.liveness,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
