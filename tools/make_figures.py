"""Regenerate the figures the README and the documentation show: docs/figures/rounds.png
(Figure 1 of "Trade-off Functions for DP-SGD with Subsampling based on Random Allocation:
Tight Upper and Lower Bounds": rounds M required against sigma) and docs/figures/tradeoff.png
(the trade-off curves at sigma = 1, M = 1e6).

Run from a checkout after building:  PYTHONPATH=src python tools/make_figures.py [--outdir DIR]
(default: docs/figures of this checkout; dpi 100 keeps the committed files small).  With
--companion it also writes the companion paper's figures ("Subsampled Rényi Differential
Privacy and Analytical Moments Accountant", Figures 1 and 2, both regimes) shown in
docs/composition.md.
tests/cli/test_figures.py runs it into a temporary folder and checks the figures' numbers.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Sequence

DEFAULT_OUTDIR = Path(__file__).resolve().parent.parent / "docs" / "figures"
DPI = 100


def build() -> dict[str, Any]:
    """The committed figures by file stem, drawn with the package's defaults."""
    from dpbounds.figures import rounds_figure, tradeoff_figure

    return {"rounds": rounds_figure(), "tradeoff": tradeoff_figure(sigma=1.0, rounds=1e6, epochs=1)}


def build_companion() -> dict[str, Any]:
    """The companion paper's Figures 1 and 2 in both regimes (docs/composition.md; ~1 minute)."""
    from dpbounds.figures import composition_figure, rdp_bounds_figure

    figures: dict[str, Any] = {}
    for regime in ("high", "low"):
        figures[f"rdp-bounds-{regime}"] = rdp_bounds_figure(regime)
        figures[f"composition-{regime}"] = composition_figure(regime, optimal_points=8)
    return figures


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Write every figure of :func:`build` as DIR/NAME.png; returns the figures (for the test)."""
    from dpbounds.figures import save_figure

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outdir", type=Path, default=DEFAULT_OUTDIR, help="folder to write into")
    parser.add_argument("--companion", action="store_true",
                        help="also the companion paper's figures: docs/figures/rdp-bounds-*.png and "
                             "composition-*.png (slow)")
    args = parser.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    figures = build()
    if args.companion:
        figures.update(build_companion())
    for name, fig in figures.items():
        path = args.outdir / f"{name}.png"
        save_figure(fig, path, dpi=DPI)
        print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")
    return figures


if __name__ == "__main__":
    main()
