"""epsilon of k compositions of subsampled mechanisms, RDP against the baselines: the companion paper's Figure 2."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds.composition import subsampled_epsilon
from dpbounds.figures._canvas import new_figure
from dpbounds.figures._regimes import MECHANISMS, Regime, check_mechanisms, resolve
from dpbounds.rdp import RDPAccountant

__all__ = ["composition_figure", "COMPOSITION_LABELS"]

FArr = NDArray[np.float64]

#: Each line's legend label, style and colour.
COMPOSITION_LABELS = {
    "rdp": ("analytical moments accountant (RDP)", "-", "C0"),
    "advanced": ("strong composition + subsampling lemma", "--", "C1"),
    "naive": ("naive composition + subsampling lemma", "-.", "C2"),
    "optimal": ("optimal composition (KOV) + subsampling lemma", ":", "C3"),
}


def _ks(k_min: int, k_max: int, points: int) -> FArr:
    """Integer numbers of compositions, about log-uniform from k_min to k_max (both included)."""
    return np.unique(np.round(np.geomspace(float(k_min), float(k_max), points)))


def _rdp_epsilon(reg: Regime, mechanism: str, ks: FArr, delta: float, conversion: str, bound: str) -> FArr:
    # one mechanism object for every k: its integer-order table is computed once (the values
    # do not depend on it: each k gets the same numbers as a fresh accountant would)
    mech = reg.subsampled(mechanism, bound)
    return np.array([float(RDPAccountant(conversion=conversion).compose(mech, float(k)).get_epsilon(delta))  # type: ignore[arg-type]
                     for k in ks])


def _baseline(reg: Regime, mechanism: str, ks: FArr, delta: float, method: str, profile: str) -> FArr:
    if mechanism == "gaussian":
        out = subsampled_epsilon(ks, gamma=reg.gamma, delta=delta, method=method, sigma=reg.sigma,
                                 gaussian_profile=profile)
    else:
        out = subsampled_epsilon(ks, gamma=reg.gamma, delta=delta, method=method,
                                 pure_epsilon=reg.pure_epsilon(mechanism))
    return np.asarray(out, dtype=np.float64)


def composition_figure(regime: str = "high", *, sigma: float | None = None, laplace_b: float | None = None,
                       rr_p: float | None = None, gamma: float = 1e-3, delta: float = 1e-8, k_min: int = 1,
                       k_max: int = 600_000, points: int = 25, conversion: str = "improved",
                       bound: str = "improved", gaussian_profile: str = "exact", optimal_points: int = 0,
                       mechanisms: Sequence[str] = MECHANISMS) -> Any:
    """Figure 2 of the companion paper: epsilon after k compositions, RDP against the baselines.

    For each base mechanism subsampled without replacement at ratio ``gamma``, epsilon at
    ``delta`` against the number of compositions k on log-log axes, one panel per mechanism:

    * the analytical moments accountant (:class:`dpbounds.rdp.RDPAccountant` with
      :class:`~dpbounds.rdp.SubsampledGaussianWOR`, or :class:`~dpbounds.rdp.SubsampledWOR` of
      the Laplace or randomized-response mechanism), by the ``conversion`` given;
    * strong (advanced) and naive composition after the subsampling lemma
      (:func:`dpbounds.composition.subsampled_epsilon`, the base (eps0, delta0) and the slack
      chosen per k to minimise epsilon within ``delta``);
    * optionally the exact optimal composition of Kairouz, Oh and Viswanath after the
      subsampling lemma, at ``optimal_points`` values of k (about 1 s per k for the Gaussian).

    Parameters
    ----------
    regime : {"high", "low"}
        The paper's parameters: ``"high"`` privacy sigma = 5, b = 2, p = 0.6; ``"low"`` privacy
        sigma = 1, b = 0.5, p = 0.9.
    sigma, laplace_b, rr_p : float, optional
        Override the regime's Gaussian noise (std per unit L2 sensitivity), Laplace scale or
        randomized-response truth probability (in (0.5, 1)).
    gamma : float
        Sampling ratio in (0, 1] (the paper: 0.001).
    delta : float
        Target delta in (0, 1) (the paper: 1e-8).
    k_min, k_max : int
        The range of k, 1 <= k_min < k_max <= 1e9 (the paper: up to 600,000).
    points : int >= 2
        Number of log-spaced k before rounding to integers.
    conversion : {"improved", "classic"}
        The accountant's RDP -> (eps, delta) conversion (docs/rdp.md; the paper used "classic").
    bound : {"improved", "theorem9"}
        The accountant's bound for subsampling without replacement.
    gaussian_profile : {"exact", "rdp"}
        The Gaussian baselines' eps0(delta0): its exact privacy profile, or the Rényi-curve
        conversion the paper's baselines use (weaker).  See
        :func:`~dpbounds.composition.subsampled_epsilon`.
    optimal_points : int
        0 (default: no optimal-composition line) or the number (>= 2) of log-spaced k at
        which to draw it.
    mechanisms : sequence of str
        Which panels, from ``"gaussian"``, ``"laplace"``, ``"randomized_response"``.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per mechanism; its lines are labelled by :data:`COMPOSITION_LABELS`
        (x: k, y: epsilon).  A baseline with no guarantee at some k (epsilon = inf) has a
        gap there.

    Examples
    --------
    >>> from dpbounds.figures import composition_figure
    >>> fig = composition_figure("high", k_max=1000, points=4, mechanisms=["gaussian"])
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['analytical moments accountant (RDP)', 'strong composition + subsampling lemma', 'naive composition + subsampling lemma']
    >>> fig.savefig("composition.png")  # doctest: +SKIP
    """
    reg = resolve(regime, sigma, laplace_b, rr_p, gamma)
    d = V.check_scalar("delta", delta, V.Constraint.OPEN_UNIT)
    lo = V.check_count("k_min", k_min, minimum=1, maximum=10 ** 9 - 1)
    hi = V.check_count("k_max", k_max, minimum=lo + 1, maximum=10 ** 9)
    n = V.check_count("points", points, minimum=2)
    conv = V.check_choice("conversion", conversion, ("improved", "classic"))
    bnd = V.check_choice("bound", bound, ("improved", "theorem9"))
    prof = V.check_choice("gaussian_profile", gaussian_profile, ("exact", "rdp"))
    n_opt = V.check_count("optimal_points", optimal_points, minimum=0)
    if n_opt == 1:
        raise DPBoundsError("optimal_points must be 0 (no optimal-composition line) or >= 2, got 1")
    names = check_mechanisms(mechanisms)
    ks = _ks(lo, hi, n)

    fig = new_figure(4.4 * len(names) + 0.4, 4.4)
    axes = fig.subplots(1, len(names), squeeze=False)[0]
    for ax, mech in zip(axes, names):
        series = {"rdp": (ks, _rdp_epsilon(reg, mech, ks, d, conv, bnd)),
                  "advanced": (ks, _baseline(reg, mech, ks, d, "advanced", prof)),
                  "naive": (ks, _baseline(reg, mech, ks, d, "naive", prof))}
        if n_opt:
            ko = _ks(lo, hi, n_opt)
            series["optimal"] = (ko, _baseline(reg, mech, ko, d, "optimal", prof))
        for key, (x, y) in series.items():
            label, style, color = COMPOSITION_LABELS[key]
            ax.plot(x, np.where(np.isfinite(y), y, np.nan), style, color=color, lw=1.5, label=label,
                    marker="o" if key == "optimal" else None, ms=3)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("number of compositions k")
        ax.set_title(reg.title(mech), fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    axes[0].set_ylabel(f"epsilon at delta = {d:g}")
    fig.suptitle(f"Composition of mechanisms subsampled without replacement, gamma = {reg.gamma:g} "
                 f"({regime}-privacy regime; RDP: {conv} conversion, {bnd} bound)", fontsize=11)
    return fig
