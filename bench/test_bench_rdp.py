"""Benchmarks of dpbounds.rdp against autodp and dp-accounting (same quantity, same run).

Groups
------
rdp-600k      eps(delta=1e-8) after 600,000 steps of the WOR-subsampled Gaussian (Theorem 27)
              over 100 integer orders 2..101, one (sigma, gamma) point.
rdp-grid      the same over a 100 x 100 (sigma, gamma) grid (1e4 points).  The peers are timed on
              ONE point of the grid and must be scaled by 1e4 (they are pure-Python loops, ~0.1-0.3 s
              per point, so the full grid would take ~1 h); compare ours-grid with 1e4 x peer-point.
rdp-latency   scalar RDPAccountant.get_epsilon (fresh accountant: table + 1-D search) vs the peers'
              accountant objects for the same composition.

Every benchmark asserts its result (agreement with the peers at equal or better accuracy).
Run:  PYTHONPATH=src python -m pytest bench/test_bench_rdp.py --benchmark-only
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpbounds.rdp as R

ORDERS = np.arange(2.0, 102.0)
STEPS, DELTA = 600_000, 1e-8
SIGMA, GAMMA = 5.0, 0.001
GRID_S = np.geomspace(0.8, 20.0, 100)
GRID_G = np.geomspace(1e-4, 0.1, 100)


def _ours_point(sigma=SIGMA, gamma=GAMMA):
    rdp = STEPS * R.subsampled_gaussian_wor(ORDERS, sigma, gamma, bound="improved")
    return R.epsilon(rdp, ORDERS, DELTA, conversion="classic")


def _ours_grid(grid_s=GRID_S, grid_g=GRID_G):
    rdp = R.subsampled_gaussian_wor(ORDERS[None, None, :], grid_s[:, None, None], grid_g[None, :, None])
    return R.epsilon(STEPS * rdp, ORDERS, DELTA, conversion="classic")


def _autodp_point(sigma=SIGMA, gamma=GAMMA):
    from autodp import rdp_acct, rdp_bank
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = rdp_acct.anaRDPacct()
        acc.compose_subsampled_mechanism(lambda x: rdp_bank.RDP_gaussian({"sigma": sigma}, x), gamma,
                                         improved_bound_flag=True)
        rdp = STEPS * np.asarray(acc.get_rdp(ORDERS))
    return float(np.min(rdp + np.log(1 / DELTA) / (ORDERS - 1)))


def _dpa_point(sigma=SIGMA, gamma=GAMMA):
    import dp_accounting.rdp.rdp_privacy_accountant as dpa
    rdp = STEPS * np.asarray(dpa._compute_rdp_sample_wor_gaussian(gamma, sigma, ORDERS))
    return float(np.min(rdp + np.log(1 / DELTA) / (ORDERS - 1)))   # classic conversion, as ours


@pytest.mark.benchmark(group="rdp-600k")
def test_ours_600k(benchmark):
    e = benchmark(_ours_point)
    lo = R.epsilon(STEPS * R.subsampled_gaussian_wor(ORDERS, SIGMA, GAMMA, "lower"), ORDERS, DELTA, "classic")
    t9 = R.epsilon(STEPS * R.subsampled_gaussian_wor(ORDERS, SIGMA, GAMMA, "theorem9"), ORDERS, DELTA, "classic")
    assert lo < e < t9 and e == pytest.approx(1.95123, rel=1e-5)


@pytest.mark.benchmark(group="rdp-600k")
def test_autodp_600k(benchmark):
    pytest.importorskip("autodp", reason="autodp (peer) not installed")
    e = benchmark.pedantic(_autodp_point, rounds=3, iterations=1)
    assert _ours_point() <= e * (1 + 1e-9) and _ours_point() == pytest.approx(e, rel=1e-6)


@pytest.mark.slow  # a peer cross-check: dp-accounting's WOR RDP is a Python loop (seconds)
@pytest.mark.peers
@pytest.mark.benchmark(group="rdp-600k")
def test_dp_accounting_600k(benchmark):
    pytest.importorskip("dp_accounting", reason="dp-accounting (peer) not installed")
    e = benchmark.pedantic(_dpa_point, rounds=3, iterations=1)
    assert _ours_point() == pytest.approx(e, rel=1e-9)


@pytest.mark.benchmark(group="rdp-grid")
def test_ours_grid_1e4(benchmark, timing):
    step = 1 if timing else 4  # untimed: every 4th sigma and gamma of the grid (25 x 25)
    gs, gg = GRID_S[::step], GRID_G[::step]
    e = benchmark.pedantic(_ours_grid, args=(gs, gg), rounds=3, iterations=1)
    assert e.shape == (gs.size, gg.size) and np.all(np.isfinite(e))
    assert np.all(np.diff(e, axis=0) <= 1e-12 * e[1:])     # decreasing in sigma
    i, j = (37, 61) if timing else (9, 15)
    assert e[i, j] == pytest.approx(_ours_point(gs[i], gg[j]), rel=1e-14)


@pytest.mark.benchmark(group="rdp-grid")
def test_autodp_grid_one_point(benchmark):
    pytest.importorskip("autodp", reason="autodp (peer) not installed")
    i, j = 37, 61
    e = benchmark.pedantic(_autodp_point, args=(GRID_S[i], GRID_G[j]), rounds=3, iterations=1)
    assert _ours_point(GRID_S[i], GRID_G[j]) <= e * (1 + 1e-9)


@pytest.mark.slow  # a peer cross-check: dp-accounting's WOR RDP is a Python loop (seconds)
@pytest.mark.peers
@pytest.mark.benchmark(group="rdp-grid")
def test_dp_accounting_grid_one_point(benchmark):
    pytest.importorskip("dp_accounting", reason="dp-accounting (peer) not installed")
    i, j = 37, 61
    e = benchmark.pedantic(_dpa_point, args=(GRID_S[i], GRID_G[j]), rounds=3, iterations=1)
    assert _ours_point(GRID_S[i], GRID_G[j]) == pytest.approx(e, rel=1e-9)


@pytest.mark.benchmark(group="rdp-latency")
def test_ours_get_epsilon_latency(benchmark):
    def run():
        return R.RDPAccountant(conversion="classic").compose(R.SubsampledGaussianWOR(SIGMA, GAMMA, "theorem9"), STEPS).get_epsilon(DELTA)
    e = benchmark(run)
    assert e == pytest.approx(2.027007641742185, rel=1e-9)


@pytest.mark.benchmark(group="rdp-latency")
def test_ours_get_epsilon_latency_poisson(benchmark):
    def run():
        return R.RDPAccountant().compose(R.PoissonGaussian(1.1, 0.01), 5000).get_epsilon(1e-5)
    e = benchmark(run)
    assert 0 < e < 10


@pytest.mark.benchmark(group="rdp-latency")
def test_autodp_get_eps_latency(benchmark):
    pytest.importorskip("autodp", reason="autodp (peer) not installed")
    from autodp import rdp_acct, rdp_bank

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            acc = rdp_acct.anaRDPacct()
            acc.compose_subsampled_mechanism(lambda x: rdp_bank.RDP_gaussian({"sigma": SIGMA}, x), GAMMA, coeff=STEPS)
            return acc.get_eps(DELTA)
    e = benchmark.pedantic(run, rounds=3, iterations=1)
    assert e == pytest.approx(2.027007641742185, rel=1e-8)


@pytest.mark.benchmark(group="rdp-latency")
def test_dp_accounting_get_epsilon_latency_poisson(benchmark):
    pytest.importorskip("dp_accounting", reason="dp-accounting (peer) not installed")
    import dp_accounting as dpacc
    from dp_accounting.rdp import rdp_privacy_accountant as dpa

    def run():
        acc = dpa.RdpAccountant()
        acc.compose(dpacc.PoissonSampledDpEvent(0.01, dpacc.GaussianDpEvent(1.1)), 5000)
        return acc.get_epsilon(1e-5)
    e = benchmark.pedantic(run, rounds=3, iterations=1)
    ours = R.RDPAccountant().compose(R.PoissonGaussian(1.1, 0.01), 5000).get_epsilon(1e-5)
    assert ours <= e * (1 + 1e-12)
