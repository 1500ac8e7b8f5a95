"""Run the fuzz harnesses: the gate (a fixed amount of work) or an exploration (a time budget).

    python fuzz/run.py                                    # the gate (CI): the corpus, then RUNS executions
    python fuzz/run.py --runs 0                           # replay the corpus only
    python fuzz/run.py --seconds 1800 --seed 7 --keep explore   # explore for 30 minutes, keep what it finds
    python fuzz/run.py --merge explore                    # add to fuzz/corpus/ what explore/ reaches beyond it
    python fuzz/run.py --native-coverage [DIR] ...        # any of these against fuzz/build_native.py's build
    python fuzz/run.py --only special ...                 # one harness (repeatable)

Each harness (``fuzz/fuzz_<name>.py``) runs in its own process under libFuzzer (atheris).  It
first replays the committed corpus ``fuzz/corpus/<name>/``: every file once, in an order fixed by
their names and the seed (``-seed_inputs``), so an input that once broke the contract is tried on
every run.  Then it mutates:

* the gate (default): exactly :data:`GATE_RUNS` ``[name]`` executions (``--runs`` for all) with
  ``-seed=1`` (``--seed``).  libFuzzer's choices depend on the seed, the corpus and the coverage
  only, never on time, so a commit gets the same inputs, the same coverage and the same verdict
  on a fast machine, a slow one or a loaded one (docs/fuzzing.md lists what is pinned for that);
* an exploration (``--seconds``): as many executions as the time budget allows, shared equally
  by the harnesses.  What it finds goes into ``--keep DIR`` (one sub-directory per harness) and
  is added to the corpus with ``--merge DIR``.

The first finding stops a harness; libFuzzer writes the input to ``<artifacts>/<name>-crash-<sha1>``
(replay: ``python fuzz/fuzz_<name>.py <file>``).  The exit status is 0 only if no harness found
anything.  Each harness's line gives the executions and libFuzzer's coverage after the replay and
at the end: ``cov`` (coverage points: Python branches of dpbounds, plus, with ``--native-coverage``,
the edges of the compiled code) and ``ft`` (features: points combined with their hit counts).

dpbounds is imported as installed (or from PYTHONPATH): this script never adds the checkout's
``src/`` to the path.  With ``--native-coverage [DIR]`` it is imported from the coverage-
instrumented copy that ``fuzz/build_native.py`` built in DIR (default ``build/fuzz-native``), with
that build's libFuzzer (+ ASan/UBSan) runtime preloaded: atheris then also sees the branches of
the C core and the Cython modules, a sanitizer report is a finding, and each line adds how many
edges of the C core (``csrc/``) the run reached (libFuzzer's ``-print_coverage``); a run that
reports none fails (``BLIND``).  A build whose sources differ from the checkout's is refused.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))   # (already there when run as a script)
from build_native import COVERAGE_EXTRA, source_digest  # noqa: E402
from build_native import DEFAULT_OUT as DEFAULT_NATIVE

HARNESSES = ("special", "bounds", "tradeoff", "rdp", "accountants", "cli", "sweep_axes")
CORPUS = HERE / "corpus"
#: Executions per harness after the replay in the gate.  Sized so that the instrumented gate
#: (.ci/sanitize's fuzz step, the slower of the two) takes about 3 minutes on an idle 2-core
#: machine with both steps' start-up and replay; the harnesses differ 300-fold in speed.
GATE_RUNS = {"special": 5000, "bounds": 5000, "tradeoff": 4000, "rdp": 300, "accountants": 300, "cli": 800,
             "sweep_axes": 20000}
GATE_SEED = 1
#: --merge adds inputs for new features (not new coverage points) only up to this many files
MERGE_MAX_FILES = 250
# A hard limit per input, wall clock: far above the 1 s CPU budget of each call, so that only a
# real hang (a C loop that never ends) trips it; twice that under ASan, which slows the compiled
# code.  The gate's is larger still: wall time stretches with the machine's load, and the gate's
# verdict may not.  (Each harness's line shows its slowest input, for the margin.)
HANG_SECONDS = 30
GATE_HANG_SECONDS = 120
# Memory: the plain runs get a data-segment limit (setrlimit), so that an allocation beyond it fails
# at the same allocation on every machine (MemoryError: a finding) instead of when libFuzzer's
# once-a-second RSS sampler happens to look; the instrumented runs (ASan's shadow memory rules out
# that limit) get libFuzzer's per-allocation -malloc_limit_mb.  The RSS limit stays as a backstop.
MEMORY_MB = 3072
RSS_BACKSTOP_MB = MEMORY_MB + 1024

# The libFuzzer and sanitizer options of the instrumented runs.  detect_leaks=0: CPython and numpy
# keep objects until exit on purpose (atheris' docs say the same); allocator_may_return_null=1: a
# huge request returns NULL, which the C core reports as DPB_ENOMEM, instead of ASan aborting.
NATIVE_ENV = {
    "ASAN_OPTIONS": "detect_leaks=0:allocator_may_return_null=1:halt_on_error=1:strict_string_checks=1",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
}
# Every run: string hashing fixed (set iteration order), one BLAS/OpenMP thread (a reduction's
# rounding does not depend on the machine's core count).
RUN_ENV = {"PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# The gate also: a call over the CPU budget is reported, not a finding (fuzz/_contract.py: CPU
# time depends on the machine and its load), and numpy runs its baseline code paths only (its SIMD
# dispatch would pick other kernels, with other last bits, on another CPU).
GATE_ENV = {"DPBOUNDS_FUZZ_SLOW": "report"}


def coverage(text: str) -> tuple[int, int]:
    """libFuzzer's last ``cov:`` and ``ft:`` of a run (0, 0 if it printed none)."""
    found = re.findall(r"^#\d+\s+\w+\s+cov: (\d+) ft: (\d+)", text, re.MULTILINE)
    return (int(found[-1][0]), int(found[-1][1])) if found else (0, 0)


