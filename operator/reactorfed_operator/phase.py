"""The words the operator's status speaks: a federation's phase, a pod's phase, a pod's
role. String enums, so a value is still the plain string Kubernetes stores and prints
(``kubectl get rfed`` shows ``Running``), while the code compares members, not literals."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["TERMINAL", "Phase", "PodPhase", "Role"]


class Phase(StrEnum):
    """``status.phase`` of a ReactorFederation."""

    PENDING = "Pending"  # waiting for something outside (a ConfigMap, a PVC)
    STARTING = "Starting"  # pods of an incarnation are being created or are not ready yet
    RUNNING = "Running"
    SCALING = "Scaling"  # the sampler width changed: restarting at it (elastic banks: pods join and leave live)
    RESTARTING = "Restarting"  # a federate failed: a new incarnation resumes from the checkpoint
    SUSPENDED = "Suspended"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"

    @classmethod
    def parse(cls, value: object) -> Phase | None:
        """A phase read back from a stored status; None if absent or not one of ours."""
        try:
            return cls(str(value))
        except ValueError:
            return None


class PodPhase(StrEnum):
    """A pod's ``status.phase`` as Kubernetes reports it."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"

    @classmethod
    def parse(cls, value: object) -> PodPhase:
        try:
            return cls(str(value or cls.PENDING))
        except ValueError:
            return cls.UNKNOWN


class Role(StrEnum):
    """What a pod of a federation is (its ``reactorfed.io/role`` label)."""

    RTI = "rti"
    SAMPLER = "sampler"
    LEARNER = "learner"


#: phases after which a federation does nothing more until its spec changes
TERMINAL = (Phase.SUCCEEDED, Phase.FAILED)
