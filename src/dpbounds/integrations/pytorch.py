"""Random allocation for PyTorch: a batch sampler for ``torch.utils.data.DataLoader(batch_sampler=...)``.

Requires torch (install it first, as the PyTorch site says for your platform).  See docs/opacus.md.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import numpy as np
import torch.utils.data

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds.sampling import MAX_DATASET_SIZE, random_allocation

__all__ = ["RandomAllocationBatchSampler"]

_STATE_VERSION = 1


class _TrainedCounter(Protocol):
    """The attached accountant's side: how many of the sampler's batches were trained on."""

    def trained_batches(self) -> int: ...

    def invalidate(self) -> None: ...


class RandomAllocationBatchSampler(torch.utils.data.Sampler[list[int]]):  # type: ignore[misc]
    """Batches of random allocation: each example in exactly one of ``rounds`` batches per epoch.

    In every epoch each of the N = ``dataset_size`` examples goes to one of the M = ``rounds``
    batches, uniformly and independently (:func:`dpbounds.sampling.random_allocation` draws the
    epoch), so batch sizes vary: each is Binomial(N, 1/M), and an epoch's M sizes are
    Multinomial(N; 1/M, ..., 1/M).  This is the sampling scheme of
    :class:`~dpbounds.RandomAllocationAccountant` and of the Opacus accountant
    ``"dpbounds_random_allocation"``; ``len(sampler)`` is M, so Opacus infers the sample rate
    1/M from ``1 / len(data_loader)``.

    Parameters
    ----------
    dataset_size : int
        N, the number of examples (indices ``0, ..., N - 1``), at most 2**27.
    rounds : int
        M >= 2, the batches (steps) per epoch; ``dataset_size // batch_size`` for an expected
        batch of at least ``batch_size``.
    seed : None, int or numpy.random.SeedSequence
        The randomness: epoch e is drawn from ``SeedSequence(entropy, spawn_key=(e,))``, so a
        seed reproduces every epoch.  ``None`` draws fresh entropy from the operating system;
        it is part of :meth:`state_dict`, so a resumed run continues the same stream.

    Notes
    -----
    **Epochs are never cut short.**  Iterating the sampler yields the batches of the current
    epoch from where the previous iteration stopped, to the epoch's end; the next iteration
    starts the next epoch.  Breaking out of a ``for batch in loader`` loop and starting another
    therefore continues the same epoch: the batches form whole epochs of random allocation, as
    the accountant assumes.

    **Resuming.**  :meth:`state_dict` / :meth:`load_state_dict` hold the seed and the position
    (epoch, batch); a restored sampler yields exactly the batches the uninterrupted one would
    have.  When the sampler is attached to an Opacus accountant
    (``accountant.attach_sampler(sampler)``), the position is the accountant's count of batches
    trained on, so batches a ``DataLoader`` prefetched but never delivered to training are drawn
    again (they were not used: privacy is unaffected).

    **Empty batches** (probability about exp(-N/M) each) are yielded as ``[]``; PyTorch's default
    collate cannot build them, so pass ``collate_fn=opacus.data_loader.wrap_collate_with_empty(...)``
    or another collate that returns empty tensors, and still take the noisy step.  A batch is never
    truncated or padded with real examples: size memory for the upper tail of Binomial(N, 1/M).

    Not secure randomness: numpy's PCG64 generator, like PyTorch's default one.  Opacus'
    ``secure_mode`` does not accept custom samplers.

    Examples
    --------
    >>> sampler = RandomAllocationBatchSampler(10, rounds=3, seed=0)
    >>> epoch = list(sampler)            # one pass: the 3 batches of epoch 0
    >>> len(epoch), sorted(i for b in epoch for i in b) == list(range(10))
    (3, True)
    >>> sampler.epoch, len(sampler)
    (1, 3)
    """

    def __init__(self, dataset_size: int, rounds: int, seed: None | int | np.random.SeedSequence = None) -> None:
        self._n = V.check_count("dataset_size", dataset_size, minimum=1, maximum=MAX_DATASET_SIZE)
        self._m = V.check_count("rounds", rounds, minimum=2, maximum=10 ** 9)
        if isinstance(seed, np.random.SeedSequence):
            ss = seed
        elif seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0):
            ss = np.random.SeedSequence(None if seed is None else int(seed))
        else:
            raise DPBoundsError(f"seed must be None, an int >= 0 or a numpy.random.SeedSequence, got {seed!r}")
        if ss.spawn_key:
            raise DPBoundsError("seed must be a root SeedSequence (no spawn_key): epochs are spawned from it")
        ent = ss.entropy
        self._entropy: int | list[int] = ent if isinstance(ent, int) else [int(x) for x in (ent or ())]
        self._drawn = 0       # absolute index (over all epochs) of the next batch to yield
        self._generation = 0  # iterations started: an older iterator stops when a newer one starts
        self._link: _TrainedCounter | None = None

    # ------------------------------------------------------------------ properties
    @property
    def dataset_size(self) -> int:
        """N, the number of examples."""
        return self._n

    @property
    def rounds(self) -> int:
        """M, the number of batches (steps) per epoch."""
        return self._m

    @property
    def sample_rate(self) -> float:
        """1/M, each example's probability of being in a given batch (what Opacus infers)."""
        return 1.0 / self._m

    @property
    def epoch(self) -> int:
        """The epoch the next batch belongs to (0-based)."""
        return self._committed() // self._m

    @property
    def position(self) -> int:
        """How many batches of the current epoch have been used (0 <= position < M)."""
        return self._committed() % self._m

    @property
    def batches_drawn(self) -> int:
        """Batches yielded so far, over all epochs (the position of the next one in the stream)."""
        return self._drawn

    def __len__(self) -> int:
        return self._m

    def __repr__(self) -> str:
        return (f"RandomAllocationBatchSampler(dataset_size={self._n}, rounds={self._m}, "
                f"epoch={self.epoch}, position={self.position})")

    # ------------------------------------------------------------------ drawing
    def _rng(self, epoch: int) -> np.random.Generator:
        return np.random.default_rng(np.random.SeedSequence(self._entropy, spawn_key=(epoch,)))

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        """All M batches of epoch ``epoch`` (a pure function of the seed and the epoch)."""
        e = V.check_count("epoch", epoch, minimum=0)
        return [b.tolist() for b in random_allocation(self._n, self._m, self._rng(e), epochs=1)]

    def _committed(self) -> int:
        """The stream position the next iteration starts from: the batches trained on (when attached)."""
        if self._link is None:
            return self._drawn
        return self._link.trained_batches()

    def __iter__(self) -> Iterator[list[int]]:
        self._generation += 1
        start = self._committed()
        if start > self._drawn:
            raise DPBoundsError(f"the attached accountant counts {start} batches trained on, but this sampler has "
                                f"drawn only {self._drawn}: the optimizer was fed from another loader")
        self._drawn = start  # drawn but never trained on: drawn again (the same batches)
        return self._epoch_rest(self._generation)

    def _epoch_rest(self, generation: int) -> Iterator[list[int]]:
        epoch, skip = divmod(self._drawn, self._m)
        for j, batch in enumerate(random_allocation(self._n, self._m, self._rng(epoch), epochs=1)):
            if j < skip:
                continue
            if generation != self._generation:
                return  # a newer iteration has started and owns the position
            self._drawn += 1
            yield batch.tolist()

    # ------------------------------------------------------------------ linking
    def _attach(self, link: _TrainedCounter | None) -> None:
        self._link = link

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict[str, Any]:
        """The seed and the position: ``{"dataset_size", "rounds", "entropy", "epoch", "position", "version"}``."""
        e, p = divmod(self._committed(), self._m)
        return {"version": _STATE_VERSION, "dataset_size": self._n, "rounds": self._m,
                "entropy": self._entropy, "epoch": e, "position": p}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume from :meth:`state_dict` output (dataset_size and rounds must match this sampler's)."""
        if not isinstance(state, dict):
            raise DPBoundsError(f"state must be a dict from RandomAllocationBatchSampler.state_dict(), "
                                f"got {type(state).__name__}")
        if state.get("version") != _STATE_VERSION:
            raise DPBoundsError(f"state['version'] must be {_STATE_VERSION}, got {state.get('version')!r}")
        for key, mine in (("dataset_size", self._n), ("rounds", self._m)):
            if state.get(key) != mine:
                raise DPBoundsError(f"state['{key}'] = {state.get(key)!r} differs from this sampler's {key} = {mine}")
        entropy = state.get("entropy")
        try:
            np.random.SeedSequence(entropy)
        except (TypeError, ValueError):
            raise DPBoundsError(f"state['entropy'] must be a seed of numpy.random.SeedSequence, got {entropy!r}") from None
        if entropy is None or isinstance(entropy, bool):
            raise DPBoundsError(f"state['entropy'] must be a seed of numpy.random.SeedSequence, got {entropy!r}")
        e = V.check_count("state['epoch']", state.get("epoch"), minimum=0)
        p = V.check_count("state['position']", state.get("position"), minimum=0, maximum=self._m - 1)
        self._entropy = entropy
        self._drawn = e * self._m + p
        self._generation += 1
        if self._link is not None:
            self._link.invalidate()  # the attached accountant checks the new position at its next step
