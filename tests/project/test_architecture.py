"""The layers of docs/architecture.md hold in the code: no import from a lower layer to a higher one.

The import graph is derived from the source itself -- the syntax tree of every ``.py`` file of
the package, the import lines of every ``.pyx``/``.pxi``/``.pxd`` file -- and checked against the
two tables of the page: the layer of each module, and the lazy upward imports allowed with
their reason.
"""
from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
SRC = ROOT / "src" / "dpbounds"

pytestmark = pytest.mark.skipif(not (PAGE.exists() and (SRC / "__init__.py").is_file()),
                                reason="needs the source tree (docs/ and src/ next to tests/)")

_CODE = re.compile(r"`([^`]+)`")


def _table(heading: str) -> list[list[str]]:
    """The body rows of the first table after ``heading`` on the page, as lists of cells."""
    text = PAGE.read_text()
    start = text.index(heading)
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows:
            break
    return rows[2:]   # the header and the |---| line


def layers() -> dict[str, int]:
    """Module or package name -> layer number, from the page."""
    out = {}
    for layer, modules, _ in _table("## The layers, bottom to top"):
        number = int(layer.split(".")[0])
        for name in _CODE.findall(modules):
            if name.endswith(".pxd"):   # Cython declarations, src/dpbounds/<name>.pxd
                name = "dpbounds." + name[:-len(".pxd")]
            if name.startswith("dpbounds"):
                assert name not in out, f"{name} is in two layers"
                out[name] = number
    return out


def allowed_upward() -> dict[tuple[str, str], str]:
    """(importer, imported) -> reason, from the page."""
    out = {}
    for importer, imported, reason in _table("## Imports from a lower layer to a higher one"):
        (a,), (b,) = _CODE.findall(importer), _CODE.findall(imported)
        assert len(reason) > 20, f"{a} -> {b} needs its reason"
        out[(a, b)] = reason
    return out


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _exists(name: str) -> bool:
    p = SRC.parent.joinpath(*name.split("."))
    return any(p.with_suffix(s).exists() for s in (".py", ".pyx", ".pxd")) or (p / "__init__.py").exists()


def _lazy_names() -> dict[str, str]:
    """The public names the package imports on first use: name -> module (its ``_LAZY``)."""
    tree = ast.parse((SRC / "__init__.py").read_text())
    node = next(n for n in tree.body if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "_LAZY")
    import dpbounds

    assert dpbounds._LAZY.keys() >= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    return {name: module for name, (module, _) in dpbounds._LAZY.items()}


def _resolve(module: str, name: str, lazy: dict[str, str]) -> str:
    """The module that ``from module import name`` reads."""
    if _exists(f"{module}.{name}"):
        return f"{module}.{name}"
    if module == "dpbounds" and name in lazy:
        return lazy[name]
    return module


