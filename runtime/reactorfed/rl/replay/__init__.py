"""Replay: a uniform buffer, prioritized replay on a sum tree, n-step transitions, replay
shards (reactors) and the contract of replay-based algorithms."""
