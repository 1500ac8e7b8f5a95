"""``dpbounds sweep``: smoke runs, the TOML form, one-line errors, and Ctrl-C + resume of a real process."""
from __future__ import annotations

import csv
import io
import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from cli_harness import child_env, run

import dpbounds
from dpbounds.cli import main


def rows(text):
    r = list(csv.reader(io.StringIO(text)))
    return r[0], r[1:]


def test_stdout_csv_is_the_api_in_command_line_order(capsys):
    code, out, err = run(capsys, "sweep", "delta_bound", "--rounds", "1e3,1e6", "--sigma", "1:2:2")
    assert code == 0 and err == ""
    header, body = rows(out)
    assert header == ["rounds", "sigma", "delta_bound", "valid", "reason"]
    ds = dpbounds.sweep("delta_bound", rounds=[1e3, 1e6], sigma=[1.0, 2.0])
    vals = np.asarray(ds["delta_bound"]).ravel() if not isinstance(ds, dict) else ds["delta_bound"].ravel()
    np.testing.assert_array_equal([float(r[2]) for r in body], vals)
    assert [r[0] for r in body] == ["1000.0", "1000.0", "1000000.0", "1000000.0"]


def test_json_rows(capsys):
    code, out, _ = run(capsys, "--json", "sweep", "delta_bound", "--sigma", "1", "--rounds", "10,1e6")
    data = json.loads(out)
    assert code == 0 and [r["valid"] for r in data] == [False, True] and data[0]["delta_bound"] is None
    assert data[1]["delta_bound"] == dpbounds.delta_bound(1.0, 1e6)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_file_output_and_summary(tmp_path, capsys, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow", reason="pyarrow not installed")
    out = tmp_path / f"g{suffix}"
    code, text, err = run(capsys, "sweep", "delta_bound", "--sigma", "0.5:4:5:lin", "--rounds", "1e3:1e9:7:log",
                          "--chunk-size", "4", "--coefficient", "simplified", "--no-progress", "-o", str(out))
    assert code == 0 and err == ""
    assert text.startswith(f"wrote 35 points to {out}; ") and "invalid" in text
    assert out.exists() and (tmp_path / f"g{suffix}.sweep.json").exists()


def test_list(capsys):
    code, out, _ = run(capsys, "sweep", "--list")
    assert code == 0
    from dpbounds.sweeps import QUANTITIES

    for name in QUANTITIES:
        assert out.count(f"\n{name}(") + out.startswith(f"{name}(") == 1, name
    assert "rounds_required(sigma, delta, epochs=1; coefficient=exact, validity_at=delta_min)" in out


def _toml(tmp_path, text):
    p = tmp_path / "grid.toml"
    p.write_text(text)
    return str(p)


def test_toml_grid_file(tmp_path, capsys):
    out = tmp_path / "g.csv"
    path = _toml(tmp_path, f'quantity = "rounds_required"\nout = "{out}"\nchunk_size = 2\n[axes]\n'
                           'sigma = {start = 0.5, stop = 2, num = 3}\ndelta = [1e-5, 1e-3]\n'
                           '[options]\ncoefficient = "simplified"\n')
    code, text, err = run(capsys, "sweep", path)
    assert code == 0 and err == "" and text.startswith("wrote 6 points")
    header, body = rows(out.read_text())
    ref = dpbounds.rounds_required(np.repeat([0.5, 1.25, 2.0], 2), np.tile([1e-5, 1e-3], 3), "simplified")
    np.testing.assert_array_equal([float(r[header.index("rounds_required")]) for r in body], ref)


@pytest.mark.parametrize("argv,needle", [
    (["sweep", "delta_bound", "--sigma", "1:2:0:lin", "--rounds", "10"], "axis sigma: num must be a positive integer"),
    (["sweep", "delta_bound", "--sigma", "0:2:5:log", "--rounds", "10"], "axis sigma: a log axis needs start > 0"),
    (["sweep", "delta_bound", "--sigma", "1:2:5:cubic", "--rounds", "10"], "axis sigma: scale must be 'lin' or 'log'"),
    (["sweep", "delta_bound", "--sigma", "1,nan", "--rounds", "10"], "axis sigma: values must not be NaN"),
    (["sweep", "delta_bound", "--sigma", "1", "--delta", "3"], "--delta: delta_bound has no axis 'delta'"),
    (["sweep", "delta_bound", "--sigma", "1"], "delta_bound needs the axis rounds"),
    (["sweep", "delta_bound", "--sigma", "1", "--rounds", "10", "--conversion", "classic"],
     "--conversion: not an option of delta_bound"),
    (["sweep", "nope", "--sigma", "1"], "unknown quantity 'nope'"),
    (["sweep"], "give a QUANTITY or a GRID.toml file"),
    (["sweep", "delta_bound", "--sigma", "1", "--rounds", "10", "--chunk-size", "1.5"], "must be a whole number"),
    (["sweep", "delta_bound", "--sigma", "1", "--rounds", "10", "--resume"], "--resume needs -o"),
    (["sweep", "delta_bound", "--sigma", "1", "--rounds", "10", "-o", "x.txt"], "out must end in .parquet or .csv"),
    (["sweep", "delta_bound", "--sigma", "1", "--rounds", "10", "-o", "/no/such/dir/x.csv"], "cannot write -o"),
    (["sweep", "/no/such/grid.toml"], "cannot read '/no/such/grid.toml'"),
])
def test_bad_input_is_one_line(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.startswith("dpbounds: error: ") and err.count("\n") == 1
    assert needle in err, err


@pytest.mark.parametrize("text,needle", [
    ('quantity = "delta_bound"\nfoo = 1\n', "unknown key 'foo'"),
    ('[axes]\nsigma = 1\n', "the key 'quantity' is missing"),
    ('quantity = "delta_bound"\naxes = 3\n', "[axes] must be a table"),
    ('quantity = "delta_bound"\n[axes]\nsigma = "1:2:x"\nrounds = 5\n', "axis sigma: num must be a real number"),
    ('quantity = "delta_bound"\n[axes]\nsigma = {start = 1}\nrounds = 5\n', "axes.sigma needs the keys start, stop, num"),
    ('quantity = "delta_bound"\n[axes]\nsigma = 1\nrounds = 5\n[options]\ncoef = "x"\n',
     "delta_bound has no axis or option 'coef'"),
    ('quantity = "delta_bound"\n[axes\n', "grid.toml: "),
])
def test_bad_toml_is_one_line(tmp_path, capsys, text, needle):
    code, out, err = run(capsys, "sweep", _toml(tmp_path, text))
    assert code == 2 and out == "" and err.count("\n") == 1 and needle in err, err


def test_toml_with_axis_flags_is_refused(tmp_path, capsys):
    path = _toml(tmp_path, 'quantity = "delta_bound"\n[axes]\nsigma = 1\nrounds = 5\n')
    code, _, err = run(capsys, "sweep", path, "--sigma", "2")
    assert code == 2 and "--sigma: with a grid file, give the axes and options in the file" in err


def test_toml_needs_tomllib_or_tomli(tmp_path, capsys, monkeypatch):
    # as on Python 3.10 without tomli
    monkeypatch.setitem(sys.modules, "tomllib", None)
    monkeypatch.setitem(sys.modules, "tomli", None)
    code, _, err = run(capsys, "sweep", _toml(tmp_path, 'quantity = "delta_bound"\n'))
    assert code == 2 and "needs Python >= 3.11 or the tomli package (pip install tomli)" in err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
# a subprocess sweep of seconds per case: slow tier.  In the fast suite, the same steps in process
# (test_sweep_files.py::test_a_kill_at_any_step_resumes_to_the_uninterrupted_file) and the CLI's
# Ctrl-C exit (test_cli_contract.py::test_ctrl_c_exits_130_with_one_line)
@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_ctrl_c_keeps_the_finished_chunks_and_resume_finishes_the_file(tmp_path, suffix):
    if suffix == ".parquet":
        pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow not installed")
    out, full = tmp_path / f"i{suffix}", tmp_path / f"full{suffix}"
    # ~2e5 rounds_required searches in chunks of 2000 (each saved at once: 2000 rows, but the first
    # part waits for a second), several seconds, interrupted once two chunks are saved
    argv = ["sweep", "rounds_required", "--sigma", "0.5:4:400:lin", "--delta", "1e-12:1e-2:500:log",
            "--chunk-size", "2000", "--no-progress"]
    cmd = [sys.executable, "-m", "dpbounds", *argv, "-o", str(out)]
    manifest = tmp_path / f"i{suffix}.sweep.json"
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if manifest.exists() and json.loads(manifest.read_text())["finished_chunks"] >= 2:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the sweep finished before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130 and err == "dpbounds: interrupted\n"
    state = json.loads(manifest.read_text())
    done = state["finished_chunks"]
    assert 2 <= done < state["n_chunks"] and not state["complete"]
    # out is written only when complete; the finished chunks are the part files, readable as they are
    assert not out.exists()
    partial = tmp_path / f"i{suffix}.partial"
    assert sorted(p.name for p in tmp_path.iterdir()) == [partial.name, manifest.name]
    names = sorted(p.name for p in partial.iterdir())
    assert names == [p["file"] for p in state["parts"]]
    if suffix == ".parquet":
        n_rows = pq.read_table(partial).num_rows
    else:
        n_rows = sum((partial / n).read_text().count("\n") - 1 for n in names)
    assert n_rows == min(done * 2000, 200000)
    assert main([*argv, "--resume", "-o", str(out)]) == 0
    assert main([*argv, "-o", str(full)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [out.name, manifest.name, full.name, full.name + ".sweep.json"])
    if suffix == ".csv":
        assert out.read_bytes() == full.read_bytes()
    else:
        a, b = pq.read_table(out), pq.read_table(full)
        assert a.column_names == b.column_names
        for k in a.column_names:
            np.testing.assert_array_equal(np.asarray(a[k]), np.asarray(b[k]), err_msg=k)
