"""Logical time: tags, durations and clocks."""
