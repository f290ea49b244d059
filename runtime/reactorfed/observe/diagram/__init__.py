"""Reactor programs drawn as Lingua Franca draws them (``reactorfed diagram``)."""

from .svg import program_svg

__all__ = ["program_svg"]
