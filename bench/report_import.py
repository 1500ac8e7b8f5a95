"""Import time of dpbounds over numpy: ``python -X importtime``, min of fresh processes.

    python bench/report_import.py [--runs 10] [--against REV]

Each run is a fresh interpreter executing ``import numpy; import dpbounds`` under
``-X importtime``; the figure is the cumulative time of the ``dpbounds`` line (numpy is already
imported, so it is what dpbounds adds), the minimum over the runs.  The CPU time of the same
import (``time.process_time`` around it, another fresh process each time) is printed too: on a
shared machine it is steadier than the wall-clock importtime.  ``--against REV`` times the
package as of git revision REV in the same run, interleaved (its source from ``git archive``,
the compiled modules of this tree), and prints the ratio.  The slowest modules of the last run
are listed.  Target (issue 21): <= 15 ms over numpy.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _importtime(src: str) -> tuple[float, list[tuple[int, str]]]:
    env = dict(os.environ, PYTHONPATH=src)
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", "import numpy; import dpbounds"],
                       capture_output=True, text=True, env=env, check=True)
    total = None
    selfs = []
    seen_numpy = False
    for line in r.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cum_us, name = line[len("import time:"):].split("|")
        stripped = name.strip()
        if stripped == "numpy" and not seen_numpy:
            seen_numpy = True
            continue
        if seen_numpy:
            selfs.append((int(self_us), name.rstrip()))
        if stripped == "dpbounds":
            total = int(cum_us)
    assert total is not None, r.stderr[-2000:]
    return total / 1000, selfs


def _cpu(src: str) -> float:
    env = dict(os.environ, PYTHONPATH=src)
    code = "import numpy, time; t = time.process_time(); import dpbounds; print(time.process_time() - t)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return float(r.stdout) * 1000


def _tree_at(rev: str, into: pathlib.Path) -> str:
    """src/ of git revision ``rev`` in ``into``, with this tree's compiled modules."""
    archive = into / "src.tar"
    subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), rev, "src/dpbounds"], cwd=ROOT, check=True)
    with tarfile.open(archive) as t:
        t.extractall(into)
    for so in (ROOT / "src" / "dpbounds").glob("*.so"):
        shutil.copy(so, into / "src" / "dpbounds" / so.name)
    return str(into / "src")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--against", default=None, help="a git revision to time in the same run")
    a = ap.parse_args()
    trees = {"now": str(ROOT / "src")}
    tmp = None
    if a.against:
        tmp = tempfile.TemporaryDirectory()
        trees[a.against] = _tree_at(a.against, pathlib.Path(tmp.name))
    wall = {k: [] for k in trees}
    cpu = {k: [] for k in trees}
    selfs: list[tuple[int, str]] = []
    for _ in range(a.runs):
        for k, src in trees.items():
            t, s = _importtime(src)
            wall[k].append(t)
            cpu[k].append(_cpu(src))
            if k == "now":
                selfs = s
    print(f"import dpbounds over import numpy, min of {a.runs} fresh processes; load average {os.getloadavg()[0]:.1f}")
    for k in trees:
        print(f"  {k:>12}: -X importtime {min(wall[k]):6.2f} ms   CPU time {min(cpu[k]):6.2f} ms")
    if a.against:
        print(f"  ratio {a.against} / now: importtime {min(wall[a.against]) / min(wall['now']):.2f}x, "
              f"CPU {min(cpu[a.against]) / min(cpu['now']):.2f}x")
    print("  slowest modules (self time, last run):")
    for us, name in sorted(selfs, reverse=True)[:8]:
        print(f"    {us / 1000:6.2f} ms {name.strip()}")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
