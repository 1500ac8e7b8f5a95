"""``dpbounds dpsgd`` and ``dpbounds calibrate``: one table for every sampling scheme, calibration."""
import json
import re

import pytest

from dpbounds.cli import main

ARGS = ["--dataset-size", "6e4", "--batch-size", "256", "--epochs", "10", "--noise-multiplier", "1.1",
        "--delta", "1e-5"]


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's refusals exit 2 with one line
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_dpsgd_table(capsys):
    code, out, err = run(capsys, "dpsgd", *ARGS)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "DP-SGD: noise_multiplier=1.1, N=60000, B=256, epochs=10, delta=1e-05"
    body = "\n".join(lines)
    # the steps each scheme counts: random allocation 10 x (60000 // 256) = 2340; Poisson int(10 / q) = 2343
    # (digits of the bracket ends are checked in the JSON test; here the layout and the steps)
    assert re.search(r"random allocation +0\.0042735 +2340 +\[0\.88\d+, 0\.88\d+\]  exact, certified bracket", body)
    assert "Poisson               0.0042667    2343" in body and "exact PLD, certified bracket" in body
    assert "RDP upper bound" in body and "replace-one" in body
    assert "Theorem 3.1 closed form: does not apply at sigma = 1.1, M = 234" in body
    assert body.count("(NOT a bound)") == 2


def test_dpsgd_json_values(capsys):
    code, out, _ = run(capsys, "--json", "dpsgd", *ARGS)
    d = json.loads(out)
    assert code == 0 and d["dataset_size"] == 60000 and len(d["rows"]) == 7
    ra, po, rdp, wor = d["rows"][:4]
    assert (ra["steps"], po["steps"]) == (2340, 2343)
    assert 0.8798 < ra["epsilon_lower"] <= ra["epsilon_upper"] < 0.8813   # exact, certified
    assert 0.918 < po["epsilon_lower"] <= po["epsilon_upper"] < 0.9196     # dp-accounting PLD: 0.9188
    assert rdp["epsilon_lower"] is None and rdp["epsilon_upper"] == pytest.approx(1.0968, abs=1e-3)
    assert ra["epsilon_upper"] < po["epsilon_lower"] < po["epsilon_upper"] < rdp["epsilon_upper"]
    assert wor["neighbouring"].startswith("replace-one")
    assert ra["tolerance_met"] and po["tolerance_met"]


def test_dpsgd_theorem31_applies_where_it_does(capsys):
    code, out, _ = run(capsys, "--json", "dpsgd", "--dataset-size", "1e8", "--batch-size", "100", "--epochs", "1",
                       "--noise-multiplier", "1", "--delta", "0.05")
    rows = json.loads(out)["rows"]
    t31 = [r for r in rows if r["method"].startswith("Theorem 3.1")][0]
    assert code == 0 and t31["epsilon_upper"] == 0.0 and "(0, " in t31["method"]


@pytest.mark.parametrize("argv, msg", [
    (["--dataset-size", "60000.5"], "must be a whole number"),
    (["--batch-size", "abc"], "not a number"),
    (["--delta", "2"], "delta"),
])
def test_dpsgd_errors_are_one_line(capsys, argv, msg):
    base = dict(zip(ARGS[::2], ARGS[1::2]))
    for k, v in zip(argv[::2], argv[1::2]):
        base[k] = v
    code, out, err = run(capsys, "dpsgd", *[x for kv in base.items() for x in kv])
    assert code == 2 and out == "" and msg in err and err.count("\n") == 1


def test_calibrate(capsys):
    code, out, _ = run(capsys, "--json", "calibrate", "--target-epsilon", "2", "--delta", "1e-5",
                       "--dataset-size", "60000", "--batch-size", "256", "--epochs", "10",
                       "--sampling", "poisson", "--accountant", "rdp")
    d = json.loads(out)
    assert code == 0 and d["accountant"] == "rdp" and 0.8 < d["noise_multiplier"] < 1.0
    code, out, _ = run(capsys, "calibrate", "--target-epsilon", "4", "--delta", "1e-5", "--dataset-size", "60000",
                       "--batch-size", "256", "--epochs", "10", "--sampling", "without_replacement")
    assert code == 0 and out.startswith("noise_multiplier = ") and "rdp accountant" in out
