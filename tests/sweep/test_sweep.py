"""dpbounds.sweep: axis parsing, grid order, every quantity against its public function, invalid
points kept with their reasons, chunk-size invariance, files, resume, engines and the outer path."""
from __future__ import annotations

import dataclasses
import json
import sys
import warnings

import numpy as np
import pytest

import dpbounds
from dpbounds import DPBoundsError
from dpbounds._errors import status_reasons
from dpbounds.sweeps import QUANTITIES, parse_axis
from dpbounds.sweeps._quantities import get_quantity
from dpbounds.sweeps._sweep import run_sweep


def run(quantity, **kw):
    """sweep() as a dict of numpy arrays, whether or not xarray is installed."""
    res = dpbounds.sweep(quantity, **kw)
    if isinstance(res, dict):
        return res
    out = {k: np.asarray(res[k].values) for k in res.data_vars}
    out.update({k: np.asarray(res[k].values) for k in res.coords})
    return out


# ---------------------------------------------------------------- axes
def test_parse_axis_forms():
    np.testing.assert_array_equal(parse_axis("sigma", 1.5), [1.5])
    np.testing.assert_array_equal(parse_axis("sigma", [0.5, 2]), [0.5, 2.0])
    np.testing.assert_array_equal(parse_axis("sigma", np.array([3.0, 1.0])), [3.0, 1.0])
    np.testing.assert_array_equal(parse_axis("sigma", (0.5, 2.0, 4, "lin")), np.linspace(0.5, 2.0, 4))
    np.testing.assert_array_equal(parse_axis("delta", (1e-6, 1e-2, 5, "log")), np.geomspace(1e-6, 1e-2, 5))
    np.testing.assert_array_equal(parse_axis("delta", "1e-6:1e-2:5:log"), np.geomspace(1e-6, 1e-2, 5))
    np.testing.assert_array_equal(parse_axis("sigma", "0.5:2:4"), np.linspace(0.5, 2.0, 4))
    np.testing.assert_array_equal(parse_axis("sigma", "0.5, 1,2"), [0.5, 1.0, 2.0])
    np.testing.assert_array_equal(parse_axis("sigma", "inf"), [np.inf])   # explicit: the quantity decides
    np.testing.assert_array_equal(parse_axis("sigma", (3.0, 1.0, 3, "lin")), [3.0, 2.0, 1.0])


def test_integer_axes_from_generated_specs_are_rounded_and_deduplicated():
    got = parse_axis("rounds", (10, 20, 5, "log"))
    raw = np.geomspace(10, 20, 5)
    np.testing.assert_array_equal(got, np.rint(raw))
    assert list(got) == [10, 12, 14, 17, 20]
    assert list(parse_axis("epochs", "1:3:10:lin")) == [1, 2, 3]          # repeats dropped, order kept
    assert list(parse_axis("steps", (30, 10, 3, "lin"))) == [30, 20, 10]
    assert list(parse_axis("sigma", "1:3:5:lin")) == [1, 1.5, 2, 2.5, 3]  # not an integer axis
    # explicit values are never changed: the sweep reports the non-integer point invalid
    assert list(parse_axis("rounds", [10.5, 3])) == [10.5, 3]


@pytest.mark.parametrize("spec,needle", [
    ((1, 10, 0, "lin"), "num must be a positive integer"),
    ((1, 10, 2.5, "lin"), "num must be a positive integer"),
    ((1, 10, -3, "log"), "num must be a positive integer"),
    ((1, 10, True, "lin"), "num must be a positive integer"),
    ((1, 10, 1e12, "lin"), "num must be at most"),
    ((0, 10, 5, "log"), "a log axis needs start > 0 and stop > 0, got start=0"),
    ((1, -10, 5, "log"), "a log axis needs start > 0 and stop > 0, got stop=-10"),
    ((1, 10, 5, "exp"), "scale must be 'lin' or 'log'"),
    ((float("nan"), 10, 5, "lin"), "start must be finite"),
    ((1, float("inf"), 5, "lin"), "stop must be finite"),
    (("a", 10, 5, "lin"), "start must be a real number"),
    ("1:10:x:log", "num must be a real number"),
    ("1:10:5:cubic", "scale must be 'lin' or 'log'"),
    ("1:10", "expected start:stop:num"),
    ("1:2:3:lin:5", "expected start:stop:num"),
    ("0:1e3:5:log", "a log axis needs start > 0"),
    ("1,,2", "empty item"),
    ("", "no values given"),
    ("abc", "every value must be a real number"),
    ("1e400", "too large"),
    ([1.0, float("nan")], "must not be NaN"),
    (np.array([[1.0, 2.0]]), "one-dimensional"),
    ([], "no values"),
    ([1, "2"], "values must be real numbers"),
    (np.array(["a"]), "dtype"),
    (True, "real numbers"),
    ({"start": 1}, "expected a number"),
])
def test_bad_axis_specs_name_the_axis(spec, needle):
    with pytest.raises(DPBoundsError) as exc:
        parse_axis("sigma", spec)
    assert str(exc.value).startswith("axis sigma: ") and needle in str(exc.value)


