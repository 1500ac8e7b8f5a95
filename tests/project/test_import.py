"""Importing dpbounds pulls in numpy only: optional extras load lazily."""
import subprocess
import sys


def test_import_loads_no_optional_dependency():
    code = (
        "import sys, dpbounds; "
        "print(','.join(m for m in ('scipy', 'matplotlib', 'dask', 'xarray', 'tqdm', 'pyarrow', 'mpmath') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_import_loads_no_framework():
    """The framework integrations load their framework only when imported themselves."""
    code = (
        "import sys, dpbounds, dpbounds.integrations; "
        "print(','.join(m for m in ('torch', 'opacus', 'dp_accounting', 'attr', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_public_names_resolve():
    import dpbounds

    for name in dpbounds.__all__:
        assert getattr(dpbounds, name) is not None, name


def test_unknown_name_raises_attribute_error():
    import importlib
    import warnings

    import pytest

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError):
            _ = importlib.import_module("dpbounds").no_such_name


#: What ``import dpbounds`` must not load (each costs milliseconds, or drags in more): the
#: accountants and everything else that is imported on first use, and the heavier parts of
#: numpy and the standard library they need.
HEAVY = ("dpbounds.accountant", "dpbounds.rdp", "dpbounds.planner", "dpbounds.calibration", "dpbounds.composition",
         "dpbounds.tradeoff", "dpbounds.sampling", "dpbounds.curve", "dpbounds.outer", "dpbounds.sweeps",
         "dpbounds.figures", "dpbounds.cli", "numpy.random", "numpy.polynomial", "numpy.linalg", "numpy.fft",
         "decimal", "fractions", "random", "hashlib", "multiprocessing", "concurrent.futures", "json", "inspect")

#: The modules of dpbounds that ``import dpbounds`` may load: the Theorem 3.1 functions and what
#: they need.
EAGER = {"dpbounds", "dpbounds._errors", "dpbounds._ufuncs", "dpbounds._kernels", "dpbounds._validation",
         "dpbounds.allocation_bound"}


def test_import_loads_no_heavy_module():
    import json

    # dataclasses (and the inspect it imports) is part of the accepted cost: the eager modules'
    # frozen records (the status bits, the declaration table, Theorem31Result) are dataclasses.
    # numpy 2.4 imports inspect itself; with numpy 2.2 (Python 3.10) it is new here, and the time budget
    # (bench/report_import.py, the README's figure) includes it.
    code = ("import sys, json, numpy, dataclasses; before = set(sys.modules); import dpbounds; "
            "print(json.dumps(sorted(set(sys.modules) - before)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    new = set(json.loads(out.stdout))
    loaded = sorted(m for m in new if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert loaded == [], f"import dpbounds loads {loaded}"
    assert {m for m in new if m.startswith("dpbounds")} <= EAGER


def test_lazy_names_are_the_modules_objects():
    # each name imported on first use is the object its module defines, and stays bound
    code = ("import dpbounds, dpbounds.accountant, dpbounds.tradeoff, dpbounds.rdp, dpbounds._ufuncs; "
            "assert dpbounds.PoissonAccountant is dpbounds.accountant.PoissonAccountant; "
            "assert dpbounds.gdp_delta is dpbounds.tradeoff.gdp_delta; "
            "assert dpbounds.ufuncs is dpbounds._ufuncs; "
            "assert 'rdp' in dir(dpbounds) and 'calibrate_noise' in dir(dpbounds); "
            "import dpbounds.sweeps._writers, dpbounds.allocation_bound; "
            "assert callable(dpbounds.sweep) and callable(dpbounds.theorem31); "
            "assert dpbounds.sweep is dpbounds.sweeps.sweep; "
            "from dpbounds import *; assert calibrate_noise is dpbounds.calibration.calibrate_noise")
    subprocess.run([sys.executable, "-c", code], check=True)


def _public_modules():
    """Every public (sub)module of dpbounds, found from the files: (parent package, name)."""
    import pkgutil

    import dpbounds

    todo, found = [("dpbounds", dpbounds.__path__[0])], []
    while todo:
        parent, path = todo.pop()
        for info in pkgutil.iter_modules([path]):
            if not info.name.startswith("_"):
                found.append((parent, info.name))
                if info.ispkg:
                    todo.append((f"{parent}.{info.name}", f"{path}/{info.name}"))
    return sorted(found)


def test_no_module_shares_a_name_with_a_function():
    """``import dpbounds.x as m`` gives the module x: no public function or class hides it."""
    import importlib
    import types

    modules = _public_modules()
    assert ("dpbounds", "sweeps") in modules and ("dpbounds", "allocation_bound") in modules
    for parent, name in modules:
        package = importlib.import_module(parent)
        # what the package gives for the name before the module is imported (its lazy names) ...
        before = getattr(package, name, None)
        assert before is None or isinstance(before, types.ModuleType), f"{parent}.{name} is {before!r}"
        try:
            module = importlib.import_module(f"{parent}.{name}")
        except ImportError as e:   # a framework integration without its framework
            assert parent == "dpbounds.integrations", e
            continue
        # ... and after: that module
        assert getattr(package, name) is module, f"{parent}.{name}"
