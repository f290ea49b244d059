"""Q-networks (torch) and the conversions samplers and learners share.

Weights travel between reactors as ``dict[str, numpy.ndarray]`` (see
:func:`get_weights`): plain buffers that cross a process boundary without
pickling torch objects.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

__all__ = [
    "AtariQNetwork",
    "QNetwork",
    "Weights",
    "default_device",
    "flat_weights",
    "get_weights",
    "greedy_action",
    "load_flat_weights",
    "set_weights",
]

Weights = dict[str, np.ndarray]


def default_device() -> torch.device:
    """CUDA when present, else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class QNetwork(nn.Module):
    """MLP Q-network for vector observations (CleanRL's DQN shape: 120-84)."""

    def __init__(self, obs_dim: int, num_actions: int, hidden: tuple[int, ...] = (120, 84)) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = obs_dim
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers.append(nn.Linear(width, num_actions))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class AtariQNetwork(nn.Module):
    """Nature-DQN convolutional Q-network for stacked 84x84 grayscale frames."""

    def __init__(self, num_actions: int, frames: int = 4) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(frames, 32, 8, stride=4),
            nn.ReLU(),
            nn.Conv2d(32, 64, 4, stride=2),
            nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(3136, 512),
            nn.ReLU(),
            nn.Linear(512, num_actions),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x / 255.0)


def get_weights(module: nn.Module) -> Weights:
    """A detached CPU copy of the parameters as numpy arrays (stable key order)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in module.state_dict().items()}


def set_weights(module: nn.Module, weights: Weights) -> None:
    """Load numpy weights produced by :func:`get_weights`."""
    device = next(module.parameters()).device
    module.load_state_dict({k: torch.as_tensor(v, device=device) for k, v in weights.items()})


@torch.inference_mode()
def greedy_action(module: nn.Module, obs: np.ndarray) -> int:
    """argmax_a Q(obs, a) for a single observation."""
    device = next(module.parameters()).device
    # a copy: ``obs`` may sit unaligned in a received frame (see load_flat_weights)
    x = torch.tensor(obs, dtype=torch.float32, device=device).unsqueeze(0)
    return int(module(x).argmax(dim=1).item())


def flat_weights(module: nn.Module) -> np.ndarray:
    """All parameters as one float32 vector: one buffer that crosses federates unpickled."""
    with torch.no_grad():
        return torch.nn.utils.parameters_to_vector(module.parameters()).detach().cpu().numpy().copy()


def load_flat_weights(module: nn.Module, vec: np.ndarray) -> None:
    """Inverse of :func:`flat_weights` (same architecture on both sides).

    Copies into the parameters' own storage. (``vector_to_parameters`` would make them
    views of ``vec``: a buffer received from another federate may be unaligned, and
    CPU kernels then take other SIMD paths whose results differ in the last bits,
    which breaks bit-for-bit reproducibility between one process and a federation.)
    """
    src = torch.from_numpy(np.array(vec, dtype=np.float32, copy=True))
    offset = 0
    with torch.no_grad():
        for p in module.parameters():
            n = p.numel()
            p.copy_(src[offset : offset + n].view_as(p))
            offset += n
    if offset != src.numel():
        raise ValueError(f"flat weights have {src.numel()} values, the network {offset}")
