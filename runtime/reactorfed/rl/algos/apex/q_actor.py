"""An epsilon-greedy Q-network actor in numpy: what an Ape-X sampler acts with, and computes
its transitions' initial priorities with, without torch.

It computes the function of :class:`~reactorfed.rl.algos.network.QNetwork` (``Linear``, ``ReLU``,
..., ``Linear`` to one value per action) from that module's flat parameters
(:func:`~reactorfed.rl.algos.network.flat_weights`: weight then bias, layer by layer), so a
sampler process never imports torch. Each environment copy has its own epsilon (Ape-X's
per-actor exploration, :func:`apex_epsilons`); every step draws one uniform number and
one random action per copy, whatever is explored, so the generator's stream, and with a
seed the actions, are the same in every process.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..mlp_actor import mlp_shapes, unpack_weights

__all__ = ["QActor", "apex_epsilons"]


def apex_epsilons(actors: Sequence[int], num_actors: int, epsilon: float = 0.4, alpha: float = 7.0) -> np.ndarray:
    """Ape-X's exploration (Horgan et al. 2018, section 4.1): actor ``i`` of ``N`` acts with
    ``epsilon^(1 + i / (N - 1) * alpha)`` (``epsilon`` alone when ``N`` is 1)."""
    i = np.asarray(actors, dtype=np.float64)
    if num_actors < 1 or np.any((i < 0) | (i >= num_actors)):
        raise ValueError(f"actor indices must lie in [0, {num_actors})")
    share = i / (num_actors - 1) if num_actors > 1 else np.zeros_like(i)
    return np.asarray(epsilon ** (1.0 + share * alpha), dtype=np.float64)


class QActor:
    """Epsilon-greedy on ``mlp(obs)``; :meth:`load` takes the flat weights."""

    def __init__(self, obs_dim: int, num_actions: int, hidden: tuple[int, ...], seed: int,
                 epsilons: np.ndarray | float = 1.0) -> None:
        self.obs_dim, self.num_actions, self.hidden = obs_dim, num_actions, hidden
        self.shapes = mlp_shapes(obs_dim, hidden, num_actions)
        self.size = sum(int(np.prod(s)) for s in self.shapes)
        self.rng = np.random.default_rng(seed)
        self.epsilons = np.asarray(epsilons, dtype=np.float64)
        # zero weights until the first payload: every action ties, the first is taken
        self.layers: list[tuple[np.ndarray, np.ndarray]] = [
            (np.zeros(w[::-1], np.float32), np.zeros(b, np.float32))
            for w, b in zip(self.shapes[0::2], self.shapes[1::2], strict=True)
        ]

    def load(self, payload: np.ndarray) -> None:
        params = unpack_weights(payload, self.shapes, "Q actor")
        self.layers = [(np.ascontiguousarray(w.T), np.ascontiguousarray(b))
                       for w, b in zip(params[0::2], params[1::2], strict=True)]

    def q_values(self, obs: np.ndarray) -> np.ndarray:
        """``Q(obs, .)`` for a batch, shaped ``(batch, num_actions)``, float32."""
        x = np.asarray(obs, dtype=np.float32).reshape(len(obs), self.obs_dim)
        last = len(self.layers) - 1
        for i, (wt, b) in enumerate(self.layers):
            x = x @ wt + b
            if i != last:
                np.maximum(x, 0, out=x)
        return x

    def act(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Actions for a batch of copies (copy ``j`` explores with ``epsilons[j]``), and
        their log-probabilities under the epsilon-greedy policy."""
        greedy = self.q_values(obs).argmax(axis=1)
        k = len(greedy)
        u = self.rng.random(k)
        random = self.rng.integers(0, self.num_actions, size=k)
        eps = np.broadcast_to(self.epsilons, (k,))
        actions = np.where(u < eps, random, greedy).astype(np.int64)
        prob = eps / self.num_actions + (1.0 - eps) * (actions == greedy)
        return actions, np.log(prob).astype(np.float32)

    def priorities(self, t: np.ndarray) -> np.ndarray:
        """Initial priorities of n-step transitions ``t`` (:func:`~reactorfed.rl.replay.nstep.transition_dtype`):
        ``|ret + discount * max_a Q(next_obs, a) - Q(obs, action)|`` under the weights held
        (Ape-X's actors prioritise with their own copy of the network)."""
        if len(t) == 0:
            return np.zeros(0, dtype=np.float32)
        q = self.q_values(t["obs"])
        taken = q[np.arange(len(t)), t["action"]]
        target = t["ret"] + t["discount"] * self.q_values(t["next_obs"]).max(axis=1)
        return np.abs(target - taken).astype(np.float32)
