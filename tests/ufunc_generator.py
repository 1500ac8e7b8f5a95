"""The generator of the files derived from the ufunc declaration table (tools/gen_ufuncs.py),
loaded as a module for the tests that compare against what it generates."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_ufuncs", ROOT / "tools" / "gen_ufuncs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEN = _generator()
