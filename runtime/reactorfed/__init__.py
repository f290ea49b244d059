"""reactorfed: deterministic reactors (Lingua Franca semantics) for distributed RL."""

from .action import ActionHandle, ActionReader, LogicalAction, PhysicalAction, Policy
from .clock import Clock, SystemClock, VirtualClock
from .duration import Duration, format_duration, hours, minutes, ms, ns, parse_duration, sec, us
from .environment import Environment, RunSummary
from .errors import CausalityLoopError, ReactorError, UndeclaredAccessError, ValidationError
from .port import Input, MultiReader, MultiWriter, Output, PortReader, PortWriter
from .reaction import reaction
from .reactor import Bank, Reactor, bank, each
from .scheduler import ReactionFailed
from .tag import FOREVER, NEVER, Tag
from .timer import SHUTDOWN, STARTUP, Timer

__version__ = "0.1.0"

__all__ = [
    "FOREVER",
    "NEVER",
    "SHUTDOWN",
    "STARTUP",
    "ActionHandle",
    "ActionReader",
    "Bank",
    "CausalityLoopError",
    "Clock",
    "Duration",
    "Environment",
    "Input",
    "LogicalAction",
    "MultiReader",
    "MultiWriter",
    "Output",
    "PhysicalAction",
    "Policy",
    "PortReader",
    "PortWriter",
    "ReactionFailed",
    "Reactor",
    "ReactorError",
    "RunSummary",
    "SystemClock",
    "Tag",
    "Timer",
    "UndeclaredAccessError",
    "ValidationError",
    "VirtualClock",
    "__version__",
    "bank",
    "each",
    "format_duration",
    "hours",
    "minutes",
    "ms",
    "ns",
    "parse_duration",
    "reaction",
    "sec",
    "us",
]
