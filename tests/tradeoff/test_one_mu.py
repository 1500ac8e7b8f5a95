"""One asymptotic Gaussian-DP mu of random allocation on every surface of the package.

Theorem 4.2 of the random-allocation paper: one epoch of M rounds is asymptotically
G_{mu_M}-DP with mu_M = sqrt((e^{1/sigma^2} - 1)/(M - 1)), and E epochs compose to mu_M sqrt(E).
Every function, accountant, CLI row and doc page that gives "the" asymptotic mu must give this
value at the same (sigma, M, E); the Poisson limit sqrt(E (w - 1)/M) is a different quantity
(``gdp_mu_poisson(sigma, 1/M, E M)``).
"""
import json
import math
import pathlib
import re

import numpy as np
import pytest
from cli_harness import run

import dpbounds
from dpbounds import RandomAllocationAccountant, gdp_epsilon, gdp_mu_random_allocation

SIGMA, M, E, DELTA = 1.1, 234, 10, 1e-5
MU = math.sqrt(E * math.expm1(1.0 / SIGMA ** 2) / (M - 1))  # Theorem 4.2's mu_M sqrt(E)
MU_POISSON = math.sqrt(E * math.expm1(1.0 / SIGMA ** 2) / M)
DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"


def test_the_function_is_theorem_4_2():
    assert float(gdp_mu_random_allocation(SIGMA, M, E)) == pytest.approx(MU, rel=1e-15)
    # the two readings differ visibly here, so the surface checks below can tell them apart
    assert abs(MU / MU_POISSON - 1) > 1e-3


def test_accountant_gdp_asymptotic():
    acc = RandomAllocationAccountant(SIGMA, M, E, method="gdp_asymptotic")
    assert acc.gdp_mu() == pytest.approx(MU, rel=1e-15)
    assert acc.get_epsilon(DELTA) == pytest.approx(float(gdp_epsilon(DELTA, MU)), rel=1e-15)
    # recorded step by step, with a partial epoch: E = steps / M
    stepped = RandomAllocationAccountant(method="gdp_asymptotic")
    for _ in range(E * M + 17):
        stepped.step(noise_multiplier=SIGMA, sample_rate=1 / M)
    mu_steps = float(gdp_mu_random_allocation(SIGMA, M, (E * M + 17) / M))
    assert stepped.gdp_mu() == pytest.approx(mu_steps, rel=1e-14)


def test_cli_rows(capsys):
    code, out, _ = run(capsys, "epsilon", "--sigma", str(SIGMA), "--rounds", str(M), "--epochs", str(E),
                       "--delta", str(DELTA), "--method", "gdp_asymptotic", "--json")
    assert code == 0
    assert json.loads(out)["epsilon_upper"] == pytest.approx(float(gdp_epsilon(DELTA, MU)), rel=1e-12)

    code, out, _ = run(capsys, "gdp-mu", "--sigma", str(SIGMA), "--rounds", str(M), "--epochs", str(E),
                       "--delta", str(DELTA), "--json")
    assert code == 0
    rows = json.loads(out)
    row = rows[0] if isinstance(rows, list) else rows
    assert row["random_allocation"] == pytest.approx(MU, rel=1e-15)

    # dpsgd: N = 60000, B = 256 gives M = 234; 10 epochs of random allocation
    code, out, _ = run(capsys, "dpsgd", "--noise-multiplier", str(SIGMA), "--dataset-size", "60000",
                       "--batch-size", "256", "--epochs", str(E), "--delta", str(DELTA), "--json")
    gdp_rows = [r for r in json.loads(out)["rows"]
                if r["scheme"] == "random allocation" and "Gaussian-DP" in r["method"]]
    assert len(gdp_rows) == 1
    shown = float(re.search(r"mu = ([0-9.]+)", gdp_rows[0]["method"]).group(1))
    assert shown == pytest.approx(MU, abs=5e-5)  # printed to 4 significant digits
    assert gdp_rows[0]["epsilon_upper"] == pytest.approx(float(gdp_epsilon(DELTA, MU)), rel=1e-12)

    code, out, _ = run(capsys, "tradeoff", "--sigma", str(SIGMA), "--rounds", str(M), "--a", "0.5")
    assert code == 0
    shown = float(re.search(r"mu_M=([0-9.e-]+)", out).group(1))
    assert shown == pytest.approx(float(gdp_mu_random_allocation(SIGMA, M, 1)), rel=1e-5)


def test_sweep_and_figures():
    pytest.importorskip("xarray")
    ds = dpbounds.sweep("gdp_mu_random_allocation", sigma=[SIGMA], rounds=[M], epochs=[E])
    assert float(np.asarray(ds["gdp_mu_random_allocation"]).ravel()[0]) == pytest.approx(MU, rel=1e-15)
    from dpbounds.figures._tradeoff import tradeoff_curves

    label = next(lbl for lbl, _ in tradeoff_curves(SIGMA, M, E).values() if "asymptotic mu" in lbl)
    assert float(label.split("=")[-1]) == pytest.approx(MU, rel=1e-3)


def test_doc_pages_state_the_one_formula():
    acc = (DOCS / "accountant.md").read_text()
    row = next(line for line in acc.splitlines() if line.startswith('| `"gdp_asymptotic"`'))
    assert "(M - 1)" in row and "/M}" not in row
    tr = (DOCS / "tradeoff.md").read_text()
    assert "The package uses this one value everywhere" in tr
    readme = (DOCS.parent / "README.md").read_text()
    assert "Poisson-limit reading" not in readme
