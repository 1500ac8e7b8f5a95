"""Same results from a thread pool (the ufunc loops release the GIL)."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import dpbounds
from dpbounds import ufuncs


def _work(seed):
    rng = np.random.default_rng(seed)
    s = 10 ** rng.uniform(-0.5, 1, 20000)
    m = np.floor(10 ** rng.uniform(1, 12, 20000))
    d = 10 ** rng.uniform(-6, -1, 200)
    return (
        ufuncs.delta_min_exact(s, m),
        ufuncs.delta_bound_simplified(s, m),
        ufuncs.ndtri(10 ** rng.uniform(-300, -0.3, 20000)),
        dpbounds.rounds_required(s[:200], d),
        [dpbounds.delta_bound(float(x), 10**6, "exact") for x in s[:500]],  # scalar path and its sigma cache
    )


def test_thread_pool_matches_serial():
    seeds = list(range(8))
    serial = [_work(s) for s in seeds]
    with ThreadPoolExecutor(max_workers=4) as ex:
        threaded = list(ex.map(_work, seeds))
    for a, b in zip(serial, threaded):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
