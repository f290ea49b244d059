"""A categorical convolutional actor in numpy: what a sampler acts with on image-like
observations (MinAtar's 10x10xC frames), without torch.

It computes the policy half of :class:`~reactorfed.rl.algos.ppo.conv_actor_critic.ConvActorCritic`:
one 3x3 convolution (stride 1, no padding) with ``channels`` filters and a ReLU, then
fully connected ReLU layers of ``hidden`` units and a linear layer to the logits (MinAtar's
reference network: 16 filters, 128 units; Young and Tian 2019). It loads that module's
:meth:`~reactorfed.rl.algos.ppo.conv_actor_critic.ConvActorCritic.actor_payload` (torch's
``parameters()`` order: the convolution's weight ``(F, C, 3, 3)`` and bias, then each
linear layer's weight and bias).

Observations are channels last, ``(k, H, W, C)``, as MinAtar gives them; the convolution
is one matrix product on the 3x3 patches (im2col), and the first linear layer's columns
are permuted once at load so that the convolution's channels-last output feeds it as
torch's channels-first flatten does. Actions are drawn as :class:`~reactorfed.rl.algos.mlp_actor.MLPActor`
draws them (one seeded uniform number a copy).
"""

from __future__ import annotations

import numpy as np

from ..mlp_actor import sample_actions, unpack_weights

__all__ = ["KERNEL", "ConvActor", "conv_shapes"]

#: the convolution's kernel size (stride 1, no padding)
KERNEL = 3


def conv_shapes(obs_shape: tuple[int, ...], channels: int, hidden: tuple[int, ...],
                num_outputs: int) -> list[tuple[int, ...]]:
    """The parameter shapes of the convolutional network on ``obs_shape`` (``(H, W, C)``) in
    torch's ``parameters()`` order."""
    if len(obs_shape) != 3:
        raise ValueError(f"a convolutional network takes (H, W, C) observations, got shape {obs_shape}")
    h, w, c = obs_shape
    if h < KERNEL or w < KERNEL:
        raise ValueError(f"observations of {h}x{w} are smaller than the {KERNEL}x{KERNEL} kernel")
    shapes: list[tuple[int, ...]] = [(channels, c, KERNEL, KERNEL), (channels,)]
    width = channels * (h - KERNEL + 1) * (w - KERNEL + 1)
    for u in (*hidden, num_outputs):
        shapes += [(u, width), (u,)]
        width = u
    return shapes


class ConvActor:
    """Samples actions from ``softmax(net(obs))``; :meth:`load` takes the flat weights."""

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, channels: int, hidden: tuple[int, ...],
                 seed: int) -> None:
        self.obs_shape, self.num_actions, self.channels, self.hidden = tuple(obs_shape), num_actions, channels, hidden
        self.shapes = conv_shapes(self.obs_shape, channels, hidden, num_actions)
        self.size = sum(int(np.prod(s)) for s in self.shapes)
        h, w, c = self.obs_shape
        self.out_h, self.out_w = h - KERNEL + 1, w - KERNEL + 1
        self.rng = np.random.default_rng(seed)
        # zero weights until the first payload: uniform actions
        self.conv_w = np.zeros((KERNEL * KERNEL * c, channels), np.float32)
        self.conv_b = np.zeros(channels, np.float32)
        self.layers: list[tuple[np.ndarray, np.ndarray]] = [
            (np.zeros(wt[::-1], np.float32), np.zeros(b, np.float32))
            for wt, b in zip(self.shapes[2::2], self.shapes[3::2], strict=True)
        ]

    def load(self, payload: np.ndarray) -> None:
        params = unpack_weights(payload, self.shapes, "conv actor")
        f = self.channels
        # (F, C, kh, kw) -> rows ordered (kh, kw, C), as the patches' columns are
        self.conv_w = np.ascontiguousarray(params[0].transpose(2, 3, 1, 0).reshape(-1, f))
        self.conv_b = np.ascontiguousarray(params[1])
        first = params[2]
        # torch flattens (F, oh, ow); the patches give (oh, ow, F): permute the columns once
        first = first.reshape(len(first), f, self.out_h, self.out_w).transpose(0, 2, 3, 1).reshape(len(first), -1)
        weights = [first, *params[4::2]]
        self.layers = [(np.ascontiguousarray(wt.T), np.ascontiguousarray(b))
                       for wt, b in zip(weights, params[3::2], strict=True)]

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """The logits for ``obs`` shaped ``(k, H, W, C)`` (or flat ``(k, H * W * C)``)."""
        k = len(obs)
        x = np.asarray(obs).reshape(k, *self.obs_shape).astype(np.float32)
        oh, ow = self.out_h, self.out_w
        patches = np.concatenate([x[:, i : i + oh, j : j + ow, :] for i in range(KERNEL) for j in range(KERNEL)],
                                 axis=-1)
        y = patches.reshape(k * oh * ow, -1) @ self.conv_w + self.conv_b
        np.maximum(y, 0, out=y)
        y = y.reshape(k, -1)
        last = len(self.layers) - 1
        for i, (wt, b) in enumerate(self.layers):
            y = y @ wt + b
            if i != last:
                np.maximum(y, 0, out=y)
        return y

    def act(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return sample_actions(self.logits(obs), self.rng, self.num_actions)
