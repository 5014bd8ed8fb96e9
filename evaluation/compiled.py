"""Loops compiled with numba, for the few statistics whose numpy form makes several passes over
large arrays: `compiled` is the decorator they share."""

from __future__ import annotations

from numba import njit


def compiled(function):
    """The function compiled with numba, the machine code cached beside its module (or in numba's user
    cache folder); compiled anew in each process where no cache folder can be written."""
    try:
        return njit(cache=True, nogil=True)(function)
    except RuntimeError:  # numba found no writable cache folder
        return njit(nogil=True)(function)
