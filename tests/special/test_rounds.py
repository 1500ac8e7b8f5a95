"""Inversions for M and N (eq. (4), M_exact), Table 1 and the numeric claims of the paper's
sections 3.1 and 5 ("Trade-off Functions for DP-SGD with Subsampling based on Random Allocation:
Tight Upper and Lower Bounds"; docs/theorem31.md)."""
import numpy as np
import oracle
import pytest
from paper_tables import TABLE1

import dpbounds
from dpbounds import ufuncs


def sig3(x: float) -> float:
    return float(f"{x:.2e}")


@pytest.mark.parametrize("coefficient", ["simplified", "exact"])
@pytest.mark.parametrize("sigma", [0.5, 0.75, 1.0, 1.5, 2.0])
def test_table1(coefficient, sigma):
    m_cf = dpbounds.rounds_closed_form(sigma, 0.01, coefficient)
    m_ex = dpbounds.rounds_required(sigma, 0.01, coefficient)
    n = dpbounds.min_dataset_size(sigma, m_ex)
    assert (sig3(m_cf), sig3(m_ex), sig3(n)) == TABLE1[coefficient][sigma]
    # Table 1 caption: the closed form is within 0.1% (upper rows) / 0.2% (lower rows)
    assert 0 < m_ex / m_cf - 1 < (0.001 if coefficient == "simplified" else 0.002)
    # both readings of (2) give the same Table 1 (the readings: docs/theorem31.md)
    assert dpbounds.rounds_required(sigma, 0.01, coefficient, "target") == m_ex


def test_table1_cli_output_matches_paper():
    from dpbounds.cli._core import table1_rows

    for row in table1_rows():
        expect = TABLE1[row["coefficient"]][row["sigma"]]
        got = (sig3(row["rounds_closed_form"]), sig3(row["rounds_exact"]), sig3(row["min_dataset_size"]))
        assert got == expect


@pytest.mark.parametrize("coefficient", ["simplified", "exact"])
def test_closed_form_accuracy(rng, coefficient, record_accuracy):
    s = 10 ** rng.uniform(np.log10(0.07), 3, 200)
    d = 10 ** rng.uniform(-12, -0.01, 200)
    got = dpbounds.rounds_closed_form(s, d, coefficient)
    worst = 0.0
    for g, si, di in zip(got, s, d):
        ref = oracle.rounds_closed_form(si, di, coefficient)
        if ref > 1.7e308:
            assert g == np.inf
        else:
            e = oracle.rel_error(g, ref)
            assert e <= 1e-14, (si, di)
            worst = max(worst, e)
    record_accuracy(f"rounds_closed_form_{coefficient}", worst, "relative",
                    f"sigma in [0.07, 1e3], delta in [1e-12, 0.98], {s.size} points")


def _feasible_oracle(s, d, m, coefficient, mode):
    return oracle.theorem31_valid(s, m, d if mode == "target" else None, coefficient) and (
        oracle.delta_min(s, m, coefficient) <= d)


@pytest.mark.parametrize("coefficient", ["simplified", "exact"])
@pytest.mark.parametrize("mode", ["delta_min", "target"])
def test_rounds_required_is_minimal(rng, coefficient, mode):
    s = 10 ** rng.uniform(np.log10(0.4), np.log10(5), 40)
    d = 10 ** rng.uniform(-5, -1.5, 40)
    m = dpbounds.rounds_required(s, d, coefficient, mode)
    kind = 1 if coefficient == "exact" else 0
    tested = 0
    for si, di, mi in zip(s, d, m):
        if not np.isfinite(mi):
            continue
        tested += 1
        # exactly minimal w.r.t. our own delta_min ...
        st = getattr(ufuncs, f"theorem31_status_{coefficient}")(si, mi, di if mode == "target" else np.nan)
        assert st == 0 and ufuncs.delta_min_exact(si, mi) <= di if kind else ufuncs.delta_min_simplified(si, mi) <= di
        prev = mi - 1
        if prev >= 3:
            st_prev = getattr(ufuncs, f"theorem31_status_{coefficient}")(si, prev, di if mode == "target" else np.nan)
            dprev = (ufuncs.delta_min_exact if kind else ufuncs.delta_min_simplified)(si, prev)
            assert st_prev != 0 or dprev > di
        # ... and w.r.t. the mpmath oracle (skip exact ties at 1e-12)
        if abs(oracle.delta_min(si, mi, coefficient) / di - 1) > 1e-12:
            assert _feasible_oracle(si, di, mi, coefficient, mode)
            if prev >= 3:
                assert not _feasible_oracle(si, di, prev, coefficient, mode)
    assert tested >= 20


