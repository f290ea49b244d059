"""Ape-X DQN: its config, the per-copy epsilon-greedy actor and the double-Q Learner."""
