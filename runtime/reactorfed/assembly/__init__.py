"""A reactor tree assembled into a program: wiring, precedence levels, partitions."""
