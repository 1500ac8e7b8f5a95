"""Sweeps to files under faults: a kill at every step of the writing protocol, signals, damaged
parts, files that are not the sweep's, two writers, a full disk, progress saved early.

A kill is simulated exactly: the on-disk state is copied at each named step of the protocol
(``dpbounds.sweeps._store.at``) and after each computed chunk, and every copy is then resumed
as the files a killed process would have left.  tests/sweep/test_sweep_kill.py (slow) does the same
with real signals sent to real processes.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import sys

import numpy as np
import pytest
from cli_harness import run as cli

import dpbounds
from dpbounds import DPBoundsError
from dpbounds.sweeps import _store
from dpbounds.sweeps._sweep import run_sweep

Q = "rounds_closed_form"
AXES = dict(sigma=np.linspace(0.5, 3, 9), delta=[1e-5, 1e-3, 1e-2])   # 27 points: 7 chunks of 4
OTHER = dict(sigma=np.linspace(0.5, 3, 10), delta=[1e-5, 1e-3, 1e-2])
SUFFIXES = [".csv", pytest.param(".parquet", marks=pytest.mark.filterwarnings("default"))]


def _need(suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow.parquet", reason="pyarrow not installed")


def content(path):
    """What a sweep file holds: the bytes of a CSV file, the columns of a Parquet file."""
    if path.suffix == ".csv":
        return path.read_bytes()
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    return {k: np.asarray(t[k]).tobytes() if t[k].type != "string" else t[k].to_pylist() for k in t.column_names}


def names(d):
    return sorted(p.name for p in d.iterdir())


def reference(tmp_path, suffix, axes=AXES):
    d = tmp_path / f"ref{len(axes['sigma'])}"
    d.mkdir(exist_ok=True)
    out = d / f"g{suffix}"
    if not out.exists():
        dpbounds.sweep(Q, out=out, chunk_size=4, **axes)
    return content(out)


@pytest.fixture
def every_chunk_saved(monkeypatch):
    """The save clock jumps 100 s at every look: each chunk is saved as its own part at once."""
    ticks = iter(range(0, 10 ** 9, 100))
    monkeypatch.setattr(_store, "clock", lambda: float(next(ticks)))


class Killed(BaseException):
    """Stands for the process dying (raised past every except Exception)."""


def killed_after(monkeypatch, out, suffix, parts, axes=AXES):
    """Run the sweep and 'kill' it once ``parts`` parts are saved (then drop its lock, as the OS would)."""
    saved = []
    locks = []
    with monkeypatch.context() as m:
        m.setattr(_store, "at", lambda moment: saved.append(moment) if moment == "part-renamed" else None)
        add, init = _store.FileStore.add, _store.FileStore.__init__

        def counting_add(self, res):
            add(self, res)
            if len(saved) >= parts:
                raise Killed

        def tracking_init(self, *a, **kw):
            init(self, *a, **kw)
            locks.append(self.lock)

        m.setattr(_store.FileStore, "add", counting_add)
        m.setattr(_store.FileStore, "__init__", tracking_init)
        m.setattr(_store.FileStore, "close", lambda self: None)   # a killed process cleans nothing up
        with pytest.raises(Killed):
            dpbounds.sweep(Q, out=out, chunk_size=4, **axes)
    os.close(locks[0].fd)   # the OS releases a dead process' lock (the lock file stays)


# ---------------------------------------------------------------- a kill at any moment
# Parquet in the slow tier: the same steps as CSV, with the pyarrow writer (seconds)
@pytest.mark.parametrize("suffix", [".csv", pytest.param(".parquet", marks=[pytest.mark.filterwarnings("default"),
                                                                          pytest.mark.slow])])
def test_a_kill_at_any_step_resumes_to_the_uninterrupted_file(tmp_path, monkeypatch, suffix, every_chunk_saved):
    _need(suffix)
    want = reference(tmp_path, suffix)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    out = run_dir / f"g{suffix}"
    snaps = []

    def snapshot(moment):
        d = tmp_path / f"snap{len(snaps):03d}"
        shutil.copytree(run_dir, d)
        snaps.append((moment, d))

    with monkeypatch.context() as m:
        m.setattr(_store, "at", snapshot)
        add = _store.FileStore.add

        def snapshot_add(self, res):
            snapshot(f"chunk {self.next} computed")
            add(self, res)

        m.setattr(_store.FileStore, "add", snapshot_add)
        dpbounds.sweep(Q, out=out, chunk_size=4, **AXES)
    moments = {mo.split()[0] if mo.startswith("chunk") else mo for mo, _ in snaps}
    assert moments == {"chunk", "part-tmp", "part-renamed", "manifest-tmp", "merge-written", "merged",
                       "commit-recorded", "out-replaced", "final-manifest"}
    assert len(snaps) >= 7 * 4 + 5
    for moment, snap in snaps:
        shutil.rmtree(run_dir)
        shutil.copytree(snap, run_dir)
        _, tally = run_sweep(Q, out=out, chunk_size=4, resume=True, axes=AXES)   # warnings are errors here
        assert content(out) == want, moment
        assert names(run_dir) == [out.name, out.name + ".sweep.json"], moment
        state = json.loads((run_dir / (out.name + ".sweep.json")).read_text())
        assert state["complete"] and state["finished_chunks"] == 7, moment
        # resumed from what was saved: the chunks of the parts listed before the kill are not computed again
        before = json.loads((snap / (out.name + ".sweep.json")).read_text()) if (
            snap / (out.name + ".sweep.json")).exists() else {"parts": [], "complete": False}
        if not before["complete"]:
            assert tally.skipped == sum(p["rows"] for p in before["parts"]), moment


# ---------------------------------------------------------------- signals
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("engine", ["local", "dask"])
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_signal_stops_the_sweep_after_saving_its_chunks(tmp_path, monkeypatch, signame, engine, suffix,
                                                          every_chunk_saved):
    _need(suffix)
    if engine == "dask":
        pytest.importorskip("dask", reason="dask not installed")
    signum = getattr(signal, signame)
    default = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
    if signal.getsignal(signum) is not default:
        pytest.skip(f"the test runner handles {signame}")
    want = reference(tmp_path, suffix)
    out = tmp_path / f"g{suffix}"
    raised = []
    # the real re-raise would end the test process: record it (the sweep then exits as SystemExit)
    monkeypatch.setattr(signal, "raise_signal", raised.append)
    add = _store.FileStore.add

    def signalling_add(self, res):
        add(self, res)
        if self.next == 3:
            os.kill(os.getpid(), signum)

    monkeypatch.setattr(_store.FileStore, "add", signalling_add)
    expected = KeyboardInterrupt if signum == signal.SIGINT else SystemExit
    with pytest.raises(expected) as exc:
        dpbounds.sweep(Q, out=out, chunk_size=4, engine=engine, workers=1, **AXES)
    if expected is SystemExit:
        assert raised == [signum] and exc.value.code == 128 + signum
    assert signal.getsignal(signum) is default   # the handler is given back
    state = json.loads((tmp_path / (out.name + ".sweep.json")).read_text())
    # stopped at the next chunk boundary, with every finished chunk saved and nothing else left
    assert state["finished_chunks"] == 3 and not state["complete"]
    partial = tmp_path / (out.name + ".partial")
    assert names(tmp_path) == sorted([partial.name, out.name + ".sweep.json", "ref9"])
    assert names(partial) == [p["file"] for p in state["parts"]]
    monkeypatch.setattr(_store.FileStore, "add", add)
    dpbounds.sweep(Q, out=out, chunk_size=4, engine=engine, resume=True, **AXES)
    assert content(out) == want


def test_a_signal_in_the_middle_of_a_point_wise_chunk_drops_only_that_chunk(tmp_path, monkeypatch,
                                                                              every_chunk_saved):
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("the test runner handles SIGINT")
    from dpbounds.sweeps import _quantities

    q = _quantities.QUANTITIES["delta_poisson"]
    calls = []

    def compute(p, o):
        calls.append(1)
        if len(calls) == 5:   # the second point of the third chunk
            os.kill(os.getpid(), signal.SIGINT)
        return {"delta_poisson": 0.5, "lower": 0.4, "upper": 0.5, "tolerance_met": True}

    import dataclasses

    slow = dataclasses.replace(q, compute=compute)
    out = tmp_path / "p.csv"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(slow, out=out, chunk_size=2, axes=dict(sigma=[1.0] * 8, sample_rate=[0.01], steps=[10],
                                                         epsilon=[1.0]))
    assert len(calls) == 5   # no point after the signal
    state = json.loads((tmp_path / "p.csv.sweep.json").read_text())
    assert state["finished_chunks"] == 2


# ---------------------------------------------------------------- resume verifies before it trusts
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_an_unfinished_run_of_another_sweep_is_never_reused(tmp_path, monkeypatch, suffix, every_chunk_saved):
    _need(suffix)
    want_a, want_b = reference(tmp_path, suffix), reference(tmp_path, suffix, OTHER)
    out = tmp_path / f"g{suffix}"
    killed_after(monkeypatch, out, suffix, 2)
    # (the killed run's lock file, held by no one, may go)
    before = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".lock"}
    with pytest.raises(DPBoundsError, match=r"cannot resume .*the axis sigma differs .*is another sweep"):
        dpbounds.sweep(Q, out=out, chunk_size=4, resume=True, **OTHER)
    with pytest.raises(DPBoundsError, match=r"holds an unfinished run of another sweep: the axis sigma differs"):
        dpbounds.sweep(Q, out=out, chunk_size=4, **OTHER)
    after = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".lock"}
    assert after == before   # a refusal changes nothing
    dpbounds.sweep(Q, out=out, chunk_size=4, resume=True, **AXES)
    assert content(out) == want_a
    killed_after(monkeypatch, out, suffix, 3)
    dpbounds.sweep(Q, out=out, chunk_size=4, overwrite=True, **OTHER)
    assert content(out) == want_b
    assert names(tmp_path) == sorted([out.name, out.name + ".sweep.json", "ref9", "ref10"])


def _damage(path, how):
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[:len(data) // 2])
    elif how == "delete":
        path.unlink()
    else:   # alter one value without changing the size (a digit in CSV, a byte inside the Parquet data)
        i = data.index(b"\n") + 1 if path.suffix == ".csv" else len(data) // 3
        path.write_bytes(data[:i] + bytes([data[i] ^ 1]) + data[i + 1:])


@pytest.mark.parametrize("how", ["truncate", "alter", "delete"])
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_damaged_part_is_reported_and_its_chunks_computed_again(tmp_path, monkeypatch, suffix, how,
                                                                    every_chunk_saved):
    _need(suffix)
    want = reference(tmp_path, suffix)
    out = tmp_path / f"g{suffix}"
    killed_after(monkeypatch, out, suffix, 3)
    state = json.loads((tmp_path / (out.name + ".sweep.json")).read_text())
    first, second = (tmp_path / (out.name + ".partial") / p["file"] for p in state["parts"][:2])
    _damage(first if how == "delete" else second, how)
    damaged = first if how == "delete" else second
    with pytest.warns(UserWarning, match=rf"the part file .*{damaged.name}.* computed again") as caught:
        _, tally = run_sweep(Q, out=out, chunk_size=4, resume=True, axes=AXES)
    assert caught[0].filename == __file__   # it points at the caller's line
    assert tally.skipped == (0 if how == "delete" else 4)   # only the parts before the damaged one are kept
    assert content(out) == want
    assert names(tmp_path) == sorted([out.name, out.name + ".sweep.json", "ref9"])


# ---------------------------------------------------------------- never clobbered by surprise
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_file_that_is_not_a_sweep_output_is_never_replaced_silently(tmp_path, suffix):
    _need(suffix)
    want = reference(tmp_path, suffix)
    out = tmp_path / f"g{suffix}"
    if suffix == ".csv":
        out.write_bytes(b"a,b\n1,2\n")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"a": [1, 2]}), out)
    mine = out.read_bytes()
    for resume in (False, True):
        with pytest.raises(DPBoundsError, match=r"exists and is not the output of a dpbounds sweep .*overwrite=True"):
            dpbounds.sweep(Q, out=out, chunk_size=4, resume=resume, **AXES)
        assert out.read_bytes() == mine and names(tmp_path) == sorted([out.name, "ref9"])
    # a manifest that is not one is refused too
    (tmp_path / (out.name + ".sweep.json")).write_text("{}")
    with pytest.raises(DPBoundsError, match=r"is not a manifest this sweep can use: not a dpbounds sweep manifest"):
        dpbounds.sweep(Q, out=out, chunk_size=4, **AXES)
    dpbounds.sweep(Q, out=out, chunk_size=4, overwrite=True, **AXES)
    assert content(out) == want


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_finished_sweep_is_replaced_only_by_the_same_sweep_or_with_overwrite(tmp_path, suffix):
    _need(suffix)
    want_a, want_b = reference(tmp_path, suffix), reference(tmp_path, suffix, OTHER)
    out = tmp_path / f"g{suffix}"
    dpbounds.sweep(Q, out=out, chunk_size=4, **AXES)
    for resume in (False, True):
        with pytest.raises(DPBoundsError, match=r"the axis sigma differs"):
            dpbounds.sweep(Q, out=out, chunk_size=4, resume=resume, **OTHER)
        assert content(out) == want_a
    _, tally = run_sweep(Q, out=out, chunk_size=4, resume=True, axes=AXES)   # complete: nothing to do
    assert (tally.points, tally.skipped) == (0, 27)
    _, tally = run_sweep(Q, out=out, chunk_size=4, axes=AXES)                # the same sweep again: replaced
    assert tally.points == 27 and content(out) == want_a
    # a finished output changed afterwards is not this sweep's output any more
    data = out.read_bytes()
    out.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(DPBoundsError, match=r"does not match its manifest .*changed after the sweep wrote it"):
        dpbounds.sweep(Q, out=out, chunk_size=4, **AXES)
    dpbounds.sweep(Q, out=out, chunk_size=4, overwrite=True, **OTHER)
    assert content(out) == want_b
    assert names(tmp_path) == sorted([out.name, out.name + ".sweep.json", "ref9", "ref10"])


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_refused_resume_leaves_the_output_where_it_is(tmp_path, suffix):
    _need(suffix)
    want = reference(tmp_path, suffix)
    out = tmp_path / f"g{suffix}"
    dpbounds.sweep(Q, out=out, chunk_size=4, **AXES)
    with pytest.raises(DPBoundsError, match="cannot resume"):
        dpbounds.sweep(Q, out=out, chunk_size=5, resume=True, **AXES)
    assert content(out) == want and names(tmp_path) == sorted([out.name, out.name + ".sweep.json", "ref9"])
    _, tally = run_sweep(Q, out=out, chunk_size=4, resume=True, axes=AXES)   # a healthy file resumes
    assert tally.points == 0 and content(out) == want


# ---------------------------------------------------------------- one writer, a full disk
def test_a_second_writer_on_the_same_output_is_refused(tmp_path):
    out = tmp_path / "g.csv"
    lock = _store.Lock(_store.lock_path(out), out)   # a sweep writing out right now
    try:
        for axes in (AXES, OTHER):
            with pytest.raises(DPBoundsError, match=r"another sweep is writing .*g.csv.* right now"):
                dpbounds.sweep(Q, out=out, chunk_size=4, **axes)
        assert names(tmp_path) == ["g.csv.sweep.lock"]
    finally:
        lock.release()
    dpbounds.sweep(Q, out=out, chunk_size=4, **AXES)
    assert names(tmp_path) == ["g.csv", "g.csv.sweep.json"]


@pytest.mark.parametrize("step", ["part", "merge"])
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_full_disk_ends_cleanly_and_keeps_the_previous_file(tmp_path, monkeypatch, suffix, step,
                                                              every_chunk_saved):
    _need(suffix)
    want = reference(tmp_path, suffix)
    out = tmp_path / f"g{suffix}"
    dpbounds.sweep(Q, out=out, chunk_size=4, **AXES)
    previous = out.read_bytes()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as m:
        if step == "part":
            writes = []
            write_file = _store._write_file

            def third_fails(path, data):
                writes.append(path)
                if len(writes) == 3:
                    full()
                write_file(path, data)

            m.setattr(_store, "_write_file", third_fails)
        else:
            m.setattr(_store.FileStore, "_commit", lambda self: (_ for _ in ()).throw(
                DPBoundsError(self._write_error(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))))))
            if suffix == ".csv":
                from dpbounds.sweeps import _writers

                m.undo()
                m.setattr(_writers.CsvCodec, "merge", full)
            else:
                from dpbounds.sweeps import _writers

                m.undo()
                m.setattr(_writers.ParquetCodec, "merge", full)
        with pytest.raises(DPBoundsError, match=r"No space left on device; the \d+ chunks finished before are kept"):
            dpbounds.sweep(Q, out=out, chunk_size=4, **AXES)
    assert out.read_bytes() == previous   # the previous output is untouched
    partial = tmp_path / (out.name + ".partial")
    state = json.loads((tmp_path / (out.name + ".sweep.json")).read_text())
    assert state["finished_chunks"] == (2 if step == "part" else 7)
    assert names(partial) == [p["file"] for p in state["parts"]]   # no temporary file, nothing unlisted
    assert names(tmp_path) == sorted([out.name, out.name + ".sweep.json", partial.name, "ref9"])
    dpbounds.sweep(Q, out=out, chunk_size=4, resume=True, **AXES)
    assert content(out) == want


# ---------------------------------------------------------------- progress saved early
def test_point_wise_sweeps_save_their_chunks_within_seconds(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow.parquet", reason="pyarrow not installed")
    # a point-wise chunk (4 points of an exact accountant) takes about a second: the clock says so
    now = [0.0]

    def clock():
        now[0] += 0.6
        return now[0]

    monkeypatch.setattr(_store, "clock", clock)
    out = tmp_path / "e.parquet"
    axes = dict(sigma=np.linspace(1, 3, 24), sample_rate=[0.01], steps=[100], delta=[1e-5])
    state = {}
    add = _store.FileStore.add

    def watching_add(self, res):
        add(self, res)
        if self.next == 4:
            state.update(json.loads((tmp_path / "e.parquet.sweep.json").read_text()))
            raise Killed

    monkeypatch.setattr(_store.FileStore, "add", watching_add)
    monkeypatch.setattr(_store.FileStore, "close", lambda self: None)
    with pytest.raises(Killed):
        dpbounds.sweep("rdp_epsilon_poisson", out=out, chunk_size=4, **axes)
    # after four chunks (2.4 s of this clock), at least two are saved
    assert state["finished_chunks"] >= 2
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "e.parquet.partial").num_rows == 4 * state["finished_chunks"]


# ---------------------------------------------------------------- the command line
def test_command_line_warnings_are_one_clean_line(tmp_path, capsys):
    for extra in ([], ["-o", str(tmp_path / "e.csv")]):
        code, out, err = cli(capsys, "sweep", "epsilon_random_allocation", "--sigma", "1", "--rounds", "10",
                             "--delta", "1e-5", "--tolerance", "1e-9", *extra)
        assert code == 0
        assert err == ("dpbounds: warning: epsilon_random_allocation: at 1 of 1 points the certified bracket is "
                       "wider than the tolerance (see the tolerance_met and reason columns)\n")


def test_command_line_overwrite(tmp_path, capsys):
    out = tmp_path / "g.csv"
    out.write_text("a,b\n1,2\n")
    argv = ["sweep", Q, "--sigma", "0.5:3:9", "--delta", "1e-5,1e-3,1e-2", "-o", str(out)]
    code, _, err = cli(capsys, *argv)
    assert code == 2 and err.startswith("dpbounds: error: ") and "pass overwrite=True" in err
    assert out.read_text() == "a,b\n1,2\n"
    code, _, err = cli(capsys, *argv, "--overwrite")
    assert code == 0 and err == ""
    code, _, err = cli(capsys, "sweep", Q, "--sigma", "1", "--delta", "1e-5", "--overwrite")
    assert code == 2 and "--overwrite needs -o" in err