def imports() -> list[tuple[str, str, bool, str]]:
    """Every import of a dpbounds module in the package: (importer, imported, lazy, where)."""
    lazy_names = _lazy_names()
    found = []
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text())
        deferred = {id(sub) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    for sub in ast.walk(node) if sub is not node}
        typing_only = {id(sub) for node in ast.walk(tree)
                       if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                       for sub in ast.walk(node)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [_resolve(node.module, a.name, lazy_names) for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                if target.split(".")[0] == "dpbounds":
                    found.append((module, target, id(node) in deferred, f"{path.name}:{node.lineno}"))
    line = re.compile(r"^([ \t]*)(?:from\s+(dpbounds[\w.]*)\s+c?import\s+(\*|\([^)]*\)|[\w, ]+)|c?import\s+(dpbounds[\w.]*))", re.M)
    for path in sorted([*SRC.rglob("*.pyx"), *SRC.rglob("*.pxi"), *SRC.rglob("*.pxd")]):
        module = _module_name(path)
        if path.suffix == ".pxi":   # _kernels_<concern>.pxi is included into _kernels.pyx
            assert path.stem.startswith("_kernels_"), path
            module = "dpbounds._kernels"
        text = path.read_text()
        for m in line.finditer(text):
            lineno = text.count("\n", 0, m.start()) + 1
            names = [n.strip() for n in (m.group(3) or "").strip("()").split(",") if n.strip() not in ("", "*")]
            targets = [_resolve(m.group(2), n, lazy_names) for n in names] or [m.group(2) or m.group(4)]
            indented = bool(m.group(1))   # inside a function
            found += [(module, t, indented, f"{path.name}:{lineno}") for t in targets]
    return found


def layer_of(module: str, table: dict[str, int]) -> int | None:
    """The layer of a module: that of the longest entry naming it or a package holding it."""
    if module == "dpbounds":
        return table.get("dpbounds")
    best = max((name for name in table if name != "dpbounds" and (module == name or module.startswith(name + "."))),
               key=len, default=None)
    return None if best is None else table[best]


def test_every_module_has_a_layer():
    table = layers()
    assert set(table.values()) == {2, 3, 4, 5}
    modules = {_module_name(p) for p in SRC.rglob("*") if p.suffix in (".py", ".pyx", ".pxd")}
    assert "dpbounds.sweeps._sweep" in modules and "dpbounds._kernels" in modules
    missing = sorted(m for m in modules if layer_of(m, table) is None)
    assert missing == [], f"add these modules to a layer of docs/architecture.md: {missing}"
    stale = sorted(name for name in table if not _exists(name))
    assert stale == [], f"docs/architecture.md names modules that do not exist: {stale}"


def violations(found, table, allowed):
    """The imports against the layers, and the allowed upward imports that were made."""
    upward, used = [], set()
    for importer, imported, lazy, where in found:
        a, b = layer_of(importer, table), layer_of(imported, table)
        assert a is not None and b is not None, (importer, imported, where)
        if b <= a:
            continue
        if (importer, imported) in allowed and lazy:
            used.add((importer, imported))
            continue
        upward.append(f"{where}: {importer} (layer {a}) imports {imported} (layer {b})"
                      + ("" if lazy else " at import time"))
    return upward, used


def test_no_import_from_a_lower_layer_to_a_higher_one():
    table, allowed = layers(), allowed_upward()
    found = imports()
    assert len(found) > 500   # the graph was read
    upward, used = violations(found, table, allowed)
    assert upward == [], "imports against the layers of docs/architecture.md:\n" + "\n".join(upward)
    assert used == set(allowed), f"listed on docs/architecture.md but not made: {sorted(set(allowed) - used)}"


def test_the_check_flags_what_the_map_does_not_allow():
    table, allowed = layers(), allowed_upward()
    ok = ("dpbounds.sweeps._writers", "dpbounds", True, "listed, lazy")
    eager = ("dpbounds.sweeps._writers", "dpbounds", False, "listed, but at import time")
    unlisted = ("dpbounds.tradeoff", "dpbounds.accountant._ra_pld", True, "not listed")
    down = ("dpbounds.accountant._ra_pld", "dpbounds.tradeoff", False, "downward")
    upward, used = violations([ok, eager, unlisted, down], table, allowed)
    assert [u.split(":")[0] for u in upward] == ["listed, but at import time", "not listed"]
    assert used == {("dpbounds.sweeps._writers", "dpbounds")}
    # the graph read from the source has the lazy import the page lists, as lazy
    assert ("dpbounds.sweeps._writers", "dpbounds", True) in {f[:3] for f in imports()}


def test_subpackages_give_their_reading_order():
    # each subpackage's __init__ docstring names every one of its modules
    for init in sorted(p for p in SRC.rglob("__init__.py") if p.parent != SRC):   # nested ones too
        package = init.parent
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        modules = sorted(p.stem for p in package.glob("*.py") if p.stem != "__init__")
        missing = [m for m in modules if f"``{m}``" not in doc]
        assert "Reading order" in doc or "reading order" in doc, package.name
        assert missing == [], f"{package.name}/__init__.py does not place {missing} in its reading order"


def test_no_test_module_imports_another():
    # what several tests share lives in a helper module (tests/*.py without the test_ prefix,
    # bench/baselines.py), so a test file can be moved, renamed or deselected on its own
    offenders = []
    for path in sorted([*ROOT.joinpath("tests").rglob("*.py"), *ROOT.joinpath("bench").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names
                          if n.split(".")[-1].startswith(("test_", "conftest"))]
    assert not offenders, "\n".join(offenders)