# ---------------------------------------------------------------- grid order, quantities vs public API
def _mesh(*axes):
    return [g.ravel() for g in np.meshgrid(*axes, indexing="ij")]


def test_cartesian_grid_is_c_order_first_axis_slowest():
    s, m = [0.9, 2.0, 3.0], [100.0, 1e4, 1e6, 1e8]
    got = run("delta_bound", sigma=s, rounds=m)
    assert got["delta_bound"].shape == (3, 4)
    S, M = _mesh(s, m)
    np.testing.assert_array_equal(got["delta_bound"].ravel(), dpbounds.delta_bound(S, M))
    # the other order: transposed dimensions, same numbers
    back = run("delta_bound", rounds=m, sigma=s)
    np.testing.assert_array_equal(back["delta_bound"], got["delta_bound"].T)


# quantity -> (axes, the public function at one point).  Each grid mixes valid and invalid points.
CASES = {
    "delta_bound": (dict(sigma=[0.3, 1.0, 2.5, -1.0], rounds=[2, 50, 1e4, 1e7, 10.5]),
                    lambda p: dpbounds.delta_bound(p["sigma"], p["rounds"])),
    "rounds_required": (dict(sigma=[0.5, 1.0, 3.0, 0.0], delta=[1e-8, 1e-3, 0.2, 1.5], epochs=[1, 3]),
                        lambda p: dpbounds.rounds_required(p["sigma"], p["delta"], epochs=p["epochs"])),
    "rounds_closed_form": (dict(sigma=[0.5, 2.0, np.inf], delta=[1e-300, 1e-3, 0.0]),
                           lambda p: dpbounds.rounds_closed_form(p["sigma"], p["delta"])),
    "min_dataset_size": (dict(sigma=[0.5, 2.0], rounds=[1, 1e6, 0.5], noise_ratio=[0.1, -1]),
                         lambda p: dpbounds.min_dataset_size(p["sigma"], p["rounds"], 1.0, p["noise_ratio"])),
    "tradeoff_clt": (dict(a=[0.0, 0.1, 0.9, 1.2], sigma=[0.5, 2.0], rounds=[2, 1e3, 1.5]),
                     lambda p: dpbounds.tradeoff_clt(p["a"], p["sigma"], p["rounds"])),
    "tradeoff_edgeworth": (dict(a=[1e-6, 0.1, 0.5], sigma=[0.3, 1.0, 4.0], rounds=[3, 10, 1e4, 2]),
                           lambda p: dpbounds.tradeoff_edgeworth(p["a"], p["sigma"], p["rounds"])),
    "tradeoff_lower_bound": (dict(a=[0.05, 0.5], sigma=[0.5, 1.0, 3.0], rounds=[2, 10, 1e6]),
                             lambda p: dpbounds.tradeoff_lower_bound(p["a"], p["sigma"], p["rounds"])),
    "gdp_epsilon": (dict(delta=[1e-10, 1e-5, 0.9, 2.0], mu=[0.0, 0.5, 3.0]),
                    lambda p: dpbounds.gdp_epsilon(p["delta"], p["mu"])),
    "gdp_delta": (dict(eps=[-1.0, 0.0, 2.0, np.nan if False else 5.0], mu=[0.5, 3.0, -1]),
                  lambda p: dpbounds.gdp_delta(p["eps"], p["mu"])),
    "gdp_mu_random_allocation": (dict(sigma=[0.5, 2.0], rounds=[1, 10, 1e6], epochs=[0.5, 4]),
                                 lambda p: dpbounds.gdp_mu_random_allocation(p["sigma"], p["rounds"], p["epochs"])),
    "gdp_mu_poisson": (dict(sigma=[0.5, 2.0], sample_rate=[0.01, 1.5], steps=[10, 1e4]),
                       lambda p: dpbounds.gdp_mu_poisson(p["sigma"], p["sample_rate"], p["steps"])),
    "gdp_mu_poisson_drs": (dict(sigma=[0.5, 2.0], sample_rate=[0.01, 0.5], steps=[10, -1]),
                           lambda p: dpbounds.gdp_mu_poisson_drs(p["sigma"], p["sample_rate"], p["steps"])),
    "compose_delta": (dict(delta=[0.0, 1e-6, 0.5, 1.5], epochs=[1, 7, 0]),
                      lambda p: dpbounds.compose_delta(p["delta"], p["epochs"])),
    "per_epoch_delta": (dict(delta_total=[1e-6, 0.5, -0.1], epochs=[1, 7, 2.5]),
                        lambda p: dpbounds.per_epoch_delta(p["delta_total"], p["epochs"])),
}


