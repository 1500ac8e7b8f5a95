"""Run every fuzz harness for its share of a time budget and report executions and findings.

    python fuzz/run.py --seconds 60 --seed 1            # CI: ~60 s in total
    python fuzz/run.py --seconds 1800 --seed 7          # a longer run (docs/fuzzing.md)
    python fuzz/run.py --seconds 30 --only special      # one harness
    python fuzz/run.py --native-coverage --seconds 60   # against fuzz/build_native.py's build


Each harness (``fuzz/fuzz_<name>.py``) runs in its own subprocess under libFuzzer (atheris) with
``-max_total_time`` = its share, ``-seed``, a hard per-input ``-timeout`` (a hang is a finding)
and ``-rss_limit_mb``.  The first finding stops that harness; libFuzzer writes the input to
``<artifacts>/<name>-crash-<sha1>`` (replay: ``python fuzz/fuzz_<name>.py <file>``).  The exit
status is 0 only if no harness found anything.

Each harness's line gives libFuzzer's coverage at the end: ``cov`` (coverage points: Python
branches of dpbounds, plus, with ``--native-coverage``, the edges of the compiled code) and ``ft``
(features: points combined with their hit counts).

dpbounds is imported as installed (or from PYTHONPATH): this script never adds the checkout's
``src/`` to the path.  With ``--native-coverage [DIR]`` it is imported from the coverage-
instrumented copy that ``fuzz/build_native.py`` built in DIR (default ``build/fuzz-native``), with
that build's libFuzzer (+ ASan/UBSan) runtime preloaded: atheris then also sees the branches of
the C core and the Cython modules, a sanitizer report is a finding, and each line adds how many
edges of the C core (``csrc/``) the run reached (libFuzzer's ``-print_coverage``).  A build whose
sources differ from the checkout's is refused (rebuild it).
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))   # (already there when run as a script)
from build_native import DEFAULT_OUT as DEFAULT_NATIVE  # noqa: E402
from build_native import source_digest

HARNESSES = ("special", "bounds", "tradeoff", "rdp", "accountants", "cli", "sweep_axes")
# A hard limit per input: well above the 1 s CPU budget each call is checked against, so only a
# real hang (e.g. a C loop that never ends) trips it.
HANG_SECONDS = 30


# The libFuzzer and sanitizer options of the instrumented runs.  detect_leaks=0: CPython and numpy
# keep objects until exit on purpose (atheris' docs say the same); allocator_may_return_null=1: a
# huge request returns NULL, which the C core reports as DPB_ENOMEM, instead of ASan aborting.
NATIVE_ENV = {
    "ASAN_OPTIONS": "detect_leaks=0:allocator_may_return_null=1:halt_on_error=1:strict_string_checks=1",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
}


def coverage(text: str) -> tuple[int, int]:
    """libFuzzer's last ``cov:`` and ``ft:`` of a run (0, 0 if it printed none)."""
    found = re.findall(r"^#\d+\s+\w+\s+cov: (\d+) ft: (\d+)", text, re.MULTILINE)
    return (int(found[-1][0]), int(found[-1][1])) if found else (0, 0)


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
    for key in ("pythonpath", "preload"):
        if not Path(info[key]).exists():
            sys.exit(f"the instrumented build in {build_dir} is incomplete ({info[key]} is missing): rebuild it")
    return info


def _stats(text: str) -> tuple[int, float]:
    runs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", text)
    if runs:
        n = int(runs[-1])
    else:
        done = re.findall(r"Done (\d+) runs", text) or re.findall(r"#(\d+)\s", text)
        n = int(done[-1]) if done else 0
    secs = re.findall(r"Done \d+ runs in (\d+) second", text)
    return n, float(secs[-1]) if secs else 0.0


