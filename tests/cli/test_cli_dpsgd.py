"""``dpbounds dpsgd`` and ``dpbounds calibrate``: one table for every sampling scheme, calibration."""
import json
import re

import pytest
from cli_harness import run, subcommands

ARGS = ["--dataset-size", "6e4", "--batch-size", "256", "--epochs", "10", "--noise-multiplier", "1.1",
        "--delta", "1e-5"]


def test_dpsgd_table(capsys):
    code, out, err = run(capsys, "dpsgd", *ARGS)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "DP-SGD: sigma=1.1, N=60000, B=256, epochs=10, delta=1e-05"
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
    assert code == 0 and d["accountant"] == "rdp" and 0.8 < d["sigma"] < 1.0
    code, out, _ = run(capsys, "calibrate", "--target-epsilon", "4", "--delta", "1e-5", "--dataset-size", "60000",
                       "--batch-size", "256", "--epochs", "10", "--sampling", "without_replacement")
    assert code == 0 and out.startswith("sigma = ") and "rdp accountant" in out


# ---------------------------------------------------------------- one vocabulary (issue: --sigma vs --noise-multiplier)
def test_sigma_and_its_alias_give_the_same_table(capsys):
    # every command takes the noise multiplier as --sigma; --noise-multiplier is its alias
    alias = run(capsys, "--json", "dpsgd", *ARGS)
    argv = list(ARGS)
    argv[argv.index("--noise-multiplier")] = "--sigma"
    canonical = run(capsys, "--json", "dpsgd", *argv)
    assert canonical == alias and canonical[0] == 0 and json.loads(canonical[1])["sigma"] == 1.1


@pytest.mark.parametrize("typed", ["--sigma", "--noise-multiplier"])
def test_messages_name_the_flag_typed(capsys, typed):
    # the API says noise_multiplier / sigma; the command line says what the user typed
    code, _, err = run(capsys, "epsilon", typed, "0.1", "--rounds", "234", "--epochs", "10", "--delta", "1e-5")
    assert code == 2 and err == f"dpbounds: error: {typed} must be in [0.3, 20.0], got 0.1\n"
    code, _, err = run(capsys, "delta", typed, "abc", "--rounds", "100")
    assert code == 2 and err == f"dpbounds: error: argument {typed}: not a number: 'abc'\n"
    code, _, err = run(capsys, "rounds", typed, "-1", "--delta", "1e-5")
    assert code == 2 and err.startswith(f"dpbounds: error: {typed} must be finite and > 0")
    other = {"--sigma": "--noise-multiplier", "--noise-multiplier": "--sigma"}[typed]
    assert other not in err and "noise_multiplier" not in err


def test_every_noise_multiplier_option_is_sigma_with_its_alias():
    seen = []
    # the companion paper's figures take a mechanism's sigma per unit replace-one sensitivity,
    # which is not DP-SGD's noise multiplier (noise std / clipping norm): no alias there.  The
    # sweep's options are its quantities' axes, named exactly as the API's parameters (--sigma).
    for name, p in subcommands().items():
        for a in p._actions:
            if a.dest == "sigma" and name not in ("plot rdp-bounds", "plot composition", "sweep"):
                seen.append(name)
                assert a.option_strings == ["--sigma", "--noise-multiplier"], (name, a.option_strings)
            assert "--noise-multiplier" not in a.option_strings or a.dest == "sigma", name
    for command in ("dpsgd", "epsilon", "curve", "rdp", "delta", "rounds", "tradeoff", "gdp-mu",
                    "plot tradeoff", "plot epsilon", "plan"):
        assert command in seen, command


# ---------------------------------------------------------------- one step-count rule
def test_poisson_steps_agree_across_commands(capsys):
    # N = 60000, B = 256, E = 10: floor(10 * 60000 / 256) = 2343 Poisson steps in every command
    _, out, _ = run(capsys, "--json", "dpsgd", *ARGS)
    dpsgd_steps = {r["steps"] for r in json.loads(out)["rows"] if r["scheme"] != "random allocation"}
    _, out, _ = run(capsys, "--json", "rdp", "--sigma", "1.1", "--dataset-size", "60000", "--batch-size", "256",
                    "--epochs", "10", "--delta", "1e-5")
    rows = json.loads(out)
    rdp_steps = {r["steps"] for r in rows if r["scheme"] != "random-allocation"}
    assert dpsgd_steps == rdp_steps == {2343}
    assert [r["steps"] for r in rows if r["scheme"] == "random-allocation"] == [2340]


def test_step_rule_functions():
    from dpbounds.calibration import _Setting
    from dpbounds.sampling import poisson_steps, random_allocation_steps

    assert poisson_steps(10, 256 / 60000) == 2343 and random_allocation_steps(10, 234) == 2340
    # exact where E N / B is whole, although the float quotient is not: int(10 / (25 / 2925)) = 1169
    assert int(10 / (25 / 2925)) == 1169 and poisson_steps(10, 25 / 2925) == 1170
    assert random_allocation_steps(2.5, 234) == 585
    for sampling, accountant, expected in [("poisson", "exact", 2343), ("poisson", "rdp", 2343),
                                           ("without_replacement", "rdp", 2343), ("random_allocation", "exact", 2340)]:
        assert _Setting(sampling, accountant, 60000, 256, 10, None, 2e-3).steps == expected
    from dpbounds import PoissonAccountant
    from dpbounds.rdp import RDPAccountant
    assert len(PoissonAccountant(1.1, dataset_size=60000, batch_size=256, epochs=10)) == 2343
    assert len(RDPAccountant(noise_multiplier=1.1, dataset_size=60000, batch_size=256, epochs=10)) == 2343
    with pytest.raises(ValueError, match="epochs"):
        poisson_steps(1e308, 0.5)
    with pytest.raises(ValueError, match="less than one step"):
        poisson_steps(1e-3, 0.5)


