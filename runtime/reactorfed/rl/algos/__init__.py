"""The policy side of each algorithm (configs, networks and actors, losses, the Learner
update objects): :mod:`.ppo`, :mod:`.appo`, :mod:`.dqn`, :mod:`.apex`."""
