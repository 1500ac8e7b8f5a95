"""The fuzz runner's reading of libFuzzer's output and the instrumented build's staleness check.

fuzz/run.py decides from libFuzzer's log whether a coverage-instrumented run saw the C core
(``-print_coverage``'s per-function report) and fuzz/build_native.py's source digest decides
whether a build still matches the sources; both are plain functions, checked here without
atheris or clang.  (fuzz/ is not among the wheel's test sources: outside a checkout this skips.)
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
if not (FUZZ / "run.py").is_file():
    pytest.skip("fuzz/ is not next to tests/ (tests run outside a checkout)", allow_module_level=True)
sys.path.insert(0, str(FUZZ))
import build_native  # noqa: E402
import run  # noqa: E402

# the shape of libFuzzer's output (status lines, then -print_coverage=1's report at exit)
LOG = """\
#2\tINITED cov: 9 ft: 10 corp: 1/1b exec/s: 0 rss: 387Mb
#4\tNEW    cov: 16 ft: 17 corp: 2/2b lim: 4 exec/s: 0 rss: 388Mb L: 1/1 MS: 2 ShuffleBytes-ChangeBit-
#17966\tDONE   cov: 1052 ft: 1684 corp: 366/1996b lim: 11 exec/s: 855 rss: 638Mb
UNCOVERED_FUNC: hits: 0 edges: 0/952 __pyx_pymod_exec__ufuncs /b/src/src/dpbounds/_ufuncs.c:20646
COVERED_FUNC: hits: 6 edges: 3/10 dpb_edgeworth_p /b/src/csrc/dpb_edgeworth.c:76
UNCOVERED_FUNC: hits: 0 edges: 0/21 ew_make /b/src/csrc/dpb_edgeworth.c:13
COVERED_FUNC: hits: 9 edges: 6/7 dpb_normal_mills /b/src/csrc/dpb_gdp.c:8
COVERED_FUNC: hits: 2 edges: 2/5 __pyx_f_8dpbounds_7_ufuncs_x /b/src/src/dpbounds/_ufuncs.c:900
stat::number_of_executed_units: 17966
"""


def test_coverage_is_the_last_status_line():
    assert run.coverage(LOG) == (1052, 1684)
    assert run.coverage("INFO: no status line\n") == (0, 0)


def test_c_core_coverage_counts_csrc_functions_only():
    # csrc/: edges 3 + 0 + 6 of 10 + 21 + 7; functions reached 2 of 3; the Cython ones are not counted
    assert run.c_core_coverage(LOG) == (9, 38, 2, 3)
    assert run.c_core_coverage(LOG.replace("/csrc/", "/elsewhere/")) == (0, 0, 0, 0)


def _tree(root: Path) -> None:
    (root / "csrc").mkdir(parents=True)
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "setup.py").write_text("setup()\n")
    (root / "README.md").write_text("readme\n")
    (root / "csrc" / "k.c").write_text("double k(void) { return 1.0; }\n")
    (root / "src" / "pkg" / "m.py").write_text("x = 1\n")


def test_source_digest_follows_the_compiled_sources(tmp_path):
    _tree(tmp_path)
    d0 = build_native.source_digest(tmp_path)
    # build products and metadata change nothing the build compiles
    (tmp_path / "src" / "pkg" / "_m.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    (tmp_path / "src" / "pkg" / "_m.c").write_text("/* Cython output */\n")
    (tmp_path / "README.md").write_text("changed\n")
    assert build_native.source_digest(tmp_path) == d0
    # a C source, a Python module or setup.py does
    for f, text in (("csrc/k.c", "double k(void) { return 2.0; }\n"), ("src/pkg/m.py", "x = 2\n"),
                    ("setup.py", "setup(name='x')\n")):
        before = build_native.source_digest(tmp_path)
        (tmp_path / f).write_text(text)
        assert build_native.source_digest(tmp_path) != before, f
