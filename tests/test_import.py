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
         "dpbounds.tradeoff", "dpbounds.sampling", "dpbounds.curve", "dpbounds.outer", "dpbounds.sweep._sweep",
         "dpbounds.figures", "dpbounds.cli", "numpy.random", "numpy.polynomial", "numpy.linalg", "numpy.fft",
         "decimal", "fractions", "random", "hashlib", "multiprocessing", "concurrent.futures", "json", "inspect")

#: The modules of dpbounds that ``import dpbounds`` may load: the two whose names are also
#: functions (dpbounds.sweep, dpbounds.theorem31) and what they need.
EAGER = {"dpbounds", "dpbounds._errors", "dpbounds._ufuncs", "dpbounds._kernels", "dpbounds._validation",
         "dpbounds.sweep", "dpbounds.sweep._axes", "dpbounds.theorem31"}


def test_import_loads_no_heavy_module():
    import json

    code = ("import sys, json, numpy; before = set(sys.modules); import dpbounds; "
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
            "import dpbounds.sweep._writers, dpbounds.theorem31; "
            "assert callable(dpbounds.sweep) and callable(dpbounds.theorem31); "
            "from dpbounds import *; assert calibrate_noise is dpbounds.calibration.calibrate_noise")
    subprocess.run([sys.executable, "-c", code], check=True)
