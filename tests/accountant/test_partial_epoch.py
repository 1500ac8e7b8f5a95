"""A partial epoch of random allocation (k of the M steps run), against independent computations.

* k = M is the full epoch: identical numbers, and the general mixture formulas (forced at r = 1)
  agree with the full-epoch law within its error bars;
* k = 1 is the one-dimensional pair N(0, 1) vs (1 - 1/M) N(0, 1) + (1/M) N(1/sigma, 1): both
  directions of delta(eps), TV, the trade-off curve and the curve boxes against mpmath quadrature;
* k = 3, 10, 50 of M = 100 at sigma = 1 and k = 5 of M = 20 at sigma = 0.5: both directions of
  delta(eps) against seeded Monte Carlo of the pair (S_k under H0, the mixture under H1);
* the three k-round laws (Fourier, tilted, log-domain) wrapped at the same (sigma, k, M) agree;
* delta(eps) is non-decreasing in k (a partial epoch releases a subset of the epoch's outputs);
* loss lattices: mass ~ 1, and E = 2 compositions bracket a Monte Carlo of the 2-fold pair.
"""
import math

import mpmath as mp
import numpy as np
import pytest

from dpbounds.accountant._lattice import HockeyStick, compose
from dpbounds.accountant._laws.fourier import FourierLaw
from dpbounds.accountant._laws.logdomain import LogDomainLaw
from dpbounds.accountant._laws.partial import PartialEpochLaw
from dpbounds.accountant._laws.select import law_for, partial_law_for
from dpbounds.accountant._laws.tilted import TiltedFourierLaw


# ---------------------------------------------------------------- k = M: the full epoch
@pytest.mark.parametrize("sigma, M, purpose", [(1.0, 100, "curve"), (0.5, 20, "curve"), (1.0, 100, "compose")])
def test_full_epoch_is_reproduced_exactly(sigma, M, purpose):
    part = partial_law_for(sigma, M, M, purpose)
    full = law_for(sigma, M, purpose)
    assert part.full and part.base is full and part.method == full.method
    for eps in (0.0, 0.1, 0.5, 1.0, 3.0):
        assert part.delta(eps) == full.delta(eps)
    assert part.tv() == full.tv()
    a = np.array([1e-8, 1e-4, 0.01, 0.3, 0.7, 0.999])
    for x, y in zip(part.tradeoff(a), full.tradeoff(a)):
        assert np.array_equal(x, y)
    for x, y in zip(part.curve_points(), full.curve_points()):
        assert np.array_equal(x, y)
    if purpose == "compose":
        for d, v in part.lattice_pmfs(2e-4).items():
            w = full.lattice_pmfs(2e-4)[d]
            assert all(np.array_equal(p, q) for p, q in zip(v, w))


@pytest.mark.parametrize("sigma, M", [(1.0, 100), (0.5, 20)])
def test_mixture_formulas_at_r_one_agree_with_the_full_epoch(sigma, M):
    # the general code path (forced at k = M, r = 1) must reduce to the full-epoch law
    full = law_for(sigma, M)
    gen = PartialEpochLaw(full, M)
    gen.full = False
    for eps in (0.0, 0.05, 0.3, 1.0, 2.0):
        lo, hi = gen.delta(eps)
        flo, fhi = full.delta(eps)
        assert lo <= fhi and flo <= hi, (eps, (lo, hi), (flo, fhi))
        assert hi - lo <= 4 * (fhi - flo) + 1e-15
    a = np.array([1e-6, 0.01, 0.2, 0.5, 0.9])
    f, e = gen.tradeoff(a)
    ff, fe = full.tradeoff(a)
    assert np.all(np.abs(f - ff) <= e + fe)


def test_bad_arguments_raise():
    for k in (0, 11, 2.5, -1):
        with pytest.raises(ValueError, match="k must be"):
            partial_law_for(1.0, 10, k)
    with pytest.raises(ValueError, match="M must be"):
        partial_law_for(1.0, 10.5, 3)
    with pytest.raises(ValueError, match="M must be"):
        PartialEpochLaw(law_for(1.0, 10), 9)


