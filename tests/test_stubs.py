"""The .pyi stubs list exactly what the compiled modules export."""
import ast
import pathlib

import numpy as np

import dpbounds._theorem31 as t31
import dpbounds._ufuncs as uf


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


def test_ufunc_stub_matches_module():
    public = {n for n in dir(uf) if isinstance(getattr(uf, n), np.ufunc)}
    assert _stub_names(uf) == public


def test_theorem31_stub_matches_module():
    public = {n for n in dir(t31) if not n.startswith("_") and callable(getattr(t31, n)) and getattr(t31, n).__module__ == t31.__name__}
    assert _stub_names(t31) == public