@pytest.mark.parametrize("sigma,delta,expect", [
    (1.0, 1e-4, 11_400_659_560),  # the paper's section 5.2: M_exact at delta = 1e-4
    (0.5, 1e-3, None),
    (0.4, 1e-3, None),  # M ~ 1.3e14
    (0.45, 1e-4, None),  # M ~ 2.5e14
])
def test_rounds_required_large_m(sigma, delta, expect):
    m = dpbounds.rounds_required(sigma, delta, coefficient="simplified")  # the paper's reading
    assert m >= 1e10
    if expect is not None:
        assert m == expect
    assert _feasible_oracle(sigma, delta, m, "simplified", "delta_min")
    assert not _feasible_oracle(sigma, delta, m - 1, "simplified", "delta_min")


def test_section_5_claims():
    # the paper's section 5 (coefficient as stated): delta = 1e-4, sigma = 1 -> M ~ 1.14e10 (via (4)); E = 4, delta <= 1/400 -> M ~ 1.82e7
    assert sig3(dpbounds.rounds_closed_form(1.0, 1e-4, "simplified")) == 1.14e10
    assert sig3(dpbounds.rounds_closed_form(1.0, 1 / 400, "simplified")) == 1.82e7
    assert sig3(dpbounds.rounds_required(1.0, 1 / 400, "simplified")) == 1.82e7
    # rule of thumb M ~ 114/delta^2 at sigma = 1
    for d in (1e-2, 1e-4):
        assert round(dpbounds.rounds_closed_form(1.0, d, "simplified") * d**2) == 114
    # sqrt(E) scaling: delta = delta_tgt/sqrt(E) gives M ~ 1.14e6 E
    for e in (4, 9, 100):
        assert dpbounds.rounds_closed_form(1.0, 0.01 / np.sqrt(e), "simplified") / (1.14e6 * e) == pytest.approx(1, abs=0.005)


def test_section_31_ratio_ranges():
    # delta_bound/delta_exact ~ 1 + 2B coef sqrt(2 pi) over sigma in [0.75, 2]:
    # [10.7, 19.9] with the exact coefficient, [18.8, 181.5] with the simplified one
    s = np.linspace(0.75, 2, 20001)
    for f, lo, hi in ((ufuncs.coef_exact, 10.7, 19.9), (ufuncs.coef_simplified, 18.8, 181.5)):
        r = 1 + 2 * dpbounds.BERRY_ESSEEN_CONSTANT * f(s) * np.sqrt(2 * np.pi)
        assert (round(r.min(), 1), round(r.max(), 1)) == (lo, hi)


@pytest.mark.parametrize("sigma,delta_min_mode,target_mode", [
    (4.0, 41_329, 85_507),
    (4.5, 63_865, 72_018_700),
    (4.6, 69_318, np.inf),
])
def test_validity_readings_differ_for_large_sigma(sigma, delta_min_mode, target_mode):
    # the two readings of condition (2) (docs/theorem31.md), exact coefficient, delta = 0.01
    assert dpbounds.rounds_required(sigma, 0.01, "exact", "delta_min") == delta_min_mode
    assert dpbounds.rounds_required(sigma, 0.01, "exact", "target") == target_mode


def test_rounds_required_epochs():
    m4 = dpbounds.rounds_required(1.0, 0.01, epochs=4)
    assert m4 == dpbounds.rounds_required(1.0, dpbounds.per_epoch_delta(0.01, 4))
    assert m4 == dpbounds.rounds_required([1.0], [0.01], epochs=[4])[0]
    assert dpbounds.compose_delta(dpbounds.delta_bound(1.0, m4), 4) <= 0.01


def test_rounds_required_no_solution_is_inf():
    assert dpbounds.rounds_required(0.2, 1e-6) == np.inf  # M* beyond 2**53
    assert dpbounds.rounds_required(8.0, 0.01, validity_at="target") == np.inf


def test_min_dataset_size():
    assert dpbounds.min_dataset_size(1.0, 1140369) == pytest.approx(11403690, rel=1e-15, abs=0)
    assert dpbounds.min_dataset_size(0.75, 3101237, clip_norm=2.0, noise_ratio=0.2) == pytest.approx(23259277.5, rel=1e-15, abs=0)
    with pytest.raises(ValueError, match="noise_ratio"):
        dpbounds.min_dataset_size(1.0, 100, noise_ratio=0.0)
