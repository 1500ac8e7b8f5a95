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
from dpbounds.sweeps import parse_axis

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


# ---------------------------------------------------------------- against the package's own kernels
# (ratios in one run, with more grids: bench/report_sweep_kernels.py)
from dpbounds.outer import delta_bound_outer  # noqa: E402

SIGMA_WIDE = parse_axis("sigma", (0.5, 4.0, 1000, "lin"))
ROUNDS_WIDE = np.unique(np.rint(np.geomspace(1e3, 1e9, 10100)))[:10000]


@pytest.mark.benchmark(group="delta_bound over a 1000 x 10000 grid: sweep vs delta_bound_outer")
def test_outer_function_1e7(benchmark):
    out = benchmark(delta_bound_outer, SIGMA_WIDE, ROUNDS_WIDE)
    assert out.shape == (1000, 10000)


@pytest.mark.benchmark(group="delta_bound over a 1000 x 10000 grid: sweep vs delta_bound_outer")
def test_sweep_in_memory_1e7(benchmark):
    res = benchmark(dpbounds.sweep, "delta_bound", sigma=SIGMA_WIDE, rounds=ROUNDS_WIDE, progress=False)
    np.testing.assert_array_equal(np.asarray(res["delta_bound"]), delta_bound_outer(SIGMA_WIDE, ROUNDS_WIDE))


RDP_AXES = dict(sigma=np.geomspace(0.7, 4.0, 8), sample_rate=np.geomspace(1e-3, 0.1, 8), steps=2000.0, delta=1e-6)


def _vectorised_rdp():
    import dpbounds.rdp as R

    orders = np.asarray(R.DEFAULT_ORDERS)
    rdp = R.poisson_gaussian(orders, RDP_AXES["sigma"][:, None, None], RDP_AXES["sample_rate"][None, :, None])
    return R.epsilon(RDP_AXES["steps"] * rdp, orders, RDP_AXES["delta"])


@pytest.mark.benchmark(group="Poisson RDP epsilon over an 8 x 8 grid: sweep vs the vectorised path")
def test_rdp_vectorised_path(benchmark):
    eps = benchmark.pedantic(_vectorised_rdp, rounds=3, iterations=1)
    assert eps.shape == (8, 8) and np.isfinite(eps).all()


@pytest.mark.benchmark(group="Poisson RDP epsilon over an 8 x 8 grid: sweep vs the vectorised path")
def test_rdp_sweep_default_orders(benchmark):
    res = benchmark.pedantic(dpbounds.sweep, ("rdp_epsilon_poisson",), dict(orders="default", progress=False,
                                                                          **RDP_AXES), rounds=3, iterations=1)
    np.testing.assert_array_equal(np.asarray(res["rdp_epsilon_poisson"]).reshape(8, 8), _vectorised_rdp())


@pytest.mark.benchmark(group="Poisson RDP epsilon over an 8 x 8 grid: sweep vs the vectorised path")
def test_rdp_sweep_order_search(benchmark):
    res = benchmark.pedantic(dpbounds.sweep, ("rdp_epsilon_poisson",), dict(progress=False, **RDP_AXES),
                             rounds=3, iterations=1)
    # the search over real orders is never worse than the fixed list
    assert (np.asarray(res["rdp_epsilon_poisson"]).reshape(8, 8) <= _vectorised_rdp() * (1 + 1e-12)).all()


# the order search without replacement against the vectorised path at the orders the search
# evaluates at each point (the like-for-like reference: same orders, same answer; see
# bench/report_sweep_kernels.py, which prints the ratio)
WOR_AXES = dict(sigma=np.geomspace(1.6, 40.0, 6), sample_rate=np.geomspace(1e-4, 0.1, 6), steps=60000.0, delta=1e-8)


@pytest.fixture(scope="module")
def wor_search():
    from report_sweep_kernels import _at_orders, _search_orders

    import dpbounds.rdp as R

    orders, eps = _search_orders("rdp_epsilon_wor", WOR_AXES)
    S, Q = (x.ravel() for x in np.meshgrid(WOR_AXES["sigma"], WOR_AXES["sample_rate"], indexing="ij"))

    def same_orders():
        curve = WOR_AXES["steps"] * np.asarray(R.subsampled_gaussian_wor(orders, S[:, None] / 2, Q[:, None]))
        return _at_orders(curve, orders, WOR_AXES["delta"])

    return same_orders, eps


@pytest.mark.benchmark(group="WOR RDP epsilon, order search, 6 x 6 grid: sweep vs the vectorised path at its orders")
def test_rdp_wor_vectorised_path_at_the_search_orders(benchmark, wor_search):
    same_orders, eps = wor_search
    got = benchmark.pedantic(same_orders, rounds=3, iterations=1)
    np.testing.assert_allclose(got, eps, rtol=1e-12, atol=0)


@pytest.mark.benchmark(group="WOR RDP epsilon, order search, 6 x 6 grid: sweep vs the vectorised path at its orders")
def test_rdp_wor_sweep_order_search(benchmark, wor_search):
    res = benchmark.pedantic(dpbounds.sweep, ("rdp_epsilon_wor",), dict(progress=False, **WOR_AXES),
                             rounds=3, iterations=1)
    np.testing.assert_array_equal(np.asarray(res["rdp_epsilon_wor"]).ravel(), wor_search[1])
