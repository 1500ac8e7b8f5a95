"""The fuzz tools: fuzz/run.py's gate and its reading of libFuzzer's output, fuzz/build_native.py's
staleness check, fuzz/seeds.py's encoding of corpus entries.

fuzz/run.py decides from libFuzzer's log whether a coverage-instrumented run saw the C core
(``-print_coverage``'s per-function report), whether the whole corpus was replayed and whether the
gate ran exactly its executions; fuzz/build_native.py's source digest decides whether a build
still matches the sources; these are plain functions, checked without atheris or clang.  With
atheris installed, a tiny harness checks the gate itself: the replay runs every corpus file once,
an input that breaks the harness fails it, and two runs with the same seed and corpus execute
the same inputs; and the corpus encoder is checked against atheris' own reader.  (fuzz/ is not
among the wheel's test sources: outside a checkout this skips.)
"""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
if not (FUZZ / "run.py").is_file():
    pytest.skip("fuzz/ is not next to tests/ (tests run outside a checkout)", allow_module_level=True)
sys.path.insert(0, str(FUZZ))
import build_native  # noqa: E402
import run  # noqa: E402
import seeds  # noqa: E402

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


def test_replay_and_execution_counts_from_the_log():
    assert run.inited(LOG) == (2, 9, 10)
    assert run.inited(LOG.replace("INITED", "pulse ")) is None     # stopped during the replay
    assert run.executions(LOG) == 17966
    assert run.executions("#5\tNEW    cov: 1 ft: 1\n#9\tREDUCE cov: 2 ft: 2\n") == 9
    text = "slow call (reported) 1.20 s CPU (limit 1.0 s) -- f(1)\nslow call (reported) 2.00 s CPU -- g()\n"
    assert run.slow_calls(LOG + text) == 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="personality flags are Linux's")
def test_instrumented_runs_start_without_address_space_randomisation():
    # the prefix the instrumented runs get: where it works, a child really runs with
    # ADDR_NO_RANDOMIZE (0x0040000) set; where the system refuses it, no prefix (run.py says so)
    prefix = run.no_aslr_prefix()
    if not prefix:
        pytest.skip("setarch -R is refused here")
    out = subprocess.run([*prefix, "cat", "/proc/self/personality"], capture_output=True, text=True, check=True)
    assert int(out.stdout, 16) & 0x0040000
    plain = subprocess.run(["cat", "/proc/self/personality"], capture_output=True, text=True, check=True)
    assert not int(plain.stdout, 16) & 0x0040000


def test_corpus_files_are_sorted_by_name(tmp_path):
    for name in ("b", "a", ".hidden", "c"):
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "sub").mkdir()
    assert [p.name for p in run.corpus_files(tmp_path)] == ["a", "b", "c"]
    assert run.corpus_files(tmp_path / "absent") == []


def test_every_harness_has_a_gate_budget_and_a_corpus():
    assert set(run.GATE_RUNS) == set(run.HARNESSES)
    for name in run.HARNESSES:
        assert (FUZZ / f"fuzz_{name}.py").is_file()
        assert (FUZZ / "corpus" / name).is_dir() and run.corpus_files(FUZZ / "corpus" / name), name


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


# ---------------------------------------------------------------- the corpus encoder
def test_encoder_layout():
    # integers from the end, most significant byte first; the rest from the front
    e = seeds.Encoder()
    e.int_in_range(0, 7, 5)
    e.bool(True)
    e.int_in_range(-2, 1000, 999)      # 1001 in two bytes: 0x03e9
    e.ascii("ab")
    assert e.data() == b"\x01" + b"\x01ab" + bytes([0xE9, 0x03, 5])
    with pytest.raises(seeds.SeedError):
        e.int_in_range(0, 7, 8)


# ---------------------------------------------------------------- with atheris
def _atheris():
    return pytest.importorskip("atheris", reason="the gate's own checks need atheris (pip install atheris)")