# ---------------------------------------------------------------- per-row answers
@pytest.mark.parametrize("argv, row, needle", [
    (["--sigma", "25", "--dataset-size", "60000", "--batch-size", "256", "--epochs", "10"],
     ("random allocation", "exact"), "--sigma must be in [0.3, 20.0], got 25.0"),
    (["--noise-multiplier", "25", "--dataset-size", "60000", "--batch-size", "256", "--epochs", "10"],
     ("random allocation", "exact"), "--noise-multiplier must be in [0.3, 20.0], got 25.0"),
    (["--sigma", "1.1", "--dataset-size", "1e12", "--batch-size", "256", "--epochs", "10"],
     ("random allocation", "exact"), "M = --dataset-size // --batch-size must be <= 1e9"),
])
def test_dpsgd_answers_per_row(capsys, argv, row, needle):
    code, out, err = run(capsys, "--json", "dpsgd", *argv, "--delta", "1e-5")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    bad = [r for r in rows if r["scheme"] == row[0] and r["method"].startswith(row[1])]
    assert len(bad) == 1 and bad[0]["epsilon_upper"] is None and needle in bad[0]["reason"], bad
    # the other rows still answer (RDP Poisson at least), and nothing names an API parameter
    assert any(r["epsilon_upper"] is not None for r in rows if r["method"].startswith("RDP"))
    assert "rounds_per_epoch" not in out and "noise_multiplier" not in out
    _, text, _ = run(capsys, "dpsgd", *argv, "--delta", "1e-5")
    assert "NOT AVAILABLE: " + needle in text


def test_dpsgd_no_impossible_advice(capsys):
    # sigma = 0.3, M = 2, E = 1000: nothing below delta = 1 is certified; never "ask for delta >= 10"
    code, out, _ = run(capsys, "--json", "dpsgd", "--sigma", "0.3", "--dataset-size", "60000", "--batch-size",
                       "30000", "--epochs", "1000", "--delta", "1e-5")
    assert code == 0
    ra = json.loads(out)["rows"][0]
    assert ra["epsilon_upper"] is None and ra["reason"]
    assert "ask for delta >=" not in ra["reason"] or float(ra["reason"].split(">= ")[1].split(",")[0]) < 1


def test_dpsgd_no_row_can_answer_exits_1(capsys):
    code, out, _ = run(capsys, "--json", "dpsgd", "--sigma", "1.1", "--dataset-size", "60000", "--batch-size",
                       "256", "--epochs", "1e300")
    rows = json.loads(out)["rows"]
    assert code == 1 and all(r["epsilon_upper"] is None and "--epochs 1e+300" in r["reason"] for r in rows)


def test_calibrate_unreachable_target_says_the_best_epsilon(capsys):
    code, out, err = run(capsys, "calibrate", "--target-epsilon", "0.001", "--delta", "1e-5", "--dataset-size",
                         "60000", "--batch-size", "256", "--epochs", "10")
    assert code == 1 and out == "" and err.count("\n") == 1
    m = re.search(r"smallest certified epsilon reachable is ([0-9.e+-]+), at noise multiplier 20\b", err)
    assert m and float(m.group(1)) > 0.001, err
    assert "--target-epsilon 0.001" in err
    # the number is the certified epsilon at sigma = 20 (the calibration's largest for random allocation)
    import warnings

    from dpbounds import RandomAllocationAccountant
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eps20 = RandomAllocationAccountant(20.0, 234, steps=2340).get_epsilon(1e-5)
    assert float(m.group(1)) == pytest.approx(eps20, rel=1e-3)
    code, out, _ = run(capsys, "--json", "calibrate", "--target-epsilon", "0.001", "--delta", "1e-5",
                       "--dataset-size", "60000", "--batch-size", "256", "--epochs", "10")
    assert code == 1 and json.loads(out)["sigma"] is None and "reachable" in json.loads(out)["reason"]


def test_option_names_replace_only_parameter_names():
    import argparse

    from dpbounds.cli._options import in_flags

    ns = argparse.Namespace(sigma=1.0, a=[0.5], rounds=10, delta=1e-5, _typed_flags={"sigma": "--noise-multiplier"})
    assert in_flags("noise_multiplier must be in [0.3, 20.0], got 0.1", ns) == \
        "--noise-multiplier must be in [0.3, 20.0], got 0.1"
    assert in_flags("axis sigma: a log axis needs start > 0", ns) == "axis sigma: a log axis needs start > 0"
    assert in_flags("a must be in [0, 1], got 2.0", ns) == "--a must be in [0, 1], got 2.0"
    assert in_flags("rounds_per_epoch=5 contradicts it; delta must be < 1", ns) == \
        "--rounds 5 contradicts it; --delta must be < 1"
    assert in_flags("M is fine", ns, {"rounds": "M = N // B"}) == "M is fine"
