"""The parameter planner (dpbounds.plan, ``dpbounds plan``).

Every front point is checked by independent calls: the target holds at M and fails at M - 1
(Theorem 3.1 through ``theorem31(...).valid``; the exact accountant through a fresh
RandomAllocationAccountant and, at epsilon = 0, through the trade-off curve's maximal gap
``exact_max_gap``, a different computation of the same delta(0)).  The optimum is compared with
every front point and with neighbouring sigmas whose M is found independently.
"""
from __future__ import annotations

import dataclasses
import doctest
import functools
import json
import math

import numpy as np
import pytest
from cli_harness import run

import dpbounds
import dpbounds.planner
from dpbounds import (
    DPBoundsError,
    RandomAllocationAccountant,
    compose_delta,
    delta_bound,
    exact_max_gap,
    per_epoch_delta,
    rounds_required,
    theorem31,
)
from dpbounds.cli._plan import parse_sigma


def admits31(sigma, m, delta, epochs, coefficient):
    """Theorem 3.1 certifies the per-epoch target at (sigma, M), checked through theorem31()."""
    if m < 3:
        return False
    return theorem31(sigma, m, delta=per_epoch_delta(delta, epochs), coefficient=coefficient).valid


def admits_exact(sigma, m, epsilon, delta, epochs):
    acc = RandomAllocationAccountant(sigma, int(m), epochs=epochs)
    return acc.get_delta_bracket(epsilon).upper <= delta


def objective(p, sigma, m):
    return p.clip_norm * sigma * m / p.dataset_size if p.objective == "noise" else m


# ---------------------------------------------------------------- the paper's point
@pytest.mark.parametrize("coefficient,printed", [("simplified", 1.14e6), ("exact", 4.30e5)])
def test_papers_point_is_on_the_front(coefficient, printed):
    # Table 1 of the paper: sigma = 1, delta = 0.01, one epoch; the upper rows (the theorem as
    # stated, "simplified") print M = 1.14e6, the lower rows (exact third moment) 4.30e5
    p = dpbounds.plan(11_400_000, delta=0.01, epochs=1, coefficient=coefficient)
    assert 1.0 in p.sigma.tolist()                      # the default grid contains sigma = 1
    i = p.sigma.tolist().index(1.0)
    m = p.rounds[i]
    assert m == rounds_required(1.0, 0.01, coefficient=coefficient)
    assert admits31(1.0, m, 0.01, 1, coefficient) and not admits31(1.0, m - 1, 0.01, 1, coefficient)
    assert abs(m / printed - 1) < 0.005                 # the printed three digits
    assert p.batch_size[i] == 11_400_000 / m and p.noise[i] == 1.0 * 1.0 * m / 11_400_000
    assert p.coefficient == coefficient and f"coefficient '{coefficient}'" in repr(p)


# ---------------------------------------------------------------- Theorem 3.1 fronts
CASES31 = [
    dict(dataset_size=11_400_000, delta=0.01),
    dict(dataset_size=11_400_000, delta=0.01, coefficient="simplified"),
    dict(dataset_size=10 ** 9, delta=1e-3, epochs=4, clip_norm=2.5),
    dict(dataset_size=10 ** 8, delta=0.05, epochs=3, coefficient="simplified", objective="batch_size"),
    dict(dataset_size=500_000, delta=0.02, objective="batch_size"),
]


@pytest.mark.parametrize("kw", CASES31)
def test_theorem31_front_is_admissible_and_minimal(kw):
    p = dpbounds.plan(**kw)
    e, c, n = p.epochs, p.coefficient, p.dataset_size
    assert p.admissible.any() and (~p.admissible).any()   # the cases cover both
    for s, m, b, z, d, why in zip(p.sigma, p.rounds, p.batch_size, p.noise, p.achieved_delta, p.reasons):
        if math.isfinite(m):
            assert why == "" and 3 <= m <= n and m == int(m)
            assert admits31(s, m, p.delta, e, c)
            assert m == 3 or not admits31(s, m - 1, p.delta, e, c)
            assert b == n / m and z == p.clip_norm * s * m / n
            assert d == compose_delta(delta_bound(s, m, coefficient=c), e)
        else:
            # none: not even M = N is certified (the conditions are monotone in M)
            assert why and not admits31(s, n, p.delta, e, c)
            assert math.isnan(b) and math.isnan(z) and math.isnan(d)


