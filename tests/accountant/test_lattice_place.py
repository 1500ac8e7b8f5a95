"""Connect-the-dots placement of loss cells (upper) and balanced merging (lower), checked
against the exact E-fold hockey-stick divergence of small discrete pairs by enumeration."""
import itertools
import math

import numpy as np
import pytest

from dpbounds.accountant._lattice import HockeyStick, compose, place_lower, place_upper


def _pair(rng, n):
    """A discrete dominating pair: P-masses p at losses l (Q = e^{-l} p, the rest of Q at -inf)."""
    l = np.sort(rng.uniform(-1.5, 2.0, n))
    p = rng.dirichlet(np.ones(n))
    q = p * np.exp(-l)
    s = max(1.0, float(q.sum()))
    return l, p / s  # scaled so that both P and Q are sub-probabilities


def _exact(l, p, E, eps):
    tot = 0.0
    for idx in itertools.product(range(l.size), repeat=E):
        L = float(sum(l[i] for i in idx))
        if L > eps:
            tot += math.prod(p[i] for i in idx) * -math.expm1(eps - L)
    return tot


def _lattice_delta(jmin, pmf, dl, E, eps):
    s0, g, out = compose(jmin, pmf, E, 1e-15, 2 ** 20)
    return HockeyStick(s0, g, dl)(eps), out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dl", [0.05, 0.3])
def test_place_brackets_exact_composition(seed, dl):
    rng = np.random.default_rng(seed)
    l, p = _pair(rng, 6)
    E = 3
    ju, pu = place_upper(l, p, dl)
    jd, pd = place_lower(l, p, dl, 0.0)
    assert pu.sum() == pytest.approx(p.sum(), rel=1e-12) and np.all(pu >= 0)
    assert pd.sum() == pytest.approx(p.sum(), rel=1e-12) and np.all(pd >= 0)
    for eps in (0.0, 0.4, 1.3, 2.5, 4.0):  # HockeyStick serves eps >= 0
        ex = _exact(l, p, E, eps)
        up, out_u = _lattice_delta(ju, pu, dl, E, eps)
        lo, out_d = _lattice_delta(jd, pd, dl, E, eps)
        assert lo - out_d <= ex + 1e-14
        assert ex <= up + out_u + 1e-14


@pytest.mark.parametrize("seed", range(4))
def test_place_cells_bracket_their_atoms(seed):
    # cells [lo, hi] each holding one atom at an unknown loss inside: every placement of the atom
    # must be bracketed by the cell placements
    rng = np.random.default_rng(100 + seed)
    l, p = _pair(rng, 5)
    w = rng.uniform(0.0, 0.08, l.size)
    lo, hi = l - rng.uniform(0, 1, l.size) * w, l + w
    dl, E = 0.1, 2
    ju, pu = place_upper(hi, p, dl)
    jd, pd = place_lower(lo, p, dl, 0.0)
    for eps in (0.0, 0.7, 1.9, 3.1):
        ex = _exact(l, p, E, eps)
        assert _lattice_delta(jd, pd, dl, E, eps)[0] - 1e-14 <= ex <= _lattice_delta(ju, pu, dl, E, eps)[0] + 1e-14


def test_connect_the_dots_is_second_order():
    # a smooth loss density: halving the spacing cuts the upper/lower gap of the composed delta
    # by ~4x (rounding up/down would cut it by ~2x)
    x = np.linspace(-0.6, 0.8, 4001)
    p = np.exp(-0.5 * ((x - 0.1) / 0.12) ** 2)
    p /= p.sum() * max(1.0, float(np.sum(np.exp(-x) * p / p.sum())))
    E, eps = 10, 1.5
    gaps = []
    for dl in (0.04, 0.02):
        ju, pu = place_upper(x, p, dl)
        jd, pd = place_lower(x, p, dl, 0.0)
        gaps.append(_lattice_delta(ju, pu, dl, E, eps)[0] - _lattice_delta(jd, pd, dl, E, eps)[0])
    assert gaps[1] > 0 and gaps[0] / gaps[1] > 3.0


def test_lower_placement_needs_margin_for_mass_errors():
    # with a mass error allowance the lower PMF can only move mass down (never up) compared
    # with err = 0: the constraint must hold for every mass vector within err
    rng = np.random.default_rng(7)
    l, p = _pair(rng, 40)
    j0, p0 = place_lower(l, p, 0.05, 0.0)
    j1, p1 = place_lower(l, p, 0.05, 1e-3)
    assert j0 == j1
    assert np.all(np.cumsum(p1[::-1]) <= np.cumsum(p0[::-1]) * (1 + 1e-12) + 1e-15)
