"""Regression tests for what the fuzz harnesses (fuzz/, docs/fuzzing.md) found in the sweep axes.

Each test replays the input a harness reported, in plain pytest (no atheris), and checks the
contract that input broke; a test's comment names the harness that found it where the record says
which one did. Findings that are not fixed yet are ``xfail(strict=True)`` with the reason and the
owner, so that the fix turns them into passing tests (and the strict mark makes the run fail until
the ``xfail`` is removed).
"""
from __future__ import annotations

import numpy as np
import pytest

import dpbounds


# fuzz_sweep_axes: an axis is at most 1e7 points, and repeats of a generated (monotone) integer
# axis are dropped without a sort, so that parsing one stays in bounded memory.
def test_axis_cap_and_integer_axis_memory():
    import tracemalloc

    from dpbounds.sweeps import parse_axis
    from dpbounds.sweeps._axes import MAX_AXIS_LENGTH

    assert MAX_AXIS_LENGTH == 10 ** 7
    with pytest.raises(dpbounds.DPBoundsError, match=r"^axis epochs: num must be at most 1e\+07"):
        parse_axis("epochs", "-1:1:31e+06")
    tracemalloc.start()
    try:
        v = parse_axis("epochs", "1:1e9:1e6:log")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2 ** 20, peak            # a few 8 MB arrays, no sort
    assert np.all(np.diff(v) > 0) and v[0] == 1 and v[-1] == 1e9 and np.all(v == np.rint(v))
    assert list(parse_axis("rounds", "10:1:10")) == [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]   # decreasing stays so
