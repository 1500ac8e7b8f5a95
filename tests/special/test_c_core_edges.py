"""Edges of the C core that a comment in csrc/ names: each guard keeps an IEEE flag (which numpy
turns into a warning) or a wrong value out of a result that is right without it."""
import numpy as np

from dpbounds import ufuncs

A = np.concatenate([[0.0, 1e-300, 1e-10], np.linspace(0.0, 1.0, 2001), [1 - 1e-16, 1.0]])


def test_edgeworth_coefficient_in_logs_raises_no_flag():
    # csrc/dpb_edgeworth.c (ew_make): at sigma = 0.0382 the skewness (3 + eps) sqrt(eps) overflows
    # (eps = e^{1/sigma^2} - 1 ~ 1e297) though c_n = gamma1 / (6 sqrt n) is formed in logs
    with np.errstate(all="raise", under="ignore"):
        f = ufuncs.tradeoff_edgeworth(A, 0.0382, 1233.0)
        st = ufuncs.edgeworth_status(A, 0.0382, 1233.0)
    assert np.all(np.isnan(f) == (st != 0)) and np.all(st[1:-1] != 1)


def test_edgeworth_inverse_at_a_branch_edge_raises_no_flag():
    # csrc/dpb_edgeworth.c (the inverse of p_M): where p' = 0 at a branch edge, Newton's f/p'
    # would divide by zero; sigma = 0.77, M = 3 puts the start value there
    a = np.concatenate([A, np.random.default_rng(0).uniform(0.0, 1.0, 20000)])
    with np.errstate(all="raise", under="ignore"):
        f = ufuncs.tradeoff_edgeworth(a, 0.77, 3.0)
        st = ufuncs.edgeworth_status(a, 0.77, 3.0)
    assert np.all(np.isnan(f) == (st != 0))
    ok = ~np.isnan(f)
    assert np.all((f[ok] >= 0.0) & (f[ok] <= 1.0))


def test_multi_epoch_tradeoff_at_huge_epochs_raises_no_flag():
    # csrc/dpb_tradeoff.c: (1 - delta)^E underflows to 0, decided without E log(1 - delta), which
    # overflows at E = 1.8e308 once log(1 - delta) < -1 (delta > 0.63)
    with np.errstate(all="raise", under="ignore"):
        for delta in (0.69, 0.99, 1 - 2.0 ** -53):
            assert ufuncs.multi_epoch_tradeoff(0.1, delta, 1.7976931348623157e308) == 0.0
        assert ufuncs.multi_epoch_tradeoff(0.1, 0.69, 5e-324) == 0.9