# ---------------------------------------------------------------- k = 1 against mpmath
def _ref_one_step(sigma, M, eps):
    """(remove, add) delta(eps) of N(0,1) vs (1-q) N(0,1) + q N(1/sigma, 1), q = 1/M, by quadrature."""
    with mp.workdps(30):
        q, s, ee = mp.mpf(1) / M, mp.mpf(sigma), mp.e ** mp.mpf(eps)

        def d1(x):
            return (1 - q) * mp.npdf(x) + q * mp.npdf(x - 1 / s)

        # LR(x) = 1 - q + q exp(x/s - 1/(2 s^2)) crosses e^eps at t, e^-eps at t2
        t = s * mp.log(1 + M * mp.expm1(eps)) + 1 / (2 * s)
        rem = mp.quad(lambda x: d1(x) - ee * mp.npdf(x), [t, t + 5, t + 20, mp.inf])
        z = 1 + M * mp.expm1(-eps)
        add = mp.mpf(0)
        if z > 0:
            t2 = s * mp.log(z) + 1 / (2 * s)
            add = mp.quad(lambda x: mp.npdf(x) - ee * d1(x), [-mp.inf, t2 - 20, t2 - 5, t2])
        return float(rem), float(add)


def _ref_one_step_tradeoff(sigma, M, a):
    """f(a) = Q1[x <= x_a] with Q0[x > x_a] = a, by quadrature of the H1 density."""
    with mp.workdps(25):
        q, s = mp.mpf(1) / M, mp.mpf(sigma)
        xa = -mp.sqrt(2) * mp.erfinv(2 * mp.mpf(a) - 1)  # Phi(x_a) = 1 - a
        d1 = lambda x: (1 - q) * mp.npdf(x) + q * mp.npdf(x - 1 / s)  # noqa: E731
        return float(mp.quad(d1, [-mp.inf, xa - 5, xa]))


@pytest.mark.parametrize("sigma, M", [(1.0, 100), pytest.param(2.0, 10, marks=pytest.mark.slow),
                                      pytest.param(0.5, 20, marks=pytest.mark.slow)])  # ~1.5 s each
def test_single_step_against_mpmath(sigma, M):
    law = partial_law_for(sigma, M, 1)
    checked = 0
    for eps in (0.0, 0.005, 0.02, 0.1, 0.5, 1.0, 2.0, 4.0):
        rem, add = _ref_one_step(sigma, M, eps)
        d = law.delta_directions(eps)
        assert d["remove"][0] <= rem <= d["remove"][1], (eps, rem, d)
        assert d["add"][0] <= add <= d["add"][1], (eps, add, d)
        lo, hi = law.delta(eps)
        assert lo <= max(rem, add) <= hi
        assert hi - lo <= 1e-11 + 1e-9 * hi  # and tight
        checked += (rem > 1e-12) + (add > 1e-12)
    assert checked >= 6
    tv, e = law.tv()
    rem0, _ = _ref_one_step(sigma, M, 0.0)
    assert abs(tv - rem0) <= e and e < 1e-12
    a = np.array([1e-9, 1e-5, 1e-3, 0.05, 0.3, 0.6, 0.9, 0.999])
    f, err = law.tradeoff(a)
    ref = np.array([_ref_one_step_tradeoff(sigma, M, x) for x in a])
    assert np.all(np.abs(f - ref) <= err), (f - ref, err)
    assert np.max(err) < 1e-11
    # curve boxes: f(a_lo) >= f_lo and f(a_hi) <= f_hi on ~12 boxes along the curve
    a_lo, a_hi, f_lo, f_hi = law.curve_points()
    idx = np.unique(np.linspace(0, a_lo.size - 1, 12).astype(int))
    for i in idx:
        if 1e-12 < a_lo[i] and a_hi[i] < 1 - 1e-12:
            assert _ref_one_step_tradeoff(sigma, M, a_lo[i]) >= f_lo[i]
            assert _ref_one_step_tradeoff(sigma, M, a_hi[i]) <= f_hi[i]


