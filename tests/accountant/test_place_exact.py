"""Placement of loss cells with known P- and Q-masses (exact split inside a lattice interval),
checked against the exact E-fold hockey-stick divergence of small discrete pairs by enumeration."""
import itertools
import math

import numpy as np
import pytest

from dpbounds.accountant._lattice import HockeyStick, compose, place_lower, place_upper
from dpbounds.accountant._place import place_aligned, place_cells


def _pair(rng, n, lo=-1.5, hi=2.0):
    l = np.sort(rng.uniform(lo, hi, n))
    p = rng.dirichlet(np.ones(n))
    q = p * np.exp(-l)
    s = max(1.0, float(q.sum()))
    return l, p / s


def _exact(l, p, E, eps):
    tot = 0.0
    for idx in itertools.product(range(l.size), repeat=E):
        L = float(sum(l[i] for i in idx))
        if L > eps:
            tot += math.prod(p[i] for i in idx) * -math.expm1(eps - L)
    return tot


def _delta(jmin, pmf, dl, E, eps):
    s0, g, out = compose(jmin, pmf, E, 1e-15, 2 ** 20)
    return HockeyStick(s0, g, dl)(eps), out


def _cells(rng, l, p, n_cells, pad):
    """Contiguous groups of atoms as cells: loss bounds around the group (padded), exact masses."""
    cuts = np.sort(rng.choice(np.arange(1, l.size), n_cells - 1, replace=False))
    groups = np.split(np.arange(l.size), cuts)
    la = np.array([l[g].min() - pad * rng.uniform() for g in groups])
    lb = np.array([l[g].max() + pad * rng.uniform() for g in groups])
    P = np.array([p[g].sum() for g in groups])
    Q = np.array([(p[g] * np.exp(-l[g])).sum() for g in groups])
    return la, lb, P, Q


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("dl", [0.05, 0.3])
def test_cells_bracket_the_exact_composition(seed, dl):
    rng = np.random.default_rng(seed)
    l, p = _pair(rng, 7)
    la, lb, P, Q = _cells(rng, l, p, 4, 0.02)
    E = 3
    ju, pu, jd, pd = place_cells(la, lb, P, Q, 0.0, dl)
    assert np.all(pu >= 0) and np.all(pd >= 0)
    assert pu.sum() == pytest.approx(p.sum(), rel=1e-9) and pd.sum() == pytest.approx(p.sum(), rel=1e-12)
    for eps in (0.0, 0.4, 1.3, 2.5, 4.0):
        ex = _exact(l, p, E, eps)
        up, out_u = _delta(ju, pu, dl, E, eps)
        lo, out_d = _delta(jd, pd, dl, E, eps)
        assert lo - out_d <= ex + 1e-14
        assert ex <= up + out_u + 1e-14


@pytest.mark.parametrize("seed", range(6))
def test_mass_errors_are_covered(seed):
    # masses known only within e: the placement of the perturbed masses, with E e at +inf on the
    # upper side and E e subtracted below, still brackets the exact composition
    rng = np.random.default_rng(50 + seed)
    l, p = _pair(rng, 6, -0.3, 0.6)
    la, lb, P, Q = _cells(rng, l, p, 6, 0.004)
    e = 1e-3
    Pn = np.maximum(P + rng.uniform(-e, e, P.size), 0.0)
    Qn = np.maximum(Q + rng.uniform(-e, e, Q.size), 0.0)
    E, dl = 2, 0.1
    ju, pu, jd, pd = place_cells(la, lb, Pn, Qn, e, dl)
    inf_mass = 1.0 - (1.0 - e * P.size) ** E
    for eps in (0.0, 0.1, 0.3, 0.6):
        ex = _exact(l, p, E, eps)
        up, out_u = _delta(ju, pu, dl, E, eps)
        lo, out_d = _delta(jd, pd, dl, E, eps)
        assert ex <= up + out_u + inf_mass + 1e-14
        assert lo - out_d - E * e * P.size <= ex + 1e-14


def test_aligned_cells_bracket_and_are_exact_for_atoms_on_lattice_points():
    rng = np.random.default_rng(3)
    dl = 0.1
    l = np.sort(rng.uniform(-1.0, 1.5, 9))
    p = rng.dirichlet(np.ones(l.size))
    j = np.floor(l / dl).astype(np.int64)
    jj = np.unique(j)
    P = np.array([p[j == k].sum() for k in jj])
    Q = np.array([(p[j == k] * np.exp(-l[j == k])).sum() for k in jj])
    ju, pu, jd, pd = place_aligned(jj, P, Q, 0.0, dl)
    for E in (1, 2):
        for eps in (0.0, 0.5, 1.2):
            ex = _exact(l, p, E, eps)
            assert _delta(jd, pd, dl, E, eps)[0] - 1e-14 <= ex <= _delta(ju, pu, dl, E, eps)[0] + 1e-14
    # atoms exactly on lattice points: the upper split is the atoms themselves
    l2 = np.array([-3, 1, 2, 7]) * dl
    p2 = np.array([0.1, 0.4, 0.3, 0.2])
    ju, pu, _, _ = place_aligned(np.array([-3, 1, 2, 7]), p2, p2 * np.exp(-l2), 0.0, dl)
    full = np.zeros(pu.size)
    full[np.array([-3, 1, 2, 7]) - ju] = p2
    assert np.allclose(pu, full, atol=1e-10)  # up to the rounding margin of the split


def test_the_cell_width_no_longer_matters():
    # a smooth loss density on fine atoms, grouped into cells of width 0.0005 or 0.002 inside a
    # lattice of spacing 0.05: bound-based placement widens the bracket with the cell width (first
    # order); the mass-based split hardly does (only cells straddling a lattice point, a fraction
    # width / spacing of them, keep a first-order error: second order in all)
    x = np.linspace(-0.6, 0.8, 14001)
    p = np.exp(-0.5 * ((x - 0.1) / 0.12) ** 2)
    p /= p.sum() * max(1.0, float(np.sum(np.exp(-x) * p / p.sum())))
    E, eps, dl = 10, 1.5, 0.05
    gaps_exact, gaps_bound = [], []
    for width in (0.0005, 0.002):
        k = int(round(width / (x[1] - x[0])))
        n = x.size // k
        xs, ps = x[:n * k].reshape(n, k), p[:n * k].reshape(n, k)
        la, lb = xs[:, 0], xs[:, -1]
        P, Q = ps.sum(axis=1), (ps * np.exp(-xs)).sum(axis=1)
        ju, pu, jd, pd = place_cells(la, lb, P, Q, 0.0, dl)
        gaps_exact.append(_delta(ju, pu, dl, E, eps)[0] - _delta(jd, pd, dl, E, eps)[0])
        ju, pu = place_upper(lb, P, dl)
        jd, pd = place_lower(la, P, dl, 0.0)
        gaps_bound.append(_delta(ju, pu, dl, E, eps)[0] - _delta(jd, pd, dl, E, eps)[0])
    assert gaps_bound[1] > 1.3 * gaps_bound[0]      # first order in the cell width
    assert gaps_exact[1] < 1.05 * gaps_exact[0]     # second order
    assert gaps_exact[1] < 0.7 * gaps_bound[1]