def test_every_ufunc_quantity_is_tested():
    assert set(CASES) == {n for n, q in QUANTITIES.items() if q.kind == "ufunc"}


def _points(axes):
    names = list(axes)
    return names, [dict(zip(names, vals)) for vals in zip(*_mesh(*[np.asarray(axes[n], float) for n in names]))]


@pytest.mark.parametrize("name", sorted(CASES))
def test_ufunc_quantity_equals_public_function_and_keeps_invalid_points(name):
    axes, public = CASES[name]
    got = run(name, **axes)
    names, points = _points(axes)
    values = got[name].ravel()
    valid, reason = got["valid"].ravel(), got["reason"].ravel()
    assert valid.any() and not valid.all(), "each case must mix valid and invalid points"
    for i, p in enumerate(points):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                want = float(public(p))
        except DPBoundsError as exc:
            # a bad argument: kept, NaN, and the reason names the parameter as the error does
            assert not valid[i] and np.isnan(values[i]), (p, values[i])
            first = str(exc).split(" must be ")[0]
            assert reason[i].startswith(first + " must be "), (p, reason[i], str(exc))
            continue
        if np.isfinite(want):
            assert valid[i] and reason[i] == "" and values[i] == want, (p, values[i], want)
        else:
            # NaN/inf from the public function: the same value, invalid, with a reason
            assert not valid[i] and reason[i] != "", p
            np.testing.assert_array_equal(values[i], want)


def test_theorem31_reasons_are_the_status_reasons():
    got = run("delta_bound", sigma=[0.3, 0.6, 1.0], rounds=[3, 100, 1e5, 1e9])
    for (s, m), r in zip(zip(*_mesh([0.3, 0.6, 1.0], [3, 100, 1e5, 1e9])), got["reason"].ravel()):
        res = dpbounds.theorem31(s, m)
        assert r == "; ".join(status_reasons(res.status)), (s, m, r)


def test_edgeworth_reasons_are_its_status_reasons():
    a, s, m = [1e-9, 0.5], [0.3, 1.0], [3, 10, 1e4]
    got = run("tradeoff_edgeworth", a=a, sigma=s, rounds=m)
    for p, r in zip(zip(*_mesh(a, s, m)), got["reason"].ravel()):
        assert r == "; ".join(status_reasons(int(dpbounds.edgeworth_status(*p))))


def test_options_reach_the_kernels():
    s, m = [1.0, 2.0], [1e5, 1e7]
    got = run("delta_bound", sigma=s, rounds=m, coefficient="simplified")
    np.testing.assert_array_equal(got["delta_bound"].ravel(), dpbounds.delta_bound(*_mesh(s, m), coefficient="simplified"))
    got = run("rounds_required", sigma=s, delta=[1e-3], validity_at="target", coefficient="simplified")
    np.testing.assert_array_equal(got["rounds_required"].ravel(),
                                  dpbounds.rounds_required(np.array(s), 1e-3, "simplified", "target"))
    got = run("tradeoff_clt", a=[0.1], sigma=[1.0], rounds=[100], truncated=True)
    assert got["tradeoff_clt"].item() == dpbounds.tradeoff_clt(0.1, 1.0, 100, truncated=True)


# ---------------------------------------------------------------- chunks, zip, result forms
def test_results_do_not_depend_on_chunk_size():
    axes = dict(sigma=np.linspace(0.2, 4, 23), rounds=np.r_[2, np.rint(np.geomspace(3, 1e9, 31))])
    ref = run("delta_bound", **axes)
    for cs in (1, 7, 64, 713, 10 ** 6):
        got = run("delta_bound", chunk_size=cs, **axes)
        for k in ("delta_bound", "valid", "reason"):
            np.testing.assert_array_equal(got[k], ref[k], err_msg=f"{k}, chunk_size={cs}")


def test_zip_grids_and_unequal_lengths():
    s, m = np.array([0.5, 1.0, 2.0]), np.array([1e9, 1e5, 10.0])
    got = run("delta_bound", sigma=s, rounds=m, zip=True)
    assert got["delta_bound"].shape == (3,)
    np.testing.assert_array_equal(got["delta_bound"], dpbounds.delta_bound(s, m))
    with pytest.raises(DPBoundsError, match="zip=True needs axes of equal length: sigma has 3, rounds has 2"):
        dpbounds.sweep("delta_bound", sigma=s, rounds=m[:2], zip=True)


