"""A search space: the hyperparameters a tuner varies, each with its domain, drawn and
perturbed with generators the caller seeds (so a seed fixes every value).

A hyperparameter is a field of the trials' algorithm config (``learning_rate`` of a
:class:`~reactorfed.rl.PPOConfig`); its domain is one of :class:`Uniform`,
:class:`LogUniform`, :class:`IntUniform` or :class:`Choice`. Mistakes are refused when the
space is made, naming the field: an empty space, a low bound not below the high one, a
log-uniform bound <= 0, a choice without values.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from reactorfed import ValidationError

__all__ = ["APPOSpace", "ApexSpace", "Choice", "DQNSpace", "Domain", "IntUniform", "LogUniform", "PPOSpace",
           "SearchSpace", "Uniform", "Value", "space_of_ranges"]

#: a hyperparameter's value (what crosses federates as plain data)
Value = float | int | str


@dataclass(frozen=True)
class Uniform:
    """A float drawn uniformly from ``[low, high]``."""

    low: float
    high: float

    def check(self, name: str) -> None:
        if not (math.isfinite(self.low) and math.isfinite(self.high)) or self.low >= self.high:
            raise ValidationError(f"{name}: a uniform range needs finite low < high, got [{self.low}, {self.high}]")

    def sample(self, rng: np.random.Generator) -> Value:
        return float(self.low + (self.high - self.low) * rng.random())

    def clip(self, value: float) -> Value:
        return float(min(max(value, self.low), self.high))

    def grid(self, points: int) -> list[Value]:
        return [float(v) for v in np.linspace(self.low, self.high, points)]


@dataclass(frozen=True)
class LogUniform(Uniform):
    """A float whose logarithm is drawn uniformly from ``[log low, log high]`` (a learning rate)."""

    def check(self, name: str) -> None:
        super().check(name)
        if self.low <= 0:
            raise ValidationError(f"{name}: a log-uniform range needs low > 0, got {self.low}")

    def sample(self, rng: np.random.Generator) -> Value:
        lo, hi = math.log(self.low), math.log(self.high)
        return float(math.exp(lo + (hi - lo) * rng.random()))

    def grid(self, points: int) -> list[Value]:
        return [float(v) for v in np.geomspace(self.low, self.high, points)]


@dataclass(frozen=True)
class IntUniform:
    """An int drawn uniformly from ``low .. high`` (both included)."""

    low: int
    high: int

    def check(self, name: str) -> None:
        if not (isinstance(self.low, int) and isinstance(self.high, int)) or self.low >= self.high:
            raise ValidationError(f"{name}: an int range needs ints low < high, got [{self.low}, {self.high}]")

    def sample(self, rng: np.random.Generator) -> Value:
        return int(rng.integers(self.low, self.high + 1))

    def clip(self, value: float) -> Value:
        return int(min(max(round(value), self.low), self.high))

    def grid(self, points: int) -> list[Value]:
        return sorted({int(np.rint(v)) for v in np.linspace(self.low, self.high, points)})


@dataclass(frozen=True)
class Choice:
    """One of ``values`` (perturbed to a neighbour in their order)."""

    values: tuple[Value, ...]

    def check(self, name: str) -> None:
        if not self.values:
            raise ValidationError(f"{name}: a choice needs at least one value")

    def sample(self, rng: np.random.Generator) -> Value:
        return self.values[int(rng.integers(len(self.values)))]

    def grid(self, points: int) -> list[Value]:
        return list(self.values)


Domain = Uniform | LogUniform | IntUniform | Choice


class SearchSpace:
    """Named domains, in a fixed order (the order given): drawing a configuration draws
    its values in that order from one generator."""

    def __init__(self, domains: Mapping[str, Domain], field: str = "space") -> None:
        #: the name user mistakes are reported under (the settings' field)
        self.field = field
        if not domains:
            raise ValidationError(f"{field}: the search space is empty; give at least one hyperparameter to search")
        for name, domain in domains.items():
            if not isinstance(domain, (Uniform, IntUniform, Choice)):
                raise ValidationError(f"{field}.{name}: not a domain (Uniform, LogUniform, IntUniform, Choice): "
                                      f"{domain!r}")
            domain.check(f"{field}.{name}")
        self.domains: dict[str, Domain] = dict(domains)

    @property
    def names(self) -> list[str]:
        return list(self.domains)

    def sample(self, rng: np.random.Generator) -> dict[str, Value]:
        """A configuration drawn from ``rng``."""
        return {name: d.sample(rng) for name, d in self.domains.items()}

    def perturb(self, config: Mapping[str, Value], rng: np.random.Generator, factors: Sequence[float],
                resample_probability: float) -> dict[str, Value]:
        """PBT's explore step: each value is drawn afresh with ``resample_probability``, else
        multiplied by one of ``factors`` (a choice moves to a neighbouring value), kept inside
        its domain. Draws from ``rng`` in the space's order, the same draws whatever the values."""
        out: dict[str, Value] = {}
        for name, d in self.domains.items():
            resample = rng.random() < resample_probability
            fresh = d.sample(rng)
            pick = int(rng.integers(len(factors)))
            if resample:
                out[name] = fresh
            elif isinstance(d, Choice):
                i = d.values.index(config[name]) if config[name] in d.values else 0
                step = -1 if factors[pick] < 1 else 1
                out[name] = d.values[min(max(i + step, 0), len(d.values) - 1)]
            else:
                value = config[name]
                assert isinstance(value, (int, float))
                out[name] = d.clip(value * factors[pick])
        return out

    def grid(self, points: int) -> Iterator[dict[str, Value]]:
        """Every combination of ``points`` values per range (every value of a choice), the
        last hyperparameter varying fastest."""
        axes = [d.grid(points) for d in self.domains.values()]
        for combo in itertools.product(*axes):
            yield dict(zip(self.domains, combo, strict=True))

    def grid_size(self, points: int) -> int:
        return math.prod(len(d.grid(points)) for d in self.domains.values())

    def check_fields(self, fields: Mapping[str, object], owner: str) -> None:
        """Refuse a hyperparameter that is not a plain (number or string) field of ``owner``
        (the trials' config class, ``fields`` its field values)."""
        for name in self.domains:
            if name not in fields:
                raise ValidationError(f"{self.field}.{name}: {owner} has no field {name!r}; its fields: "
                                      f"{', '.join(fields)}")
            value = fields[name]
            if not isinstance(value, (int, float, str)) or isinstance(value, bool):
                raise ValidationError(f"{self.field}.{name}: {owner}.{name} is not a number or a string "
                                      f"({type(value).__name__}): it cannot be searched")
            domain = self.domains[name]
            if isinstance(value, int) and isinstance(domain, Uniform):
                raise ValidationError(f"{self.field}.{name}: {owner}.{name} is an int; a float range would give "
                                      "it fractions: search it with an IntUniform (or a Choice)")