def inited(text: str) -> tuple[int, int, int] | None:
    """(executions, cov, ft) when libFuzzer had run the whole corpus (its INITED line), else None."""
    m = re.search(r"^#(\d+)\s+INITED\s+cov: (\d+) ft: (\d+)", text, re.MULTILINE)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def c_core_coverage(text: str) -> tuple[int, int, int, int]:
    """(edges reached, edges, functions reached, functions) of the C core in ``-print_coverage``'s report.

    A function counts as the C core's when its source file is in a ``csrc/`` directory; the report
    lists each instrumented function once (``COVERED_FUNC: hits: H edges: E/T name file:line``).
    """
    e = t = fr = fn = 0
    for hit, total, path in re.findall(r"^(?:UN)?COVERED_FUNC: hits: \d+ edges: (\d+)/(\d+) \S+ (\S+):\d+$",
                                       text, re.MULTILINE):
        if "/csrc/" not in path:
            continue
        e, t, fn = e + int(hit), t + int(total), fn + 1
        fr += int(hit) > 0
    return e, t, fr, fn


def executions(text: str) -> int:
    """How many inputs the run executed (libFuzzer's final statistics, else its last status line)."""
    runs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", text)
    if runs:
        return int(runs[-1])
    done = re.findall(r"Done (\d+) runs", text) or re.findall(r"^#(\d+)\s", text, re.MULTILINE)
    return int(done[-1]) if done else 0


def slowest_input(text: str) -> int:
    """libFuzzer's slowest input of the run, in whole seconds of wall time."""
    found = re.findall(r"stat::slowest_unit_time_sec:\s*(\d+)", text)
    return int(found[-1]) if found else 0


def slow_calls(text: str) -> int:
    """Calls over the CPU budget that the gate reported (fuzz/_contract.py) instead of failing."""
    return len(re.findall(r"^slow call \(reported\)", text, re.MULTILINE))