def test_encoder_is_what_atheris_reads():
    atheris = _atheris()
    e = seeds.Encoder()
    vals = [e.int_in_range(0, 7, 5), e.bool(True), e.integral(2 ** 63 + 12345), e.int_in_range(-2, 1000, 999),
            e.special_float(9), e.int_in_range(0, 12, 2), e.ascii("ab"), e.consume_int(2, -7)]
    d = atheris.FuzzedDataProvider(e.data())
    got = [d.ConsumeIntInRange(0, 7), d.ConsumeBool(), d.ConsumeProbability(), d.ConsumeIntInRange(-2, 1000),
           d.ConsumeFloat(), d.ConsumeIntInRange(0, 12), d.ConsumeUnicodeNoSurrogates(2), d.ConsumeInt(2)]
    assert got == vals and d.remaining_bytes() == 0


STEERED = [   # (Draw method, its arguments, the value asked for)
    ("double", ("any",), math.nan), ("double", ("sigma",), 1.7976931348623157e308),     # hard doubles
    ("double", ("x",), -2.2250738585072014e-308), ("double", ("x",), -4.37086174e307),  # ConsumeFloat
    ("double", ("sigma",), 0.217), ("double", ("unit",), 1 - 1.9e-6), ("double", ("unit",), 1e-5),
    ("double", ("order",), 7.0), ("double", ("order",), 12.75), ("double", ("rounds",), 7808.0),
    ("double", ("eps",), 0.1), ("double", ("any",), -3.5e-7), ("double", ("count",), 42.0),
    ("int", (2, 1000), 16), ("bool", (), True), ("pick", (("a", "b", "c"),), "c"),
    ("scalar", ("sigma",), 10 ** 400), ("scalar", ("unit",), None), ("scalar", ("unit",), "1.5"),
    ("scalar", ("unit",), True), ("scalar", ("unit",), 1 + 1j), ("scalar", ("x",), [0.5]),
    ("scalar", ("count",), 3), ("scalar", ("x",), np.float64(0.5)), ("scalar", ("x",), np.float32(0.25)),
    ("scalar", ("x",), np.array(2.5)), ("shape", (None,), (2, 0, 3)), ("shape", ((4, 3),), (1, 3)),
    ("shape", ((4, 3),), (2, 2)), ("array", ("unit",), np.array([0.0, 1e-300, 1.0])),
    ("array", ("x",), np.zeros((2, 0))), ("array", ("count",), np.array([[1, 2], [3, 4]], dtype=np.int32)),
    ("array", ("x",), np.array([1.0 + 2.0j, 3.0 + 2.0j])), ("array", ("x",), np.array([1.5, None], dtype=object)),
    ("array", ("x",), [0.5, 2.0]), ("array", ("x",), (1.5,)), ("array", ("x",), np.array([True, False])),
    ("value", ("sigma",), np.empty((0, 0, 0))), ("value", ("sigma",), 2.0), ("text", (40,), "1:1e9:1e6:log"),
]


def test_steered_draws_are_what_the_real_draw_reads():
    _atheris()
    from _inputs import Draw

    steer = seeds.Steer([want for _, _, want in STEERED])
    asked = [getattr(steer, m)(*a) for m, a, _ in STEERED]
    draw = Draw(steer.enc.data())
    for (m, a, want), s in zip(STEERED, asked):
        r = getattr(draw, m)(*a)
        assert type(r) is type(s) and repr(r) == repr(s), (m, a, want, s, r)
        if isinstance(want, float) and m == "double":   # each value is the one asked for or the nearest reachable
            assert math.isnan(want) if math.isnan(s) else abs(s - want) <= 1e-13 * abs(want), (want, s)
    assert not steer.script and draw.fdp.remaining_bytes() == 0
    # past the script both read an exhausted input the same way
    assert repr([steer.double("unit"), steer.scalar("x"), steer.value("sigma")]) == \
        repr([draw.double("unit"), draw.scalar("x"), draw.value("sigma")])


TINY = """
import os, sys
import atheris

@atheris.instrument_func
def one(data):
    with open(os.environ["TINY_LOG"], "a") as f:
        f.write(data.hex() + "\\n")
    if data == b"bad":
        raise RuntimeError("a bad input")
    if len(data) >= 2 and data[0] == 7:
        if data[1] > 100:
            return 2
        return 1
    return 0

atheris.Setup(sys.argv, one)
atheris.Fuzz()
"""


