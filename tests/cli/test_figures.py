"""The paper's figures (dpbounds.figures, 'dpbounds plot', tools/make_figures.py): files are
written in the right format, and every drawn line holds the numbers the package's functions
give when called here independently -- a figure that draws wrong numbers fails."""
from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason='the figures need matplotlib (pip install "dpbounds[plot]")')

import dpbounds
from dpbounds.figures import epsilon_figure, rounds_figure, save_figure, tradeoff_figure
from dpbounds.rdp import RDPAccountant

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".svg": b"<?xml", ".pdf": b"%PDF"}


def _lines(ax):
    return {ln.get_label(): (np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float))
            for ln in ax.get_lines() if not ln.get_label().startswith("_")}


def _check_rounds(fig, deltas, sigma_lo, sigma_hi, n):
    lines = _lines(fig.axes[0])
    assert len(lines) == 2 * len(deltas)
    any_gap = False
    for d in deltas:
        for coef in ("simplified", "exact"):
            x, y = lines[f"delta = {d:g}, {coef}"]
            np.testing.assert_allclose(x, np.geomspace(sigma_lo, sigma_hi, n), rtol=1e-15)
            want = np.array([dpbounds.rounds_required(float(s), d, coef) for s in x])
            gap = ~np.isfinite(want) | (want > 2.0 ** 53)
            assert np.array_equal(np.isnan(y), gap)  # left out exactly where no M qualifies
            assert np.array_equal(y[~gap], want[~gap])
            any_gap |= bool(gap.any())
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any("2^53" in t for t in texts) == any_gap
    assert fig.axes[0].get_yscale() == "log"
    return any_gap


def test_rounds_figure_draws_rounds_required():
    fig = rounds_figure(deltas=[1e-2, 1e-5], sigma_min=0.35, sigma_max=3.0, points=9)
    assert _check_rounds(fig, [1e-2, 1e-5], 0.35, 3.0, 9)  # sigma = 0.35 has a gap
    styles = {ln.get_label(): ln.get_linestyle() for ln in fig.axes[0].get_lines()}
    assert styles["delta = 0.01, simplified"] == "-" and styles["delta = 0.01, exact"] == "--"


def test_rounds_figure_epochs_use_the_total_delta():
    fig = rounds_figure(deltas=[1e-3], sigma_min=0.8, sigma_max=2.0, points=4, epochs=5)
    x, y = _lines(fig.axes[0])["delta = 0.001, exact"]
    np.testing.assert_array_equal(y, dpbounds.rounds_required(x, 1e-3, "exact", epochs=5))


def _chord_error(func, x, y):
    mid = 0.5 * (x[:-1] + x[1:])
    return np.nanmax(np.abs(func(mid) - 0.5 * (y[:-1] + y[1:])))


def test_tradeoff_figure_single_epoch_numbers():
    sigma, M = 1.0, 1000
    fig = tradeoff_figure(sigma=sigma, rounds=M)
    ax_g, ax_d = fig.axes
    gaps, diffs = _lines(ax_g), _lines(ax_d)
    mu = dpbounds.gdp_mu_random_allocation(sigma, M)
    ref = {
        f"G_mu, asymptotic mu = {mu:.4g}": lambda a: dpbounds.gaussian_tradeoff(a, mu),
        "Theorem 3.1 lower bound (exact coefficient)": lambda a: dpbounds.tradeoff_lower_bound(a, sigma, M),
        "CLT approximation": lambda a: dpbounds.tradeoff_clt(a, sigma, M),
        "Edgeworth approximation": lambda a: dpbounds.tradeoff_edgeworth(a, sigma, M),
        "exact": lambda a: dpbounds.tradeoff_exact(a, sigma, M)[0],
    }
    assert set(gaps) == set(ref) and set(diffs) == set(ref) - {"exact"}
    for label, func in ref.items():
        x, g = gaps[label]
        want = np.asarray(func(x), float)
        np.testing.assert_allclose(g, 1 - x - want, rtol=0, atol=1e-15, err_msg=label)
        if label != "exact":   # the difference from the exact curve at the curve's own points
            xd, d = diffs[label]
            np.testing.assert_array_equal(xd, x)
            np.testing.assert_allclose(d, want - dpbounds.tradeoff_exact(x, sigma, M)[0], rtol=0, atol=1e-15,
                                       err_msg=label)
        if x.size < 4097:  # refinement finished: the polygon is within tol of the curve at midpoints
            assert _chord_error(lambda a: np.asarray(func(a), float), x, want) <= 1e-6, label
    # the smooth exact curve is drawn with more points where it bends (near a = 0) than uniformly
    x = gaps["exact"][0]
    assert np.min(np.diff(x)) < np.max(np.diff(x)) / 8
    assert ax_g.get_yscale() == "log" and ax_d.get_yscale() == "symlog"


