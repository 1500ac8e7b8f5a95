"""A training history of random allocation as certified brackets (private).

A history is a list of epochs, each with its own (sigma, M), possibly ending with a partial
epoch (k < M steps).  Runs of equal epochs compose by one FFT power of their lattice PMF
(:func:`_lattice.compose`); different runs by convolution (:func:`_lattice.convolve`).  One
homogeneous run of whole epochs is served by :class:`RandomAllocationPLD` (its tuned path).

A trailing partial epoch is accounted exactly by the partial-epoch law
(``_select.partial_law_for``).
"""
from __future__ import annotations

import math

from dpbounds._errors import DPBoundsError
from dpbounds._result import PrivacyBracket
from dpbounds.accountant._cache import cached
from dpbounds.accountant._gdp import gdp_epsilon, mu_random_allocation
from dpbounds.accountant._invert import invert
from dpbounds.accountant._lattice import Composition, WindowTooLarge, compose_pieces, delta_bracket
from dpbounds.accountant._law import SingleEpochLaw
from dpbounds.accountant._pld import RandomAllocationPLD
from dpbounds.accountant._select import law_for, partial_law_for, require_converged

__all__ = ["Run", "history_epsilon", "history_delta", "runs_from_history"]

# (sigma, M, whole epochs, steps of a trailing partial epoch (0 if none))
Run = tuple[float, float, int, int]
_TAU = 1e-14
_SPACING_FLOOR = 1e-7


def _pieces(runs: list[Run]) -> list[tuple[SingleEpochLaw, int, str]]:
    """(law, count, label) per distinct epoch kind, in history order."""
    out: list[tuple[SingleEpochLaw, int, str]] = []
    for s, M, E, k in runs:
        if E:
            law = law_for(s, M, "compose")
            require_converged(law)
            out.append((law, E, f"{E} x (sigma={s:g}, M={M:g})"))
        if k:
            plaw = partial_law_for(s, M, k, "compose")
            require_converged(plaw)
            out.append((plaw, 1, f"partial epoch {k}/{M:g} (sigma={s:g})"))
    return out


def _composed(runs: tuple[Run, ...], dl: float, max_lattice: int) -> tuple[Composition, float, int]:
    key = ("history", runs, dl, max_lattice)

    def build() -> tuple[Composition, float, int]:
        spacing, needed = dl, 0
        while True:
            try:
                return _build(list(runs), spacing, max_lattice), spacing, needed
            except WindowTooLarge as exc:
                needed = max(needed, exc.needed)
                spacing *= 1.1 * exc.needed / max_lattice
    return cached(key, build)


def _build(runs: list[Run], dl: float, max_lattice: int) -> Composition:
    pieces = [(law.lattice_pmfs(dl), count) for law, count, _ in _pieces(runs)]
    return compose_pieces(pieces, dl, _TAU, max_lattice)


def _delta(runs: tuple[Run, ...], eps: float, dl: float, max_lattice: int) -> tuple[float, float]:
    return delta_bracket(_composed(runs, dl, max_lattice)[0], eps)


def _mu_guess(runs: tuple[Run, ...]) -> float:
    return math.sqrt(sum(mu_random_allocation(s, M, E + (1 if k else 0)) ** 2 for s, M, E, k in runs))


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
        raise DPBoundsError(f"no finite epsilon can be certified at delta={delta:g} for this history "
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

