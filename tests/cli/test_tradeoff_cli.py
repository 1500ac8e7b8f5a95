"""CLI sub-commands tradeoff / gdp / gdp-mu."""
import json

import pytest

from dpbounds import tradeoff as T
from dpbounds.cli import main


def test_tradeoff_json(capsys):
    assert main(["--json", "tradeoff", "--sigma", "1", "--rounds", "1000", "--a", "0.1", "0.5"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["a"] for r in rows] == [0.1, 0.5]
    assert rows[1]["clt"] == pytest.approx(T.tradeoff_clt(0.5, 1.0, 1000), rel=1e-15)
    assert rows[0]["edgeworth"] == pytest.approx(T.tradeoff_edgeworth(0.1, 1.0, 1000), rel=1e-15)
    assert rows[0]["lower_bound"] <= rows[0]["gaussian"]


def test_tradeoff_text(capsys):
    assert main(["tradeoff", "--sigma", "2", "--rounds", "100", "--a", "0.3", "--method", "clt"]) == 0
    out = capsys.readouterr().out
    assert "approximations" in out and "clt" in out


def test_gdp(capsys):
    assert main(["--json", "gdp", "--mu", "1", "--eps", "1", "--delta", "1e-5"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["delta"] == pytest.approx(T.gdp_delta(1.0, 1.0))
    assert rows[1]["eps"] == pytest.approx(T.gdp_epsilon(1e-5, 1.0))


def test_gdp_mu(capsys):
    assert main(["--json", "gdp-mu", "--sigma", "1", "--rounds", "1000", "--epochs", "4", "--delta", "1e-5"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["random_allocation"] == pytest.approx(row["poisson_bu"], rel=1e-3)
    assert row["poisson_drs"] > row["poisson_bu"]


def test_bad_argument_exit_2(capsys):
    assert main(["gdp", "--mu", "-1", "--eps", "1"]) == 2
    assert "mu" in capsys.readouterr().err