def test_tradeoff_figure_multi_epoch_uses_the_accountant():
    sigma, M, E = 1.1, 234, 10
    fig = tradeoff_figure(sigma=sigma, rounds=M, epochs=E)
    gaps = _lines(fig.axes[0])
    assert not any("CLT" in k or "Edgeworth" in k for k in gaps)
    x, g = gaps["exact accountant, certified lower bound"]
    np.testing.assert_array_equal(g, 1 - x - dpbounds.RandomAllocationAccountant(sigma, M, E).tradeoff(x)[0])
    mu = dpbounds.gdp_mu_random_allocation(sigma, M, E)
    xg, gg = gaps[f"G_mu, asymptotic mu = {mu:.4g}"]
    np.testing.assert_allclose(gg, 1 - xg - dpbounds.gaussian_tradeoff(xg, mu), rtol=0, atol=1e-15)
    lines = {k: (xx, 1 - xx - yy) for k, (xx, yy) in gaps.items()}
    x, y = lines["exact accountant, certified lower bound"]
    xg, yg = lines[f"G_mu, asymptotic mu = {mu:.4g}"]
    # Theorem 3.1 does not apply at (1.1, 234): drawn nowhere, and the legend says so
    (label,) = [k for k in lines if k.startswith("Theorem 3.1")]
    assert "does not apply" in label and np.all(np.isnan(lines[label][1]))
    # no kinks of a coarse eps grid: at a = 0.1 the drawn curve is near G_mu (0.81 before)
    assert np.interp(0.1, x, y) > np.interp(0.1, xg, yg) - 2e-3


def test_epsilon_figure_numbers():
    sigma, M, delta, epochs = 1.1, 234, 1e-5, [1, 3]
    fig = epsilon_figure(sigma, M, delta, epochs=epochs)
    ax = fig.axes[0]
    lines = _lines(ax)
    ra = [dpbounds.RandomAllocationAccountant(sigma, M, e).get_epsilon_bracket(delta) for e in epochs]
    po = [dpbounds.PoissonAccountant(sigma, 1 / M, e * M).get_epsilon_bracket(delta) for e in epochs]
    rd = [RDPAccountant(noise_multiplier=sigma, sample_rate=1 / M, steps=e * M).get_epsilon(delta) for e in epochs]
    np.testing.assert_array_equal(lines["random allocation (exact)"][1], [b.upper for b in ra])
    np.testing.assert_array_equal(lines["Poisson (exact)"][1], [b.upper for b in po])
    np.testing.assert_array_equal(lines["Poisson (RDP)"][1], rd)
    for x, _ in lines.values():
        np.testing.assert_array_equal(x, epochs)
    # the brackets: one shaded band per exact accountant, spanning [lower, upper] ...
    bands = [c for c in ax.collections]
    assert len(bands) == 2
    lo_hi = sorted(np.ptp(b.get_paths()[0].vertices[:, 1]) for b in bands)
    assert all(v > 0 for v in lo_hi)
    # ... and, in the lower panel, relative to the upper end: [100 (lower / upper - 1), 0] percent
    rel = [c.get_paths()[0].vertices[:, 1] for c in fig.axes[1].collections]
    want = sorted([min(100 * (b.lower / b.upper - 1) for b in ra), min(100 * (b.lower / b.upper - 1) for b in po)])
    np.testing.assert_allclose(sorted(float(v.min()) for v in rel), want, rtol=1e-12)
    assert rd[0] > ra[0].upper  # RDP is the loosest at one epoch


# a figure takes seconds under load: PNG in the fast suite, SVG and PDF in the slow tier
@pytest.mark.parametrize("suffix", [".png", pytest.param(".svg", marks=pytest.mark.slow),
                                    pytest.param(".pdf", marks=pytest.mark.slow)])
def test_save_formats(tmp_path, suffix):
    path = tmp_path / f"f{suffix}"
    save_figure(rounds_figure(deltas=[0.01], points=3), path, dpi=50)
    data = path.read_bytes()
    assert data.startswith(MAGIC[suffix]) and len(data) > 1000


def test_bad_output_suffix_and_arguments_name_the_parameter(tmp_path):
    with pytest.raises(dpbounds.DPBoundsError, match="output"):
        save_figure(rounds_figure(deltas=[0.01], points=3), tmp_path / "f.jpeg")
    with pytest.raises(dpbounds.DPBoundsError, match="deltas"):
        rounds_figure(deltas=[2.0])
    with pytest.raises(dpbounds.DPBoundsError, match="sigma_max"):
        rounds_figure(sigma_min=2.0, sigma_max=1.0)
    with pytest.raises(dpbounds.DPBoundsError, match="epochs"):
        epsilon_figure(epochs=[0])


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"dpbounds\[plot\]"):
        rounds_figure(deltas=[0.01], points=3)


