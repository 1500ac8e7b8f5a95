"""An installed wheel holds only the intended files, and its compiled modules carry no debug info.

Runs against the installed distribution (``.ci/run`` and the cibuildwheel test step); skips for
an in-place build under ``src/`` unless ``DPBOUNDS_EXPECT_WHEEL=1`` says a wheel must be there.
"""
from __future__ import annotations

import importlib.metadata
import os
import pathlib
import re
import struct
import sys

import pytest

import dpbounds

PACKAGE_DIR = pathlib.Path(dpbounds.__file__).resolve().parent
EXTENSIONS = {"_ufuncs", "_kernels"}  # the compiled modules setup.py builds
# what a wheel may install: the package's Python code, its stubs, py.typed, the two extension
# modules, the dist-info and the console script (no C, Cython, .pxd, headers, tests or data)
ALLOWED = re.compile(
    r"""(dpbounds/([a-z_]+/)*[a-z_0-9]+\.pyi?
        |dpbounds/py\.typed
        |dpbounds/(_ufuncs|_kernels)\.[A-Za-z0-9_.-]+\.(so|pyd)
        |dpbounds-[^/]+\.dist-info/(METADATA|WHEEL|RECORD|INSTALLER|REQUESTED|direct_url\.json|entry_points\.txt
                                    |top_level\.txt|licenses/.+)
        |(\.\./)+(bin|Scripts)/dpbounds(\.exe)?
        |dpbounds/.*\.pyc)""",  # byte code compiled at install time
    re.VERBOSE,
)


def _installed_files() -> list[importlib.metadata.PackagePath]:
    """The RECORD of the installed wheel that provides the imported package, or skip."""
    try:
        dist = importlib.metadata.distribution("dpbounds")
    except importlib.metadata.PackageNotFoundError:
        dist = None
    files = dist.files if dist is not None and dist.read_text("WHEEL") is not None else None
    if files is not None and pathlib.Path(dist.locate_file("dpbounds/__init__.py")).resolve().parent == PACKAGE_DIR:
        return files
    if os.environ.get("DPBOUNDS_EXPECT_WHEEL") == "1":
        pytest.fail(f"dpbounds is imported from {PACKAGE_DIR}, not from an installed wheel")
    pytest.skip("dpbounds is not an installed wheel here (in-place build)")


def test_wheel_installs_only_intended_files() -> None:
    names = sorted(str(f).replace("\\", "/") for f in _installed_files())
    unexpected = [n for n in names if not ALLOWED.fullmatch(n)]
    assert not unexpected, unexpected
    compiled = {n.split("/")[1].split(".")[0] for n in names if n.endswith((".so", ".pyd"))}
    assert compiled == EXTENSIONS
    assert "dpbounds/py.typed" in names and "dpbounds/__init__.py" in names


def _elf_section_names(path: pathlib.Path) -> list[str]:
    """Section names of a 64-bit little-endian ELF file (the Linux wheels)."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, path
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_off, strtab_size = headers[shstrndx][4], headers[shstrndx][5]
    strtab = data[strtab_off:strtab_off + strtab_size]
    return [strtab[h[0]:strtab.index(b"\0", h[0])].decode() for h in headers]


@pytest.mark.skipif(not sys.platform.startswith("linux") or sys.maxsize < 2**32, reason="ELF64 wheels only")
def test_extension_modules_have_no_debug_info_or_symbol_table() -> None:
    _installed_files()
    modules = sorted(p for p in PACKAGE_DIR.iterdir() if p.suffix == ".so")
    assert {p.name.split(".")[0] for p in modules} == EXTENSIONS
    for path in modules:
        sections = _elf_section_names(path)
        assert ".text" in sections, (path, sections)  # the parser read real section names
        assert not [s for s in sections if s.startswith((".debug", ".zdebug"))], (path, sections)
        assert ".symtab" not in sections, (path, "not stripped")


def test_metadata_version_and_licence() -> None:
    # one version literal (dpbounds.__version__, read by setuptools without importing) and the
    # BSD-3-Clause licence, as an SPDX expression plus the licence text in the dist-info
    files = _installed_files()
    meta = importlib.metadata.metadata("dpbounds")
    assert meta["Version"] == dpbounds.__version__
    assert meta["License-Expression"] == "BSD-3-Clause"
    licence = [f for f in files if str(f).replace("\\", "/").endswith(".dist-info/licenses/LICENSE")]
    assert len(licence) == 1 and "BSD 3-Clause License" in licence[0].read_text()
