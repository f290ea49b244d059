"""Running an assembled program: the scheduler and the objects it composes."""