def test_defaulted_axes_are_scalar_coordinates():
    xr = pytest.importorskip("xarray", reason="xarray not installed")
    ds = dpbounds.sweep("rounds_required", sigma=[1.0, 2.0], delta=1e-3)
    assert isinstance(ds, xr.Dataset) and ds["rounds_required"].dims == ("sigma", "delta")
    assert float(ds["epochs"]) == 1.0 and ds["epochs"].dims == ()


@pytest.mark.parametrize("quantity,axes,zipped", [
    ("delta_bound", dict(sigma=[0.5, 1.0, 2.0], rounds=[2, 100, 1e4, 1e6]), False),                 # separable
    ("rounds_required", dict(sigma=[1.0, 2.0], delta=[1e-3, 1e-2, 0.1]), False),       # a fixed axis (epochs)
    ("rounds_required", dict(sigma=[1.0, 2.0], delta=[1e-3, 0.1], epochs=[1, 3]), False),           # three axes
    ("gdp_mu_poisson", dict(sigma=[0.3, 1.0, 2.0], sample_rate=[0.0, 0.01, 0.5], steps=[1, 100, 1]), True),  # zipped
])
def test_in_memory_dataset_is_what_the_constructor_builds(monkeypatch, quantity, axes, zipped):
    """The in-memory Dataset is assembled from its parts (the constructor's alignment is most of
    the cost of a small grid); it must be the Dataset ``xarray.Dataset(...)`` builds from them."""
    xr = pytest.importorskip("xarray", reason="xarray not installed")
    from dpbounds.sweeps import _writers

    made = []
    direct = _writers.dataset

    def both(xr_, variables, coords, attrs):
        made.append((direct(xr_, variables, coords, attrs), xr_.Dataset(variables, coords=coords, attrs=attrs)))
        return made[-1][0]

    monkeypatch.setattr(_writers, "dataset", both)
    ds = dpbounds.sweep(quantity, zip=zipped, progress=False, **axes)
    ref = made[0][1]
    assert ds is made[0][0] and type(ds) is type(ref)
    xr.testing.assert_identical(ds, ref)
    assert list(ds.variables) == list(ref.variables) and list(ds.coords) == list(ref.coords)
    assert dict(ds.sizes) == dict(ref.sizes) and ds.attrs == ref.attrs
    assert {k: type(v) for k, v in ds.xindexes.items()} == {k: type(v) for k, v in ref.xindexes.items()}
    for k in ref.xindexes:
        assert ds.indexes[k].equals(ref.indexes[k]) and ds.indexes[k].dtype == ref.indexes[k].dtype
    # label-based selection goes through the indexes
    name = next(iter(axes))
    if not zipped:
        xr.testing.assert_identical(ds.sel({name: axes[name][1]}), ref.sel({name: axes[name][1]}))
    xr.testing.assert_identical(ds.isel({ds[quantity].dims[0]: [0, -1]}), ref.isel({ref[quantity].dims[0]: [0, -1]}))


def test_dict_result_without_xarray(monkeypatch):
    monkeypatch.setitem(sys.modules, "xarray", None)
    got = dpbounds.sweep("rounds_required", sigma=[1.0, 2.0], delta=[1e-3, 1e-2, 0.1])
    assert isinstance(got, dict)
    assert got["rounds_required"].shape == got["valid"].shape == got["reason"].shape == (2, 3)
    np.testing.assert_array_equal(got["sigma"], [1.0, 2.0])
    assert got["epochs"].shape == () and float(got["epochs"]) == 1.0
    z = dpbounds.sweep("delta_bound", sigma=[1.0, 2.0], rounds=[100, 1000], zip=True)
    assert z["delta_bound"].shape == (2,) and list(z["rounds"]) == [100, 1000]


@pytest.mark.parametrize("kwargs,needle", [
    (dict(quantity="no_such"), "quantity must be one of"),
    (dict(quantity="delta_bound", sigma=1, rounds=10, delta=1), "delta_bound has no axis or option 'delta'"),
    (dict(quantity="delta_bound", sigma=1), "delta_bound needs the axis rounds"),
    (dict(quantity="delta_bound", sigma=1, rounds=10, coefficient="tight"), "coefficient must be one of"),
    (dict(quantity="delta_bound", sigma="1:2:0:lin", rounds=10), "axis sigma: num must be a positive integer"),
    (dict(quantity="delta_bound", sigma=1, rounds=10, chunk_size=0), "chunk_size must be an integer >= 1"),
    (dict(quantity="delta_bound", sigma=1, rounds=10, engine="spark"), "engine must be one of"),
    (dict(quantity="delta_bound", sigma=1, rounds=10, workers=0), "workers must be an integer >= 1"),
    (dict(quantity="delta_bound", sigma=1, rounds=10, progress="yes"), "progress must be None, True or False"),
    (dict(quantity="delta_bound", sigma=1, rounds=10, resume=True), "resume=True needs out="),
    (dict(quantity="delta_bound", sigma=1, rounds=10, out="x.json"), "out must end in .parquet or .csv"),
    (dict(quantity="epsilon_poisson", sigma=1, sample_rate=0.1, steps=10, delta=1e-5, tolerance=2.0),
     "tolerance must be in the open interval (0, 1)"),
])
def test_bad_arguments_raise_naming_them(kwargs, needle):
    q = kwargs.pop("quantity")
    with pytest.raises(DPBoundsError) as exc:
        dpbounds.sweep(q, **kwargs)
    assert needle in str(exc.value)


