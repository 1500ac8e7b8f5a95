"""dpbounds accountants for Opacus, the random-allocation data loader, and a one-call private setup.

Importing this module registers three Opacus accountants (``opacus.accountants.register_accountant``),
so ``PrivacyEngine(accountant=name)`` and ``get_noise_multiplier(accountant=name)`` take them:

* ``"dpbounds_random_allocation"``: :class:`DPBoundsRandomAllocationAccountant`, for batches of a
  :class:`RandomAllocationBatchSampler` (``make_private(..., poisson_sampling=False)``);
* ``"dpbounds_poisson"``: :class:`DPBoundsPoissonAccountant` (exact PLD), for Opacus' default
  Poisson loader;
* ``"dpbounds_rdp"``: :class:`DPBoundsRDPAccountant` (Rényi DP), for the same loader.

A shuffled loader with fixed-size batches is covered by none of them.

:func:`make_private_random_allocation` builds the private module, optimizer and
random-allocation data loader in one call, with the noise multiplier calibrated to a target
(epsilon, delta) by :func:`dpbounds.calibrate_noise` (certified).

Requires torch and opacus (``pip install torch`` as the PyTorch site says for your platform,
then ``pip install "dpbounds[opacus]"``).  See docs/opacus.md.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from opacus.accountants import IAccountant

from dpbounds import _validation as V
from dpbounds._errors import DPBoundsError
from dpbounds._result import PrivacyBracket
from dpbounds.accountant._params import MAX_LATTICE_CAP
from dpbounds.accountant._protocol import rounds_from_rate
from dpbounds.integrations._common import HistoryFeed, check_history, check_rounds_rate, trailing_partial
from dpbounds.integrations.pytorch import RandomAllocationBatchSampler

__all__ = [
    "DPBoundsRandomAllocationAccountant",
    "DPBoundsPoissonAccountant",
    "DPBoundsRDPAccountant",
    "RandomAllocationBatchSampler",
    "PrivateTraining",
    "make_private_random_allocation",
    "register",
    "ACCOUNTANTS",
]

_STATE_VERSION = 1


class _DPBoundsAccountant(IAccountant):  # type: ignore[misc]
    """An Opacus accountant backed by a dpbounds accountant (the shared machinery).

    Opacus' conventions: ``step(noise_multiplier=, sample_rate=)``; ``history`` a list of
    ``(noise_multiplier, sample_rate, num_steps)``; ``len()`` the number of steps;
    ``state_dict()`` with ``"history"`` and ``"mechanism"``; ``get_optimizer_hook_fn``.
    dpbounds' additions: the history is validated whenever it is replaced (assignment,
    ``load_state_dict``), ``get_epsilon`` is the certified upper end and
    ``get_epsilon_bracket`` / ``get_delta_bracket`` return the whole
    :class:`~dpbounds.PrivacyBracket`.
    """

    _mechanism = ""
    _kind = ""
    #: relative width target of the epsilon bracket (as the dpbounds accountants)
    tolerance: float = 2e-3
    #: memory cap of the loss lattice (see :class:`dpbounds.RandomAllocationPLD`)
    max_lattice: int = 2 ** 21

    def __init__(self) -> None:
        self._entries: list[list[Any]] = []
        self._last_s: Any = None  # the last step's arguments, as passed (the step fast path)
        self._last_q: Any = None
        self._feed = HistoryFeed(self._kind, self.tolerance, self.max_lattice)
        self._hook_rate: float | None = None
        super().__init__()  # Opacus' IAccountant sets self.history = [] (through the property)

    @classmethod
    def mechanism(cls) -> str:
        """The name the class is registered under (Opacus stores it in ``state_dict()``)."""
        return cls._mechanism

    # ------------------------------------------------------------------ history
    @property
    def history(self) -> list[tuple[float, float, int]]:
        """``(noise_multiplier, sample_rate, num_steps)`` entries, oldest first (a copy).

        Assigning a list replaces the history (Opacus' ``get_noise_multiplier`` does); it is
        validated first, and a bad entry raises :class:`~dpbounds.DPBoundsError` naming it.
        Changing the returned list changes nothing: assign, or record steps with :meth:`step`.
        """
        return [(s, q, n) for s, q, n in self._entries]

    @history.setter
    def history(self, value: Any) -> None:
        entries = check_history(value, "history", random_allocation=self._kind == "random_allocation")
        self._entries = entries
        self._last_s = self._last_q = None
        self._feed = HistoryFeed(self._kind, self.tolerance, self.max_lattice)
        self._history_replaced()

    def _history_replaced(self) -> None:
        """Hook for subclasses: the history was replaced (not grown)."""

    def __len__(self) -> int:
        """The number of steps taken (the sum of the history's step counts)."""
        return sum(int(e[2]) for e in self._entries)

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one step (consecutive equal steps are grouped); the same as Opacus' accountants.

        O(1): a step equal to the previous one costs a comparison and an increment.
        """
        if (noise_multiplier.__class__ is float and sample_rate.__class__ is float
                and noise_multiplier == self._last_s and sample_rate == self._last_q):
            self._entries[-1][2] += 1
            return
        s = V.check_scalar("noise_multiplier", noise_multiplier, V.Constraint.FINITE_POSITIVE)
        q = V.check_rate("sample_rate", sample_rate)
        if self._kind == "random_allocation":
            check_rounds_rate(q)
        e = self._entries
        if e and e[-1][0] == s and e[-1][1] == q:
            e[-1][2] += 1
        else:
            e.append([s, q, 1])
        floats = noise_multiplier.__class__ is float and sample_rate.__class__ is float
        self._last_s, self._last_q = (noise_multiplier, sample_rate) if floats else (None, None)

    # ------------------------------------------------------------------ answers
    def get_epsilon_bracket(self, delta: float) -> PrivacyBracket:
        """The certified bracket of epsilon(delta) after the recorded steps (``(0, 0)`` before any)."""
        d = V.check_scalar("delta", delta, V.Constraint.OPEN_UNIT)
        return self._feed.bracket(self._entries, "epsilon", d)

    def get_delta_bracket(self, epsilon: float) -> PrivacyBracket:
        """The certified bracket of delta(epsilon) after the recorded steps."""
        eps = V.check_scalar("epsilon", epsilon, V.Constraint.FINITE_NONNEGATIVE) + 0.0
        return self._feed.bracket(self._entries, "delta", eps)

    def get_epsilon(self, delta: float) -> float:
        """epsilon(delta): the certified upper end of :meth:`get_epsilon_bracket` (0 before any step)."""
        return self.get_epsilon_bracket(delta).upper

    def get_delta(self, epsilon: float) -> float:
        """delta(epsilon): the certified upper end of :meth:`get_delta_bracket`."""
        return self.get_delta_bracket(epsilon).upper

    # ------------------------------------------------------------------ state
    def _extra_state(self) -> dict[str, Any]:
        return {}

    def _load_extra_state(self, state: Mapping[str, Any]) -> None:
        pass

    def state_dict(self, destination: Any = None) -> Any:
        """Opacus' state (``"history"``, ``"mechanism"``) plus dpbounds' options under ``"dpbounds"``."""
        if destination is None:
            destination = OrderedDict()
        destination["history"] = self.history
        destination["mechanism"] = self.mechanism()
        destination["dpbounds"] = {"version": _STATE_VERSION, "tolerance": self.tolerance,
                                   "max_lattice": self.max_lattice, **self._extra_state()}
        return destination

    def load_state_dict(self, state_dict: Any) -> None:
        """Resume from :meth:`state_dict` output: everything is validated before anything changes.

        Raises :class:`~dpbounds.DPBoundsError` (a ``ValueError``, as Opacus raises) naming the
        field: a state of another mechanism, a history with a bad entry (negative or fractional
        steps, NaN, a wrong type, a sample rate that is not 1/M for random allocation), bad
        options.
        """
        if not isinstance(state_dict, Mapping) or not state_dict:
            raise DPBoundsError("state_dict must be a non-empty mapping from state_dict(), "
                                f"got {type(state_dict).__name__}")
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise DPBoundsError(f"state_dict has no {key!r} entry")
        if state_dict["mechanism"] != self.mechanism():
            raise DPBoundsError(f"state_dict['mechanism'] is {state_dict['mechanism']!r}, not {self.mechanism()!r}: "
                                "a state of another accountant cannot be loaded")
        entries = check_history(state_dict["history"], "state_dict['history']",
                                random_allocation=self._kind == "random_allocation")
        tol, lat = self.tolerance, self.max_lattice
        extra = state_dict.get("dpbounds")
        if extra is not None:
            if not isinstance(extra, Mapping) or extra.get("version") != _STATE_VERSION:
                raise DPBoundsError(f"state_dict['dpbounds'] must be a mapping with version {_STATE_VERSION}, "
                                    f"got {extra!r}")
            tol = V.check_scalar("state_dict['dpbounds']['tolerance']", extra.get("tolerance"),
                                 V.Constraint.OPEN_UNIT)
            lat = V.check_count("state_dict['dpbounds']['max_lattice']", extra.get("max_lattice"),
                                minimum=1024, maximum=MAX_LATTICE_CAP)
            self._check_extra_state(extra)
        self.tolerance, self.max_lattice = tol, lat
        self.history = entries
        if extra is not None:
            self._load_extra_state(extra)

    def _check_extra_state(self, state: Mapping[str, Any]) -> None:
        pass

    # ------------------------------------------------------------------ Opacus hook
    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """The step hook Opacus attaches to the ``DPOptimizer`` (``make_private`` calls this).

        Each optimizer step records one step at ``sample_rate`` with the optimizer's noise
        multiplier.  Gradient accumulation over several batches per step (Opacus' hook would pass
        ``sample_rate * accumulated_iterations``) is refused: one step of Poisson accounting must
        be one Poisson sample.  ``BatchMemoryManager`` is fine: it steps once per logical batch.
        """
        q = V.check_rate("sample_rate", sample_rate)
        self._hook_rate = q
        step = self.step

        def hook(optim: Any) -> None:
            k = optim.accumulated_iterations
            s = optim.noise_multiplier
            if k == 1 and s.__class__ is float and s == self._last_s and q == self._last_q:
                self._entries[-1][2] += 1  # step()'s fast path, inline: the training loop's common case
                return
            if k != 1:
                raise DPBoundsError(
                    f"{k} batches were accumulated into one optimizer step: {self.mechanism()} accounts "
                    "each step as one Poisson sample at the loader's sample rate, and a union of Poisson "
                    "samples is not one (an example can be in several).  Use BatchMemoryManager to split "
                    "large batches (one step per logical batch), or a larger batch size")
            step(noise_multiplier=s, sample_rate=q)

        return hook

    def __repr__(self) -> str:
        return f"{type(self).__name__}(steps={len(self)}, history_entries={len(self._entries)})"


class DPBoundsPoissonAccountant(_DPBoundsAccountant):
    """Opacus accountant ``"dpbounds_poisson"``: the exact PLD of Poisson-subsampled DP-SGD.

    Backed by :class:`dpbounds.PoissonAccountant` (certified brackets).  For Opacus' default
    Poisson data loader (``make_private(..., poisson_sampling=True)``).
    """

    _mechanism = "dpbounds_poisson"
    _kind = "poisson"


class DPBoundsRDPAccountant(_DPBoundsAccountant):
    """Opacus accountant ``"dpbounds_rdp"``: Rényi-DP accounting of Poisson-subsampled DP-SGD.

    Backed by :class:`dpbounds.rdp.RDPAccountant` (continuous orders, the improved conversion;
    an upper bound, the bracket's lower end is 0).  For Opacus' default Poisson data loader.
    """

    _mechanism = "dpbounds_rdp"
    _kind = "rdp"


class _SamplerLink:
    """The tie between a random-allocation accountant and the sampler whose batches it accounts.

    ``trained`` is the position in the sampler's stream of batches (over all epochs) up to which
    batches were trained on: the accountant advances it by the batches of each optimizer step,
    and the sampler restarts from it when a new pass begins.  ``stale`` means one side's state
    was replaced; the next use checks that both are at the same point of an epoch.
    """

    __slots__ = ("acc", "sampler", "trained", "k_epoch", "stale")

    def __init__(self, acc: DPBoundsRandomAllocationAccountant, sampler: RandomAllocationBatchSampler) -> None:
        self.acc = acc
        self.sampler = sampler
        self.trained = 0
        self.k_epoch = 0
        self.stale = True

    def invalidate(self) -> None:
        self.stale = True

    def trained_batches(self) -> int:
        if self.stale:
            self.sync()
        return self.trained

    def sync(self) -> None:
        s, acc = self.sampler, self.acc
        m = s.rounds
        if acc._hook_rate is not None and rounds_from_rate(acc._hook_rate) != m:
            raise DPBoundsError(
                f"make_private inferred sample_rate = {acc._hook_rate:.6g} (1/{rounds_from_rate(acc._hook_rate)}) "
                f"from its data loader, but the attached sampler draws {m} batches per epoch (sample rate 1/{m}): "
                "the optimizer must be made private with the DataLoader built on this sampler")
        drawn = s.batches_drawn
        rec = acc._sampler_record
        if (rec is not None and rec.get("entropy") == s._entropy and rec.get("rounds") == m
                and rec.get("dataset_size") == s.dataset_size and rec.get("trained") != drawn):
            raise DPBoundsError(
                f"this sampler (the same seed) is at batch {drawn} of its stream, but the accountant's state says "
                f"{rec.get('trained')} batches of it were trained on: restore the sampler and the accountant from "
                "the same checkpoint (sampler.load_state_dict(...)); reusing batches of a seed would reuse its "
                "allocations, which the accounting assumes fresh")
        m_acc, part = trailing_partial(acc._entries)
        k = 0
        if part:
            if m % m_acc:
                raise DPBoundsError(
                    f"the accountant's history ends inside an epoch of {m_acc} steps, which does not fit the "
                    f"sampler's {m} batches per epoch: finish that epoch with its own sampler first")
            k = m // m_acc
        p_acc = part * k
        if drawn % m != p_acc:
            raise DPBoundsError(
                f"the sampler is {drawn % m} batches into its epoch {drawn // m}, but the accountant's history is "
                f"{p_acc} batches into its last epoch: attach the sampler before drawing from it, and restore "
                "both from the same checkpoint when resuming")
        self.k_epoch = k
        self.trained = drawn
        self.stale = False

    def advance(self, k: int) -> None:
        """Account one optimizer step over ``k`` batches (checks run before anything changes)."""
        if self.stale:
            self.sync()
        m = self.sampler._m
        t = self.trained
        if t % m == 0:
            if k < 1 or m % k:
                raise DPBoundsError(
                    f"{k} batches accumulated per optimizer step, with {m} batches per epoch: random allocation "
                    f"is accounted with k batches per step only when k divides M (then it is random allocation "
                    f"with M/k steps per epoch); choose the accumulation to divide {m}")
            self.k_epoch = k
        elif k != self.k_epoch:
            raise DPBoundsError(
                f"{k} batches accumulated in this step, {self.k_epoch} in the earlier steps of the epoch: an epoch "
                "must use one accumulation throughout (otherwise its steps are not random allocation)")
        t += k
        if t > self.sampler._drawn:
            raise DPBoundsError(
                f"the accountant has now counted {t} batches of the attached sampler, which has drawn only "
                f"{self.sampler._drawn}: the optimizer is fed from another loader (Opacus' Poisson loader, or a "
                "shuffled one), which this accountant does not cover; make_private(..., poisson_sampling=False) "
                "with DataLoader(dataset, batch_sampler=sampler)")
        self.trained = t


class DPBoundsRandomAllocationAccountant(_DPBoundsAccountant):
    """Opacus accountant ``"dpbounds_random_allocation"``: exact accounting of random allocation.

    Backed by :class:`dpbounds.RandomAllocationAccountant` (certified brackets).  The batches
    must come from a :class:`RandomAllocationBatchSampler` with M batches per epoch, each step
    recording sample rate 1/M; ``make_private(..., poisson_sampling=False)`` with
    ``DataLoader(dataset, batch_sampler=sampler)`` infers exactly that (``1 / len(data_loader)``).

    Training through Opacus' optimizer hook requires the sampler to be attached
    (:meth:`attach_sampler`; :func:`make_private_random_allocation` does it): the accountant then
    refuses a step whose batches cannot come from that sampler (another loader, a different M,
    an accumulation that splits an epoch unevenly), and the sampler never skips a batch it drew
    but training did not use.  Direct ``step()`` calls and assigned histories need no sampler.

    Gradient accumulation: with k batches accumulated per optimizer step (Opacus' hook passes
    ``sample_rate * k``), each step releases the sum over k random-allocation batches.  When k
    divides M and every step of an epoch accumulates k batches, the steps are exactly random
    allocation with M/k steps per epoch, accounted at sample rate k/M; anything else is refused.

    Noise multipliers outside the exact accountant's range [0.3, 20] (Opacus'
    ``get_noise_multiplier`` tries 20, 40, ... and small ones): above 20 they are accounted at 20
    (an upper bound: more noise is a post-processing of less); below 0.3 the whole history is
    bounded without the amplification by random allocation, each epoch being at most one Gaussian
    release (an upper bound, with a :class:`~dpbounds.PrecisionWarning`).  Both brackets have
    lower end 0.
    """

    _mechanism = "dpbounds_random_allocation"
    _kind = "random_allocation"

    def __init__(self) -> None:
        self._link: _SamplerLink | None = None
        self._sampler_record: dict[str, Any] | None = None
        super().__init__()

    def attach_sampler(self, sampler: RandomAllocationBatchSampler | None) -> None:
        """Account the batches of ``sampler`` (``None`` detaches).  See the class docstring."""
        if sampler is not None and not isinstance(sampler, RandomAllocationBatchSampler):
            raise DPBoundsError(f"sampler must be a RandomAllocationBatchSampler or None, got {type(sampler).__name__}")
        if self._link is not None:
            self._sampler_record = self._record()
            self._link.sampler._attach(None)
            self._link = None
        if sampler is None:
            return
        old = sampler._link
        if isinstance(old, _SamplerLink) and old.acc is not self:
            old.acc.attach_sampler(None)
        self._link = _SamplerLink(self, sampler)
        sampler._attach(self._link)

    @property
    def sampler(self) -> RandomAllocationBatchSampler | None:
        """The attached sampler, or None."""
        return None if self._link is None else self._link.sampler

    def _record(self) -> dict[str, Any] | None:
        if self._link is None:
            return self._sampler_record
        s = self._link.sampler
        return {"entropy": s._entropy, "rounds": s.rounds, "dataset_size": s.dataset_size,
                "trained": self._link.trained_batches()}

    def _history_replaced(self) -> None:
        if self._link is not None:
            self._link.invalidate()

    def _extra_state(self) -> dict[str, Any]:
        return {"sampler": self._record()}

    def _check_extra_state(self, state: Mapping[str, Any]) -> None:
        rec = state.get("sampler")
        if rec is None:
            return
        if not isinstance(rec, Mapping):
            raise DPBoundsError(f"state_dict['dpbounds']['sampler'] must be a mapping or None, got {rec!r}")
        for key in ("rounds", "dataset_size", "trained"):
            V.check_count(f"state_dict['dpbounds']['sampler']['{key}']", rec.get(key), minimum=0)

    def _load_extra_state(self, state: Mapping[str, Any]) -> None:
        rec = state.get("sampler")
        self._sampler_record = None if rec is None else dict(rec)
        if self._link is not None:
            self._link.invalidate()

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """The step hook Opacus attaches to the ``DPOptimizer`` (``make_private`` calls this).

        ``sample_rate`` must be 1/M (``1 / len(data_loader)`` for a loader on a
        :class:`RandomAllocationBatchSampler` with M batches per epoch).  Each optimizer step
        over k accumulated batches records one step at ``k / M`` (see the class docstring), after
        checking it against the attached sampler.
        """
        q = V.check_rate("sample_rate", sample_rate)
        check_rounds_rate(q)
        self._hook_rate = q
        if self._link is not None:
            self._link.invalidate()
        step = self.step

        def hook(optim: Any) -> None:
            k = optim.accumulated_iterations
            link = self._link
            if link is None:
                raise DPBoundsError(
                    "the random-allocation accountant accounts the batches of a RandomAllocationBatchSampler, and "
                    "none is attached: privacy_engine.accountant.attach_sampler(sampler) after make_private(..., "
                    "poisson_sampling=False) on DataLoader(dataset, batch_sampler=sampler); Opacus' default "
                    "Poisson loader goes with accountant='dpbounds_poisson'")
            link.advance(k)
            s = optim.noise_multiplier
            if k == 1 and s.__class__ is float and s == self._last_s and q == self._last_q:
                self._entries[-1][2] += 1  # step()'s fast path, inline
                return
            step(noise_multiplier=s, sample_rate=q if k == 1 else q * k)

        return hook


#: The accountants this module registers with Opacus, by name.
ACCOUNTANTS: dict[str, type[_DPBoundsAccountant]] = {
    DPBoundsRandomAllocationAccountant.mechanism(): DPBoundsRandomAllocationAccountant,
    DPBoundsPoissonAccountant.mechanism(): DPBoundsPoissonAccountant,
    DPBoundsRDPAccountant.mechanism(): DPBoundsRDPAccountant,
}


def register(force: bool = False) -> None:
    """Register the accountants of :data:`ACCOUNTANTS` with Opacus (done when this module is imported).

    Idempotent.  A different class already registered under one of the names raises
    :class:`~dpbounds.DPBoundsError`, unless ``force=True`` replaces it.
    """
    from opacus.accountants import create_accountant, register_accountant

    for name, cls in ACCOUNTANTS.items():
        try:
            register_accountant(name, cls)
        except ValueError:
            existing = type(create_accountant(name))
            same = existing.__module__ == cls.__module__ and existing.__qualname__ == cls.__qualname__
            if existing is cls:
                continue
            if not (same or force):
                raise DPBoundsError(f"Opacus already has an accountant registered as {name!r} "
                                    f"({existing.__module__}.{existing.__qualname__}); register(force=True) "
                                    "replaces it") from None
            register_accountant(name, cls, force=True)


register()


class PrivateTraining(NamedTuple):
    """What :func:`make_private_random_allocation` returns."""

    privacy_engine: Any
    module: Any
    optimizer: Any
    data_loader: Any
    sampler: RandomAllocationBatchSampler
    noise_multiplier: float
    #: Opacus' criterion wrapper for ``grad_sample_mode="ghost"``, else None
    criterion: Any = None


def make_private_random_allocation(*, module: Any, optimizer: Any, dataset: Any, batch_size: int, epochs: int,
                                   target_epsilon: float, target_delta: float, max_grad_norm: Any,
                                   privacy_engine: Any = None, seed: Any = None, collate_fn: Any = None,
                                   num_workers: int = 0, **make_private_kwargs: Any) -> PrivateTraining:
    """Private module, optimizer and random-allocation loader, calibrated to (epsilon, delta), in one call.

    1. M = len(dataset) // batch_size batches per epoch (expected batch N/M >= batch_size);
    2. the noise multiplier from :func:`dpbounds.calibrate_noise` for ``epochs`` epochs of random
       allocation (certified: the run's epsilon upper end is at most ``target_epsilon``);
    3. a ``DataLoader`` on a :class:`RandomAllocationBatchSampler` (``seed``), with Opacus'
       empty-batch collate around ``collate_fn``;
    4. ``privacy_engine.make_private(..., poisson_sampling=False)`` (a new
       ``PrivacyEngine(accountant="dpbounds_random_allocation")`` if none is given; other keyword
       arguments go to ``make_private``), and the sampler attached to its accountant.

    Train ``epochs`` passes over the returned loader; ``privacy_engine.get_epsilon(delta)`` is the
    certified epsilon so far.
    """
    from opacus import PrivacyEngine
    from opacus.data_loader import dtype_safe, shape_safe, wrap_collate_with_empty
    from torch.utils.data import DataLoader
    from torch.utils.data._utils.collate import default_collate

    from dpbounds.calibration import calibrate_noise

    n = V.check_count("len(dataset)", len(dataset), minimum=2)
    b = V.check_count("batch_size", batch_size, minimum=1, maximum=n)
    m = n // b
    if m < 2:
        raise DPBoundsError(f"batch_size must be at most len(dataset) // 2 = {n // 2} (random allocation needs "
                            f"M = len(dataset) // batch_size >= 2 batches per epoch), got {b}")
    e = V.check_count("epochs", epochs, minimum=1)
    engine = privacy_engine if privacy_engine is not None else PrivacyEngine(accountant="dpbounds_random_allocation")
    acc = engine.accountant
    if not isinstance(acc, DPBoundsRandomAllocationAccountant):
        raise DPBoundsError(f"privacy_engine must use accountant='dpbounds_random_allocation', "
                            f"got {type(acc).__name__}")
    if len(acc) > 0:
        raise DPBoundsError(f"privacy_engine's accountant already has {len(acc)} steps: the calibration is for a "
                            "fresh run (use calibrate_noise for the remaining budget and make_private)")
    sigma = calibrate_noise(target_epsilon, target_delta, sample_rate=1.0 / m, epochs=e)
    sampler = RandomAllocationBatchSampler(n, m, seed=seed)
    first = dataset[0]
    collate = wrap_collate_with_empty(
        collate_fn=collate_fn if collate_fn is not None else default_collate,
        sample_empty_shapes=[(0, *shape_safe(x)) for x in first], dtypes=[dtype_safe(x) for x in first])
    loader = DataLoader(dataset, batch_sampler=sampler, collate_fn=collate, num_workers=num_workers)
    made = engine.make_private(module=module, optimizer=optimizer, data_loader=loader, noise_multiplier=sigma,
                               max_grad_norm=max_grad_norm, poisson_sampling=False, **make_private_kwargs)
    acc.attach_sampler(sampler)
    if len(made) == 4:
        mod, opt, crit, dl = made
    else:
        (mod, opt, dl), crit = made, None
    return PrivateTraining(engine, mod, opt, dl, sampler, sigma, crit)
