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