# ---------------------------------------------------------------- point-wise quantities
def test_exact_random_allocation_carries_the_bracket_and_keeps_bad_points():
    got = run("epsilon_random_allocation", sigma=[0.2, 1.5], rounds=[20], epochs=[2], delta=[1e-5])
    ref = dpbounds.RandomAllocationAccountant(1.5, 20, 2).get_epsilon_bracket(1e-5)
    assert got["valid"].ravel().tolist() == [False, True]
    assert got["lower"].ravel()[1] == ref.lower and got["upper"].ravel()[1] == ref.upper
    assert got["epsilon_random_allocation"].ravel()[1] == ref.upper
    assert bool(got["tolerance_met"].ravel()[1]) == ref.tolerance_met
    with pytest.raises(DPBoundsError) as exc:
        dpbounds.RandomAllocationAccountant(0.2, 20, 2)
    assert got["reason"].ravel()[0] == str(exc.value)
    assert np.isnan(got["upper"].ravel()[0])


def test_exact_poisson_delta_and_rdp_epsilons_equal_the_accountants():
    from dpbounds.rdp import PoissonGaussian, RDPAccountant, SubsampledGaussianWOR

    got = run("delta_poisson", sigma=[1.0], sample_rate=[0.05], steps=[20], epsilon=[1.0])
    br = dpbounds.PoissonAccountant(noise_multiplier=1.0, sample_rate=0.05, steps=20).get_delta_bracket(1.0)
    assert (got["lower"].item(), got["upper"].item()) == (br.lower, br.upper)
    got = run("rdp_epsilon_poisson", sigma=[1.0, -1.0], sample_rate=[0.01], steps=[100], delta=[1e-5])
    eps, order = RDPAccountant().compose(PoissonGaussian(1.0, 0.01), 100).get_epsilon(1e-5, return_order=True)
    assert got["rdp_epsilon_poisson"].ravel()[0] == eps and got["order"].ravel()[0] == order
    assert got["reason"].ravel()[1] == "sigma must be finite and > 0, got -1.0"
    got = run("rdp_epsilon_wor", sigma=[2.0], sample_rate=[0.01], steps=[100], delta=[1e-5], conversion="classic")
    acc = RDPAccountant(conversion="classic").compose(SubsampledGaussianWOR(1.0, 0.01), 100)
    assert got["rdp_epsilon_wor"].item() == acc.get_epsilon(1e-5)


def test_noise_multiplier_is_calibrate_noise():
    got = run("noise_multiplier", target_epsilon=[4.0], target_delta=[1e-5], dataset_size=[1000], batch_size=[100],
              epochs=[2], accountant="rdp", sampling="poisson")
    want = dpbounds.calibrate_noise(4.0, 1e-5, dataset_size=1000, batch_size=100, epochs=2, accountant="rdp",
                                    sampling="poisson")
    assert got["noise_multiplier"].item() == want and got["valid"].item()


def test_imprecise_brackets_warn_once(recwarn):
    # a tolerance the accountant cannot meet here: each point says so in its columns, one warning in all
    got = run("epsilon_random_allocation", sigma=[1.0, 2.0], rounds=[10], delta=[1e-5], tolerance=1e-9)
    warned = [w for w in recwarn if issubclass(w.category, dpbounds.PrecisionWarning)]
    assert len(warned) == 1 and "at 2 of 2 points" in str(warned[0].message)
    assert not got["tolerance_met"].any() and got["valid"].all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpbounds.PrecisionWarning)
        notes = [dpbounds.RandomAllocationAccountant(s, 10, tolerance=1e-9).get_epsilon_bracket(1e-5).note
                 for s in (1.0, 2.0)]
    assert got["reason"].ravel().tolist() == notes and all(notes)


# ---------------------------------------------------------------- files
def _read_parquet(path):
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow not installed")
    return pq.read_table(path).to_pydict()


def _read_csv(path):
    import csv

    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return {h: [r[i] for r in rows[1:]] for i, h in enumerate(rows[0])}


