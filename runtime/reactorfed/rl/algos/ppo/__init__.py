"""PPO: its config, actor-critic networks (MLP and CNN), GAE and the PPO Learner."""