@pytest.mark.parametrize("kw", CASES31)
def test_theorem31_optimum_is_best_and_a_local_minimum(kw):
    p = dpbounds.plan(**kw)
    o = p.optimum
    assert o is not None and o.notes == ()
    assert o.rounds == rounds_required(o.sigma, p.delta, coefficient=p.coefficient, epochs=p.epochs)
    assert o.noise == p.clip_norm * o.sigma * o.rounds / p.dataset_size
    best = objective(p, o.sigma, o.rounds)
    ok = p.admissible
    assert all(best <= objective(p, s, m) for s, m in zip(p.sigma[ok], p.rounds[ok]))
    # strictly better than the best grid point somewhere: the refinement did something
    assert best < min(objective(p, s, m) for s, m in zip(p.sigma[ok], p.rounds[ok]))
    # a local minimum: neighbouring sigmas (their M found independently) do no better
    for h in (1e-2, 3e-2, 1e-1):
        for s in (o.sigma * (1 - h), o.sigma * (1 + h)):
            m = rounds_required(s, p.delta, coefficient=p.coefficient, epochs=p.epochs)
            assert objective(p, s, m) >= best, (s, m)
    # the refinement ends at the smallest sigma of its M's step
    assert not admits31(o.sigma / (1 + p.rtol), o.rounds, p.delta, p.epochs, p.coefficient)


# ---------------------------------------------------------------- the exact accountant
EXACT = [
    dict(dataset_size=10_000, epsilon=1.0, delta=1e-3, sigma=(1.0, 1.25, 1.6)),
    dict(dataset_size=10_000, epsilon=0.5, delta=1e-4, epochs=2, sigma=(1.0, 1.5)),
    dict(dataset_size=12, epsilon=1.0, delta=1e-3, sigma=(1.0, 1.25)),          # M > N at 1.0
]

# each exact plan takes seconds: the first in the fast suite, the others in the slow tier
_EXACT_IDS = [i if i == 0 else pytest.param(i, marks=pytest.mark.slow) for i in range(len(EXACT))]


@functools.lru_cache(maxsize=None)
def exact_plan(i):
    """The plans of EXACT, computed once for the tests below (plan is a pure function)."""
    return dpbounds.plan(accountant="exact", rtol=1e-2, **EXACT[i])


@pytest.mark.parametrize("i", _EXACT_IDS)
def test_exact_front_is_admissible_and_minimal(i):
    p = exact_plan(i)
    eps, e = p.epsilon, p.epochs
    for s, m, why in zip(p.sigma, p.rounds, p.reasons):
        if math.isfinite(m):
            assert why == "" and 2 <= m <= p.dataset_size
            assert admits_exact(s, m, eps, p.delta, e)
            assert m == 2 or not admits_exact(s, m - 1, eps, p.delta, e)
        else:
            assert why.startswith("not even M = N") and not admits_exact(s, p.dataset_size, eps, p.delta, e)
    assert np.array_equal(p.theorem31_rounds, rounds_required(p.sigma, p.delta, epochs=e))
    with np.errstate(invalid="ignore"):
        assert np.array_equal(p.batch_gain, p.theorem31_rounds / p.rounds, equal_nan=True)


@pytest.mark.parametrize("i", _EXACT_IDS[:2])
def test_exact_optimum_is_best_and_a_local_minimum(i):
    p = exact_plan(i)
    o = p.optimum
    eps, d, e = p.epsilon, p.delta, p.epochs
    best = objective(p, o.sigma, o.rounds)
    ok = p.admissible
    assert all(best <= objective(p, s, m) for s, m in zip(p.sigma[ok], p.rounds[ok]))
    assert admits_exact(o.sigma, o.rounds, eps, d, e) and not admits_exact(o.sigma, o.rounds - 1, eps, d, e)
    # sigma is the smallest of its M's step (to rtol), so just below it needs more rounds ...
    assert not admits_exact(o.sigma / (1 + p.rtol), o.rounds, eps, d, e)
    h = 0.02
    assert (1 - h) * (o.rounds + 1) > o.rounds                 # ... which costs more noise,
    # and just above it, inside the grid, no fewer rounds suffice (so the noise grows there)
    if i == 0:
        assert o.sigma * (1 + h) <= p.sigma[-1]
        assert not admits_exact(o.sigma * (1 + h), o.rounds - 1, eps, d, e)
    # the best grid point is the last: the plan says a larger sigma may do better
    assert any("grid's last" in note for note in o.notes)


def test_exact_factor_at_the_papers_point():
    # Theorem 3.1 certifies f >= 1 - a - delta, i.e. (0, delta)-DP: the consistent exact target is
    # epsilon = 0, whose delta is the total variation distance of the dominating pair
    p = dpbounds.plan(11_400_000, delta=0.01, epsilon=0.0, accountant="exact", coefficient="simplified", sigma=1.0)
    m = p.rounds[0]
    assert exact_max_gap(1.0, m) <= 0.01 < exact_max_gap(1.0, m - 1)      # a second computation of delta(0)
    assert p.theorem31_rounds[0] == rounds_required(1.0, 0.01, coefficient="simplified")
    assert p.batch_gain[0] == p.theorem31_rounds[0] / m and p.batch_gain[0] > 100
    assert p.optimum.rounds == m and any("one sigma" in note for note in p.optimum.notes)