def _assert_same_columns(a, b):
    assert list(a) == list(b)
    for k in a:
        np.testing.assert_array_equal(np.asarray(a[k]), np.asarray(b[k]), err_msg=k)   # NaN equals NaN here


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_file_round_trip_equals_memory(tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow", reason="pyarrow not installed")
    axes = dict(sigma=[0.3, 1.0, 2.0], rounds=[2, 100, 1e6, 1e9])
    mem = run("rounds_required", sigma=axes["sigma"], delta=[1e-3, 0.4], chunk_size=5)
    out = tmp_path / f"g{suffix}"
    assert dpbounds.sweep("rounds_required", sigma=axes["sigma"], delta=[1e-3, 0.4], out=out, chunk_size=5) == out
    got = _read_parquet(out) if suffix == ".parquet" else _read_csv(out)
    assert list(got) == ["sigma", "delta", "epochs", "rounds_required", "valid", "reason"]
    conv = (lambda c: np.asarray(c, dtype=float)) if suffix == ".csv" else np.asarray
    S, D = _mesh(mem["sigma"], mem["delta"])
    np.testing.assert_array_equal(conv(got["sigma"]), S)
    np.testing.assert_array_equal(conv(got["delta"]), D)
    np.testing.assert_array_equal(conv(got["epochs"]), np.ones(S.size))
    np.testing.assert_array_equal(conv(got["rounds_required"]), mem["rounds_required"].ravel())
    valid = [v == "True" for v in got["valid"]] if suffix == ".csv" else got["valid"]
    assert list(valid) == mem["valid"].ravel().tolist()
    assert list(got["reason"]) == mem["reason"].ravel().tolist()
    manifest = json.loads((tmp_path / f"g{suffix}.sweep.json").read_text())
    assert manifest["complete"] and manifest["finished_chunks"] == manifest["n_chunks"] == 2


def test_missing_pyarrow_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(DPBoundsError, match=r"pip install 'dpbounds\[sweep\]'"):
        dpbounds.sweep("delta_bound", sigma=1, rounds=100, out=tmp_path / "x.parquet")


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_resume_continues_and_refuses_a_different_grid(tmp_path, suffix, monkeypatch):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow", reason="pyarrow not installed")
    from dpbounds.sweeps import _store

    # a quantity without a separable kernel: chunks of chunk_size points (not of whole rows)
    out = tmp_path / f"r{suffix}"
    full = tmp_path / f"full{suffix}"
    axes = dict(sigma=np.linspace(0.5, 3, 9), delta=[1e-5, 1e-3, 1e-2])
    dpbounds.sweep("rounds_closed_form", out=full, chunk_size=4, **axes)

    # every chunk is saved as it finishes (the save clock jumps), and the run dies after 2 chunks
    class Stop(BaseException):
        pass

    ticks = iter(range(0, 10 ** 6, 100))
    monkeypatch.setattr(_store, "clock", lambda: float(next(ticks)))
    saved = []
    monkeypatch.setattr(_store, "at", lambda moment: saved.append(moment) if moment == "part-renamed" else None)
    original_add = _store.FileStore.add

    def add(self, res):
        original_add(self, res)
        if len(saved) == 2:
            raise Stop
    monkeypatch.setattr(_store.FileStore, "add", add)
    with pytest.raises(Stop):
        dpbounds.sweep("rounds_closed_form", out=out, chunk_size=4, **axes)
    monkeypatch.setattr(_store.FileStore, "add", original_add)
    mpath = tmp_path / f"r{suffix}.sweep.json"
    assert json.loads(mpath.read_text())["finished_chunks"] == 2 and not out.exists()
    with pytest.raises(DPBoundsError, match=r"the axis sigma differs \(file: 9 values from 0.5 to 3.0; this call: "
                                            r"10 values"):
        dpbounds.sweep("rounds_closed_form", out=out, chunk_size=4, resume=True, sigma=np.linspace(0.5, 3, 10),
                       delta=axes["delta"])
    with pytest.raises(DPBoundsError, match="the options differ"):
        dpbounds.sweep("rounds_closed_form", out=out, chunk_size=4, resume=True, coefficient="simplified", **axes)
    with pytest.raises(DPBoundsError, match="resume with the same chunk_size"):
        dpbounds.sweep("rounds_closed_form", out=out, chunk_size=5, resume=True, **axes)
    with pytest.raises(DPBoundsError, match=r"unfinished run of this sweep \(2 of 7 chunks done\): pass resume=True"):
        dpbounds.sweep("rounds_closed_form", out=out, chunk_size=4, **axes)
    _, tally = run_sweep("rounds_closed_form", out=out, chunk_size=4, resume=True, axes=axes)
    assert tally.skipped == 8 and tally.points == 19
    if suffix == ".csv":
        assert out.read_bytes() == full.read_bytes()
    else:
        _assert_same_columns(_read_parquet(out), _read_parquet(full))
    assert json.loads(mpath.read_text())["complete"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out.name, full.name, mpath.name,
                                                                 full.name + ".sweep.json"])


