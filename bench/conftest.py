"""Benchmark fixtures.

The benchmarks run two ways.  Timed (``pytest bench --benchmark-only``): full-size inputs, the
time ratios printed and their floors asserted.  With ``--benchmark-disable`` (the test suite):
each benchmark does one cheap round on a small input and asserts its answer only; its time
ratios, and the floors asserted on them, belong to the timed run (``timing`` below).
"""
import numpy as np
import pytest

N_DELTA = 10**6
N_ROUNDS = 10**4
N_DELTA_UNTIMED = 20_000   # test_bench_core asserts over the first 20,000 points


def is_timing(config: pytest.Config) -> bool:
    """True when pytest-benchmark times this run (not --benchmark-disable, not under xdist)."""
    session = getattr(config, "_benchmarksession", None)
    if session is not None:
        return not session.disabled
    return not config.getoption("benchmark_disable", default=False)


@pytest.fixture(scope="session")
def timing(request: pytest.FixtureRequest) -> bool:
    """Whether the benchmarks are timed: when False, run one cheap round and skip the time ratios."""
    return is_timing(request.config)


@pytest.fixture(scope="session")
def sigma_rounds(timing):
    """10**6 distinct (sigma, M) pairs (20,000 untimed): no broadcasting shortcut applies."""
    rng = np.random.default_rng(1)
    n = N_DELTA if timing else N_DELTA_UNTIMED
    s = rng.uniform(0.3, 5.0, n)
    m = np.floor(10 ** rng.uniform(2, 12, n))
    return s, m


@pytest.fixture(scope="session")
def sigma_delta():
    rng = np.random.default_rng(2)
    return rng.uniform(0.5, 3.0, N_ROUNDS), 10 ** rng.uniform(-4, -1, N_ROUNDS)
