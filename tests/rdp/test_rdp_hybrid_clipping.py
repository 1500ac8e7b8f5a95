"""Hybrid clipping, coordinate-wise and twice sampling ("Geometry of Sensitivity", CCS 2023): every
DERIVED form checked against each statement of the paper and against direct numerical integration."""
from __future__ import annotations

import math

import numpy as np
import pytest

import dpbounds.rdp as R


def test_hybrid_noise_paper_special_cases():
    rho = 0.3
    # equal ranks r = d/m: optimal power d ||c||_1^2 / m; composition d ||c||_2^2 (times 1/(2 rho))
    c, d, m = np.array([1.0, 2.0, 0.5, 3.0]), 40, 4
    res = R.hybrid_noise(c, [d // m] * m, rho)
    assert res.power == pytest.approx(d * c.sum() ** 2 / m / (2 * rho), rel=1e-14)
    assert res.power_composition == pytest.approx(d * (c ** 2).sum() / (2 * rho), rel=1e-14)
    assert res.power_isotropic == pytest.approx(d * (c ** 2).sum() / (2 * rho), rel=1e-14)
    # ranks r, ..., r, d-(m-1)r with equal c: c^2 (sqrt(d-(m-1)r) + (m-1) sqrt r)^2
    cc, r, d, m = 0.7, 3, 50, 5
    res = R.hybrid_noise([cc] * m, [r] * (m - 1) + [d - (m - 1) * r], rho)
    assert res.power == pytest.approx(cc ** 2 * (math.sqrt(d - (m - 1) * r) + (m - 1) * math.sqrt(r)) ** 2 / (2 * rho), rel=1e-14)


def test_hybrid_noise_meets_constraint_and_is_optimal():
    rng = np.random.default_rng(1)
    c, rk, rho = np.array([1.0, 0.3, 2.0]), np.array([5, 1, 10]), 0.2
    res = R.hybrid_noise(c, rk, rho)
    assert np.sum(c ** 2 / res.variances) == pytest.approx(2 * rho, rel=1e-14)   # eps(a) = a rho exactly
    assert res.power <= res.power_isotropic and res.power <= res.power_composition
    for _ in range(200):   # any other allocation meeting the constraint costs more
        w = rng.uniform(0.1, 10, 3)
        var = c ** 2 / (2 * rho * w / w.sum())
        assert np.sum(rk * var) >= res.power * (1 - 1e-12)


def test_hypercube_is_rank_one_hybrid():
    v = np.array([0.5, 1.0, 4.0])
    a, b = R.hypercube_noise(v, 0.1), R.hybrid_noise(v, [1, 1, 1], 0.1)
    np.testing.assert_allclose(a.variances, b.variances, rtol=1e-14)
    assert a.power == pytest.approx(v.sum() ** 2 / 0.2, rel=1e-14)
    np.testing.assert_allclose(a.variances / v, a.variances[0] / v[0], rtol=1e-14)  # variance proportional to V_l


def test_coordinatewise_reduces_to_inputwise():
    # d0 -> 1 (c_inf >= c_p): the input-wise Poisson-subsampled Gaussian (the paper, Theorem 5.3 remark)
    for a in (2.0, 8.0, 32.0):
        assert R.coordinatewise_poisson(a, 1.5, 0.01, 1.0, 1.0) == pytest.approx(R.poisson_gaussian(a, 1.5, 0.01), rel=1e-14)


def _psg_sum(a, sigma, q, s):
    return sum(R.poisson_gaussian(a, sigma / abs(x), q) for x in s if x != 0)


@pytest.mark.parametrize("p", [1.0, 2.0])
def test_coordinatewise_vertex_is_the_maximum(p):
    rng = np.random.default_rng(7)
    cp, ci, sigma, q, a = 1.0, 0.35, 1.0, 0.1, 6.0
    best = 0.0
    for _ in range(400):
        s = rng.uniform(0, ci, 5)
        s *= min(1.0, cp / np.sum(s ** p) ** (1 / p))
        best = max(best, _psg_sum(a, sigma, q, s))
    v = R.coordinatewise_poisson(a, sigma, q, cp, ci, p=p)
    k = math.floor((cp / ci) ** p)
    vertex = [ci] * k + [(cp ** p - k * ci ** p) ** (1 / p)]
    assert v == pytest.approx(_psg_sum(a, sigma, q, vertex), rel=1e-12)
    assert best <= v * (1 + 1e-12)
    assert v <= R.coordinatewise_poisson(a, sigma, q, cp, ci, p=p, form="relaxed") * (1 + 1e-12)


def test_theorem53_limit():
    # c_inf -> 0 at fixed c_2: eps -> a q^2 c2^2/(2 sigma^2)   (derived limit)
    a, sigma, q, c2 = 4.0, 1.0, 0.05, 1.0
    lim = R.coordinatewise_limit(a, sigma, q, c2)
    errs = [abs(R.coordinatewise_poisson(a, sigma, q, c2, ci) / lim - 1) for ci in (0.1, 0.01, 0.001)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 2e-3
    # input-wise at small q grows like (e^{2 tau} - 1)/2 instead of tau
    tau = c2 ** 2 / (2 * sigma ** 2)
    assert R.poisson_gaussian(a, sigma / c2, 1e-5) == pytest.approx(a * 1e-10 * math.expm1(2 * tau) / 2, rel=1e-4)


def _twice_quadrature(a, sigma, q1, q2, s, direction):
    """D_a by tensor Gauss-Hermite quadrature over the two coordinates (z ~ Q = N(0, sigma^2 I))."""
    x, w = np.polynomial.hermite_e.hermegauss(160)
    w = w / w.sum()
    Z1, Z2 = np.meshgrid(x * sigma, x * sigma, indexing="ij")
    W = np.outer(w, w)
    L = 1.0
    for zl, sl in ((Z1, s[0]), (Z2, s[1])):
        L = L * ((1 - q2) + q2 * np.exp((sl * zl - sl * sl / 2) / sigma ** 2))
    ratio = (1 - q1) + q1 * L                     # P/Q
    if direction == "PQ":
        m = np.sum(W * ratio ** a)
    else:
        m = np.sum(W * ratio ** (1 - a))          # E_Q[(Q/P)^{a-1}] = E_Q[(P/Q)^{1-a}]
    return math.log(m) / (a - 1)


@pytest.mark.parametrize("a", [2, 3, 5, 8])
@pytest.mark.parametrize("q1,q2", [(0.1, 0.1), (0.5, 0.1), (0.1, 0.5), (0.5, 0.5)])
def test_twice_sampling_formula_and_direction(a, q1, q2):
    sigma, cp, ci = 1.0, 1.0, 0.8          # vertex: one coordinate at 0.8, one at 0.6
    v = R.twice_sampling(float(a), sigma, q1, q2, cp, ci)
    pq = _twice_quadrature(a, sigma, q1, q2, (0.8, 0.6), "PQ")
    qp = _twice_quadrature(a, sigma, q1, q2, (0.8, 0.6), "QP")
    assert v == pytest.approx(pq, rel=1e-9)        # the closed expansion is the exact (P||Q) divergence
    assert qp <= v * (1 + 1e-9)                    # and (Q||P) is not larger on this grid


def test_twice_sampling_relations():
    sigma, cp, ci = 1.0, 1.0, 0.1
    for a in (2.0, 4.0, 8.0, 8.5):
        q1, q2 = 0.1, 0.1
        v = R.twice_sampling(a, sigma, q1, q2, cp, ci)
        # q1 = 1 -> Theorem 7 at rate q2;  q2 = 1 -> Poisson Gaussian at rate q1 with sensitivity ||s||_2
        assert R.twice_sampling(a, sigma, 1.0, q2, cp, ci) == pytest.approx(R.coordinatewise_poisson(a, sigma, q2, cp, ci), rel=1e-12)
        assert R.twice_sampling(a, sigma, q1, 1.0, cp, ci) == pytest.approx(R.poisson_gaussian(a, sigma / cp, q1), rel=1e-9) if a == int(a) else True
        # above Theorem 7 at rate q1 q2 (the paper), below the general Poisson bound over Theorem 7 at q2
        assert R.coordinatewise_poisson(a, sigma, q1 * q2, cp, ci) <= v
        gen = R.poisson_general(a, lambda o: R.coordinatewise_poisson(o, sigma, q2, cp, ci), q1)
        assert v <= gen
        # decreasing in q1 (the paper)
        assert R.twice_sampling(a, sigma, 0.05, q2, cp, ci) < v


def test_poisson_general_tight_equals_psg():
    # tight form with Gaussian base = the exact Poisson formula
    for a in (2.0, 5.0, 16.0):
        assert R.poisson_general(a, lambda o: R.gaussian(o, 2.0), 0.05, tight=True) == pytest.approx(
            R.poisson_gaussian(a, 2.0, 0.05), rel=1e-12)
        assert R.poisson_general(a, lambda o: R.gaussian(o, 2.0), 0.05) >= R.poisson_gaussian(a, 2.0, 0.05)
