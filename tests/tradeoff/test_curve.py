"""TradeoffCurve: evaluation, inverse, symmetrisation, (eps, delta) and mu-GDP conversions."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpbounds import tradeoff as T
from dpbounds.curve import TradeoffCurve


def test_gaussian_curve_conversions():
    c = TradeoffCurve.gaussian(1.0, n=4001)
    assert c.is_convex()
    # the PL interpolant lies above the convex G_mu: its implied mu is <= the true mu,
    # and its delta(eps) <= the true delta(eps); both agree to interpolation error
    # (f_i near 1 is stored in double, so Phi^{-1}(f_i) is resolved only to ~1e-6 there)
    assert c.mu() == pytest.approx(1.0, abs=1e-5)
    for eps in (0.0, 0.5, 1.0, 3.0):
        assert c.delta(eps) == pytest.approx(T.gdp_delta(eps, 1.0), abs=1e-5)
        assert c.delta(eps) <= T.gdp_delta(eps, 1.0) + 1e-15
    assert c.epsilon(1e-3) == pytest.approx(T.gdp_epsilon(1e-3, 1.0), rel=2e-3)
    assert c.max_gap() == pytest.approx(T.gaussian_max_gap(1.0), abs=1e-7)
    assert T.sep(c) == pytest.approx(T.sep_gaussian(1.0), abs=1e-7)


def test_evaluate_and_inverse():
    c = TradeoffCurve([0.0, 0.2, 0.5, 1.0], [1.0, 0.5, 0.2, 0.0])
    assert c(0.1) == pytest.approx(0.75)
    assert c.inverse(0.75) == pytest.approx(0.1)
    assert c.inverse(c(0.35)) == pytest.approx(0.35)
    np.testing.assert_allclose(c(np.array([0.0, 1.0])), [1.0, 0.0])


def test_f0delta_curve():
    d = 0.1
    c = TradeoffCurve([0.0, 1 - d, 1.0], [1 - d, 0.0, 0.0])
    assert c.is_symmetric() and c.is_convex()
    assert c.delta(0.0) == pytest.approx(d)
    assert c.delta(5.0) == pytest.approx(d)
    assert c.epsilon(d) == 0.0
    assert c.epsilon(d / 2) == np.inf
    assert c.mu() == np.inf
    assert c.inverse(0.95) == 0.0


def test_symmetrize_clt_curve():
    f = TradeoffCurve.from_function(lambda g: T.tradeoff_clt(g, 1.0, 30))
    assert not f.is_symmetric()
    s = f.symmetrize()
    assert s.is_convex() and s.is_symmetric()
    pts = np.linspace(0, 1, 501)
    # below min{f, f^-1} and the largest such convex function: touches it somewhere
    m = np.minimum(f(pts), f.inverse(pts))
    assert np.all(s(pts) <= m + 1e-12)
    assert np.min(m - s(pts)) < 1e-12
    assert s.delta(0.0) >= f.delta(0.0) - 1e-15


@settings(deadline=None, max_examples=40)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=12), st.floats(0.0, 0.3))
def test_symmetrize_random_pl_curves(xs, shrink):
    a = np.unique(np.asarray(xs))
    a = a[np.append(True, np.diff(a) > 1e-6)]   # well-separated vertices
    if a.size < 2:
        return
    f = np.minimum.accumulate((1 - a) * (1 - shrink) ** np.arange(1, a.size + 1))
    c = TradeoffCurve(a, f)
    s = c.symmetrize()
    assert s.is_convex(tol=1e-9)
    assert s.is_symmetric(tol=1e-9)
    pts = np.linspace(0, 1, 201)
    assert np.all(s(pts) <= np.minimum(c(pts), c.inverse(pts)) + 1e-12)


def test_mu_of_tensor_curve_is_inf_and_gdp_monotone():
    c = TradeoffCurve.from_function(lambda g: T.gaussian_f0delta_tradeoff(g, 1.0, 0.01))
    assert c.mu() == np.inf
    g2 = TradeoffCurve.gaussian(2.0)
    g1 = TradeoffCurve.gaussian(1.0)
    assert g2.mu() > g1.mu()


def test_validation():
    with pytest.raises(ValueError, match="f"):
        TradeoffCurve([0.0, 0.5, 1.0], [1.0, 0.6, 0.0])   # above 1 - a
    with pytest.raises(ValueError, match="f"):
        TradeoffCurve([0.0, 0.5, 1.0], [0.4, 0.45, 0.0])  # increasing
    with pytest.raises(ValueError, match="a"):
        TradeoffCurve([0.0, 1.5], [1.0, 0.0])


def test_plot_optional():
    mpl = pytest.importorskip("matplotlib", reason="plotting is an optional extra")
    mpl.use("Agg")
    ax = TradeoffCurve.gaussian(1.0).plot()
    assert len(ax.lines) == 2


def test_import_does_not_import_matplotlib():
    import subprocess
    import sys
    code = "import sys, dpbounds.curve, dpbounds.tradeoff; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
