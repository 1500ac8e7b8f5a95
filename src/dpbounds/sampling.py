"""Batch samplers whose randomness matches the dpbounds accountants (numpy only).

A privacy guarantee computed by an accountant holds only for the sampling scheme it
analyses.  This module draws batches from exactly those schemes:

``random_allocation(dataset_size, rounds, rng, epochs=...)``
    Random allocation (balls and bins): in every epoch each example goes to exactly one
    of the ``rounds`` steps, chosen uniformly and independently.  Matches
    :class:`dpbounds.RandomAllocationAccountant` (``rounds_per_epoch = rounds``).
``poisson(dataset_size, sample_rate, rng, steps=...)``
    Poisson subsampling: each example joins each step independently with probability
    ``sample_rate``.  Matches the Poisson accountants (:mod:`dpbounds.rdp`).

How many steps E epochs are -- the one rule every function and command of the package uses:
:func:`poisson_steps` (floor(E / q), Opacus' ``int(epochs / sample_rate)``; with q = B / N,
floor(E N / B)) and :func:`random_allocation_steps` (floor(E M), M = N // B steps per epoch).

A shuffled loader with fixed-size batches (one random permutation per epoch cut into
consecutive batches) is neither: it is a different mechanism, and neither accountant bounds
its privacy loss ("How Private are DP-SGD Implementations?", Chua, Ghazi, Kamath, Kumar,
Manurangsi, Sinha and Zhang, ICML 2024, shows the gap between shuffling and Poisson
accounting).
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Union

import numpy as np
from numpy.typing import NDArray

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError

__all__ = ["random_allocation", "poisson", "poisson_steps", "random_allocation_steps", "MAX_STEPS"]

#: What ``rng`` accepts: anything :func:`numpy.random.default_rng` takes.
RNGLike = Union[None, int, np.integer[Any], np.random.SeedSequence, np.random.BitGenerator, np.random.Generator]
_Count = Union[int, np.integer[Any], float, np.floating[Any]]

# numpy draws and indexes with int64: larger sizes or step counts cannot be sampled
_INT64_MAX = int(np.iinfo(np.int64).max)

#: Largest ``dataset_size`` :func:`random_allocation` draws: an epoch holds three int64 arrays
#: of N entries (each example's step, the sorting permutation, the sorted steps), 24 bytes per
#: example, ~3 GiB at the cap (as the accountants' max_lattice cap).  A larger N is refused
#: before anything is allocated.
MAX_DATASET_SIZE = 2 ** 27

# Steps whose batch boundaries are located in one vectorised searchsorted call: bounds the
# extra memory when rounds is huge (M >> N is legal) while keeping the per-step cost O(1).
_STEP_BLOCK = 1 << 16


#: Most steps a count of epochs may come to: 2^53, the largest count a double still holds exactly.
MAX_STEPS = 2 ** 53


def _whole_steps(x: float, formula: str, epochs: Any) -> int:
    """floor(x) for a step count x = epochs * steps per epoch, refused by name outside [1, 2^53].

    x is a float quotient or product, so a whole number of steps can come out a few ulp below
    it (10 epochs / (25 / 2925) = 1169.9999999999998): a value within 4 ulp of a whole number is
    that number.  Otherwise a step count's fractional part is at least 1 / (E N) relative,
    far above 4 ulp for every E N < 2^50.
    """
    if not x <= MAX_STEPS:   # also inf and nan
        raise DPBoundsError(f"epochs={epochs!r} makes {x:.4g} steps ({formula}), more than the 2^53 steps a "
                            "count can hold: give fewer epochs")
    r = round(x)
    n = r if abs(x - r) <= 4 * math.ulp(max(r, 1)) else math.floor(x)
    if n < 1:
        raise DPBoundsError(f"epochs={epochs!r} makes {x:.4g} steps ({formula}): less than one step")
    return int(n)


def poisson_steps(epochs: float, sample_rate: float) -> int:
    """Steps of E epochs of Poisson subsampling (or sampling without replacement) at rate q.

    ``floor(epochs / sample_rate)``: Opacus' ``int(epochs / sample_rate)``, except that a
    quotient within 4 ulp of a whole number counts as that number, so that with q = B / N it is
    exactly floor(E N / B) (for N = 2925, B = 25, E = 10 that is 1170, where ``int(10 / (25 /
    2925))`` gives 1169).  For N = 60000, B = 256, E = 10: 2343.  Every command and function
    of dpbounds that turns epochs into Poisson steps uses this rule.

    Raises
    ------
    DPBoundsError
        If epochs is not finite and > 0, sample_rate not in (0, 1], or the count is below
        one step or above 2^53 (:data:`MAX_STEPS`).
    """
    e = V.check_scalar("epochs", epochs, V.Constraint.FINITE_POSITIVE)
    q = V.check_rate("sample_rate", sample_rate)
    return _whole_steps(e / q, f"E / q at the sample rate q = {q:.6g}", epochs)


def random_allocation_steps(epochs: float, rounds_per_epoch: int) -> int:
    """Steps of E epochs of random allocation with M steps per epoch: ``floor(epochs * M)``.

    M is ``dataset_size // batch_size`` from a dataset size N and a target batch size B.  A
    fractional E ends in a partial epoch of the remaining steps, which the exact accountant
    accounts as such (:class:`dpbounds.RandomAllocationAccountant` with ``steps=``).  For N =
    60000, B = 256 (M = 234), E = 10: 2340.  A product within 4 ulp of a whole number counts as
    that number (as in :func:`poisson_steps`).

    Raises
    ------
    DPBoundsError
        If epochs is not finite and > 0, rounds_per_epoch not an integer >= 1, or the count is
        below one step or above 2^53.
    """
    e = V.check_scalar("epochs", epochs, V.Constraint.FINITE_POSITIVE)
    m = V.check_count("rounds_per_epoch", rounds_per_epoch, minimum=1)
    return _whole_steps(e * m, f"E * M with M = {m} steps per epoch", epochs)


def _generator(rng: RNGLike) -> np.random.Generator:
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError):
        raise DPBoundsError(
            "rng must be None, an int seed, a numpy.random.SeedSequence, BitGenerator or "
            f"Generator, got {rng!r}"
        ) from None


def _count_or_none(name: str, value: _Count | None) -> int | None:
    return None if value is None else V.check_count(name, value, minimum=1)


def random_allocation(
    dataset_size: _Count,
    rounds: _Count,
    rng: RNGLike = None,
    *,
    epochs: _Count | None = 1,
) -> Iterator[NDArray[np.int64]]:
    """Batches of random allocation: each example in exactly one uniformly chosen step per epoch.

    In every epoch each of the N = ``dataset_size`` examples is put into one of the
    M = ``rounds`` steps, uniformly at random and independently of the other examples and of
    the other epochs.  Batch sizes therefore vary: each is Binomial(N, 1/M), and the M sizes
    of an epoch are jointly Multinomial(N; 1/M, ..., 1/M) (they always sum to N).

    This is the sampling scheme of :class:`dpbounds.RandomAllocationAccountant`: use
    ``RandomAllocationAccountant(noise_multiplier, rounds_per_epoch=rounds, epochs=epochs)``
    for the model trained on these batches.  Each example's per-step inclusion probability is
    1/M, as under Poisson sampling at rate q = 1/M, but the accountants differ.

    Parameters
    ----------
    dataset_size : int
        N, the number of examples; the indices are ``0, ..., N - 1``.  Numpy integers and
        floats with an integer value (``1e4``) are accepted.
    rounds : int
        M, the number of steps per epoch (the accountant's ``rounds_per_epoch``).  For an
        expected batch size B take ``M = N // B``; the expected batch size is then N / M >= B.
        M > N is allowed: then at least M - N batches of every epoch are empty.
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator, optional
        Source of randomness, passed to :func:`numpy.random.default_rng`.  A ``Generator`` is
        used, and advanced, in place (not copied); an int gives a reproducible sequence.
    epochs : int or None, optional
        E, the number of epochs (the accountant's ``epochs``); ``None`` yields epochs forever.

    Yields
    ------
    numpy.ndarray of int64
        The indices of the examples in the step, in increasing order (possibly empty): M arrays
        per epoch, epoch after epoch.

    Raises
    ------
    ValueError
        If ``dataset_size`` or ``rounds`` is not an integer >= 1, ``dataset_size`` exceeds the
        memory cap 2**27 (see Notes), ``epochs`` is neither ``None`` nor an integer >= 1, or
        ``rng`` is not accepted by ``default_rng``; the message names the parameter.  Arguments
        are checked when the function is called, not when the first batch is drawn.

    See Also
    --------
    poisson : Poisson subsampling, for the Poisson accountants.
    dpbounds.RandomAllocationAccountant : the privacy accounting for these batches.

    Notes
    -----
    Only the scheme above is covered by the random-allocation accountant.  A shuffled loader
    with fixed-size batches (a random permutation per epoch cut into consecutive batches of
    exactly B) is a different mechanism, analysed neither by this accountant nor by Poisson
    accounting; see "How Private are DP-SGD Implementations?" (Chua et al., ICML 2024).

    ``RandomAllocationAccountant`` needs M >= 2; ``rounds=1`` (every example in the one step
    of each epoch) is allowed here but has no random-allocation guarantee.

    Cost per epoch: N draws of ``rng.integers``, one stable sort (O(N log N) time, O(N)
    memory), and a copy of each batch (so batches are independent, writable arrays).  Memory:
    24 bytes per example while an epoch is drawn; ``dataset_size`` is capped at
    ``MAX_DATASET_SIZE`` = 2**27 examples (~3 GiB), and a larger one raises
    :class:`~dpbounds.DPBoundsError` before anything is allocated.  Random allocation puts
    each example in its step independently, so a larger dataset is drawn in disjoint shards
    with independent generators and the same ``rounds``: step j's batch is the union of the
    shards' step-j batches (this is also what data-parallel workers holding shards do).

    Examples
    --------
    >>> from dpbounds.sampling import random_allocation
    >>> for batch in random_allocation(10, 3, rng=0, epochs=2):
    ...     print(batch)
    [3 4 5 6 7 8]
    [1 2]
    [0 9]
    []
    [0 2 3 6 7 8]
    [1 4 5 9]

    Every epoch partitions the dataset; batch sizes vary around N / M:

    >>> import numpy as np
    >>> epoch = list(random_allocation(60_000, 60_000 // 256, rng=1))
    >>> len(epoch), sum(b.size for b in epoch)
    (234, 60000)
    >>> np.array_equal(np.sort(np.concatenate(epoch)), np.arange(60_000))
    True

    The matching accountant (M = N // B rounds per epoch, E epochs):

    >>> from dpbounds import RandomAllocationAccountant
    >>> acc = RandomAllocationAccountant(noise_multiplier=1.0, rounds_per_epoch=60_000 // 256, epochs=10)
    """
    n = V.check_count("dataset_size", dataset_size, minimum=1, maximum=_INT64_MAX)
    if n > MAX_DATASET_SIZE:
        raise DPBoundsError(
            f"dataset_size must be <= 2**27 = {MAX_DATASET_SIZE:,} examples for random_allocation (the memory "
            f"cap: an epoch holds 24 bytes per example, ~3 GiB at the cap), got {n:,}.  Draw a larger dataset "
            "in shards: every example goes to its step independently, so disjoint shards of at most "
            f"{MAX_DATASET_SIZE:,} examples, each drawn with its own generator (numpy.random.SeedSequence(seed)"
            ".spawn(shards)) and the same rounds, give exactly this scheme when step j's batch is the union of "
            "the shards' step-j batches (shard-local indices plus the shard's offset)")
    m = V.check_count("rounds", rounds, minimum=1, maximum=_INT64_MAX)
    e = _count_or_none("epochs", epochs)
    gen = _generator(rng)
    # validation above runs at call time; only the drawing is deferred to iteration
    return _random_allocation(n, m, gen, e)


def _random_allocation(n: int, m: int, gen: np.random.Generator, epochs: int | None) -> Iterator[NDArray[np.int64]]:
    epoch = 0
    while epochs is None or epoch < epochs:
        epoch += 1
        step_of = gen.integers(m, size=n, dtype=np.int64)
        # a stable sort groups the examples by step and keeps each group in increasing index
        # order, so every batch comes out sorted without a per-batch sort
        order = np.argsort(step_of, kind="stable").astype(np.int64, copy=False)
        sorted_steps = step_of[order]
        begin = 0
        for first in range(0, m, _STEP_BLOCK):
            last = min(first + _STEP_BLOCK, m)
            # end of step j's group = number of examples assigned to steps <= j
            ends = np.searchsorted(sorted_steps, np.arange(first, last, dtype=np.int64), side="right")
            for end in ends.tolist():
                # a copy, not a view: a kept batch must not pin the whole epoch's index array,
                # and a caller editing it in place must not touch the other batches
                yield order[begin:end].copy()
                begin = end


def poisson(
    dataset_size: _Count,
    sample_rate: float,
    rng: RNGLike = None,
    *,
    steps: _Count | None = None,
) -> Iterator[NDArray[np.int64]]:
    """Batches of Poisson subsampling: each example joins each step independently with probability q.

    Every step includes each of the N = ``dataset_size`` examples independently with
    probability q = ``sample_rate``, independently of all other steps.  Batch sizes are
    Binomial(N, q) and independent across steps; there are no epochs.

    This is the sampling scheme of the Poisson-subsampled accountants: in :mod:`dpbounds.rdp`,
    ``rdp.RDPAccountant().compose(rdp.PoissonGaussian(sigma, q), steps)`` (or
    ``rdp.poisson_gaussian(alpha, sigma, q)``), and the Gaussian-DP approximation
    ``dpbounds.gdp_mu_poisson(sigma, q, steps)``.  Any Poisson-subsampled Gaussian PLD accountant
    (for example that of Google's ``dp_accounting``) assumes the same scheme; dpbounds itself
    has none.

    Parameters
    ----------
    dataset_size : int
        N, the number of examples; the indices are ``0, ..., N - 1``.  Numpy integers and
        floats with an integer value (``1e4``) are accepted.
    sample_rate : float
        q in (0, 1], the inclusion probability per example and step.  For an expected batch
        size B take ``q = B / N``; a DP-SGD "epoch" is then about 1 / q steps.
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator, optional
        Source of randomness, passed to :func:`numpy.random.default_rng`.  A ``Generator`` is
        used, and advanced, in place (not copied); an int gives a reproducible sequence.
    steps : int or None, optional
        T, the number of steps (the count composed in the accountant); ``None`` (default)
        yields batches forever.

    Yields
    ------
    numpy.ndarray of int64
        The indices of the examples in the step, in increasing order (possibly empty).

    Raises
    ------
    ValueError
        If ``dataset_size`` is not an integer >= 1, ``sample_rate`` is not in (0, 1], ``steps``
        is neither ``None`` nor an integer >= 1, or ``rng`` is not accepted by ``default_rng``;
        the message names the parameter.  Also if one step would hold more than 3 x 2**27 int64
        values (~3 GiB, the memory cap shared with :func:`random_allocation`): numpy permutes all
        N indices once the batch exceeds about N/50, so N > 4e8 with q > 0.02, or an expected batch
        N q above ~1.3e8; the message says how to draw in shards.  Arguments are checked when the
        function is called, not when the first batch is drawn.

    See Also
    --------
    random_allocation : random allocation, for :class:`dpbounds.RandomAllocationAccountant`.
    dpbounds.rdp.PoissonGaussian, dpbounds.gdp_mu_poisson : the privacy accounting for these batches.

    Notes
    -----
    Each batch is drawn as a Binomial(N, q) size K followed by a uniformly random K-subset
    (``Generator.choice`` without replacement), which is exactly the law of N independent
    Bernoulli(q) inclusions; for small q it needs about K random draws and an O(K log K) sort
    per step instead of N draws (at N = 10^7, q = 10^-4: ~20 us instead of ~50 ms).

    Examples
    --------
    >>> from dpbounds.sampling import poisson
    >>> for batch in poisson(10, 0.3, rng=0, steps=3):
    ...     print(batch)
    [2 3 4]
    []
    [0 5 8 9]

    The matching accountant (q = B / N, T steps):

    >>> import dpbounds.rdp as rdp
    >>> acc = rdp.RDPAccountant().compose(rdp.PoissonGaussian(1.0, 256 / 60_000), 2340)
    """
    n = V.check_count("dataset_size", dataset_size, minimum=1, maximum=_INT64_MAX)
    q = V.check_rate("sample_rate", sample_rate)
    items = _poisson_step_items(n, q)
    if items > 3 * MAX_DATASET_SIZE:
        raise DPBoundsError(
            f"dataset_size={n:,} with sample_rate={q!r}: a step would hold about {items:,} int64 values "
            f"(over 24 bytes x 2**27 = ~3 GiB, the memory cap of the samplers).  Draw in shards of at most "
            f"{MAX_DATASET_SIZE:,} examples: Poisson inclusions are independent per example, so the union "
            "of the shards' step-t batches (shard-local indices plus the shard's offset), each shard with "
            "its own generator (numpy.random.SeedSequence(seed).spawn(shards)), is exactly this scheme")
    t = _count_or_none("steps", steps)
    gen = _generator(rng)
    return _poisson(n, q, gen, t)


def _poisson_step_items(n: int, q: float) -> int:
    """The int64 values one step of :func:`poisson` may hold at once: numpy's ``choice`` without
    replacement permutes all N indices when the batch exceeds N/50 (N/20 or N/50 by numpy
    version; the smaller is assumed) and otherwise keeps the batch and a hash set of about twice
    its size; the batch size is taken at its mean plus 10 standard deviations."""
    mean = n * q
    k_hi = min(n, int(mean + 10.0 * math.sqrt(mean) + 10.0))
    if n > 10_000 and k_hi > n // 50:
        return n + k_hi
    return 3 * k_hi


def _poisson(n: int, q: float, gen: np.random.Generator, steps: int | None) -> Iterator[NDArray[np.int64]]:
    step = 0
    while steps is None or step < steps:
        step += 1
        k = int(gen.binomial(n, q))
        # given its size, a Bernoulli(q)-inclusion set is a uniformly random k-subset
        chosen = gen.choice(n, size=k, replace=False, shuffle=False)
        chosen.sort()
        yield chosen.astype(np.int64, copy=False)