def test_cli_plot(tmp_path, capsys):
    from dpbounds.cli import main

    out = tmp_path / "r.svg"
    assert main(["plot", "rounds", "--delta", "0.01", "--points", "5", "-o", str(out), "--dpi", "50"]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {out}"
    assert out.read_bytes().startswith(MAGIC[".svg"])
    out = tmp_path / "t.png"
    assert main(["--json", "plot", "tradeoff", "--sigma", "2", "--rounds", "100", "-o", str(out)]) == 0
    assert json.loads(capsys.readouterr().out) == {"output": str(out), "figure": "tradeoff"}
    assert out.read_bytes().startswith(MAGIC[".png"])
    assert main(["plot", "epsilon", "--epochs", "1", "2", "-o", str(tmp_path / "e.txt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--output" in err
    assert main(["plot", "rounds", "-o", str(tmp_path / "no" / "r.png")]) == 2
    assert "--output" in capsys.readouterr().err


def test_cli_plot_default_output_name(tmp_path, monkeypatch, capsys):
    from dpbounds.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["plot", "rounds", "--delta", "0.01", "--points", "3"]) == 0
    assert (tmp_path / "rounds.png").read_bytes().startswith(MAGIC[".png"])


def test_make_figures_script(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("make_figures", ROOT / "tools" / "make_figures.py")
    if spec is None or not (ROOT / "tools" / "make_figures.py").exists():
        pytest.skip("tools/ not next to tests/ (wheel test from test-sources)")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    figs = mod.main(["--outdir", str(tmp_path)])
    for name in ("rounds", "tradeoff"):
        data = (tmp_path / f"{name}.png").read_bytes()
        assert data.startswith(MAGIC[".png"]) and 10_000 < len(data) < 300_000
    _check_rounds(figs["rounds"], [1e-2, 1e-3, 1e-4, 1e-5], 0.4, 4.0, 241)
    x, g = _lines(figs["tradeoff"].axes[0])["exact"]
    np.testing.assert_array_equal(g, 1 - x - dpbounds.tradeoff_exact(x, 1.0, 1e6)[0])


# ---------------------------------------------------------------- what a reader sees (rendered with Agg)
def _pixels(ax, x, y):
    return ax.transData.transform(np.column_stack([x, y]))


def _render(fig, path):
    save_figure(fig, path, dpi=100)
    data = path.read_bytes()
    assert data.startswith(MAGIC[".png"]) and len(data) > 20_000
    return fig.canvas.get_renderer()


def _legend_outside_the_axes(fig, renderer):
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert legends
    for leg in legends:
        box = leg.get_window_extent(renderer)
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent(renderer)), "the legend covers a panel"


def test_tradeoff_figure_defaults_show_the_differences(tmp_path):
    # at sigma = 1, M = 1e6 every f(a) is within 1e-2 of the diagonal: the defaults must show the
    # curves apart, and the legend must sit off the gap panel's data
    fig = tradeoff_figure()
    renderer = _render(fig, tmp_path / "tradeoff.png")
    _legend_outside_the_axes(fig, renderer)
    ax_g, ax_d = fig.axes
    gaps, diffs = _lines(ax_g), _lines(ax_d)
    at = 0.25

    def pixel_y(ax, line):
        x, y = line
        return _pixels(ax, [at], [np.interp(at, x, y)])[0, 1]

    t31 = next(k for k in gaps if k.startswith("Theorem 3.1"))
    # the bound stands apart from the exact curve in the gap panel (a factor ~13 on a log axis)
    assert pixel_y(ax_g, gaps[t31]) - pixel_y(ax_g, gaps["exact"]) > 40
    # in the difference panel every approximation is on a line of its own, well apart
    ys = sorted(pixel_y(ax_d, v) for v in diffs.values())
    assert len(ys) == 4 and min(np.diff(ys)) > 15, ys
    # and the panel is not dominated by its ticks: labels do not overlap
    labels = [t for t in ax_d.get_yticklabels() if t.get_text()]
    boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: b.y0)
    assert all(b1.y0 >= b0.y1 - 1 for b0, b1 in zip(boxes, boxes[1:]))


def test_epsilon_figure_brackets_are_visible_and_ticks_uniform(tmp_path):
    fig = epsilon_figure(1.1, 234, 1e-5, epochs=[1, 3, 10, 30])
    renderer = _render(fig, tmp_path / "epsilon.png")
    _legend_outside_the_axes(fig, renderer)
    ax, ax_rel = fig.axes
    # every tick label is a plain number (no 10^x next to 1.0): one format on both axes
    import re

    for axis in (ax_rel.xaxis, ax.yaxis):   # the epochs are labelled under the lower panel (shared x)
        texts = [t.get_text() for t in axis.get_ticklabels(which="both") if t.get_text()]
        assert texts and all(re.fullmatch(r"\d+(\.\d+)?", t) for t in texts), texts
    lo, hi = ax_rel.get_xlim()
    shown = [t.get_text() for t in ax_rel.xaxis.get_ticklabels() if lo <= t.get_position()[0] <= hi]
    assert {"1", "2", "5", "10", "20"} <= set(shown), shown
    # the brackets are bands a reader sees: several pixels tall where they are widest
    for band in ax_rel.collections:
        v = band.get_paths()[0].vertices
        px = ax_rel.transData.transform(v)
        assert np.ptp(px[:, 1]) > 30, np.ptp(px[:, 1])
