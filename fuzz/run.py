"""Run every fuzz harness for its share of a time budget and report executions and findings.

    python fuzz/run.py --seconds 60 --seed 1            # CI: ~60 s in total
    python fuzz/run.py --seconds 1800 --seed 7          # a longer run (docs/fuzzing.md)
    python fuzz/run.py --seconds 30 --only special      # one harness

Each harness (``fuzz/fuzz_<name>.py``) runs in its own subprocess under libFuzzer (atheris) with
``-max_total_time`` = its share, ``-seed``, a hard per-input ``-timeout`` (a hang is a finding)
and ``-rss_limit_mb``.  The first finding stops that harness; libFuzzer writes the input to
``<artifacts>/<name>-crash-<sha1>`` (replay: ``python fuzz/fuzz_<name>.py <file>``).  The exit
status is 0 only if no harness found anything.

dpbounds is imported as installed (or from PYTHONPATH): this script never adds the checkout's
``src/`` to the path.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
HARNESSES = ("special", "bounds", "tradeoff", "rdp", "accountants", "cli", "sweep_axes")
# A hard limit per input: well above the 1 s CPU budget each call is checked against, so only a
# real hang (e.g. a C loop that never ends) trips it.
HANG_SECONDS = 30


def _stats(text: str) -> tuple[int, float]:
    runs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", text)
    if runs:
        n = int(runs[-1])
    else:
        done = re.findall(r"Done (\d+) runs", text) or re.findall(r"#(\d+)\s", text)
        n = int(done[-1]) if done else 0
    secs = re.findall(r"Done \d+ runs in (\d+) second", text)
    return n, float(secs[-1]) if secs else 0.0


def run_one(name: str, seconds: int, seed: int, artifacts: Path, corpus_root: Path) -> tuple[str, int, float, str]:
    """(status, executions, seconds, detail) of one harness run."""
    script = HERE / f"fuzz_{name}.py"
    corpus = corpus_root / name
    corpus.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, str(script), f"-max_total_time={seconds}", f"-seed={seed}",
           f"-timeout={HANG_SECONDS}", "-rss_limit_mb=3072", "-print_final_stats=1",
           f"-artifact_prefix={artifacts}/{name}-", str(corpus)]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 4 * HANG_SECONDS + 120)
    wall = time.monotonic() - t0
    text = proc.stdout + proc.stderr
    (artifacts / f"{name}.log").write_text(text)
    if proc.returncode == 0 and text.startswith("SKIP:"):
        return "skipped", 0, wall, text.strip().splitlines()[0][len("SKIP: "):]
    n, secs = _stats(text)
    if proc.returncode == 0:
        return "ok", n, secs or wall, ""
    found = re.findall(r"^(Finding: .*|\w+Error: .*|==\d+== ERROR: libFuzzer: .*)$", text, re.MULTILINE)
    saved = re.findall(r"Test unit written to (\S+)", text)
    detail = (found[0] if found else f"exit status {proc.returncode}")[:500]
    if saved:
        detail += f"\n      input saved: {saved[-1]}"
    return "FINDING", n, secs or wall, detail


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
    args = ap.parse_args(argv)
    names = tuple(args.only) if args.only else HARNESSES
    args.artifacts.mkdir(parents=True, exist_ok=True)
    share = max(1, args.seconds // len(names))
    tmp = tempfile.TemporaryDirectory(prefix="dpbounds-fuzz-") if args.corpus is None else None
    corpus_root = args.corpus if args.corpus is not None else Path(tmp.name)  # type: ignore[union-attr]
    import dpbounds

    print(f"dpbounds {dpbounds.__version__} from {Path(dpbounds.__file__).parent}; "
          f"{len(names)} harnesses x {share} s, seed {args.seed}", flush=True)
    failed = 0
    rows = []
    for name in names:
        status, n, secs, detail = run_one(name, share, args.seed, args.artifacts, corpus_root)
        rate = n / secs if secs else 0.0
        rows.append((name, status, n, rate))
        line = f"  {name:<12} {status:<8} {n:>9} executions  {rate:8.0f} exec/s"
        print(line + (f"\n      {detail}" if detail else ""), flush=True)
        failed += status == "FINDING"
    if tmp is not None:
        tmp.cleanup()
    total = sum(r[2] for r in rows)
    print(f"total {total} executions; {failed} harness(es) with findings"
          + (f" (inputs and logs in {args.artifacts})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