def corpus_files(directory: Path) -> list[Path]:
    """The corpus entries of one harness, sorted by name (the replay order is fixed by it)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and not p.name.startswith("."))


def native_build(build_dir: Path) -> dict[str, str]:
    """The manifest of fuzz/build_native.py's build in ``build_dir``, checked to be current."""
    manifest = build_dir / "manifest.json"
    if not manifest.is_file():
        sys.exit(f"no instrumented build in {build_dir}: run  python {HERE / 'build_native.py'} --out {build_dir}")
    info: dict[str, str] = json.loads(manifest.read_text())
    root = Path(info["source_root"])
    if root.is_dir() and source_digest(root) != info["source_digest"]:
        sys.exit(f"the instrumented build in {build_dir} is older than the sources in {root}: "
                 f"rebuild it (python {HERE / 'build_native.py'} --out {build_dir})")
    if info.get("coverage_extra") != COVERAGE_EXTRA:
        sys.exit(f"the instrumented build in {build_dir} was made with other coverage flags "
                 f"({info.get('coverage_extra')!r}, not {COVERAGE_EXTRA!r}): rebuild it")
    for key in ("pythonpath", "preload"):
        if not Path(info[key]).exists():
            sys.exit(f"the instrumented build in {build_dir} is incomplete ({info[key]} is missing): rebuild it")
    return info


def numpy_baseline() -> str:
    """numpy's baseline CPU features (NPY_ENABLE_CPU_FEATURES: enable these, none dispatched beyond)."""
    try:
        from numpy._core._multiarray_umath import __cpu_baseline__ as base  # numpy >= 2
    except ImportError:
        try:
            from numpy.core._multiarray_umath import __cpu_baseline__ as base  # type: ignore[no-redef]
        except ImportError:
            return ""
    return " ".join(base)


@dataclass
class Result:
    name: str
    status: str                 # ok, FINDING, BLIND, ERROR, skipped
    files: int                  # corpus entries replayed
    replay: tuple[int, int] | None   # (cov, ft) after the replay
    runs: int                   # executions in all (the replay included)
    cov: tuple[int, int]        # (cov, ft) at the end
    seconds: float              # wall clock
    detail: str = ""
    c_core: str = ""
    slow: int = 0
    slowest: int = 0            # seconds, libFuzzer's slowest input (whole seconds)
    cpu: float = 0.0            # CPU seconds of the harness process (its wall time on an idle machine)


def _children_cpu() -> float:
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


_SETARCH: list[list[str]] = []


def no_aslr_prefix() -> list[str]:
    """``setarch <machine> -R``, if it works here, else [] (checked once).

    The instrumented runs start with address-space randomisation off: ASan's allocator and the
    sanitizer runtimes place memory by the randomised base addresses, and with them the coverage
    of a run's mutations varied from run to run (the replay did not).  Where the system forbids
    it (some container profiles refuse the personality flag) the run goes on, and says so.
    """
    if not _SETARCH:
        import platform

        cmd = ["setarch", platform.machine(), "-R"]
        try:
            ok = subprocess.run([*cmd, "true"], capture_output=True, timeout=30).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        _SETARCH.append(cmd if ok else [])
    return _SETARCH[0]


