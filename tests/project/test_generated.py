"""The files generated from the ufunc declaration table are up to date (tools/gen_ufuncs.py),
every accuracy claim names a test that exists, and the status vocabulary is one table."""
import ast
import pathlib
import sys

import accuracy_record
import numpy as np
import pytest
from ufunc_generator import GEN

from dpbounds import _errors, _ufunc_table, _ufuncs

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("target", sorted(GEN.TARGETS))
def test_generated_file_is_current(target):
    path = ROOT / target
    if target.endswith(".pyx") and not path.exists():
        pytest.skip("running against an installed wheel: the .pyx is not shipped")
    if not path.exists():
        pytest.skip(f"{target} is not part of this installation")
    expected = GEN.TARGETS[target](_ufunc_table, _errors)
    assert path.read_text() == expected, f"{target} is stale: run python tools/gen_ufuncs.py"


def test_generator_reads_the_source_table_without_the_package():
    table, errors = GEN.load_tables()
    assert [u.name for u in table.UFUNCS] == [u.name for u in _ufunc_table.UFUNCS]
    assert [(s.name, s.bit) for s in errors.STATUS_BITS] == [(s.name, s.bit) for s in _errors.STATUS_BITS]
    assert "dpbounds" in sys.modules and hasattr(sys.modules["dpbounds"], "__version__")  # the real package is back


def _test_functions(path):
    """The module-level functions of a test file, with the names of their parameters."""
    tree = ast.parse(path.read_text())
    return {n.name: [a.arg for a in n.args.args] for n in tree.body if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("name,claim", sorted(accuracy_record.claims().items()), ids=lambda v: v if isinstance(v, str) else "")
def test_accuracy_claim_names_an_existing_test(name, claim):
    # every claim of the declaration table and of tests/docstring_claims.py names the test that
    # asserts it: that test exists and takes the record_accuracy fixture (which checks the claim
    # holds and that the test recording it is the one named, tests/accuracy_record.py)
    file, func = claim.test.split("::")
    path = ROOT / file
    if not path.exists():
        pytest.skip("tests are not shipped with this installation")
    functions = _test_functions(path)
    assert func in functions, claim.test
    assert "record_accuracy" in functions[func], f"{claim.test} does not take record_accuracy"
    assert claim.unit in ("ulp", "relative", "absolute")
    # a docstring may claim bit-identity with another function (0 ulp); a table claim is an error bound
    in_table = any(u.name == name and u.accuracy for u in _ufunc_table.UFUNCS)
    assert claim.bound > 0 if in_table else claim.bound >= 0


def test_status_bits_are_one_table():
    bits = [s.bit for s in _errors.STATUS_BITS]
    assert bits == [1 << k for k in range(len(bits))]            # distinct single bits, in order
    assert _errors.STATUS_BITS[0].name == "BAD_INPUT"              # bit 1 means a bad argument everywhere
    compiled = {name: bit for name, bit, _ in _ufuncs.STATUS_BITS}  # what the C core was compiled with
    assert compiled == {s.name: s.bit for s in _errors.STATUS_BITS}
    for u in _ufunc_table.UFUNCS:
        assert set(u.status_bits) <= set(compiled), u.name


def test_describe_status_counts():
    st = np.array([0, 1, 8 | 4, 8])
    msg = _errors.describe_status(st)
    assert msg.startswith("3 of 4 elements: ")
    assert "(1)" in msg and "condition (2) fails" in msg and "(2)" in msg
    assert _errors.describe_status(np.zeros(3, int)) == ""
    assert _errors.status_reasons(0) == []
