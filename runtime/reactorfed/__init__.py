"""reactorfed: deterministic reactors (Lingua Franca semantics) for distributed RL."""

from .errors import CausalityLoopError, ReactorError, UndeclaredAccessError, ValidationError
from .execution.environment import Environment, RunSummary
from .execution.scheduler import ReactionFailed
from .model.action import ActionHandle, ActionReader, LogicalAction, PhysicalAction, Policy
from .model.bank import Bank, bank, each
from .model.elastic import (
    Elastic,
    ElasticBank,
    MemberChange,
    elastic_bank,
    members,
    tag_start_effective,
    transient,
)
from .model.maxwait import maxwait
from .model.mode import Mode, ResetState, history, reset
from .model.port import Input, MultiReader, MultiWriter, Output, PortReader, PortWriter
from .model.proto_serializer import ProtobufSerializer
from .model.protoc import compile_proto
from .model.reaction import reaction
from .model.reactor import Reactor
from .model.serializer import Serializer
from .model.timer import RESET, SHUTDOWN, STARTUP, Timer
from .time.clock import Clock, SystemClock, VirtualClock
from .time.duration import (
    Duration,
    format_duration,
    hours,
    minutes,
    ms,
    ns,
    parse_duration,
    sec,
    us,
)
from .time.tag import FOREVER, NEVER, Tag

__version__ = "0.1.0"

__all__ = [
    "FOREVER",
    "NEVER",
    "RESET",
    "SHUTDOWN",
    "STARTUP",
    "ActionHandle",
    "ActionReader",
    "Bank",
    "CausalityLoopError",
    "Clock",
    "Duration",
    "Elastic",
    "ElasticBank",
    "Environment",
    "Input",
    "LogicalAction",
    "MemberChange",
    "Mode",
    "MultiReader",
    "MultiWriter",
    "Output",
    "PhysicalAction",
    "Policy",
    "PortReader",
    "PortWriter",
    "ProtobufSerializer",
    "ReactionFailed",
    "Reactor",
    "ReactorError",
    "ResetState",
    "RunSummary",
    "Serializer",
    "SystemClock",
    "Tag",
    "Timer",
    "UndeclaredAccessError",
    "ValidationError",
    "VirtualClock",
    "__version__",
    "bank",
    "compile_proto",
    "each",
    "elastic_bank",
    "format_duration",
    "history",
    "hours",
    "maxwait",
    "members",
    "minutes",
    "ms",
    "ns",
    "parse_duration",
    "reaction",
    "reset",
    "sec",
    "tag_start_effective",
    "transient",
    "us",
]
