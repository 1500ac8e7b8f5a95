"""The examples in the README and in the docstrings run and give the printed output."""
import doctest
import pathlib

import pytest

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.skipif(not README.exists(), reason="README.md not next to tests/ (wheel test from test-sources)")
def test_readme_examples():
    result = doctest.testfile(str(README), module_relative=False, optionflags=FLAGS, verbose=False)
    assert result.attempted >= 8 and result.failed == 0


def test_docstring_examples():
    import importlib

    mod = importlib.import_module("dpbounds.allocation_bound")
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    tests = [t for t in finder.find(mod, mod.__name__) if t.examples]
    # the compiled scalar fast paths carry their Python function's docstring, and are found too
    assert {"dpbounds.allocation_bound.delta_bound", "dpbounds.allocation_bound.rounds_required"} <= {t.name for t in tests}
    for t in tests:
        runner.run(t)
    assert runner.failures == 0 and runner.tries >= 2


@pytest.mark.parametrize("modname", ["dpbounds.accountant._ra_accountant", "dpbounds.accountant._poisson_accountant",
                                     "dpbounds.accountant._poisson_pld", "dpbounds.calibration", "dpbounds.sampling"])
def test_accountant_and_calibration_docstring_examples(modname):
    import importlib

    mod = importlib.import_module(modname)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    tests = [t for t in finder.find(mod, modname) if t.examples]
    assert tests
    for t in tests:
        runner.run(t)
    assert runner.failures == 0 and runner.tries >= 2
