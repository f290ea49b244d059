"""greedy_action: the MLP fast path takes the actions the module's own forward takes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from reactorfed.rl.algos.dqn import AtariQNetwork, QNetwork, greedy_action, make_qnetwork
from reactorfed.rl.algos.network import clip_grad_norm, flat_weights, load_flat_weights, set_weights


def _reference(module: nn.Module, obs: np.ndarray) -> int:
    with torch.no_grad():
        q = module(torch.as_tensor(np.asarray(obs, dtype=np.float32)).unsqueeze(0))
    return int(q.argmax(dim=1).item())


@pytest.mark.parametrize("hidden", [(64, 64), (120, 84), (7,)])
def test_mlp_fast_path_matches_forward(hidden: tuple[int, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    q = make_qnetwork(8, 5, hidden, seed=3)
    rng = np.random.default_rng(0)
    observations = [rng.normal(size=8).astype(np.float32) * 3 for _ in range(300)]
    expected = [_reference(q, obs) for obs in observations]

    def no_forward(*_: object) -> None:
        raise AssertionError("the fast path does not call forward")

    monkeypatch.setattr(QNetwork, "forward", no_forward)
    assert [greedy_action(q, obs) for obs in observations] == expected


def test_plain_sequential_and_other_dtypes() -> None:
    torch.manual_seed(1)
    seq = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    for obs in (np.arange(4, dtype=np.float64), (1, 0, 2, 5), np.ones(4, dtype=np.int64)):
        assert greedy_action(seq, obs) == _reference(seq, np.asarray(obs))


def test_weights_loaded_later_are_seen() -> None:
    """Samplers load new weights into the same network between calls."""
    q = make_qnetwork(6, 4, (32,), seed=0)
    other = make_qnetwork(6, 4, (32,), seed=1)
    rng = np.random.default_rng(1)
    obs = [rng.normal(size=6).astype(np.float32) for _ in range(200)]
    before = [greedy_action(q, o) for o in obs]
    load_flat_weights(q, flat_weights(other))
    after = [greedy_action(q, o) for o in obs]
    assert after == [_reference(other, o) for o in obs] and after != before
    set_weights(q, {k: np.zeros_like(v.numpy()) for k, v in q.state_dict().items()})
    assert {greedy_action(q, o) for o in obs} == {0}  # all-zero Q: the first action
    q.net[0].weight = nn.Parameter(other.net[0].weight.detach().clone())  # replaced, not loaded into
    q.net[0].bias = None
    assert [greedy_action(q, o) for o in obs] == [_reference(q, o) for o in obs]


def test_layers_replaced_and_hooks_added_later_are_seen() -> None:
    q = make_qnetwork(6, 4, (32,), seed=0)
    rng = np.random.default_rng(3)
    obs = [rng.normal(size=6).astype(np.float32) for _ in range(100)]
    [greedy_action(q, o) for o in obs]
    torch.manual_seed(5)
    q.net[2] = nn.Linear(32, 4)  # a new head
    assert [greedy_action(q, o) for o in obs] == [_reference(q, o) for o in obs]
    q.net[1] = nn.Tanh()  # no longer Linear/ReLU: the general path
    assert [greedy_action(q, o) for o in obs] == [_reference(q, o) for o in obs]
    q.net[1] = nn.ReLU()
    calls: list[str] = []
    h1 = q.net[0].register_forward_hook(lambda *_: calls.append("inner"))
    greedy_action(q, obs[0])
    h1.remove()
    h0 = q.net.register_forward_pre_hook(lambda *_: calls.append("sequential"))  # the chain itself
    greedy_action(q, obs[0])
    h0.remove()
    greedy_action(q, obs[0])  # no hook left: the fast path again, nothing called
    h2 = torch.nn.modules.module.register_module_forward_hook(lambda *_: calls.append("global"))
    try:
        greedy_action(q, obs[0])
    finally:
        h2.remove()
    assert calls[:2] == ["inner", "sequential"] and "global" in calls
    q.net = nn.Sequential(nn.Linear(6, 4))  # the whole network replaced
    assert [greedy_action(q, o) for o in obs] == [_reference(q, o) for o in obs]


def test_hooks_and_other_modules_take_the_general_path() -> None:
    q = make_qnetwork(3, 2, (8,), seed=0)
    calls: list[int] = []
    handle = q.register_forward_hook(lambda *_: calls.append(1))
    greedy_action(q, np.zeros(3, dtype=np.float32))
    assert calls == [1]
    handle.remove()
    greedy_action(q, np.zeros(3, dtype=np.float32))
    assert calls == [1]
    odd = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    obs = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    assert greedy_action(odd, obs) == _reference(odd, obs)
    atari = AtariQNetwork(num_actions=6)
    frame = np.random.default_rng(0).integers(0, 255, size=(4, 84, 84), dtype=np.uint8)
    assert greedy_action(atari, frame) == _reference(atari, frame)


def test_unaligned_read_only_observation() -> None:
    """A received frame's array may be read-only and unaligned."""
    q = make_qnetwork(5, 3, (16,), seed=2)
    obs = np.random.default_rng(2).normal(size=5).astype(np.float32)
    raw = bytes(1) + obs.tobytes()
    view = np.frombuffer(memoryview(raw)[1:], dtype=np.float32)
    assert not view.flags.writeable
    assert greedy_action(q, view) == _reference(q, obs)


def test_a_batch_takes_the_general_path() -> None:
    """Not one observation: the module's forward decides what it means (here: an error)."""
    q = make_qnetwork(4, 2, (8,), seed=0)
    with pytest.raises(RuntimeError):
        greedy_action(q, np.zeros((3, 4), dtype=np.float32))


def test_the_chain_is_found_once_per_module() -> None:
    """Looked up again only when the module changed (a stale cache would be a lookup a call)."""
    for module in (make_qnetwork(4, 2, (8,), seed=0), AtariQNetwork(num_actions=3)):
        obs = np.zeros((4,) if isinstance(module, QNetwork) else (4, 84, 84), dtype=np.float32)
        greedy_action(module, obs)
        first = module.__dict__["_rf_mlp"]
        greedy_action(module, obs)
        assert module.__dict__["_rf_mlp"] is first


@pytest.mark.parametrize("max_norm", [1e-3, 0.5, 1e9])
def test_clip_grad_norm_gives_torchs_bits(max_norm: float) -> None:
    """The learners' clipping leaves the gradients bit for bit as torch's ``clip_grad_norm_``
    does (scaled down, or left as they are under the bound), skipping a parameter without one."""
    torch.manual_seed(3)
    shapes = [(64, 4), (64,), (64, 64), (64,), (2, 64), (2,), (7,)]
    ours = [nn.Parameter(torch.randn(s)) for s in shapes]
    theirs = [nn.Parameter(p.detach().clone()) for p in ours]
    for a, b in zip(ours[:-1], theirs[:-1], strict=True):  # the last has no gradient
        a.grad = torch.randn(a.shape) * 3
        b.grad = a.grad.clone()
    clip_grad_norm(iter(ours), max_norm)
    torch.nn.utils.clip_grad_norm_(theirs, max_norm)
    for a, b in zip(ours[:-1], theirs[:-1], strict=True):
        assert a.grad is not None and b.grad is not None
        assert torch.equal(a.grad, b.grad)
    assert ours[-1].grad is None
    clip_grad_norm([ours[-1]], max_norm)  # nothing to clip: nothing happens
