"""APPO: PPO's clipped loss on V-trace targets, for the asynchronous plan."""
