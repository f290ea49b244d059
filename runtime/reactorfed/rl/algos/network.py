"""Q-networks (torch) and the conversions samplers and learners share.

Weights travel between reactors as ``dict[str, numpy.ndarray]`` (see
:func:`get_weights`): plain buffers that cross a process boundary without
pickling torch objects.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import numpy as np
import torch
from torch import nn
from torch.nn.modules import module as _torch_module

__all__ = [
    "AtariQNetwork",
    "QNetwork",
    "Weights",
    "adam",
    "clip_grad_norm",
    "default_device",
    "flat_weights",
    "get_weights",
    "greedy_action",
    "load_flat_weights",
    "set_adam",
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


# hooks registered for every module (register_module_forward_hook): the same dicts torch
# fills; empty stand-ins if a torch version names them otherwise
_global_forward_hooks: dict[Any, Any] = getattr(_torch_module, "_global_forward_hooks", {})
_global_forward_pre_hooks: dict[Any, Any] = getattr(_torch_module, "_global_forward_pre_hooks", {})

#: a Linear layer's parameter dict (``weight``, ``bias`` or None)
_Params = dict[str, Any]


def greedy_action(module: nn.Module, obs: np.ndarray) -> int:
    """argmax_a Q(obs, a) for a single observation.

    A per-step policy calls this once per environment step, so its fixed cost counts:
    for an MLP (a :class:`QNetwork`, or a ``Sequential`` of ``Linear`` and ``ReLU``
    without hooks) it is a chain of matrix-vector products on the parameters as they are
    now (loads into them are seen), about a third of a full ``module(x)`` call and
    inference-mode context (8 vs 26 us for a 64-64 MLP on this machine). Other modules
    take the general path. Every caller (single process, federates, the Ray peers in
    bench/) uses this function, so they all take the same actions.
    """
    layers = _mlp_layers(module)
    # a copy: ``obs`` may sit unaligned in a received frame (see load_flat_weights)
    x = torch.from_numpy(np.array(obs, dtype=np.float32))
    with torch.inference_mode():
        if layers is None or x.dim() != 1:
            device = next(module.parameters()).device
            return int(module(x.to(device).unsqueeze(0)).argmax(dim=1).item())
        w = layers[0]["weight"]
        if not w.is_cpu:
            x = x.to(w.device)
        last = layers[-1]
        for params in layers:  # each layer's parameter dict: what is loaded into it, or replaced, is seen
            w, b = params["weight"], params["bias"]
            x = torch.mv(w, x) if b is None else torch.addmv(b, w, x)
            if params is not last:
                x = x.relu_()
        return int(x.argmax())


def _mlp_layers(module: nn.Module) -> list[_Params] | None:
    """The parameter dicts of ``module``'s Linear layers if it is a chain Linear, ReLU,
    ..., Linear with no forward hooks anywhere, else None. The chain is found once and
    kept on the module with the submodules it was found in and their hook dicts (torch
    registers a hook into these): a layer replaced since, or a hook added, is noticed at
    the next call."""
    cached = module.__dict__.get("_rf_mlp")
    if cached is None or not _still(module, cached[0], cached[1]):
        seq = module.net if isinstance(module, QNetwork) else module
        # (a None entry, which Sequential allows, is no Linear/ReLU: then there is no chain)
        mods = cast(tuple[nn.Module, ...], tuple(seq._modules.values()))
        chain = _chain(mods) if isinstance(seq, nn.Sequential) else None
        # the hook dicts of every module a full call runs (torch adds hooks into these)
        hooks = [d for m in {id(m): m for m in (module, seq, *mods)}.values()
                 for d in (m._forward_hooks, m._forward_pre_hooks)]
        cached = module.__dict__["_rf_mlp"] = (seq, mods, chain, hooks)
    layers: list[_Params] | None = cached[2]
    if layers is not None and (any(cached[3]) or _global_forward_hooks or _global_forward_pre_hooks):
        return None
    return layers


def _still(module: nn.Module, seq: nn.Module, mods: tuple[nn.Module, ...]) -> bool:
    """Whether ``module`` still runs ``seq`` made of ``mods``."""
    return (seq is module or module._modules.get("net") is seq) and tuple(seq._modules.values()) == mods


def _chain(mods: tuple[nn.Module, ...]) -> list[_Params] | None:
    if len(mods) % 2 == 0 or not all(type(m) is nn.Linear for m in mods[0::2]):
        return None
    if not all(type(m) is nn.ReLU for m in mods[1::2]):
        return None
    return [m._parameters for m in mods[0::2]]


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


def adam(model: torch.nn.Module, lr: float, eps: float) -> torch.optim.Adam:
    """Adam, fused where torch has it on CPU (2.4 on): a third of a small update's time."""
    try:
        return torch.optim.Adam(model.parameters(), lr=lr, eps=eps, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.Adam(model.parameters(), lr=lr, eps=eps)


def set_adam(optimizer: torch.optim.Optimizer, lr: float, eps: float) -> None:
    """Set ``optimizer``'s learning rate and epsilon: a learner calls it at each update with
    its config's, so a config replaced between updates (a tuner's explore) takes effect,
    and an optimizer state taken from another learner (a tuner's exploit) does not bring
    that learner's values along."""
    for group in optimizer.param_groups:
        group["lr"] = lr
        group["eps"] = eps


def clip_grad_norm(params: Iterable[torch.Tensor], max_norm: float) -> None:
    """Scale the gradients of ``params`` (one device, one dtype: a learner's) so that their
    joint 2-norm is at most ``max_norm``, as torch's ``clip_grad_norm_`` does (on CPU, whose
    foreach operations loop over these same per-tensor ones, the same bits) without its
    grouping of the tensors by device and dtype on every call: 100 us of a small network's
    3.5 ms gradient step."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, 2.0) for g in grads]), 2.0)
    coef = torch.clamp(float(max_norm) / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
