"""The sweep engine against the raw ufunc on the same points (same run, same group).

    python -m pytest bench/test_bench_sweep.py --benchmark-only --benchmark-group-by=group
    python bench/report_sweep_overhead.py        # 10^7 points, the overhead ratio and flat memory
    python bench/report_sweep_memory.py          # peak RSS of a 10^8-point sweep to Parquet
    python bench/report_sweep_scaling.py --size 12   # exact epsilon grid, processes vs serial loop
"""
import numpy as np
import pytest

import dpbounds
from dpbounds import ufuncs
from dpbounds.sweep import parse_axis

SIGMA = parse_axis("sigma", (0.5, 4.0, 1000, "lin"))
ROUNDS = parse_axis("rounds", (1e3, 1e9, 1000, "log"))


@pytest.fixture(scope="module")
def flat():
    return np.repeat(SIGMA, ROUNDS.size), np.tile(ROUNDS, SIGMA.size)


@pytest.mark.benchmark(group="delta_bound over a 1000 x 1000 (sigma, rounds) grid")
def test_raw_ufunc_on_flattened_points(benchmark, flat):
    out = benchmark(ufuncs.delta_bound_exact, *flat)
    assert 0 < np.isnan(out).sum() < out.size


@pytest.mark.benchmark(group="delta_bound over a 1000 x 1000 (sigma, rounds) grid")
def test_sweep_in_memory(benchmark, flat):
    res = benchmark(dpbounds.sweep, "delta_bound", sigma=SIGMA, rounds=ROUNDS, progress=False)
    got = np.asarray(res["delta_bound"]).ravel()
    np.testing.assert_array_equal(got, ufuncs.delta_bound_exact(*flat))
    assert (np.asarray(res["valid"]).ravel() == ~np.isnan(got)).all()


@pytest.mark.benchmark(group="delta_bound over a 1000 x 1000 (sigma, rounds) grid")
def test_sweep_to_parquet(benchmark, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow not installed")
    out = tmp_path / "g.parquet"
    benchmark(dpbounds.sweep, "delta_bound", sigma=SIGMA, rounds=ROUNDS, out=out, progress=False)
    assert pq.read_metadata(out).num_rows == SIGMA.size * ROUNDS.size