def _tiny(tmp_path, files):
    script = tmp_path / "fuzz_tiny.py"
    script.write_text(TINY)
    corpus = tmp_path / "corpus"
    (corpus / "tiny").mkdir(parents=True)
    for name, data in files.items():
        (corpus / "tiny" / name).write_bytes(data)
    return script, corpus


def _gate(tmp_path, monkeypatch, script, corpus, runs, tag):
    log = tmp_path / f"{tag}.log"
    log.write_text("")
    monkeypatch.setenv("TINY_LOG", str(log))
    art = tmp_path / f"art-{tag}"
    art.mkdir()
    r = run.run_one("tiny", art, tmp_path / f"out-{tag}", runs=runs, corpus_root=corpus, script=script)
    return r, log.read_text().split()


def test_replay_runs_every_corpus_file_once(tmp_path, monkeypatch):
    _atheris()
    files = {"finding-x": b"\x07\x80", "a": b"abc", "b": b"\x07\x01", "c": b"zz"}
    script, corpus = _tiny(tmp_path, files)
    r, ran = _gate(tmp_path, monkeypatch, script, corpus, 0, "replay")
    assert r.status == "ok", r.detail
    assert r.files == 4 and r.runs == 5 and r.replay is not None
    # libFuzzer's empty input (an empty line in the log), then each file once
    assert sorted(ran) == sorted(d.hex() for d in files.values())


def test_a_bad_input_in_the_corpus_fails_the_replay(tmp_path, monkeypatch):
    _atheris()
    script, corpus = _tiny(tmp_path, {"a": b"abc", "finding-bad": b"bad", "z": b"zz"})
    r, _ = _gate(tmp_path, monkeypatch, script, corpus, 100, "bad")
    assert r.status == "FINDING"
    assert "a bad input" in r.detail and "during the replay" in r.detail


def test_the_gate_runs_n_executions_and_repeats_itself(tmp_path, monkeypatch):
    _atheris()
    script, corpus = _tiny(tmp_path, {"a": b"abc", "b": b"\x07\x01"})
    r1, ran1 = _gate(tmp_path, monkeypatch, script, corpus, 300, "one")
    r2, ran2 = _gate(tmp_path, monkeypatch, script, corpus, 300, "two")
    assert r1.status == r2.status == "ok", (r1.detail, r2.detail)
    assert r1.runs == 2 + 1 + 300                    # the replay (two files and the empty input), then 300
    assert (r1.runs, r1.replay, r1.cov) == (r2.runs, r2.replay, r2.cov)
    assert ran1 == ran2                              # the same inputs in the same order
    assert r1.cov[0] > 0


@pytest.mark.slow
def test_the_corpus_seeds_replay_their_findings():
    _atheris()
    import subprocess

    # each finding-* entry is what fuzz/seeds.py encodes, and replayed it makes the finding's call
    proc = subprocess.run([sys.executable, str(FUZZ / "seeds.py"), "--check"], capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_merge_control_file_and_selection():
    control = "4\n1\n/c/seed\n/n/a\n/n/b\n/n/c\nSTARTED 0 3\nFT 0 1 2\nCOV 0 10\nSTARTED 1 5\nFT 1 1 3\nCOV 1 10 11\n" \
              "STARTED 2 4\nFT 2 4 5 6\nCOV 2 10\nSTARTED 3 2\nFT 3 3\nCOV 3 11\n"
    files, ft, cov = run.read_merge_control(control)
    assert files == ["/c/seed", "/n/a", "/n/b", "/n/c"] and ft[2] == {4, 5, 6} and cov[1] == {10, 11}
    order = {0: (3, "seed"), 1: (5, "a"), 2: (4, "b"), 3: (2, "c")}
    # point 11 first: from c, the smaller of a and c; then features: b (three new), then a is
    # left with nothing new; with room for two files only, no feature-only input is added
    assert run.select([0], [1, 2, 3], ft, cov, order, max_files=10) == [3, 2]
    assert run.select([0], [1, 2, 3], ft, cov, order, max_files=2) == [3]