# ---------------------------------------------------------------- the result object
def test_plan_object():
    p = dpbounds.plan(11_400_000, delta=0.01, sigma=[0.5, 1.0, 2.0, 30.0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.delta = 0.1
    with pytest.raises(ValueError):
        p.rounds[0] = 1.0                                   # read-only arrays
    assert [bool(r) for r in p.reasons] == [not a for a in p.admissible]
    assert "needs M = " in p.reasons[0] and "> dataset_size = 11400000" in p.reasons[0]
    d = p.to_dict()
    text = json.dumps(d, allow_nan=False)                   # valid JSON: NaN as null
    assert json.loads(text)["front"][1]["rounds"] == int(p.rounds[1])
    assert d["front"][0]["rounds"] is None and d["optimum"]["rounds"] == p.optimum.rounds
    assert "optimum (least noise" in repr(p) and p.table() == repr(p)


def test_default_grids_are_decade_aligned_and_in_range():
    for acc in ("theorem31", "exact"):
        g = dpbounds.planner._DEFAULT_GRID[acc]
        assert 1.0 in g.tolist() and g[0] >= 0.3 and g[-1] <= 20.0 and np.all(np.diff(g) > 0)


def test_sigma_grid_is_sorted_and_no_admissible_point_gives_no_optimum():
    p = dpbounds.plan(11_400_000, delta=0.01, sigma=[2.0, 1.0, 1.0])
    assert p.sigma.tolist() == [1.0, 2.0]
    q = dpbounds.plan(1000, delta=0.01, sigma=[1.0, 2.0])
    assert not q.admissible.any() and q.optimum is None and "optimum: none" in repr(q)


def test_pure_function_of_its_arguments():
    a = exact_plan(0).to_dict()
    dpbounds.plan(10_000, epsilon=2.0, delta=1e-2, sigma=1.6, accountant="exact")   # something else between
    assert dpbounds.plan(accountant="exact", rtol=1e-2, **EXACT[0]).to_dict() == a


@pytest.mark.parametrize("kw,name", [
    (dict(dataset_size=1.14e7 + 0.5, delta=0.01), "dataset_size"),
    (dict(dataset_size=True, delta=0.01), "dataset_size"),
    (dict(dataset_size=1000), "delta"),
    (dict(dataset_size=1000, delta=1.5), "delta"),
    (dict(dataset_size=1000, delta=0.01, epsilon=1.0), "epsilon"),
    (dict(dataset_size=1000, delta=0.01, accountant="exact"), "epsilon"),
    (dict(dataset_size=1000, delta=0.01, accountant="exact", epsilon=-1.0), "epsilon"),
    (dict(dataset_size=1000, delta=0.01, epochs=1.5), "epochs"),
    (dict(dataset_size=1000, delta=0.01, clip_norm=0.0), "clip_norm"),
    (dict(dataset_size=1000, delta=0.01, sigma=[1.0, -1.0]), "sigma"),
    (dict(dataset_size=1000, delta=0.01, sigma=[[1.0]]), "sigma"),
    (dict(dataset_size=1000, delta=0.01, accountant="rdp"), "accountant"),
    (dict(dataset_size=1000, delta=0.01, objective="epsilon"), "objective"),
    (dict(dataset_size=1000, delta=0.01, coefficient="paper"), "coefficient"),
    (dict(dataset_size=1000, delta=0.01, rtol=0.0), "rtol"),
    # one plan per target: an array where a number is expected is named, not a numpy TypeError
    (dict(dataset_size=1000, delta=[0.01, 0.02]), "delta"),
    (dict(dataset_size=1000, delta=0.01, clip_norm=[1.0, 2.0]), "clip_norm"),
    (dict(dataset_size=1000, delta=0.01, accountant="exact", epsilon=[1.0, 2.0]), "epsilon"),
])
def test_errors_name_the_parameter(kw, name):
    with pytest.raises(DPBoundsError, match=rf"^{name}\b"):
        dpbounds.plan(**kw)


def test_docstring_examples():
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(dpbounds.planner, "dpbounds.planner") if t.examples]
    for t in tests:
        runner.run(t)
    assert runner.failures == 0 and runner.tries >= 4


# ---------------------------------------------------------------- the command line


def test_cli_table_recovers_the_papers_point(capsys):
    code, out, err = run(capsys, "plan", "--dataset-size", "1.14e7", "--delta", "0.01", "--epochs", "1",
                         "--coefficient", "simplified")
    assert code == 0 and err == ""
    row = next(line for line in out.splitlines() if line.split()[:1] == ["1"])
    assert int(row.split()[1]) == rounds_required(1.0, 0.01, coefficient="simplified")
    assert "coefficient 'simplified' (the paper's Table 1)" in out and "optimum (least noise" in out


def test_cli_default_coefficient_says_which(capsys):
    code, out, _ = run(capsys, "plan", "--dataset-size", "1.14e7", "--delta", "0.01", "--sigma", "1")
    assert code == 0 and "coefficient 'exact'" in out and "Table 1 uses 'simplified'" in out


def test_cli_json(capsys):
    code, out, _ = run(capsys, "--json", "plan", "--dataset-size", "1e4", "--delta", "0.01", "--accountant", "exact",
                       "--epsilon", "0", "--sigma", "1", "--rtol", "1e-2")
    def refuse(name):
        raise ValueError(name)
    d = json.loads(out, parse_constant=refuse)
    p = dpbounds.plan(10_000, delta=0.01, epsilon=0.0, accountant="exact", sigma=1.0, rtol=1e-2)
    assert code == 0 and d == json.loads(json.dumps(p.to_dict()))
    assert d["front"][0]["theorem31_rounds"] == rounds_required(1.0, 0.01) and d["front"][0]["batch_gain"] > 1


@pytest.mark.parametrize("argv,needle", [
    (["--dataset-size", "1.5", "--delta", "0.01"], "argument --dataset-size: must be a whole number"),
    (["--dataset-size", "1e4", "--delta", "0.01", "--sigma", "1:x:3"], "--sigma '1:x:3': not a number: 'x'"),
    (["--dataset-size", "1e4", "--delta", "0.01", "--sigma", "1:2"], "--sigma must be a list"),
    (["--dataset-size", "1e4", "--delta", "0.01", "--sigma", "0:2:5:log"], "a log range needs START and STOP > 0"),
    (["--dataset-size", "1e4", "--delta", "0.01", "--sigma", "-1"], "sigma must be finite and > 0"),
    (["--dataset-size", "1e4", "--delta", "0.01", "--epsilon", "1"], "epsilon is for accountant='exact' only"),
    (["--dataset-size", "1e4", "--delta", "2"], "delta must be in the open interval (0, 1), got 2.0"),
])
def test_cli_bad_input_is_one_line(capsys, argv, needle):
    code, out, err = run(capsys, "plan", *argv)
    assert code == 2 and out == "" and err.startswith("dpbounds: error: ") and err.count("\n") == 1
    assert needle in err, err


def test_parse_sigma():
    assert parse_sigma(None) is None
    assert parse_sigma("0.5,1,2") == [0.5, 1.0, 2.0]
    assert np.array_equal(parse_sigma("0.5:2:3"), np.geomspace(0.5, 2.0, 3))
    assert np.array_equal(parse_sigma("0.5:2:4:lin"), np.linspace(0.5, 2.0, 4))
    with pytest.raises(DPBoundsError, match="NUM must be a whole number >= 1"):
        parse_sigma("1:2:0")
    with pytest.raises(DPBoundsError, match="must be a list"):
        parse_sigma("1:2:3:cubic")
    # a range longer than the planner accepts is refused before numpy allocates it
    with pytest.raises(DPBoundsError, match=r"NUM must be at most 100,000"):
        parse_sigma("0.5:4:1e12")


def test_plan_refuses_a_sigma_grid_above_its_cap():
    from dpbounds.planner import MAX_SIGMA_GRID
    with pytest.raises(DPBoundsError, match=r"^sigma: a grid of at most 100,000"):
        dpbounds.plan(10_000, delta=1e-3, sigma=np.ones(MAX_SIGMA_GRID + 1))


def test_exact_bracket_containing_the_target_is_said():
    # a target delta inside the certified bracket at M = m: the upper end decides (M = m is not
    # certified), and the plan says that the true delta might have admitted a smaller M
    m = dpbounds.plan(10_000, accountant="exact", epsilon=1.0, delta=1e-3, sigma=1.0).rounds[0]
    lo, hi = RandomAllocationAccountant(1.0, int(m), epochs=1).get_delta_bracket(1.0)
    assert lo < hi
    p = dpbounds.plan(10_000, accountant="exact", epsilon=1.0, delta=0.5 * (lo + hi), sigma=1.0)
    assert p.rounds[0] == m + 1 and "a certified bracket of delta contained the target" in p.method
    assert "contained the target" not in dpbounds.plan(10_000, accountant="exact", epsilon=1.0, delta=hi,
                                                       sigma=1.0).method