def _limit_data() -> None:   # (in the child, before exec)
    import resource

    limit = MEMORY_MB * 2 ** 20
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def run_one(name: str, artifacts: Path, out_dir: Path, *, runs: int | None = None, seconds: int | None = None,
            seed: int = GATE_SEED, corpus_root: Path | None = CORPUS, native: dict[str, str] | None = None,
            script: Path | None = None) -> Result:
    """One harness: replay ``corpus_root/name``, then ``runs`` executions (the gate) or ``seconds`` of fuzzing.

    New inputs go to ``out_dir`` (libFuzzer's output corpus); ``script`` replaces the harness file
    (tests).
    """
    if (runs is None) == (seconds is None):
        raise ValueError("give runs (the gate) or seconds (an exploration)")
    script = script or HERE / f"fuzz_{name}.py"
    files = corpus_files(corpus_root / name) if corpus_root is not None else []
    out_dir.mkdir(parents=True, exist_ok=True)   # (the gate's is empty: main() refuses a kept one with files)
    gate = runs is not None
    # -detect_leaks=0: under ASan libFuzzer runs an input again when it allocated more than it freed
    # (every cache of CPython and numpy), and those extra runs would count among the gate's
    hang = GATE_HANG_SECONDS if gate else HANG_SECONDS * (2 if native is not None else 1)
    cmd = [sys.executable, str(script), f"-seed={seed}", f"-timeout={hang}",
           f"-rss_limit_mb={RSS_BACKSTOP_MB}", f"-malloc_limit_mb={MEMORY_MB}", "-reload=0", "-detect_leaks=0",
           "-print_final_stats=1", f"-artifact_prefix={artifacts}/{name}-"]
    if files:
        if any("," in str(f) for f in files):
            raise ValueError(f"a corpus path holds a comma (libFuzzer's list separator): {corpus_root}")
        listing = artifacts / f"{name}.corpus-list"
        listing.write_text(",".join(str(f.resolve()) for f in files))   # (no trailing newline: part of a name)
        cmd.append(f"-seed_inputs=@{listing}")
    # the replay: libFuzzer runs the empty input, then every file (or, without files, one newline);
    # an exploration continuing in a kept directory starts from its files too
    loaded = len(files) + len(corpus_files(out_dir))
    init = loaded + 1 if loaded else 2
    if gate:
        cmd.append(f"-runs={init + runs}")   # type: ignore[operator]
    else:
        cmd.append(f"-max_total_time={seconds}")
    env = dict(os.environ, **RUN_ENV)
    if gate:
        env.update(GATE_ENV, NPY_ENABLE_CPU_FEATURES=numpy_baseline())
    preexec = None
    if native is not None:
        cmd[:0] = no_aslr_prefix()
        cmd.append("-print_coverage=1")
        env.update(NATIVE_ENV, LD_PRELOAD=native["preload"],
                   PYTHONPATH=os.pathsep.join(filter(None, [native["pythonpath"], os.environ.get("PYTHONPATH")])))
    elif sys.platform.startswith("linux"):
        preexec = _limit_data
    cmd.append(str(out_dir))
    t0, cpu0 = time.monotonic(), _children_cpu()
    limit = (seconds or 0) + 4 * hang + 600 + (init + (runs or 0)) * 2
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=limit, preexec_fn=preexec)
    wall, cpu = time.monotonic() - t0, _children_cpu() - cpu0
    text = proc.stdout + proc.stderr
    (artifacts / f"{name}.log").write_text(text)
    if proc.returncode == 0 and text.startswith("SKIP:"):
        return Result(name, "skipped", 0, None, 0, (0, 0), wall, text.strip().splitlines()[0][len("SKIP: "):])
    n = executions(text)
    at_init = inited(text)
    res = Result(name, "ok", len(files), at_init[1:] if at_init else None, n, coverage(text), wall,
                 slow=slow_calls(text), cpu=cpu, slowest=slowest_input(text))
    if native is not None:
        e, t, fr, fn = c_core_coverage(text)
        res.c_core = f"C core: {e}/{t} edges, {fr}/{fn} functions"
        if proc.returncode == 0 and t == 0:
            # a run that ends normally prints the coverage of every instrumented function: none
            # from csrc/ means the C core was not instrumented or not loaded, and the run was blind
            res.status, res.detail = "BLIND", "no coverage report of the C core (see the log)"
            return res
    if proc.returncode != 0:
        # a contract Finding, a Python exception, libFuzzer's own reports (timeout, out-of-memory,
        # deadly signal) and, in instrumented runs, ASan's and UBSan's
        found = re.findall(r"^(Finding: .*|\w+Error: .*|==\d+== ?ERROR: .*|.*: runtime error: .*)$", text, re.MULTILINE)
        saved = re.findall(r"Test unit written to (\S+)", text)
        res.status = "FINDING"
        res.detail = (found[0] if found else f"exit status {proc.returncode}")[:500]
        if at_init is None:
            res.detail += "\n      during the replay of the corpus"
        if saved:
            res.detail += f"\n      input saved: {saved[-1]}"
        return res
    # a clean run: the whole corpus was replayed, and the gate ran exactly its executions
    if at_init is None or at_init[0] != init:
        res.status, res.detail = "ERROR", f"the replay ran {at_init[0] if at_init else 0} inputs, not {init} (see the log)"
    elif gate and n != init + runs:   # type: ignore[operator]
        res.status, res.detail = "ERROR", f"{n} executions, not {init} + {runs} (see the log)"
    return res


