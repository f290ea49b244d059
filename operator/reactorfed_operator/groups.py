"""Federate groups: which pods run which of the program's federates, and how.

``spec.federateGroups`` lists them (KubeRay's ``workerGroupSpecs``, JobSet's
``replicatedJobs``): each group places one federate (``federate: NAME``) or a bank
(``bank: NAME``, its members ``NAME[0]`` ...; ``widthParam`` receives its width), with its
own replicas or elastic bounds, image, GPUs, resources, placement, environment and
volumes. The ``samplers``/``learner`` form of the first version is a shorthand for two
groups (:func:`shorthand_groups`), whose pods keep the role labels ``sampler`` and
``learner``; a group of the long form is labelled with its own name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CPU_RUNTIME_IMAGE", "FederateGroup", "is_cpu_runtime_image"]

#: the repository name of the project's CPU runtime image (images/runtime.Dockerfile)
CPU_RUNTIME_IMAGE = "reactorfed-runtime"


def is_cpu_runtime_image(image: str) -> bool:
    """Whether ``image`` is the project's CPU runtime image (any registry, tag or digest):
    its torch has no CUDA, so a GPU would sit idle (the CUDA build is ``reactorfed-runtime-gpu``)."""
    repository = re.split(r"[@]", image, maxsplit=1)[0]
    last = repository.rsplit("/", 1)[-1]
    return last.split(":", 1)[0] == CPU_RUNTIME_IMAGE


@dataclass(frozen=True)
class FederateGroup:
    """One group of federate pods."""

    name: str
    #: the pods' ``reactorfed.io/role`` label (the group's name; ``sampler``/``learner`` for the shorthand)
    role: str
    federate: str | None = None
    bank: str | None = None
    #: a bank's width parameter (``--param WIDTH_PARAM=N`` for every process)
    width_param: str | None = None
    #: a bank's width (the scale group's is ``spec.samplers.replicas``); 1 for a single federate
    replicas: int = 1
    #: an elastic bank's bounds; ``max_replicas`` 0 for a fixed one
    min_replicas: int = 1
    max_replicas: int = 0
    max_param: str | None = None
    #: the group ``kubectl scale`` and the scale subresource act on
    scale: bool = False
    image: str | None = None
    gpus: int = 0
    resources: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Mapping[str, Any], ...] = ()
    affinity: Mapping[str, Any] | None = None
    env: tuple[tuple[str, str], ...] = ()
    volumes: tuple[Mapping[str, Any], ...] = ()
    volume_mounts: tuple[Mapping[str, Any], ...] = ()
    #: the group holds state: it mounts the federation's checkpoint volume (with
    #: ``--checkpoint-dir``) when there is one, and is stopped first, so it can write it
    holds_state: bool = False
    #: a bank that has ``per_member`` members for each member of the bank group ``follows``
    #: (a data-parallel learner's own samplers): its width is that group's times ``per_member``,
    #: and ``per_member_param`` (if set) receives ``per_member``
    follows: str | None = None
    per_member: int = 1
    per_member_param: str | None = None

    @property
    def elastic(self) -> bool:
        return self.max_replicas > 0

    @property
    def placed(self) -> str:
        """The federate or bank the group places (a bank as ``NAME[*]``)."""
        return self.federate if self.federate is not None else f"{self.bank}[*]"

    def federates(self, width: int | None = None) -> list[str]:
        """The federate names of its pods: ``NAME``, or ``BANK[0]`` ... ``BANK[width-1]``."""
        if self.federate is not None:
            return [self.federate]
        n = self.replicas if width is None else width
        return [f"{self.bank}[{i}]" for i in range(n)]
