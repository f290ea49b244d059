"""DQN: its config, epsilon-greedy exploration and the DQN Learner."""
