"""The type stubs list exactly what the compiled modules export, and mypy's stubtest agrees."""
import ast
import importlib
import pathlib
import subprocess
import sys

import numpy as np
import pytest

COMPILED = ["dpbounds._ufuncs", "dpbounds._kernels"]


def _stub_names(mod):
    path = pathlib.Path(mod.__file__).with_name(mod.__name__.rsplit(".", 1)[1] + ".pyi")
    tree = ast.parse(path.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return names


def _exports(mod):
    out = set()
    for n in dir(mod):
        v = getattr(mod, n)
        if n.startswith("__") or isinstance(v, type(np)):
            continue
        if isinstance(v, np.ufunc) or callable(v) and getattr(v, "__module__", None) == mod.__name__:
            out.add(n)
        elif isinstance(v, (float, int, tuple)) and n.isupper() and not n.startswith("_"):
            out.add(n)
    return out


@pytest.mark.parametrize("modname", COMPILED)
def test_stub_matches_module(modname):
    mod = importlib.import_module(modname)
    assert _stub_names(mod) == _exports(mod)


def test_every_compiled_module_has_a_stub():
    import dpbounds
    root = pathlib.Path(dpbounds.__file__).parent
    compiled = {p.name.split(".")[0] for p in root.rglob("*.so")} | {p.name.split(".")[0] for p in root.rglob("*.pyd")}
    assert compiled == {m.rsplit(".", 1)[1] for m in COMPILED}
    for name in compiled:
        assert (root / f"{name}.pyi").exists()


def _integration_allowlist() -> list[str]:
    """Allowlist entries for dpbounds.integrations, which depend on what is installed.

    These pure-Python modules are their own stubs; their frameworks are typed as Any (the mypy
    configuration in pyproject.toml), so a class built on a framework's class differs from its stub
    in metaclass (ABCMeta) and, for an attrs class, in the generated methods.  A module whose
    framework is not installed fails to import.  Each entry below matches at least one error in
    the environment it is written for, so none is ever unused.
    """
    import importlib.util

    def have(*names: str) -> bool:
        return all(importlib.util.find_spec(n) is not None for n in names)

    out = [r"dpbounds\.integrations\.dp_accounting\..*" if have("dp_accounting", "attr")
           else r"dpbounds\.integrations\.dp_accounting"]
    out.append(r"dpbounds\.integrations\.opacus\..*" if have("torch", "opacus") else r"dpbounds\.integrations\.opacus")
    if not have("torch"):
        out.append(r"dpbounds\.integrations\.pytorch")
    return out


@pytest.mark.slow
def test_mypy_stubtest_clean(tmp_path):
    pytest.importorskip("mypy")
    extra = tmp_path / "integrations_allowlist.txt"
    extra.write_text("\n".join(_integration_allowlist()) + "\n")
    config = pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml"  # its mypy section: the extras are Any
    args = ["--mypy-config-file", str(config)] if config.exists() else []
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "dpbounds", "--concise",
                        "--allowlist", str(pathlib.Path(__file__).with_name("stubtest_allowlist.txt")),
                        "--allowlist", str(extra), *args],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
