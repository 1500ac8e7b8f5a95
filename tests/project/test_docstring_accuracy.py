"""Accuracy claims of public docstrings that no other accuracy test measured (tests/docstring_claims.py)."""
from __future__ import annotations

import mpmath as mp
import numpy as np
import oracle

import dpbounds


def test_gaussian_f0delta_tradeoff_vs_mpmath(record_accuracy) -> None:  # type: ignore[no-untyped-def]
    # (G_mu (x) f_{0,delta})(a) = (1 - delta) G_mu(a / (1 - delta)), the quotient and product exact
    # in mpmath: "that of gaussian_tradeoff (2e-13) plus 2 ulp"
    worst, checked = 0.0, 0
    for a in (1e-300, 1e-100, 1e-16, 1e-8, 1e-3, 0.1, 0.4, 0.9):
        for mu in (1e-8, 0.01, 0.5, 1.0, 3.0, 10.0, 30.0):
            for d in (1e-12, 1e-5, 0.01, 0.05, 0.5):
                if a >= 1 - d:
                    assert dpbounds.gaussian_f0delta_tradeoff(a, mu, d) == 0.0
                    continue
                with mp.workdps(40):
                    x = mp.mpf(a) / (1 - mp.mpf(d))
                    ref = (1 - mp.mpf(d)) * oracle.gaussian_tradeoff(x, mu, dps=40)
                if ref < mp.mpf("1e-300"):
                    continue
                got = dpbounds.gaussian_f0delta_tradeoff(a, mu, d)
                worst = max(worst, oracle.rel_error(got, ref))
                checked += 1
    assert checked > 200
    record_accuracy("dpbounds.gaussian_f0delta_tradeoff", worst, "relative",
                    "a in [1e-300, 0.9] x mu in [1e-8, 30] x delta in [1e-12, 0.5], where the value >= 1e-300")
    assert worst <= 2e-13 + 4.5e-16, worst
    assert np.isfinite(worst)
