"""A training history of random allocation as certified brackets (private).

A history is a list of epochs, each with its own (sigma, M), possibly ending with a partial
epoch (k < M steps).  Runs of equal epochs compose by one FFT power of their lattice PMF
(:func:`_lattice.compose`); different runs by convolution (:func:`_lattice.convolve`).  One
homogeneous run of whole epochs is served by :class:`RandomAllocationPLD` (its tuned path).

A partial epoch is accounted exactly when the partial-epoch law is available
(``_select.partial_law_for``); otherwise as a whole epoch, which is conservative: the k released
steps are a post-processing (a subset) of the whole epoch's outputs.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from dpbounds._result import PrivacyBracket
from dpbounds.accountant._cache import cached
from dpbounds.accountant._gdp import gdp_epsilon, mu_poisson_limit
from dpbounds.accountant._invert import invert
from dpbounds.accountant._lattice import HockeyStick, WindowTooLarge, compose, convolve
from dpbounds.accountant._law import SingleEpochLaw
from dpbounds.accountant._pld import RandomAllocationPLD
from dpbounds.accountant._select import law_for, require_converged

__all__ = ["Run", "history_epsilon", "history_delta", "runs_from_history"]

# (sigma, M, whole epochs, steps of a trailing partial epoch (0 if none))
Run = tuple[float, float, int, int]
_TAU = 1e-14
_SPACING_FLOOR = 1e-7


def _partial_law(sigma: float, M: float, k: int) -> SingleEpochLaw | None:
    """The exact law of a partial epoch, when the package has it (else None: count a whole epoch)."""
    from dpbounds.accountant import _select

    fn: Callable[..., SingleEpochLaw] | None = getattr(_select, "partial_law_for", None)
    if fn is None:
        return None
    return fn(sigma, M, k, "compose")


def _pieces(runs: list[Run]) -> list[tuple[SingleEpochLaw, int, str]]:
    """(law, count, label) per distinct epoch kind, in history order."""
    out: list[tuple[SingleEpochLaw, int, str]] = []
    for s, M, E, k in runs:
        if E:
            law = law_for(s, M, "compose")
            require_converged(law)
            out.append((law, E, f"{E} x (sigma={s:g}, M={M:g})"))
        if k:
            plaw = _partial_law(s, M, k)
            if plaw is None:
                law = law_for(s, M, "compose")
                require_converged(law)
                out.append((law, 1, f"partial epoch {k}/{M:g} counted as a whole epoch (conservative)"))
            else:
                out.append((plaw, 1, f"partial epoch {k}/{M:g} (sigma={s:g})"))
    return out


def _composed(runs: tuple[Run, ...], dl: float, max_lattice: int) -> tuple[dict[str, Any], float, int]:
    key = ("history", runs, dl, max_lattice)

    def build() -> tuple[dict[str, Any], float, int]:
        spacing, needed = dl, 0
        while True:
            try:
                return _build(list(runs), spacing, max_lattice), spacing, needed
            except WindowTooLarge as exc:
                needed = max(needed, exc.needed)
                spacing *= 1.1 * exc.needed / max_lattice
    return cached(key, build)


def _build(runs: list[Run], dl: float, max_lattice: int) -> dict[str, Any]:
    pieces = _pieces(runs)
    comp: dict[str, Any] = {}
    for direction in ("remove", "add"):
        acc_up: tuple[int, Any] | None = None
        acc_dn: tuple[int, Any] | None = None
        inf_keep = 1.0      # probability that no piece put mass at +inf (upper bound side)
        add_up = 0.0
        sub_dn = 0.0
        for law, count, _ in pieces:
            jmin, pu, inf_up, jdmin, pd, miss = law.lattice_pmfs(dl)[direction]
            s_up, g_up, out_up = compose(jmin, pu, count, _TAU, max_lattice)
            s_dn, g_dn, out_dn = compose(jdmin, pd, count, _TAU, max_lattice)
            inf_keep *= math.exp(count * math.log1p(-min(inf_up, 1.0))) if inf_up < 1 else 0.0
            add_up += out_up
            sub_dn += out_dn + count * miss
            if acc_up is None:
                acc_up, acc_dn = (s_up, g_up), (s_dn, g_dn)
            else:
                assert acc_dn is not None
                j, g, e = convolve(acc_up, (s_up, g_up))
                acc_up, add_up = (j, g), add_up + e
                j, g, e = convolve(acc_dn, (s_dn, g_dn))
                acc_dn, sub_dn = (j, g), sub_dn + e
            if max(acc_up[1].size, acc_dn[1].size) > max_lattice:
                raise WindowTooLarge(int(max(acc_up[1].size, acc_dn[1].size)))
        assert acc_up is not None and acc_dn is not None
        comp[direction] = (HockeyStick(acc_up[0], acc_up[1], dl), add_up + (1.0 - inf_keep),
                           HockeyStick(acc_dn[0], acc_dn[1], dl), sub_dn)
    return comp


def _delta(runs: tuple[Run, ...], eps: float, dl: float, max_lattice: int) -> tuple[float, float]:
    comp, _, _ = _composed(runs, dl, max_lattice)
    lo_all, hi_all = 0.0, 0.0
    for hs_up, add_up, hs_dn, sub_dn in comp.values():
        lo_all = max(lo_all, hs_dn(eps) - sub_dn)
        hi_all = max(hi_all, hs_up(eps) + add_up)
    return max(lo_all, 0.0), min(hi_all, 1.0)


def _mu_guess(runs: tuple[Run, ...]) -> float:
    return math.sqrt(sum(mu_poisson_limit(s, M, E + (1 if k else 0)) ** 2 for s, M, E, k in runs))


def _total_epochs(runs: tuple[Run, ...]) -> int:
    return sum(E + (1 if k else 0) for _, _, E, k in runs)


def _labels(runs: tuple[Run, ...]) -> str:
    return "; ".join(lbl for _, _, lbl in _pieces(list(runs)))


def _single(runs: tuple[Run, ...]) -> tuple[float, float, int] | None:
    """(sigma, M, E) when the history is one homogeneous run of whole epochs."""
    if len(runs) == 1 and runs[0][3] == 0:
        s, M, E, _ = runs[0]
        return s, M, E
    return None


def history_epsilon(runs: tuple[Run, ...], delta: float, tolerance: float, max_lattice: int) -> PrivacyBracket:
    one = _single(runs)
    if one is not None:
        return RandomAllocationPLD(one[0], one[1], one[2], tolerance, max_lattice).epsilon(delta)
    E = _total_epochs(runs)
    dl = max(tolerance * max(float(gdp_epsilon(delta, _mu_guess(runs))), 1e-3) / (2.0 * E), _SPACING_FLOOR)
    lo, hi, note = 0.0, math.inf, ""
    prev = math.inf
    used = dl
    for _ in range(8):
        lo2, hi2 = invert(lambda e: _delta(runs, e, dl, max_lattice), delta)
        lo, hi = max(lo, lo2), min(hi, hi2)
        _, used, needed = _composed(runs, dl, max_lattice)
        if not math.isfinite(hi) or hi - lo <= tolerance * hi:
            break
        if hi - lo > 0.9 * prev:
            note = "a finer loss lattice no longer narrows the bracket (the single-epoch laws set the width)"
            break
        prev = hi - lo
        if needed:
            note = (f"meeting the tolerance needs a loss lattice of about {needed:,} points, above "
                    f"max_lattice={max_lattice:,}; pass a larger max_lattice to tighten it")
            break
        if used <= _SPACING_FLOOR:
            note = f"the loss lattice reached its finest spacing ({_SPACING_FLOOR:g})"
            break
        dl = max(0.8 * used * tolerance * hi / (hi - lo), _SPACING_FLOOR)
    if not math.isfinite(hi):
        raise ValueError(f"no finite epsilon can be certified at delta={delta:g} for this history "
                         "(the certified delta bracket does not reach it); ask for a larger delta")
    return PrivacyBracket(lo, hi, quantity="epsilon", at=delta, tolerance=tolerance,
                          method=f"exact (loss lattice of spacing {used:.3g}: {_labels(runs)})",
                          certified="lattice rounding, window tails and the single-epoch laws' certified terms",
                          estimated="Fourier truncation / log-domain grid error and FFT round-off", note=note)


def history_delta(runs: tuple[Run, ...], epsilon: float, tolerance: float, max_lattice: int) -> PrivacyBracket:
    one = _single(runs)
    if one is not None:
        return RandomAllocationPLD(one[0], one[1], one[2], tolerance, max_lattice).delta(epsilon)
    E = _total_epochs(runs)
    dl = max(tolerance * max(epsilon, _mu_guess(runs), 1e-3) / (2.0 * E), _SPACING_FLOOR)
    lo, hi = _delta(runs, epsilon, dl, max_lattice)
    _, used, _ = _composed(runs, dl, max_lattice)
    return PrivacyBracket(lo, hi, quantity="delta", at=epsilon, tolerance=tolerance,
                          method=f"exact (loss lattice of spacing {used:.3g}: {_labels(runs)})",
                          certified="lattice rounding, window tails and the single-epoch laws' certified terms",
                          estimated="Fourier truncation / log-domain grid error and FFT round-off", warn=False)


def runs_from_history(history: list[tuple[float, float, int]]) -> tuple[Run, ...]:
    """Group steps into epochs: consecutive steps with the same sample rate 1/M fill epochs of M
    steps; a noise multiplier that changes inside an epoch counts the whole epoch at the
    smallest noise multiplier of its steps (conservative: more noise is a post-processing)."""
    from dpbounds.accountant._protocol import rounds_from_rate

    epochs: list[tuple[float, int, int]] = []  # (sigma, M, steps in it) per epoch
    for s, q, n in history:
        M = rounds_from_rate(q)
        left = int(n)
        while left:
            if epochs and epochs[-1][1] == M and epochs[-1][2] < M:
                s0, _, k0 = epochs[-1]
                take = min(M - k0, left)
                epochs[-1] = (min(s0, s), M, k0 + take)
            else:
                take = min(M, left)
                epochs.append((s, M, take))
            left -= take
    runs: list[Run] = []
    for s, M, k in epochs:
        full = k == M
        if runs and full and runs[-1][0] == s and runs[-1][1] == M and runs[-1][3] == 0:
            rs, rM, rE, _ = runs[-1]
            runs[-1] = (rs, rM, rE + 1, 0)
        else:
            runs.append((s, float(M), 1, 0) if full else (s, float(M), 0, k))
    return tuple(runs)