def read_merge_control(text: str) -> tuple[list[str], dict[int, set[int]], dict[int, set[int]]]:
    """libFuzzer's merge control file: the inputs, and the features (FT) and coverage points (COV) of each."""
    lines = text.splitlines()
    n = int(lines[0])
    files = lines[2:2 + n]
    ft: dict[int, set[int]] = {}
    cov: dict[int, set[int]] = {}
    for line in lines[2 + n:]:
        kind, _, rest = line.partition(" ")
        if kind in ("FT", "COV"):
            i, _, vals = rest.partition(" ")
            (ft if kind == "FT" else cov)[int(i)] = {int(v) for v in vals.split()}
    return files, ft, cov


def select(keep: list[int], candidates: list[int], ft: dict[int, set[int]], cov: dict[int, set[int]],
           order: dict[int, tuple[int, str]], max_files: int) -> list[int]:
    """Candidates to add to ``keep``: first every one that reaches coverage points the rest do not
    (greedy set cover: most new points first), then the ones with most new features while the corpus
    has fewer than ``max_files`` files.  Ties go to the smaller input, then to the name (``order``)."""
    import heapq

    seen = {"cov": set().union(*(cov.get(i, set()) for i in keep)),
            "ft": set().union(*(ft.get(i, set()) for i in keep))}
    chosen: list[int] = []
    pool = set(candidates)
    for kind, key, limit in (("cov", cov, None), ("ft", ft, max_files)):
        # lazy greedy: a gain only shrinks as the corpus grows, so a stale gain is an upper bound
        heap = [(-len(key.get(i, set()) - seen[kind]), order[i], i) for i in pool]
        heapq.heapify(heap)
        while heap and (limit is None or len(keep) + len(chosen) < limit):
            _, rank, i = heapq.heappop(heap)
            gain = len(key.get(i, set()) - seen[kind])
            if gain == 0:
                continue
            if heap and (-gain, rank) > heap[0][:2]:
                heapq.heappush(heap, (-gain, rank, i))
                continue
            chosen.append(i)
            pool.discard(i)
            seen["cov"] |= cov.get(i, set())
            seen["ft"] |= ft.get(i, set())
    return chosen


