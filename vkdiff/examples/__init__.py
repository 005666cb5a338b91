"""Face floor: `ti.examples`: the helpers Taichi 1.7.4's examples import from their package
(`ti.examples.patterns.taichi_logo`). vkdiff ships no example programs here."""
from . import patterns

__all__ = ['patterns']