def test_resume_of_a_file_without_manifest_is_refused(tmp_path):
    out = tmp_path / "x.csv"
    out.write_text("something\n")
    with pytest.raises(DPBoundsError, match="exists and is not the output of a dpbounds sweep .* no manifest"):
        dpbounds.sweep("delta_bound", sigma=1, rounds=100, out=out, resume=True)
    assert out.read_text() == "something\n"


# ---------------------------------------------------------------- the separable (outer) path
@pytest.mark.parametrize("name, axes, options", [
    ("delta_bound", dict(sigma=np.r_[-1.0, 0.05, np.linspace(0.2, 4, 23)],
                         rounds=np.r_[2.0, 10.5, np.rint(np.geomspace(3, 2.0**53, 37))]), {}),
    ("delta_bound", dict(rounds=np.rint(np.geomspace(3, 1e12, 29)), sigma=np.linspace(0.3, 6, 17)),
     dict(coefficient="simplified")),
    ("rounds_required", dict(sigma=np.r_[0.0, np.linspace(0.4, 5, 19)], delta=np.r_[1.5, np.geomspace(1e-9, 0.4, 13)]),
     dict(validity_at="target")),
    ("rounds_required", dict(sigma=np.linspace(0.4, 5, 19), delta=np.geomspace(1e-9, 0.4, 13)), {}),
    ("min_dataset_size", dict(sigma=np.r_[-2.0, np.geomspace(0.1, 1e300, 11)],
                              rounds=np.r_[0.5, np.rint(np.geomspace(1, 1e300, 13))]), {}),
])
def test_the_wired_separable_kernels_equal_the_elementwise_path(name, axes, options):
    q = get_quantity(name)
    elementwise = dataclasses.replace(q, outer=None)          # the same quantity without its kernel
    with np.errstate(over="ignore"):     # min_dataset_size overflows to inf (numpy warns) by design here
        got = run(name, chunk_size=7 * 40, **axes, **options)  # Cartesian: the outer path
        ref = run(elementwise, **axes, **options)
    for k in (name, "valid", "reason"):
        np.testing.assert_array_equal(got[k], ref[k], err_msg=k)
    assert not np.all(got["valid"]) and np.any(got["valid"])  # both kinds of point are exercised



def test_min_dataset_size_finite_where_valid_tells_exactly_whether_the_block_is_finite():
    """The separable kernel's hint (the sweep then skips its look for non-finite values) is True
    exactly when every value of the block is finite, right at the overflow edge."""
    outer = get_quantity("min_dataset_size").outer
    rng = np.random.default_rng(20261206)
    top = np.finfo(np.float64).max
    seen = set()
    for _ in range(300):
        c, r = float(rng.choice([1.0, 0.7, 3.0])), float(rng.choice([1.0, 0.3, 5.0]))
        s = np.unique(np.geomspace(0.1, 10, 4) * rng.uniform(0.5, 2.0, 4))
        with np.errstate(over="ignore"):   # (for the largest ratios the edge is past the largest double)
            edge = min(np.floor(top / (c * s.max()) * r), top)   # about where the largest sigma's N overflows
        k = int(rng.integers(-6, 7))   # a few doubles either side of it
        m = edge
        for _ in range(abs(k)):
            m = np.nextafter(m, 0.0 if k < 0 else top)
        m = np.unique(np.r_[rng.uniform(1, 1e6, 2).round(), m])
        hint = outer.finite_where_valid(s, m, clip_norm=c, noise_ratio=r)
        with np.errstate(over="ignore"):
            block = outer(s, m, clip_norm=c, noise_ratio=r)
        assert hint == bool(np.isfinite(block).all()), (s, m, c, r)
        seen.add(hint)
    assert seen == {True, False}
    # and through the sweep, whose rows straddle the edge: the element-wise path's values and reasons
    s = np.geomspace(1.5, 12.0, 9)
    m = np.unique(np.r_[1.0, 1e300, np.floor(top / s[::2])])
    q = get_quantity("min_dataset_size")
    with np.errstate(over="ignore"):
        got = run("min_dataset_size", chunk_size=m.size, sigma=s, rounds=m)
        ref = run(dataclasses.replace(q, outer=None), sigma=s, rounds=m)
    for k in ("min_dataset_size", "valid", "reason"):
        np.testing.assert_array_equal(got[k], ref[k], err_msg=k)
    assert not got["valid"].all() and got["valid"].any()


