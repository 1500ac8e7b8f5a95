"""The multi-epoch trade-off lower bound: supporting lines on an adaptively refined eps grid.

Checked against references computed here: a brute-force upper envelope of random lines, a
20x denser uniform eps grid (its polygon from below and the interval bounds from above), and
the exact single-epoch curve (the bound must stay below it).
"""
import warnings

import numpy as np
import pytest

import dpbounds
from dpbounds.accountant import RandomAllocationPLD, _envelope, tradeoff_exact


def _brute_rise(b, m, ub, um):
    """max over a in [0, 1] of (ub + um a) - max(lines): evaluated at a fine grid plus every
    pairwise intersection of the lines (which holds all the envelope's vertices)."""
    bb, mm = b[:, None] - b[None, :], m[None, :] - m[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        x = (bb / mm).ravel()
    x = x[np.isfinite(x) & (x >= 0) & (x <= 1)]
    pts = np.unique(np.concatenate([np.linspace(0, 1, 2001), x]))
    env = np.max(b[None, :] + m[None, :] * pts[:, None], axis=1)
    return np.max(ub[:, None] + um[:, None] * pts[None, :] - env[None, :], axis=1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hull_rise_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    eps = np.sort(rng.uniform(0, 6, 25))
    d = np.sort(rng.uniform(0, 0.5, 25))[::-1]  # a non-increasing profile
    b, m = _envelope._lines(eps, d)
    ub, um = 1.0 - rng.uniform(0, 0.5, 40), -np.exp(rng.uniform(-6, 6, 40))
    p, bs, ms = _envelope._hull(b, m)
    assert p[0] == 0.0 and p[-1] == 1.0 and np.all(np.diff(p) > 0) and np.all(np.diff(ms) > 0)
    got = _envelope._rise(p, bs, ms, ub, um)
    np.testing.assert_allclose(got, _brute_rise(b, m, ub, um), rtol=0, atol=1e-13)


def _concave_sup(x, y):
    """Upper bounds on sup g over each [x_i, x_{i+1}] for a concave g sampled at x (increasing):
    g lies below the extended chords of the neighbouring intervals (one of them at the ends)."""
    chord = np.diff(y) / np.diff(x)
    x0, x1, y0, y1 = x[:-1], x[1:], y[:-1], y[1:]
    sl = np.concatenate([[np.nan], chord[:-1]])   # chord of the interval on the left, through (x0, y0)
    sr = np.concatenate([chord[1:], [np.nan]])    # on the right, through (x1, y1)
    with np.errstate(invalid="ignore", divide="ignore"):
        xc = np.clip((y1 - sr * x1 - y0 + sl * x0) / (sl - sr), x0, x1)
    best = np.full(x0.shape, -np.inf)
    for c in (x0, x1, np.where(np.isfinite(xc), xc, x0)):
        left = np.where(np.isnan(sl), np.inf, y0 + sl * (c - x0))
        right = np.where(np.isnan(sr), np.inf, y1 + sr * (c - x1))
        best = np.maximum(best, np.minimum(left, right))
    return best


def _dense_reference(pld, a, n):
    """(lower, upper) for the envelope of all supporting lines at a, from n uniform eps points.

    lower: the grid's own polygon.  upper: delta(eps) is convex in t = e^eps (a supremum of
    functions affine in t) and t delta(eps) convex in 1/t, so both families of lines are
    concave in t resp. 1/t at fixed a; between grid points they stay below the extended
    neighbouring chords (and below the bound from delta non-increasing, used for the tail).
    """
    eps, d = pld._supporting_grid(n, 1e-4)  # the uniform-grid path: no refinement involved
    assert np.all(np.diff(d) <= 0)
    t = np.exp(eps)
    g1, g2 = 1 - d - t * a, (1 - d - a) / t
    lower = max(0.0, np.max(g1), np.max(g2))
    crude1 = 1 - d[1:] - t[:-1] * a
    crude2 = (1 - d[1:] - a) / t[:-1]
    up1 = np.minimum(_concave_sup(t, g1), crude1)
    up2 = np.minimum(_concave_sup(1 / t[::-1], g2[::-1])[::-1], crude2)
    upper = max(lower, np.max(up1), np.max(up2), 1 - t[-1] * a, (1 - a) / t[-1])
    return lower, upper


# seconds each: (1.1, 234, 10) in the slow tier
@pytest.mark.parametrize("sigma,M,E", [pytest.param(1.1, 234, 10, marks=pytest.mark.slow), (1.0, 100, 3)])
def test_adaptive_grid_reaches_dense_envelope(sigma, M, E):
    tol = 1e-4
    pld = RandomAllocationPLD(sigma, M, E)
    eps, _ = pld._supporting_grid(None, tol)
    a = np.array([0.01, 0.1, 0.3, 0.5])
    got = pld.tradeoff_lower(a, tol=tol)
    for ai, gi in zip(a, got):
        lower, upper = _dense_reference(pld, ai, 20 * eps.size)
        assert lower - tol <= gi <= upper + 1e-15
        assert upper - lower < 10 * tol  # a reference sharp enough for the check to mean something
    # a uniform 400-point grid misses the envelope at a = 0.1 by far more than tol: the
    # comparison above is one a kinked polygon would fail
    lower, _ = _dense_reference(pld, 0.1, 20 * eps.size)
    if E == 10:
        assert lower - pld.tradeoff_lower(0.1, n_eps=400) > 100 * tol


def test_certified_direction_single_epoch():
    a = np.concatenate([[0.0, 1e-9, 1e-6], np.linspace(0.001, 0.999, 60), [1.0]])
    lower = RandomAllocationPLD(1.0, 100, 1).tradeoff_lower(a)
    f, err = tradeoff_exact(a, 1.0, 100)
    assert np.all(lower <= f + err)
    assert np.max(f - lower) < 0.02  # and it is not trivially low


def test_value_depends_only_on_its_own_a():
    pld = RandomAllocationPLD(1.0, 100, 3)
    a = np.array([0.05, 0.1, 0.7])
    together = pld.tradeoff_lower(a)
    alone = np.array([pld.tradeoff_lower(x) for x in a])
    assert np.array_equal(together, alone)
    assert np.array_equal(together, RandomAllocationAccountant_tradeoff(a))


def RandomAllocationAccountant_tradeoff(a):
    return dpbounds.RandomAllocationAccountant(1.0, 100, 3).tradeoff(a)[0]


def test_cap_reached_warns(monkeypatch):
    monkeypatch.setattr(_envelope, "_MAX_POINTS", 40)
    with pytest.warns(dpbounds.PrecisionWarning, match="within"):
        RandomAllocationPLD(1.0, 100, 3).tradeoff_lower(0.1, tol=1e-6)


def test_tolerance_met_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RandomAllocationPLD(1.0, 100, 3).tradeoff_lower(0.1, tol=1e-5)


@pytest.mark.parametrize("kw,name", [({"n_eps": 1}, "n_eps"), ({"n_eps": 2.5}, "n_eps"),
                                     ({"tol": 0.0}, "tol"), ({"tol": 1.5}, "tol")])
def test_bad_options_name_the_parameter(kw, name):
    with pytest.raises(dpbounds.DPBoundsError, match=name):
        RandomAllocationPLD(1.0, 100, 3).tradeoff_lower(0.1, **kw)
