"""Accuracy claims, asserted by the accuracy tests themselves (a pytest plugin).

Each accuracy test that backs a claim (the ``accuracy.test`` pointers of the ufunc
declaration table, and the docstring claims listed in ``tests/docstring_claims.py``)
measures its maximum error against its independent reference and hands it to the
``record_accuracy`` fixture::

    record_accuracy("ndtr", err, "ulp", "x in [-37.5, 8.3], 1009 points")

The fixture asserts the documented claim: the function has one, in this unit, naming this
test, and the measured maximum does not exceed its bound (``measured <= claim``, in every
build: another compiler, FMA contraction or a denser sample may move the last digits of a
measurement, never past the claim).

Nothing is compared with an earlier measurement.  The measured maxima are *published*:
``pytest --record-accuracy`` (``python tools/gen_contract.py --measure`` runs every accuracy
test with it) writes them, rounded up to three significant digits, to
``docs/_data/measured_accuracy.json``, which the documentation build turns into the accuracy
column of the contract page (``tools/gen_contract.py``).  A parametrized test measures a
function once per parameter set; the record keeps the maximum over them.
"""
from __future__ import annotations

import decimal
import json
import math
import pathlib
from typing import Any, Callable, NamedTuple

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "_data" / "measured_accuracy.json"
UNITS = ("ulp", "relative", "absolute")
_SESSION: dict[str, dict[str, Any]] = {}
_RAN: set[str] = set()   # the tests (file::function) that took record_accuracy in this session


class Claim(NamedTuple):
    bound: float
    unit: str
    test: str   # tests/<file>.py::<function>


def ceil_sig(x: float, digits: int = 3) -> float:
    """``x`` rounded up to ``digits`` significant digits (0 stays 0): a measured maximum
    is published no smaller than it was."""
    if x == 0:
        return 0.0
    d = decimal.Decimal(repr(float(x)))  # the shortest repr converts back to x: float(result) >= x
    e = d.adjusted() - digits + 1
    return float(d.scaleb(-e).to_integral_value(rounding=decimal.ROUND_CEILING).scaleb(e))


def claims() -> dict[str, Claim]:
    """Every documented accuracy claim, by the name its test records it under: the declaration
    table's (ufunc name) and the docstring claims of tests/docstring_claims.py (dotted path)."""
    import docstring_claims

    from dpbounds._ufunc_table import UFUNCS
    out = {u.name: Claim(float(u.accuracy.bound), u.accuracy.unit, u.accuracy.test)
           for u in UFUNCS if u.accuracy}
    for c in docstring_claims.CLAIMS:
        assert c.key not in out, f"{c.key} is claimed twice"
        out[c.key] = Claim(float(c.bound), c.unit, c.test)
    return out


def claimed_bound(function: str) -> float:
    """The documented accuracy bound of a measured function."""
    claim = claims().get(function)
    if claim is None:
        raise AssertionError(f"{function} is measured but no documented claim names it")
    return claim.bound


def _same_test(claimed: str, node: pytest.Item) -> bool:
    # compared by file name and function name, so that the rootdir (a checkout, or a copy of
    # tests/ outside it for an installed wheel) does not matter
    file, _, func = claimed.partition("::")
    return pathlib.PurePath(file).name == node.path.name and func == getattr(node, "originalname", node.name)


def _same_test_id(claimed: str, test: str) -> bool:
    return pathlib.PurePath(claimed.split("::")[0]).name == pathlib.PurePath(test.split("::")[0]).name and \
        claimed.split("::")[1] == test.split("::")[1]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-accuracy", action="store_true", default=False,
                     help="publish the maxima the accuracy tests measure in docs/_data/measured_accuracy.json "
                          "(for the documentation; nothing compares with it)")


@pytest.fixture
def record_accuracy(request: pytest.FixtureRequest) -> Callable[[str, float, str, str], None]:
    recording = request.config.getoption("--record-accuracy")
    if recording and hasattr(request.config, "workerinput"):
        pytest.fail("--record-accuracy needs one process: under pytest-xdist (-n) each worker would publish a part")
    node = request.node
    test = node.nodeid.split("[")[0]
    known = claims()

    def record(function: str, max_error: float, unit: str, regime: str) -> None:
        assert unit in UNITS, unit
        assert math.isfinite(max_error) and max_error >= 0, (function, max_error)
        claim = known.get(function)
        assert claim is not None, f"{function} is measured but no documented claim names it"
        assert unit == claim.unit, f"{function}: measured in {unit}, claimed in {claim.unit}"
        assert _same_test(claim.test, node), f"{function} is measured by {test}, its claim names {claim.test}"
        assert max_error <= claim.bound, (
            f"{function}: measured {max_error:.3g} {unit} ({regime}), the documentation claims <= {claim.bound:g}")
        if recording:
            # a parametrized test measures a function once per parameter set: keep the maximum
            entry = {"max_error": ceil_sig(float(max_error)), "unit": unit, "regime": regime, "test": test}
            prev = _SESSION.get(function)
            if prev is not None:
                entry["max_error"] = max(entry["max_error"], prev["max_error"])
            _SESSION[function] = entry

    _RAN.add(test)
    return record


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not session.config.getoption("--record-accuracy") or not _SESSION or exitstatus != 0:
        return
    known = claims()
    # every claim whose test ran was measured by it (a parameter set may legitimately measure
    # nothing, e.g. a point outside the domain, so this is checked over the whole run)
    unmeasured = sorted(k for k, c in known.items() if k not in _SESSION
                        and any(_same_test_id(c.test, t) for t in _RAN))
    if unmeasured:
        print(f"\n--record-accuracy: nothing published, these claims' tests ran but never measured them: {unmeasured}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return
    data = {k: v for k, v in (json.loads(DATA.read_text()) if DATA.exists() else {}).items() if k in known}
    data.update(_SESSION)
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps(dict(sorted(data.items())), indent=1, sort_keys=True) + "\n")