class OuterDouble:
    """A stand-in for a separable kernel: the element-wise ufunc on the broadcast grid."""

    def __init__(self):
        self.calls = []

    def __call__(self, sigma, rounds, coefficient):
        self.calls.append((sigma.shape, rounds.shape, coefficient))
        return getattr(dpbounds.ufuncs, f"delta_bound_{coefficient}")(sigma[:, None], rounds[None, :])


def test_outer_function_is_used_for_cartesian_grids_and_equals_the_elementwise_path():
    double = OuterDouble()
    q = dataclasses.replace(get_quantity("delta_bound"), outer=double, outer_axes=("sigma", "rounds"))
    axes = dict(sigma=np.r_[-1.0, np.linspace(0.2, 4, 20)], rounds=np.r_[2.0, 10.5, np.rint(np.geomspace(3, 1e9, 30))])
    ref = run("delta_bound", **axes)
    got = run(q, chunk_size=5 * 32, **axes)
    assert [c[:2] for c in double.calls] == [((5,), (32,))] * 4 + [((1,), (32,))]   # chunks of whole rows
    for k in ("delta_bound", "valid", "reason"):
        np.testing.assert_array_equal(got[k], ref[k], err_msg=k)
    # axes in the other order: the block is transposed into the grid's order
    double.calls.clear()
    back = run(q, rounds=axes["rounds"], sigma=axes["sigma"], coefficient="simplified")
    assert double.calls and double.calls[0][2] == "simplified"
    np.testing.assert_array_equal(back["delta_bound"],
                                  run("delta_bound", rounds=axes["rounds"], sigma=axes["sigma"],
                                      coefficient="simplified")["delta_bound"])
    # not used for a zip grid or other axes
    double.calls.clear()
    run(q, sigma=[1.0, 2.0], rounds=[100, 1000], zip=True)
    assert double.calls == []


def test_registry_declares_outputs_axes_and_the_separable_kernels():
    for name, q in QUANTITIES.items():
        assert q.name == name and q.outputs[0] == name and q.kind in ("ufunc", "point", "block")
        assert len(set(q.axis_names)) == len(q.axes)
    wired = {name: q.outer_axes for name, q in QUANTITIES.items() if q.outer is not None}
    assert wired == {"delta_bound": ("sigma", "rounds"), "rounds_required": ("sigma", "delta"),
                     "min_dataset_size": ("sigma", "rounds")}
    pytest.importorskip("xarray", reason="xarray not installed")
    import doctest
    import importlib

    for mod in (importlib.import_module("dpbounds.sweeps"), importlib.import_module("dpbounds.sweeps._axes")):
        result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted >= 3


# ---------------------------------------------------------------- engines and progress
def test_engines_agree_bit_for_bit():
    pytest.importorskip("dask", reason="dask not installed")
    axes = dict(sigma=np.r_[-1.0, np.linspace(0.2, 4, 9)], rounds=np.r_[2.0, np.rint(np.geomspace(3, 1e9, 12))])
    ref = run("delta_bound", chunk_size=17, **axes)
    for engine in ("processes", "dask"):
        got = run("delta_bound", chunk_size=17, engine=engine, workers=2, **axes)
        for k in ("delta_bound", "valid", "reason"):
            np.testing.assert_array_equal(got[k], ref[k], err_msg=f"{engine} {k}")
    exact = dict(sigma=[0.2, 2.0], rounds=[8], delta=[1e-4])
    ref = run("epsilon_random_allocation", chunk_size=1, **exact)
    for engine in ("processes", "dask"):
        got = run("epsilon_random_allocation", chunk_size=1, engine=engine, workers=2, **exact)
        for k in ("lower", "upper", "valid", "reason"):
            np.testing.assert_array_equal(got[k], ref[k], err_msg=f"{engine} {k}")


def test_progress_lines_without_tqdm(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    dpbounds.sweep("delta_bound", sigma=[1.0, 2.0], rounds=[100, 1000], chunk_size=1, progress=True)
    err = capsys.readouterr().err
    assert "sweep delta_bound: 4/4 points (100.0%)" in err
    dpbounds.sweep("delta_bound", sigma=[1.0, 2.0], rounds=[100, 1000], progress=False)
    dpbounds.sweep("delta_bound", sigma=[1.0, 2.0], rounds=[100, 1000])   # stderr is not a terminal here
    assert capsys.readouterr().err == ""


def test_progress_bar_with_tqdm(capsys):
    pytest.importorskip("tqdm", reason="tqdm not installed")
    dpbounds.sweep("delta_bound", sigma=[1.0, 2.0], rounds=[100, 1000], chunk_size=1, progress=True)
    err = capsys.readouterr().err
    assert "sweep delta_bound: 100%" in err and "4.00/4.00" in err
