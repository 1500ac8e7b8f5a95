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


def test_renamed_names_warn_and_serve_the_same_function():
    import importlib
    import warnings

    import pytest

    from dpbounds._renamed import RENAMED
    for modname in ("dpbounds", "dpbounds.tradeoff"):
        mod = importlib.import_module(modname)
        for old, new in RENAMED.items():
            if not hasattr(mod, new):
                continue
            with pytest.warns(DeprecationWarning, match=f"{old} is deprecated; use .*{new}"):
                got = getattr(mod, old)
            assert got is getattr(mod, new)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError):
            _ = importlib.import_module("dpbounds").no_such_name
