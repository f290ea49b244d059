"""Lingua Franca's own Python-target test programs, written again as reactorfed programs."""
