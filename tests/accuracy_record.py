"""Measured accuracy, recorded by the accuracy tests themselves (a pytest plugin).

Each accuracy test that backs a claim (the ``accuracy.test`` pointers of the ufunc
declaration table, and the docstring claims listed in ``tests/contract_surface.py``)
measures its maximum error against its independent reference and hands it to the
``record_accuracy`` fixture::

    record_accuracy("ndtr", err, "ulp", "x in [-37.5, 8.3], 1009 points")

The measured maxima live in the committed file ``docs/_data/measured_accuracy.json``
(one entry per function, rounded *up* to three significant digits), which
``tools/gen_contract.py`` turns into the accuracy column of ``docs/contract.md`` and
``tests/test_accuracy_claims.py`` compares with the claims.

* ``pytest --record-accuracy``: the entries of the functions measured in this run are
  rewritten at the end of the session (the others are kept);
* otherwise each measurement must be covered by its committed entry (same unit, regime
  and test, maximum not exceeded), so the published figure never understates what the
  tests measure (the check is skipped where docs/ is not shipped).  A parametrized test
  measures a function once per parameter set; the record keeps the maximum over them.
"""
from __future__ import annotations

import decimal
import json
import math
import os
import pathlib
from typing import Any, Callable

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "_data" / "measured_accuracy.json"
UNITS = ("ulp", "relative", "absolute")
_SESSION: dict[str, dict[str, Any]] = {}


def ceil_sig(x: float, digits: int = 3) -> float:
    """``x`` rounded up to ``digits`` significant digits (0 stays 0): a measured maximum
    is reported no smaller than it was."""
    if x == 0:
        return 0.0
    d = decimal.Decimal(repr(float(x)))  # the shortest repr converts back to x: float(result) >= x
    e = d.adjusted() - digits + 1
    return float(d.scaleb(-e).to_integral_value(rounding=decimal.ROUND_CEILING).scaleb(e))


def load() -> dict[str, dict[str, Any]]:
    """The committed measurements ({} if the file is absent)."""
    return json.loads(DATA.read_text()) if DATA.exists() else {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-accuracy", action="store_true", default=False,
                     help="rewrite docs/_data/measured_accuracy.json with the maxima the accuracy tests measure")


@pytest.fixture
def record_accuracy(request: pytest.FixtureRequest) -> Callable[[str, float, str, str], None]:
    recording = request.config.getoption("--record-accuracy")
    test = request.node.nodeid.split("[")[0]

    def record(function: str, max_error: float, unit: str, regime: str) -> None:
        assert unit in UNITS, unit
        assert math.isfinite(max_error) and max_error >= 0, (function, max_error)
        entry = {"max_error": ceil_sig(float(max_error)), "unit": unit, "regime": regime, "test": test}
        if recording:
            # a parametrized test measures a function once per parameter set: keep the maximum
            prev = _SESSION.get(function)
            if prev is not None:
                assert prev["test"] == test, f"{function} is measured by two tests ({prev['test']}, {test})"
                entry["max_error"] = max(entry["max_error"], prev["max_error"])
            _SESSION[function] = entry
            return
        if not DATA.parent.exists():
            return  # an installed wheel's tests: the documentation data is not shipped
        committed = load().get(function)
        # the committed maxima were measured with numpy >= 2 and the release build (the
        # documentation's environment).  On numpy 1.x, and in the sanitizer builds of
        # .ci/sanitize (other compiler, -O1, no FMA contraction: DPBOUNDS_ACCURACY_REFERENCE=0),
        # the last digits differ; there the claim itself is what test_accuracy_claims checks
        reference_env = (int(np.__version__.split(".")[0]) >= 2
                         and os.environ.get("DPBOUNDS_ACCURACY_REFERENCE", "1") != "0")
        assert committed is not None and {k: committed[k] for k in ("unit", "regime", "test")} == {
            k: entry[k] for k in ("unit", "regime", "test")} and (
                not reference_env or entry["max_error"] <= committed["max_error"]), (
            f"{function}: measured {entry}, committed record {committed}: rerun the accuracy tests "
            "with --record-accuracy (python tools/gen_contract.py --measure) and commit the result")
        if not reference_env:  # the published claim must still hold in this build
            bound = claimed_bound(function)
            assert entry["max_error"] <= bound, (
                f"{function}: measured {entry['max_error']} {unit} in this build, the documentation claims <= {bound}")
    return record


def claimed_bound(function: str) -> float:
    """The documented accuracy bound of a measured function: its declaration-table claim,
    or the docstring claim listed in tests/docstring_claims.py."""
    from dpbounds._ufunc_table import UFUNCS
    for u in UFUNCS:
        if u.name == function and u.accuracy:
            return float(u.accuracy.bound)
    import docstring_claims
    for c in docstring_claims.CLAIMS:
        if c.key == function:
            return float(c.bound)
    raise AssertionError(f"{function} is measured but no documented claim names it")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not session.config.getoption("--record-accuracy") or not _SESSION:
        return
    data = load()
    data.update(_SESSION)
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps(dict(sorted(data.items())), indent=1, sort_keys=True) + "\n")