def run_one(name: str, seconds: int, seed: int, artifacts: Path, corpus_root: Path,
            native: dict[str, str] | None = None) -> tuple[str, int, float, str, str]:
    """(status, executions, seconds, detail, coverage) of one harness run."""
    script = HERE / f"fuzz_{name}.py"
    corpus = corpus_root / name
    corpus.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, str(script), f"-max_total_time={seconds}", f"-seed={seed}",
           f"-timeout={HANG_SECONDS}", "-rss_limit_mb=3072", "-print_final_stats=1",
           f"-artifact_prefix={artifacts}/{name}-", str(corpus)]
    env = None
    if native is not None:
        cmd.insert(-1, "-print_coverage=1")
        env = dict(os.environ, **NATIVE_ENV, LD_PRELOAD=native["preload"],
                   PYTHONPATH=os.pathsep.join(filter(None, [native["pythonpath"], os.environ.get("PYTHONPATH")])))
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                          timeout=seconds + 4 * HANG_SECONDS + 120)
    wall = time.monotonic() - t0
    text = proc.stdout + proc.stderr
    (artifacts / f"{name}.log").write_text(text)
    if proc.returncode == 0 and text.startswith("SKIP:"):
        return "skipped", 0, wall, text.strip().splitlines()[0][len("SKIP: "):], ""
    n, secs = _stats(text)
    cov, ft = coverage(text)
    cover = f"cov {cov:>5} ft {ft:>6}"
    if native is not None:
        e, t, fr, fn = c_core_coverage(text)
        cover += f"  C core: {e}/{t} edges, {fr}/{fn} functions"
        if proc.returncode == 0 and t == 0:
            # a run that ends normally prints the coverage of every instrumented function: none
            # from csrc/ means the C core was not instrumented or not loaded, and the run was blind
            return "BLIND", n, secs or wall, "no coverage report of the C core (see the log)", cover
    if proc.returncode == 0:
        return "ok", n, secs or wall, "", cover
    # a contract Finding, a Python exception, libFuzzer's own reports (timeout, out-of-memory,
    # deadly signal) and, in instrumented runs, ASan's and UBSan's
    found = re.findall(r"^(Finding: .*|\w+Error: .*|==\d+== ?ERROR: .*|.*: runtime error: .*)$", text, re.MULTILINE)
    saved = re.findall(r"Test unit written to (\S+)", text)
    detail = (found[0] if found else f"exit status {proc.returncode}")[:500]
    if saved:
        detail += f"\n      input saved: {saved[-1]}"
    return "FINDING", n, secs or wall, detail, cover


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=60, help="total time budget, shared equally by the harnesses")
    ap.add_argument("--seed", type=int, default=1, help="libFuzzer seed (same seed and build: same inputs)")
    ap.add_argument("--only", choices=HARNESSES, action="append", help="run only this harness (repeatable)")
    ap.add_argument("--artifacts", type=Path, default=HERE / "artifacts",
                    help="where crashing inputs and the logs go (default: fuzz/artifacts)")
    ap.add_argument("--corpus", type=Path, default=None,
                    help="corpus directory, one sub-directory per harness, kept between runs "
                         "(default: a fresh temporary directory)")
    ap.add_argument("--native-coverage", nargs="?", type=Path, const=DEFAULT_NATIVE, default=None, metavar="DIR",
                    help="fuzz fuzz/build_native.py's coverage-instrumented build in DIR "
                         f"(default DIR: {DEFAULT_NATIVE}) instead of the dpbounds on the path")
    args = ap.parse_args(argv)
    native = native_build(args.native_coverage) if args.native_coverage is not None else None
    names = tuple(args.only) if args.only else HARNESSES
    args.artifacts.mkdir(parents=True, exist_ok=True)
    share = max(1, args.seconds // len(names))
    tmp = tempfile.TemporaryDirectory(prefix="dpbounds-fuzz-") if args.corpus is None else None
    corpus_root = args.corpus if args.corpus is not None else Path(tmp.name)  # type: ignore[union-attr]
    if native is None:
        import dpbounds

        where = f"dpbounds {dpbounds.__version__} from {Path(dpbounds.__file__).parent}"
    else:   # (its modules load only under the preload)
        where = (f"dpbounds from {native['pythonpath']}, compiled code coverage-instrumented "
                 f"({native['clang']}; sanitizers: {native['sanitizers'] or 'none'})")
    print(f"{where}; {len(names)} harnesses x {share} s, seed {args.seed}", flush=True)
    failed = 0
    rows = []
    for name in names:
        status, n, secs, detail, cover = run_one(name, share, args.seed, args.artifacts, corpus_root, native)
        rate = n / secs if secs else 0.0
        rows.append((name, status, n, rate))
        line = f"  {name:<12} {status:<8} {n:>9} executions  {rate:8.0f} exec/s  {cover}"
        print(line + (f"\n      {detail}" if detail else ""), flush=True)
        failed += status in ("FINDING", "BLIND")
    if tmp is not None:
        tmp.cleanup()
    total = sum(r[2] for r in rows)
    print(f"total {total} executions; {failed} harness(es) with findings"
          + (f" (inputs and logs in {args.artifacts})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
