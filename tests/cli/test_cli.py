"""The dpbounds command line: Table 1, rounds, delta, JSON, one-line errors."""
import json

import pytest
from paper_tables import TABLE1

import dpbounds
from dpbounds.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_table1_text_matches_paper(capsys):
    code, out, _ = run(capsys, "table1")
    assert code == 0
    lines = [ln.split() for ln in out.splitlines()]
    rows = [ln for ln in lines if len(ln) == 4 and ln[0].replace(".", "").isdigit()]
    assert len(rows) == 10
    for i, (sigma, cf, ex, n) in enumerate(rows):
        variant = "simplified" if i < 5 else "exact"
        assert (float(cf), float(ex), float(n)) == TABLE1[variant][float(sigma)]
        assert cf.count("e") == 1 and len(cf.split("e")[0]) == 4  # printed with 3 significant digits


def test_table1_json(capsys):
    code, out, _ = run(capsys, "--json", "table1")
    data = json.loads(out)
    assert code == 0 and len(data["rows"]) == 10
    r = [x for x in data["rows"] if x["coefficient"] == "exact" and x["sigma"] == 2.0][0]
    assert r["rounds_exact"] == 59097


def test_rounds(capsys):
    # the paper's coefficient, one argument away (Table 1: sigma = 1, delta = 0.01)
    code, out, _ = run(capsys, "rounds", "--sigma", "1", "--delta", "0.01", "--coefficient", "simplified")
    assert code == 0 and "1140369" in out
    code, out, _ = run(capsys, "rounds", "--sigma", "1", "--delta", "0.01", "--coefficient", "exact", "--json")
    assert json.loads(out)["rounds_exact"] == 429713
    code, out, _ = run(capsys, "--json", "rounds", "--sigma", "1", "--delta", "0.01", "--epochs", "4",
                       "--coefficient", "simplified")
    data = json.loads(out)
    assert data["epochs"] == 4 and data["rounds_exact"] > 4 * 1140369


def test_rounds_default_coefficient_is_exact(capsys):
    code, out, _ = run(capsys, "rounds", "--sigma", "1", "--delta", "0.01")
    assert code == 0 and "429713" in out   # Table 1's exact-moment row, not the paper's 1140369
    code, out, _ = run(capsys, "--json", "rounds", "--sigma", "1", "--delta", "0.01", "--epochs", "4")
    data = json.loads(out)
    assert data["coefficient"] == "exact" and data["rounds_exact"] > 4 * 429713


def test_delta(capsys):
    code, out, _ = run(capsys, "delta", "--sigma", "1", "--rounds", "1e6", "--coefficient", "simplified")
    assert code == 0 and "delta_min = 0.0106789" in out and "applies" in out
    # default: the exact third absolute moment, a smaller bound
    code, out, _ = run(capsys, "delta", "--sigma", "1", "--rounds", "1e6")
    exact = dpbounds.theorem31(1.0, 10 ** 6, coefficient="exact").delta_min
    assert code == 0 and f"delta_min = {exact:.6g}" in out and exact < 0.0106789
    code, out, _ = run(capsys, "--json", "delta", "--sigma", "0.5", "--rounds", "100")
    data = json.loads(out)
    assert code == 1 and data["valid"] is False and "sigma < sqrt(3/ln M)" in data["reason"]


# ---------------------------------------------------------------- epsilon: tolerance honoured or said
def test_epsilon_tolerance_met_json(capsys):
    code, out, err = run(capsys, "--json", "epsilon", "--sigma", "1", "--rounds", "1e2", "--epochs", "3",
                         "--delta", "1e-5")
    d = json.loads(out)
    assert code == 0 and err == ""
    assert d["tolerance_met"] is True and d["tolerance"] == 2e-3
    assert d["relative_width"] <= 2e-3 and d["epsilon_lower"] <= d["epsilon_upper"]
    assert "lattice" in d["computed_by"] and d["note"] == ""


@pytest.mark.parametrize("epochs,tolerance", [
    ("1", "1e-9"),   # the single-epoch law's certified width (fast)
    pytest.param("10", "1e-7", marks=pytest.mark.slow),  # a lattice that no longer narrows (seconds)
])
def test_epsilon_tolerance_missed_exit_status_and_message(capsys, epochs, tolerance):
    # a tolerance the bracket cannot reach: the bracket is printed, the shortfall is said
    # on stderr and in the JSON, and the exit status is 3 (not 0)
    argv = ["epsilon", "--sigma", "1", "--rounds", "100", "--epochs", epochs, "--delta", "1e-5",
            "--tolerance", tolerance]
    code, out, err = run(capsys, *argv)
    assert code == 3
    assert out.startswith("epsilon in [")
    assert f"dpbounds: warning: tolerance {float(tolerance):g} not met" in err
    code, out, err = run(capsys, "--json", *argv)
    d = json.loads(out)
    assert code == 3 and d["tolerance_met"] is False and d["relative_width"] > float(tolerance) and d["note"]


def test_epsilon_nothing_finite_is_an_error_not_zero_inf(capsys):
    code, out, err = run(capsys, "epsilon", "--sigma", "1.1", "--rounds", "234", "--epochs", "10",
                         "--delta", "1e-300")
    assert code == 2 and out == ""
    assert err.startswith("dpbounds: error: no finite epsilon can be certified") and err.count("\n") == 1
