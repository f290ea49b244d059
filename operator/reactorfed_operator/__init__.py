"""The reactorfed Kubernetes operator: ReactorFederation -> RTI, sampler and learner pods.

The Kopf handlers (:mod:`reactorfed_operator.handlers`) are thin; everything that turns a
spec into manifests or decides what to do next is a pure function in
:mod:`~reactorfed_operator.spec`, :mod:`~reactorfed_operator.manifests`,
:mod:`~reactorfed_operator.planner` and :mod:`~reactorfed_operator.progress`.
"""

from __future__ import annotations

__all__ = ["API_VERSION", "GROUP", "KIND", "PLURAL", "VERSION"]

GROUP = "reactorfed.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "ReactorFederation"
PLURAL = "reactorfederations"
