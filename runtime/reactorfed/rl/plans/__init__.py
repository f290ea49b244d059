"""Execution plans: the reactor programs that run an algorithm's actors and Learner
(synchronous, asynchronous, Ape-X, SEED, data-parallel, parameter server, multi-agent,
Q-learning)."""
