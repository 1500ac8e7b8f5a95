"""Public API of dpbounds.rdp: validation, broadcasting, scalar returns, and the ``dpbounds rdp`` CLI."""
from __future__ import annotations

import json

import numpy as np
import pytest

import dpbounds.rdp as R
from dpbounds.cli import main


def test_scalars_and_broadcasting():
    assert isinstance(R.gaussian(2, 1.0), float)
    assert isinstance(R.subsampled_gaussian_wor(4, 2.0, 0.01), float)
    v = R.poisson_gaussian(np.array([[2.0], [3.5]]), np.array([1.0, 2.0, 4.0]), 0.01)
    assert v.shape == (2, 3)
    v = R.subsampled_gaussian_wor(np.arange(2.0, 10.0)[None, :], np.array([1.0, 5.0])[:, None], 0.01)
    assert v.shape == (2, 8)
    np.testing.assert_array_equal(v[1], R.subsampled_gaussian_wor(np.arange(2.0, 10.0), 5.0, 0.01))


@pytest.mark.parametrize("call,name", [
    (lambda: R.gaussian(0.5, 1.0), "alpha"),
    (lambda: R.gaussian(2.0, 0.0), "sigma"),
    (lambda: R.laplace(2.0, -1.0), "b"),
    (lambda: R.randomized_response(2.0, 1.0), "p"),
    (lambda: R.subsampled_gaussian_wor(2.0, 1.0, 1.5), "gamma"),
    (lambda: R.subsampled_gaussian_wor(2.0, 1.0, 0.1, bound="thm27"), "bound"),
    (lambda: R.poisson_gaussian(2.0, 1.0, 0.1, mode="fast"), "mode"),
    (lambda: R.poisson_gaussian([2.0, np.nan], 1.0, 0.1), "alpha"),
    (lambda: R.epsilon([0.1, 0.2], [2.0], 1e-5), "rdp_values"),
    (lambda: R.epsilon([0.1], [2.0], 1.0), "delta"),
    (lambda: R.delta([0.1], [2.0], -1.0), "epsilon"),
    (lambda: R.subsampled_wor(5.0, [0, 0, 0.1, 0.2], 0.1), "base_rdp"),
    (lambda: R.hybrid_noise([1.0, 2.0], [1], 0.1), "c2 and ranks"),
    (lambda: R.coordinatewise_poisson(2.0, 1.0, 0.1, 1.0, 0.5, p=3.0), "p"),
])
def test_validation_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_subsampled_wor_inputs_agree():
    a = np.array([2.0, 3.0, 4.5, 10.0, np.inf])
    table = np.zeros(12)
    table[2:] = R.laplace(np.arange(2.0, 12.0), 0.5)
    via_callable = R.subsampled_wor(a, lambda o: R.laplace(o, 0.5), 0.01)
    via_mech = R.subsampled_wor(a, R.Laplace(0.5), 0.01)
    via_table = R.subsampled_wor(a, table, 0.01, eps_inf=2.0)
    np.testing.assert_allclose(via_callable, via_mech, rtol=0)
    np.testing.assert_allclose(via_callable, via_table, rtol=1e-15)
    assert via_callable[-1] == pytest.approx(np.log1p(0.01 * np.expm1(2.0)), rel=1e-15)  # eps'(inf)
    # the Gaussian through the generic path equals the specialised kernel (Theorem 9 and improved)
    for b in ("theorem9", "improved"):
        np.testing.assert_allclose(R.subsampled_wor(a[:-1], R.Gaussian(3.0), 0.02, bound=b),
                                   R.subsampled_gaussian_wor(a[:-1], 3.0, 0.02, bound=b), rtol=1e-12)


def test_cli_table_and_json(capsys):
    assert main(["rdp", "--sigma", "1.0", "--dataset-size", "1e6", "--batch-size", "1000", "--epochs", "2", "--delta", "1e-3"]) == 0
    out = capsys.readouterr().out
    assert "poisson" in out and "without-replacement" in out and "random-allocation" in out and "Theorem 3.1" in out
    assert main(["--json", "rdp", "--sigma", "1.0", "--dataset-size", "1e6", "--batch-size", "1000", "--delta", "1e-3"]) == 0
    rows = json.loads(capsys.readouterr().out)
    byname = {r["scheme"]: r for r in rows}
    acc = R.RDPAccountant().compose(R.PoissonGaussian(1.0, 1e-3), 1000)
    assert byname["poisson"]["epsilon"] == pytest.approx(acc.get_epsilon(1e-3), rel=1e-12)
    wor = R.RDPAccountant().compose(R.SubsampledGaussianWOR(0.5, 1e-3), 1000)
    assert byname["without-replacement"]["epsilon"] == pytest.approx(wor.get_epsilon(1e-3), rel=1e-12)
    from dpbounds import _ufuncs
    assert byname["random-allocation"]["delta"] == pytest.approx(float(_ufuncs.delta_bound_exact(1.0, 1000.0)), rel=1e-15)
    assert byname["random-allocation"]["epsilon"] is None    # delta_RA = 0.209 > 1e-3: not met (inf)
    assert main(["--json", "rdp", "--sigma", "1.0", "--dataset-size", "1e6", "--batch-size", "1000", "--delta", "0.3"]) == 0
    rows = {r["scheme"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["random-allocation"]["epsilon"] == 0.0          # (0, 0.209)-DP meets delta = 0.3


def test_cli_errors(capsys):
    assert main(["rdp", "--sigma", "-1", "--dataset-size", "100", "--batch-size", "10"]) == 2
    assert "sigma" in capsys.readouterr().err