def space_of_ranges(ranges: Mapping[str, Sequence[float]], log: Collection[str] = (),
                    field: str = "space", ints: Collection[str] = ()) -> SearchSpace:
    """A space from ``(low, high)`` pairs (a recipe's settings: ``--param space.learning_rate=1e-4,1e-2``):
    log-uniform for the names in ``log``, ints for those in ``ints``, uniform for the
    others; an empty pair leaves the name out of the search. A pair that is not two
    numbers (two ints, for ``ints``) is refused, naming the field."""
    domains: dict[str, Domain] = {}
    for name, bounds in ranges.items():
        if len(bounds) == 0:
            continue
        if len(bounds) != 2:
            raise ValidationError(f"{field}.{name}: a range is two numbers, low,high (none: not searched); "
                                  f"got {tuple(bounds)}")
        if name in ints:
            if not all(float(b).is_integer() for b in bounds):
                raise ValidationError(f"{field}.{name}: an int range is two ints, low,high; got {tuple(bounds)}")
            domains[name] = IntUniform(int(bounds[0]), int(bounds[1]))
            continue
        low, high = float(bounds[0]), float(bounds[1])
        domains[name] = LogUniform(low, high) if name in log else Uniform(low, high)
    return SearchSpace(domains, field)


@dataclass(frozen=True)
class PPOSpace:
    """PPO's hyperparameters as a recipe searches them (its ``space`` setting,
    ``--param space.learning_rate=1e-4,1e-2``): a (low, high) range each, empty: not
    searched; the learning rate log-uniform, the others uniform."""

    learning_rate: tuple[float, ...] = (1e-4, 3e-3)
    clip_coef: tuple[float, ...] = (0.1, 0.3)
    gae_lambda: tuple[float, ...] = (0.8, 0.99)
    ent_coef: tuple[float, ...] = ()
    vf_coef: tuple[float, ...] = ()

    def search_space(self, field: str = "space") -> SearchSpace:
        ranges = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return space_of_ranges(ranges, log={"learning_rate"}, field=field)


@dataclass(frozen=True)
class APPOSpace:
    """APPO's hyperparameters as a recipe searches them (its ``space`` setting), as
    :class:`PPOSpace`: the learning rate log-uniform, the others uniform."""

    learning_rate: tuple[float, ...] = (1e-4, 3e-3)
    clip_coef: tuple[float, ...] = (0.2, 0.5)
    vtrace_lambda: tuple[float, ...] = (0.9, 1.0)
    ent_coef: tuple[float, ...] = ()
    vf_coef: tuple[float, ...] = ()

    def search_space(self, field: str = "space") -> SearchSpace:
        ranges = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return space_of_ranges(ranges, log={"learning_rate"}, field=field)


@dataclass(frozen=True)
class DQNSpace:
    """:class:`~reactorfed.rl.SyncDQNConfig`'s hyperparameters as a recipe searches them: the
    learning rate log-uniform, the target network's period and the batch ints, the
    Huber threshold uniform; empty: not searched. (The discount, the n-step length and the
    epsilon are not here: a running trial's replay and samplers hold them.)"""

    learning_rate: tuple[float, ...] = (1e-4, 3e-3)
    target_update_interval: tuple[float, ...] = (50, 500)
    batch_size: tuple[float, ...] = (32, 128)
    huber_delta: tuple[float, ...] = ()
    max_grad_norm: tuple[float, ...] = ()

    def search_space(self, field: str = "space") -> SearchSpace:
        ranges = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return space_of_ranges(ranges, log={"learning_rate"}, ints={"target_update_interval", "batch_size"},
                               field=field)


@dataclass(frozen=True)
class ApexSpace:
    """:class:`~reactorfed.rl.ApexDQNConfig`'s hyperparameters as a recipe searches them
    (an Ape-X trial slot's): the learning rate log-uniform, the target network's period an
    int, the Huber threshold and the gradient clip uniform; empty: not searched. (The
    discount, the n-step length and the epsilons are not here: the slot's samplers hold
    them; nor the replay's settings: the slot's.)"""

    learning_rate: tuple[float, ...] = (1e-4, 3e-3)
    target_update_interval: tuple[float, ...] = (50, 500)
    huber_delta: tuple[float, ...] = ()
    max_grad_norm: tuple[float, ...] = ()

    def search_space(self, field: str = "space") -> SearchSpace:
        ranges = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return space_of_ranges(ranges, log={"learning_rate"}, ints={"target_update_interval"}, field=field)