def merge(names: tuple[str, ...], source: Path, corpus_root: Path, artifacts: Path,
          native: dict[str, str] | None, max_files: int) -> int:
    """Add to corpus_root/<name> the inputs of source/<name> that reach coverage it does not reach.

    libFuzzer's -merge=1 runs every input of both directories and lists the coverage points and
    features of each; the choice is :func:`select`'s: every coverage point, then as many features
    as ``max_files`` allows (libFuzzer's own choice keeps an input per new feature, several times
    as many files).  The corpus's files all stay.  New files are named by their SHA-1, as
    libFuzzer names them.
    """
    import hashlib

    failed = 0
    for name in names:
        src = source / name
        if not corpus_files(src):
            print(f"  {name:<12} nothing in {src}")
            continue
        dest = corpus_root / name
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="dpbounds-merge-") as tmp:
            control = Path(tmp) / "control"
            (Path(tmp) / "out").mkdir()
            cmd = [sys.executable, str(HERE / f"fuzz_{name}.py"), "-merge=1", f"-merge_control_file={control}",
                   f"-timeout={HANG_SECONDS}", f"-rss_limit_mb={RSS_BACKSTOP_MB}", "-detect_leaks=0",
                   f"-artifact_prefix={artifacts}/{name}-", str(Path(tmp) / "out"), str(dest), str(src)]
            env = dict(os.environ, **RUN_ENV)
            if native is not None:
                env.update(NATIVE_ENV, LD_PRELOAD=native["preload"],
                           PYTHONPATH=os.pathsep.join(filter(None, [native["pythonpath"], os.environ.get("PYTHONPATH")])))
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
            (artifacts / f"{name}.merge.log").write_text(proc.stdout + proc.stderr)
            if proc.returncode != 0 or not control.is_file():
                print(f"  {name:<12} FAILED   (see {artifacts / (name + '.merge.log')})", flush=True)
                failed += 1
                continue
            text = control.read_text()
            (artifacts / f"{name}.merge-control").write_text(text)
            files, ft, cov = read_merge_control(text)
        in_dest = [i for i, f in enumerate(files) if Path(f).parent.resolve() == dest.resolve()]
        others = [i for i, f in enumerate(files) if i not in set(in_dest)]
        order = {i: (Path(f).stat().st_size, Path(f).name) for i, f in enumerate(files)}
        chosen = select(in_dest, others, ft, cov, order, max_files)
        added = 0
        for i in chosen:
            data = Path(files[i]).read_bytes()
            target = dest / hashlib.sha1(data).hexdigest()
            if not target.exists():
                target.write_bytes(data)
                added += 1

        def union(d: dict[int, set[int]], idx: list[int]) -> int:
            return len(set().union(*(d.get(i, set()) for i in idx)))

        print(f"  {name:<12} ok       {added} of {len(others)} inputs added to {dest}: corpus cov {union(cov, in_dest)} "
              f"-> {union(cov, in_dest + chosen)} (all inputs {union(cov, list(range(len(files))))}), ft "
              f"{union(ft, in_dest)} -> {union(ft, in_dest + chosen)} (all {union(ft, list(range(len(files))))})",
              flush=True)
    return failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--runs", type=int, default=None, metavar="N",
                      help="executions per harness after the replay (default: the gate's, per harness: "
                           + ", ".join(f"{k} {v}" for k, v in GATE_RUNS.items()) + ")")
    mode.add_argument("--seconds", type=int, default=None,
                      help="explore instead: a time budget shared equally by the harnesses (not deterministic)")
    mode.add_argument("--merge", type=Path, default=None, metavar="DIR",
                      help="add to the corpus the inputs of DIR/<harness>/ that reach new coverage")
    ap.add_argument("--max-files", type=int, default=MERGE_MAX_FILES,
                    help=f"--merge: add inputs for new features only up to this many files per harness "
                         f"(default {MERGE_MAX_FILES}; new coverage points are always added)")
    ap.add_argument("--seed", type=int, default=GATE_SEED, help=f"libFuzzer seed (default {GATE_SEED})")
    ap.add_argument("--only", choices=HARNESSES, action="append", help="run only this harness (repeatable)")
    ap.add_argument("--corpus", type=Path, default=CORPUS,
                    help=f"the corpus, one sub-directory per harness (default: {CORPUS})")
    ap.add_argument("--no-corpus", action="store_true", help="start from nothing (no replay)")
    ap.add_argument("--keep", type=Path, default=None, metavar="DIR",
                    help="keep the inputs the run adds in DIR/<harness>/ (an exploration continues from them); "
                         "default: a temporary directory")
    ap.add_argument("--artifacts", type=Path, default=HERE / "artifacts",
                    help="where crashing inputs and the logs go (default: fuzz/artifacts)")
    ap.add_argument("--native-coverage", nargs="?", type=Path, const=DEFAULT_NATIVE, default=None, metavar="DIR",
                    help="fuzz fuzz/build_native.py's coverage-instrumented build in DIR "
                         f"(default DIR: {DEFAULT_NATIVE}) instead of the dpbounds on the path")
    args = ap.parse_args(argv)
    native = native_build(args.native_coverage) if args.native_coverage is not None else None
    names = tuple(args.only) if args.only else HARNESSES
    args.artifacts.mkdir(parents=True, exist_ok=True)
    if args.merge is not None:
        print(f"merging {args.merge} into {args.corpus}"
              + (" (coverage of the instrumented build)" if native else ""), flush=True)
        return 1 if merge(names, args.merge, args.corpus, args.artifacts, native, args.max_files) else 0
    gate = args.seconds is None
    corpus_root = None if args.no_corpus else args.corpus
    if gate and args.keep is not None and any(corpus_files(args.keep / n) for n in names):
        sys.exit(f"--keep {args.keep} holds inputs: the gate starts from the corpus alone (use an empty directory)")
    if native is None:
        import dpbounds

        where = f"dpbounds {dpbounds.__version__} from {Path(dpbounds.__file__).parent}"
    else:   # (its modules load only under the preload)
        where = (f"dpbounds from {native['pythonpath']}, compiled code coverage-instrumented "
                 f"({native['clang']}; sanitizers: {native['sanitizers'] or 'none'})")
    share = max(1, (args.seconds or 0) // len(names))
    plan = (f"replay of {corpus_root}, then " if corpus_root else "") + (
        f"{args.runs} executions per harness" if gate and args.runs is not None else
        "the gate's executions" if gate else f"{share} s per harness (exploration)") + f", seed {args.seed}"
    print(f"{where}; {len(names)} harnesses: {plan}", flush=True)
    if native is not None:
        print("  address-space randomisation off (setarch -R)" if no_aslr_prefix() else
              "  WARNING: address-space randomisation could not be turned off (setarch -R): the coverage "
              "of the executions after the replay may differ from run to run", flush=True)
    tmp = tempfile.TemporaryDirectory(prefix="dpbounds-fuzz-") if args.keep is None else None
    out_root = args.keep if args.keep is not None else Path(tmp.name)  # type: ignore[union-attr]
    failed = 0
    total = 0
    cpu = 0.0
    t0 = time.monotonic()
    for name in names:
        runs = (args.runs if args.runs is not None else GATE_RUNS[name]) if gate else None
        r = run_one(name, args.artifacts, out_root / name, runs=runs, seconds=None if gate else share,
                    seed=args.seed, corpus_root=corpus_root, native=native)
        total += r.runs
        cpu += r.cpu
        if r.status == "skipped":
            print(f"  {name:<12} skipped  {r.detail}", flush=True)
            continue
        replay = f"replay {r.files:>3} files: cov {r.replay[0]:>5} ft {r.replay[1]:>6}" if r.replay else \
            f"replay {r.files:>3} files: (not finished)"
        line = (f"  {name:<12} {r.status:<8} {replay} | {r.runs:>7} executions: cov {r.cov[0]:>5} ft {r.cov[1]:>6}"
                f"  ({r.seconds:.0f} s, {r.cpu:.0f} s CPU, slowest input {r.slowest} s)")
        if r.c_core:
            line += f"  {r.c_core}"
        if r.slow:
            line += f"  [{r.slow} slow call(s) reported, see the log]"
        print(line + (f"\n      {r.detail}" if r.detail else ""), flush=True)
        failed += r.status in ("FINDING", "BLIND", "ERROR")
    if tmp is not None:
        tmp.cleanup()
    print(f"total {total} executions in {time.monotonic() - t0:.0f} s ({cpu:.0f} s CPU); {failed} harness(es) with findings"
          + (f" (inputs and logs in {args.artifacts})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
