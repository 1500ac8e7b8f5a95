"""Kill-and-resume trials of sweeps to files: signal x moment x format x engine.

    python bench/report_sweep_kill_trials.py [--quick]

Each trial runs a sweep in a child process (a plain script, no ``if __name__ == "__main__":``
guard), sends it a signal at a chosen moment, resumes the sweep in this process, and compares
the output with an uninterrupted run's: the CSV bytes, or every Parquet column.  It also checks
that nothing but ``out`` and its manifest is left.

Moments: ``after X s`` (random, seeded: from the child's start-up to its commit),
``compute`` (a signal while chunks are being computed, once two chunks are saved), and every
step of the writing protocol (dpbounds/sweeps/_store.py): the child pauses at the step (the
second time it is reached for the per-part steps), and the signal comes during the pause.  SIGKILL is sent at every moment (nothing can be cleaned up); SIGINT, SIGTERM and SIGHUP,
which the sweep handles, at ``compute`` with every engine and during a part write.

The table (one row per trial): signal, moment, format, engine, how the child ended, chunks
saved at the kill, result.  tests/sweep/test_sweep_kill.py runs the same trials (slow).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

import dpbounds

QUANTITY = "rounds_required"
#: 40,000 root searches in 20 chunks of 2,000: a second or two in all
AXES = {"sigma": "0.5:4:80:lin", "delta": "1e-12:1e-2:500:log"}
CHUNK = 2000
N_CHUNKS = 20

CHILD = r'''
import json, sys, time
import dpbounds
from dpbounds.sweeps import _store

cfg = json.loads(sys.argv[1])
# every chunk is saved as it finishes: there are parts to keep (or to lose)
ticks = iter(range(0, 10 ** 9, 100))
_store.clock = lambda: float(next(ticks))
seen = {}


def at(moment):
    seen[moment] = seen.get(moment, 0) + 1
    if moment == cfg["moment"] and seen[moment] == cfg["nth"]:
        with open(cfg["marker"], "w") as f:
            f.write(moment)
        end = time.monotonic() + cfg["pause"]
        while time.monotonic() < end:
            time.sleep(0.005)


_store.at = at
dpbounds.sweep(cfg["quantity"], out=cfg["out"], chunk_size=cfg["chunk"], engine=cfg["engine"], workers=2,
               progress=False, **cfg["axes"])
'''

#: The steps of the writing protocol and which occurrence to stop at.
STEPS = {"part-tmp": 2, "part-renamed": 2, "manifest-tmp": 3, "merge-written": 1, "merged": 1,
         "commit-recorded": 1, "out-replaced": 1, "final-manifest": 1}


def _env() -> dict[str, str]:
    root = str(pathlib.Path(dpbounds.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def content(path: pathlib.Path) -> object:
    if path.suffix == ".csv":
        return path.read_bytes()
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    return {k: t[k].to_pylist() if t[k].type == "string" else np.asarray(t[k]).tobytes() for k in t.column_names}


def reference(workdir: pathlib.Path, suffix: str) -> object:
    out = workdir / f"reference{suffix}"
    if not out.exists():
        dpbounds.sweep(QUANTITY, out=out, chunk_size=CHUNK, progress=False, **AXES)
    return content(out)


def trial(workdir: pathlib.Path, signame: str, moment: str, suffix: str, engine: str) -> dict[str, object]:
    """One kill-and-resume trial; returns its row of the table."""
    d = pathlib.Path(tempfile.mkdtemp(dir=workdir))
    out = d / f"g{suffix}"
    marker = d / "marker"
    manifest = d / f"g{suffix}.sweep.json"
    cfg = {"quantity": QUANTITY, "axes": AXES, "chunk": CHUNK, "engine": engine, "out": str(out),
           "moment": moment, "nth": STEPS.get(moment, 0), "marker": str(marker), "pause": 3.0}
    script = d / "child.py"
    script.write_text(CHILD)
    row: dict[str, object] = {"signal": signame, "moment": moment, "format": suffix[1:], "engine": engine}
    proc = subprocess.Popen([sys.executable, str(script), json.dumps(cfg)], env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    random_delay = float(moment.split()[1].rstrip("s")) if moment.startswith("after ") else None
    try:
        deadline = time.monotonic() + (random_delay if random_delay is not None else 120)
        while time.monotonic() < deadline and proc.poll() is None:
            if random_delay is not None:
                pass
            elif moment == "compute":
                if manifest.exists():
                    try:
                        if json.loads(manifest.read_text())["finished_chunks"] >= 2:
                            break
                    except ValueError:
                        pass
            elif marker.exists():
                break
            time.sleep(0.005)
        if proc.poll() is not None and random_delay is None:
            row.update(ended="finished first", saved="-", result="NOT TRIED (the sweep finished first)")
            return row
        if proc.poll() is None:
            proc.send_signal(getattr(signal, signame))
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    code = proc.returncode
    row["ended"] = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
    try:
        state = json.loads(manifest.read_text())
        row["saved"] = f"{state['finished_chunks']}/{state['n_chunks']}"
    except (OSError, ValueError):
        row["saved"] = "no manifest"
    for p in (script, marker):
        p.unlink(missing_ok=True)
    try:
        dpbounds.sweep(QUANTITY, out=out, chunk_size=CHUNK, progress=False, resume=True, **AXES)
    except Exception as exc:  # noqa: BLE001 - reported in the table
        row["result"] = f"FAILED: resume raised {exc}"
        return row
    left = sorted(p.name for p in d.iterdir())
    if content(out) != reference(workdir, suffix):
        row["result"] = "FAILED: the resumed output differs"
    elif left != [out.name, manifest.name]:
        row["result"] = f"FAILED: left {left}"
    else:
        row["result"] = "ok: resumed, identical, nothing left over"
    shutil.rmtree(d)
    return row


def plan(quick: bool = False) -> list[tuple[str, str, str, str]]:
    """The trials: (signal, moment, suffix, engine); "after X s": a random moment (seeded)."""
    suffixes = (".csv", ".parquet")
    rng = np.random.default_rng(23)
    out = []
    for suffix in suffixes:
        for delay in rng.uniform(0.2, 3.0, 2 if quick else 4):   # from start-up to the commit
            out.append(("SIGKILL", f"after {delay:.2f}s", suffix, "local"))
        for moment in ("compute", *STEPS):
            out.append(("SIGKILL", moment, suffix, "local"))
        for engine in ("local", "processes", "dask"):
            for signame in ("SIGINT", "SIGTERM", "SIGHUP"):
                if quick and engine != "local" and signame != "SIGTERM":
                    continue
                out.append((signame, "compute", suffix, engine))
            if engine != "local":
                out.append(("SIGKILL", "compute", suffix, engine))
        for signame in ("SIGTERM", "SIGINT"):
            out.append((signame, "part-tmp", suffix, "local"))
    return out


def table(rows: list[dict[str, object]]) -> str:
    cols = ["signal", "moment", "format", "engine", "ended", "saved", "result"]
    width = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in cols}
    lines = [" | ".join(c.ljust(width[c]) for c in cols), "-|-".join("-" * width[c] for c in cols)]
    lines += [" | ".join(str(r.get(c, "")).ljust(width[c]) for c in cols) for r in rows]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer engine x signal combinations")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for t in plan(a.quick):
            rows.append(trial(pathlib.Path(d), *t))
            print(" | ".join(str(v) for v in rows[-1].values()), flush=True)
    print()
    print(table(rows))
    bad = [r for r in rows if not str(r["result"]).startswith("ok")]
    print(f"\n{len(rows) - len(bad)} of {len(rows)} trials ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