# ---------------------------------------------------------------- Monte Carlo of the pair
def _mc_log_lr(sigma, k, M, n, rng, h1):
    """n samples of log LR = log(1 + (S_k - k)/M) under H0 (h1=False) or the H1 mixture."""
    out = np.empty(n)
    r = k / M
    step = max(1, 4_000_000 // k)
    for i in range(0, n, step):
        m = min(step, n - i)
        z = rng.standard_normal((m, k))
        if h1:  # the example's step is among the first k (w.p. r): shift one coordinate
            z[rng.random(m) < r, 0] += 1.0 / sigma
        s = np.exp(z / sigma - 0.5 / sigma ** 2).sum(axis=1)
        out[i:i + m] = np.log1p((s - k) / M)
    return out


def _mc_delta(loss, eps):
    """mean and standard error of E[(1 - e^{eps - loss})^+] (loss under the direction's H1)."""
    v = np.maximum(-np.expm1(eps - loss), 0.0)
    return float(v.mean()), float(v.std() / math.sqrt(v.size))


MC_CASES = [  # Monte Carlo: the cheapest cases fast, the costlier ones slow
    (1.0, 100, 3, (0.0, 0.005, 0.02, 0.05)),
    pytest.param(1.0, 100, 10, (0.0, 0.01, 0.03, 0.1), marks=pytest.mark.slow),
    pytest.param(1.0, 100, 50, (0.0, 0.02, 0.05, 0.1, 0.2), marks=pytest.mark.slow),
    (0.5, 20, 5, (0.0, 0.05, 0.2, 0.5, 1.0, 2.0)),
]


@pytest.mark.parametrize("sigma, M, k, eps_list", MC_CASES)
def test_delta_against_monte_carlo(sigma, M, k, eps_list):
    law = partial_law_for(sigma, M, k)
    rng = np.random.default_rng(1000 * k + M)
    n = 1_000_000
    ell1 = _mc_log_lr(sigma, k, M, n, rng, True)    # remove: loss log LR under H1
    ell0 = -_mc_log_lr(sigma, k, M, n, rng, False)  # add: loss -log LR under H0
    for eps in eps_list:
        d = law.delta_directions(eps)
        for direction, loss in (("remove", ell1), ("add", ell0)):
            mc, se = _mc_delta(loss, eps)
            lo, hi = d[direction]
            assert lo - 4 * se <= mc <= hi + 4 * se, (direction, eps, mc, se, lo, hi)
            assert hi - lo < 1e-10
        # the MC estimate is informative for the larger direction at every eps asked
        mc_r, se_r = _mc_delta(ell1, eps)
        assert se_r < 0.05 * mc_r


def test_k_round_laws_agree_when_wrapped():
    # the three representations of the 10-round law, each wrapped for M = 100: one pair
    sigma, k, M = 1.0, 10, 100
    laws = [PartialEpochLaw(FourierLaw(sigma, float(k)), M), PartialEpochLaw(TiltedFourierLaw(sigma, float(k)), M),
            PartialEpochLaw(LogDomainLaw(sigma, k), M)]
    for eps in (0.0, 0.01, 0.05, 0.2, 0.5, 1.0):
        br = [law.delta_directions(eps) for law in laws]
        for direction in ("remove", "add"):
            los = [b[direction][0] for b in br]
            his = [b[direction][1] for b in br]
            assert max(los) <= min(his), (eps, direction, br)
            assert max(his) - min(los) < 1e-11
    a = np.array([1e-6, 1e-3, 0.1, 0.5, 0.9])
    res = [law.tradeoff(a) for law in laws]
    for i in range(3):
        for j in range(i):
            assert np.all(np.abs(res[i][0] - res[j][0]) <= res[i][1] + res[j][1])
    tvs = [law.tv() for law in laws]
    assert max(v + e for v, e in tvs) >= min(v - e for v, e in tvs)


def test_delta_non_decreasing_in_k():
    M = 100
    ks = [1, 2, 3, 5, 10, 20, 37, 50, 99, 100]
    laws = [partial_law_for(1.0, M, k) for k in ks]
    for eps in (0.0, 0.02, 0.1, 0.3, 1.0):
        br = [law.delta(eps) for law in laws]
        for (lo1, _), (_, hi2) in zip(br, br[1:]):
            assert lo1 <= hi2, (eps, br)
        mids = [0.5 * (lo + hi) for lo, hi in br]
        assert mids[-1] > mids[0] > 0.0  # not a flat (vacuous) sequence


# ---------------------------------------------------------------- loss lattices
def _composed_bracket(pmfs, delta_l, E, eps_list):
    out = {}
    for direction, (jmin, pu, inf_up, jdmin, pd, miss) in pmfs.items():
        s_up, g_up, out_up = compose(jmin, pu, E, 1e-14, 2 ** 22)
        s_dn, g_dn, out_dn = compose(jdmin, pd, E, 1e-14, 2 ** 22)
        up, dn = HockeyStick(s_up, g_up, delta_l), HockeyStick(s_dn, g_dn, delta_l)
        inf_tot = -math.expm1(E * math.log1p(-min(inf_up, 1.0)))
        out[direction] = [(dn(e) - out_dn - E * miss, up(e) + out_up + inf_tot) for e in eps_list]
    return out


@pytest.mark.parametrize("sigma, M, k, kind, delta_l",
                         [pytest.param(1.0, 100, 10, FourierLaw, 5e-5, marks=pytest.mark.slow),  # ~1.5 s
                          (0.5, 20, 5, LogDomainLaw, 2e-4)])
def test_lattices_mass_and_two_fold_composition(sigma, M, k, kind, delta_l):
    # spacing: the losses of 10 of 100 steps at sigma = 1 are ~0.04, so a fine lattice
    law = partial_law_for(sigma, M, k, "compose")
    assert isinstance(law.base, kind)
    pm = law.lattice_pmfs(delta_l)
    for direction, (_, pu, inf_up, _, pd, miss) in pm.items():
        up = float(pu.sum()) + inf_up
        assert 1.0 - 1e-12 <= up <= 1.0 + 1e-6, (direction, up)
        assert 1.0 - 1e-6 <= float(pd.sum()) <= 1.0 + 1e-12 and miss < 1e-8
    if isinstance(law.base, LogDomainLaw):  # the add loss never exceeds -log(1 - r): no mass at +inf
        assert pm["add"][2] == 0.0
        assert (pm["add"][0] + pm["add"][1].size - 1) * delta_l < -math.log1p(-k / M) + 2 * delta_l
    eps_list = [0.0, 0.02, 0.05, 0.1, 0.2]
    # E = 1: the lattice bracket contains the law's own
    one = _composed_bracket(pm, delta_l, 1, eps_list)
    for i, eps in enumerate(eps_list):
        d = law.delta_directions(eps)
        for direction in ("remove", "add"):
            lo, hi = one[direction][i]
            assert lo <= d[direction][1] and d[direction][0] <= hi
    # E = 2 against Monte Carlo of two independent epochs
    two = _composed_bracket(pm, delta_l, 2, eps_list)
    rng = np.random.default_rng(7 + k)
    n = 1_000_000
    ell1 = _mc_log_lr(sigma, k, M, n, rng, True) + _mc_log_lr(sigma, k, M, n, rng, True)
    ell0 = -(_mc_log_lr(sigma, k, M, n, rng, False) + _mc_log_lr(sigma, k, M, n, rng, False))
    for i, eps in enumerate(eps_list):
        for direction, loss in (("remove", ell1), ("add", ell0)):
            mc, se = _mc_delta(loss, eps)
            lo, hi = two[direction][i]
            assert lo - 4 * se <= mc <= hi + 4 * se, (direction, eps, mc, se, lo, hi)
            assert hi - lo < 0.03 * hi + 1e-9  # the bracket is informative
