"""dpbounds inside Opacus, tested with the real packages (torch, opacus).

The registered accountants follow Opacus' conventions (history, state_dict with mechanism, len,
get_optimizer_hook_fn) and work with PrivacyEngine (make_private, make_private_with_epsilon,
get_epsilon, save/load_checkpoint), get_noise_multiplier, BatchMemoryManager and gradient
accumulation; their answers are the dpbounds accountants' certified brackets; bad pairings and
tampered states raise DPBoundsError naming what is wrong.
"""
from __future__ import annotations

import io
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (the Opacus integration needs it)")
opacus = pytest.importorskip("opacus", reason="opacus is not installed (pip install 'dpbounds[opacus]')")
torch.set_num_threads(1)  # tiny models: threads only contend for the cores

from opacus import PrivacyEngine  # noqa: E402
from opacus.accountants import create_accountant, register_accountant  # noqa: E402
from opacus.accountants.utils import get_noise_multiplier  # noqa: E402
from opacus.utils.batch_memory_manager import BatchMemoryManager  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

import dpbounds  # noqa: E402
from dpbounds import DPBoundsError, PrecisionWarning  # noqa: E402
from dpbounds.integrations import opacus as dio  # noqa: E402
from dpbounds.rdp import RDPAccountant  # noqa: E402

pytestmark = [
    pytest.mark.filterwarnings("ignore:Secure RNG turned off:UserWarning"),
    pytest.mark.filterwarnings("ignore:Full backward hook is firing:UserWarning"),
]

NAMES = ["dpbounds_random_allocation", "dpbounds_poisson", "dpbounds_rdp"]
DELTA = 1e-5


# ---------------------------------------------------------------------------- helpers
def _data(n: int = 120, d: int = 4, seed: int = 0) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    y = (x[:, 0] > 0).long()
    return TensorDataset(x, y, torch.arange(n))  # the third column: each example's index


def _model(d: int = 4) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(d, 8), nn.ReLU(), nn.Linear(8, 2))


class _Run:
    """A private training setup on the random-allocation sampler (make_private + attach)."""

    def __init__(self, n: int = 120, m: int = 6, sigma: float = 1.0, seed: int = 0, attach: bool = True,
                 engine: PrivacyEngine | None = None, poisson_sampling: bool = False) -> None:
        self.data = _data(n)
        self.sampler = dio.RandomAllocationBatchSampler(n, m, seed=seed)
        loader = DataLoader(self.data, batch_sampler=self.sampler)
        self.engine = engine or PrivacyEngine(accountant="dpbounds_random_allocation")
        model = _model()
        self.model, self.opt, self.loader = self.engine.make_private(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
            noise_multiplier=sigma, max_grad_norm=1.0, poisson_sampling=poisson_sampling)
        if attach:
            self.engine.accountant.attach_sampler(self.sampler)
        self.trained: list[int] = []
        self.loss = nn.CrossEntropyLoss()

    def train(self, batches: int | None = None, loader=None) -> None:
        for i, (x, y, idx) in enumerate(loader or self.loader):
            if batches is not None and i >= batches:
                break
            self.opt.zero_grad()
            self.loss(self.model(x), y).backward()
            self.opt.step()
            self.trained.append(len(idx))


def _core(kind: str, history):
    acc = {"dpbounds_random_allocation": dpbounds.RandomAllocationAccountant,
           "dpbounds_poisson": dpbounds.PoissonAccountant, "dpbounds_rdp": RDPAccountant}[kind]()
    state = acc.state_dict()
    state["history"] = [list(e) for e in history]
    acc.load_state_dict(state)
    return acc


# ---------------------------------------------------------------------------- registration, conventions
@pytest.mark.parametrize("name", NAMES)
def test_registered_and_following_opacus_conventions(name):
    acc = create_accountant(name)
    assert isinstance(acc, opacus.accountants.IAccountant)
    assert type(acc).mechanism() == name == acc.mechanism()
    assert acc.history == [] and len(acc) == 0 and acc.get_epsilon(DELTA) == 0.0
    q = 1 / 50
    for _ in range(3):
        acc.step(noise_multiplier=1.5, sample_rate=q)
    acc.step(noise_multiplier=1.2, sample_rate=q)
    assert acc.history == [(1.5, q, 3), (1.2, q, 1)] and len(acc) == 4
    state = acc.state_dict()
    assert state["mechanism"] == name and state["history"] == acc.history
    other = create_accountant(name)
    other.load_state_dict(state)
    assert other.history == acc.history and other.get_epsilon(DELTA) == acc.get_epsilon(DELTA)
    assert callable(acc.get_optimizer_hook_fn(sample_rate=q))


@pytest.mark.parametrize("name", NAMES)
def test_epsilon_is_the_certified_upper_end_of_the_dpbounds_accountant(name):
    acc = create_accountant(name)
    history = [(1.1, 1 / 40, 100), (0.9, 1 / 40, 60), (1.3, 1 / 20, 25)]
    acc.history = history
    br = acc.get_epsilon_bracket(DELTA)
    ref = _core(name, history).get_epsilon_bracket(DELTA)
    assert (br.lower, br.upper) == (ref.lower, ref.upper)
    assert acc.get_epsilon(DELTA) == br.upper and br.lower <= br.upper
    if name != "dpbounds_rdp":
        assert br.lower > 0 and br.tolerance_met
    d = acc.get_delta_bracket(br.upper)
    assert d.lower <= DELTA and acc.get_delta(br.upper) == d.upper


def test_register_is_idempotent_and_refuses_a_foreign_class():
    dio.register()
    assert type(create_accountant("dpbounds_poisson")) is dio.DPBoundsPoissonAccountant

    class Other(opacus.accountants.RDPAccountant):
        pass

    register_accountant("dpbounds_poisson", Other, force=True)
    try:
        with pytest.raises(DPBoundsError, match="dpbounds_poisson"):
            dio.register()
        dio.register(force=True)
        assert type(create_accountant("dpbounds_poisson")) is dio.DPBoundsPoissonAccountant
    finally:
        register_accountant("dpbounds_poisson", dio.DPBoundsPoissonAccountant, force=True)


# ---------------------------------------------------------------------------- validation
TAMPERED = [
    ([(1.0, 0.02, -3)], r"history\[0\] num_steps"),
    ([(1.0, 0.02, 0)], r"history\[0\] num_steps"),
    ([(1.0, 0.02, 2.5)], r"history\[0\] num_steps"),
    ([(1.0, 0.02, True)], r"history\[0\] num_steps"),
    ([(1.0, 0.02, 3), (math.nan, 0.02, 3)], r"history\[1\] noise_multiplier"),
    ([(-1.0, 0.02, 3)], r"history\[0\] noise_multiplier"),
    ([("1.0", 0.02, 3)], r"history\[0\] noise_multiplier"),
    ([(None, 0.02, 3)], r"history\[0\] noise_multiplier"),
    ([(1.0, math.inf, 3)], r"history\[0\] sample_rate"),
    ([(1.0, 0.0, 3)], r"history\[0\] sample_rate"),
    ([(1.0, 0.02)], r"history\[0\] must be a \(noise_multiplier"),
    (["abc"], r"history\[0\] must be a \(noise_multiplier"),
    ("abc", r"history must be a list"),
    (None, r"history must be a list"),
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad, field", TAMPERED)
def test_tampered_history_is_refused_on_assignment_and_on_load(name, bad, field):
    acc = create_accountant(name)
    acc.history = [(1.0, 0.02, 7)]
    with pytest.raises(DPBoundsError, match=field):
        acc.history = bad
    state = acc.state_dict()
    with pytest.raises(DPBoundsError, match=field.replace("history", r"state_dict\['history'\]")):
        acc.load_state_dict({**state, "history": bad})
    assert acc.history == [(1.0, 0.02, 7)]  # nothing changed


def test_random_allocation_history_needs_rates_one_over_m():
    acc = create_accountant("dpbounds_random_allocation")
    with pytest.raises(DPBoundsError, match=r"history\[0\] sample_rate: random allocation takes sample_rate = 1/M"):
        acc.history = [(1.0, 0.3, 3)]
    with pytest.raises(DPBoundsError, match=r"history\[0\] sample_rate must be >= 1e-9"):
        acc.history = [(1.0, 1 / 2e9, 3)]
    with pytest.raises(DPBoundsError, match="sample_rate"):
        acc.step(noise_multiplier=1.0, sample_rate=0.3)
    assert acc.history == []


@pytest.mark.parametrize("name", NAMES)
def test_state_of_another_mechanism_or_malformed_is_refused(name):
    acc = create_accountant(name)
    acc.history = [(1.0, 0.02, 7)]
    good = acc.state_dict()
    other = "rdp" if name != "dpbounds_rdp" else "dpbounds_poisson"
    bad_states = [
        ({**good, "mechanism": other}, "mechanism"),
        ({k: v for k, v in good.items() if k != "mechanism"}, "mechanism"),
        ({k: v for k, v in good.items() if k != "history"}, "history"),
        ({}, "non-empty mapping"),
        (None, "non-empty mapping"),
        ({**good, "dpbounds": {**good["dpbounds"], "tolerance": 2.0}}, r"\['tolerance'\]"),
        ({**good, "dpbounds": {**good["dpbounds"], "max_lattice": 2 ** 40}}, r"\['max_lattice'\]"),
        ({**good, "dpbounds": {**good["dpbounds"], "version": 7}}, r"\['dpbounds'\]"),
    ]
    for state, field in bad_states:
        with pytest.raises(DPBoundsError, match=field):
            acc.load_state_dict(state)
    assert acc.history == [(1.0, 0.02, 7)]
    # Opacus' own state of the same mechanism name (no "dpbounds" entry) loads
    acc.load_state_dict({"history": [(2.0, 0.02, 5)], "mechanism": name})
    assert acc.history == [(2.0, 0.02, 5)]


def test_opacus_rdp_state_is_not_loaded_into_dpbounds():
    theirs = opacus.accountants.RDPAccountant()
    theirs.step(noise_multiplier=1.0, sample_rate=0.01)
    with pytest.raises(DPBoundsError, match="mechanism.*'rdp'"):
        create_accountant("dpbounds_rdp").load_state_dict(theirs.state_dict())


# ---------------------------------------------------------------------------- get_noise_multiplier
@pytest.mark.parametrize("name, sampling, accountant", [
    ("dpbounds_random_allocation", "random_allocation", "exact"),
    ("dpbounds_poisson", "poisson", "exact"),
    ("dpbounds_rdp", "poisson", "rdp"),
])
def test_get_noise_multiplier_takes_the_accountants(name, sampling, accountant):
    """Opacus assigns history = [(sigma, q, steps)] and bisects on get_epsilon: its sigma meets the
    target (certified upper end) and is within its tolerance of dpbounds' own calibration."""
    q, epochs, target = 1 / 20, 3, 3.0
    sigma = get_noise_multiplier(target_epsilon=target, target_delta=DELTA, sample_rate=q, epochs=epochs,
                                 accountant=name)
    steps = int(epochs / q)
    acc = create_accountant(name)
    acc.history = [(sigma, q, steps)]
    assert acc.get_epsilon(DELTA) <= target
    ours = dpbounds.calibrate_noise(target, DELTA, sample_rate=q, steps=steps, sampling=sampling,
                                    accountant=accountant)
    assert ours <= sigma * (1 + 1e-3)        # ours is the smallest certified sigma (rtol 1e-3)
    acc.history = [(sigma * 0.97, q, steps)]
    assert acc.get_epsilon(DELTA) > target - 0.01 - 0.15  # Opacus stops within 0.01 of the target


def test_noise_multipliers_outside_the_exact_range():
    acc = create_accountant("dpbounds_random_allocation")
    q, steps = 1 / 20, 40
    acc.history = [(20.0, q, steps)]
    at20 = acc.get_epsilon_bracket(DELTA)
    acc.history = [(40, q, steps)]     # an int, as Opacus' bisection produces
    with pytest.warns(PrecisionWarning, match="above 20"):
        br = acc.get_epsilon_bracket(DELTA)
    assert br.lower == 0.0 and br.upper == at20.upper and not br.tolerance_met
    acc.history = [(0.1, q, steps)]
    with pytest.warns(PrecisionWarning, match="below the exact random-allocation range"):
        br = acc.get_epsilon_bracket(DELTA)
    assert br.lower == 0.0 and br.upper == pytest.approx(
        dpbounds.gdp_epsilon(DELTA, math.sqrt(2) / 0.1), rel=1e-11)  # 2 epochs, one Gaussian each


@pytest.mark.parametrize("sigma, m, epochs, partial", [(0.3, 10, 1, 0), (0.5, 50, 3, 7), (1.0, 20, 2, 19),
                                                        (2.0, 100, 4, 0), (0.4, 3, 2, 1)])
def test_unamplified_bound_is_above_the_certified_exact_bracket(sigma, m, epochs, partial):
    """The bound used below sigma = 0.3 (each epoch at most one Gaussian release) is an upper bound:
    checked where the exact accountant also applies, against its certified lower end."""
    from dpbounds.integrations._common import HistoryFeed

    hist = [[sigma, 1 / m, epochs * m + partial]]
    exact = _core("dpbounds_random_allocation", hist).get_epsilon_bracket(DELTA)
    with pytest.warns(PrecisionWarning):
        bound = HistoryFeed("random_allocation", 2e-3, 2 ** 21)._unamplified(hist, "epsilon", DELTA)
    assert bound.upper >= exact.lower
    assert bound.lower == 0.0


# ---------------------------------------------------------------------------- PrivacyEngine
def test_make_private_trains_and_accounts_every_step():
    run = _Run(n=120, m=6, sigma=1.0)
    assert run.engine.accountant.sampler is run.sampler
    for _ in range(2):
        run.train()
    acc = run.engine.accountant
    assert acc.history == [(1.0, 1 / 6, 12)] and len(acc) == 12
    assert sum(run.trained) == 2 * 120
    eps = run.engine.get_epsilon(DELTA)
    assert eps == dpbounds.RandomAllocationAccountant(1.0, 6, 2).get_epsilon(DELTA)


def test_opacus_infers_sample_rate_one_over_m():
    run = _Run(n=100, m=7, attach=False)
    assert run.engine.accountant._hook_rate == 1 / 7
    assert len(run.loader) == 7


def test_make_private_with_epsilon_calibrates_through_the_accountant():
    data = _data(200)
    sampler = dio.RandomAllocationBatchSampler(200, 10, seed=1)
    engine = PrivacyEngine(accountant="dpbounds_random_allocation")
    model = _model()
    model, opt, loader = engine.make_private_with_epsilon(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=DataLoader(data, batch_sampler=sampler), target_epsilon=4.0, target_delta=DELTA, epochs=2,
        max_grad_norm=1.0, poisson_sampling=False)
    engine.accountant.attach_sampler(sampler)
    sigma = opt.noise_multiplier
    run_loss = nn.CrossEntropyLoss()
    for _ in range(2):
        for x, y, _i in loader:
            opt.zero_grad()
            run_loss(model(x), y).backward()
            opt.step()
    assert engine.accountant.history == [(sigma, 1 / 10, 20)]
    assert engine.get_epsilon(DELTA) <= 4.0


def test_save_and_load_checkpoint_resume_the_same_run():
    ref = _Run(n=120, m=6, seed=4)
    ref.train()
    ref.train(batches=3)
    ref.train()
    # the same run, interrupted after 9 steps: checkpoint the engine (accountant) and the sampler
    a = _Run(n=120, m=6, seed=4)
    a.train()
    a.train(batches=3)
    buf = io.BytesIO()
    a.engine.save_checkpoint(path=buf, module=a.model, optimizer=a.opt,
                             checkpoint_dict={"sampler": a.sampler.state_dict()})
    buf.seek(0)
    b = _Run(n=120, m=6, seed=99)     # a new process: another seed, the checkpoint restores it
    ckpt = b.engine.load_checkpoint(path=buf, module=b.model, optimizer=b.opt)
    b.sampler.load_state_dict(ckpt["sampler"])
    b.train()
    assert a.engine.accountant.history == [(1.0, 1 / 6, 9)]
    assert b.engine.accountant.history == ref.engine.accountant.history == [(1.0, 1 / 6, 12)]
    assert a.trained + b.trained == ref.trained
    assert b.engine.get_epsilon(DELTA) == ref.engine.get_epsilon(DELTA)


def test_resuming_with_a_reset_sampler_is_refused():
    a = _Run(n=120, m=6, seed=4)
    a.train()
    state = a.engine.accountant.state_dict()
    b = _Run(n=120, m=6, seed=4)       # the same seed, its state not restored: epoch 0 again
    b.engine.accountant.load_state_dict(state)
    with pytest.raises(DPBoundsError, match="same checkpoint"):
        b.train()


def test_poisson_loader_with_the_random_allocation_accountant_is_refused():
    run = _Run(n=120, m=6, poisson_sampling=True)  # Opacus swaps in its Poisson loader
    with pytest.raises(DPBoundsError, match="another loader"):
        run.train(batches=1)
    assert run.engine.accountant.history == []


def test_training_without_an_attached_sampler_is_refused():
    run = _Run(n=120, m=6, attach=False)
    with pytest.raises(DPBoundsError, match="attach_sampler"):
        run.train(batches=1)
    assert run.engine.accountant.history == []


def test_a_sampler_with_another_m_is_refused():
    run = _Run(n=120, m=6, attach=False)
    run.engine.accountant.attach_sampler(dio.RandomAllocationBatchSampler(120, 12, seed=0))
    with pytest.raises(DPBoundsError, match="1/6.*12 batches per epoch"):
        run.train(batches=1)


def test_a_new_sampler_mid_epoch_is_refused():
    run = _Run(n=120, m=6)
    run.train(batches=2)
    other = dio.RandomAllocationBatchSampler(120, 6, seed=5)
    run.engine.accountant.attach_sampler(other)
    with pytest.raises(DPBoundsError, match="batches into"):
        run.train(loader=DataLoader(run.data, batch_sampler=other), batches=1)


def test_breaking_out_of_an_epoch_continues_it():
    run = _Run(n=120, m=6, seed=2)
    run.train(batches=2)
    run.train()                       # the rest of epoch 0, not a new epoch
    assert len(run.trained) == 6 and sum(run.trained) == 120
    assert run.sampler.epoch == 1 and run.sampler.position == 0


def test_prefetched_batches_are_not_skipped():
    """A loader that drew batches training never used (a consumed batch without a step, or
    workers' prefetch) redraws them: the trained batches are still whole epochs."""
    run = _Run(n=120, m=6, seed=3)
    seen = []
    for i, (x, y, idx) in enumerate(run.loader):
        if i == 2:
            break                     # batch 2 was drawn, never trained on
        run.opt.zero_grad()
        nn.CrossEntropyLoss()(run.model(x), y).backward()
        run.opt.step()
        seen.append(idx.tolist())
    assert run.sampler.batches_drawn == 3
    loader = DataLoader(run.data, batch_sampler=run.sampler, num_workers=2, prefetch_factor=2)
    for x, y, idx in loader:
        run.opt.zero_grad()
        nn.CrossEntropyLoss()(run.model(x), y).backward()
        run.opt.step()
        seen.append(idx.tolist())
    assert sorted(i for b in seen for i in b) == list(range(120))
    assert [len(b) for b in seen] == [len(b) for b in run.sampler.epoch_batches(0)]
    assert run.engine.accountant.history == [(1.0, 1 / 6, 6)]


def test_batch_memory_manager_steps_once_per_logical_batch():
    ref = _Run(n=120, m=6, seed=8)
    ref.train()
    run = _Run(n=120, m=6, seed=8)
    with BatchMemoryManager(data_loader=run.loader, max_physical_batch_size=7, optimizer=run.opt) as loader:
        run.train(loader=loader)
    assert max(run.trained) <= 7 and sum(run.trained) == 120
    assert run.engine.accountant.history == ref.engine.accountant.history == [(1.0, 1 / 6, 6)]


def _accumulate(run: _Run, k_of_step):
    """Train with gradient accumulation: k_of_step(i) batches before the i-th optimizer step."""
    it = iter(run.loader)
    i = 0
    run.opt.zero_grad()
    while True:
        k = k_of_step(i)
        for _ in range(k):
            try:
                x, y, _idx = next(it)
            except StopIteration:
                return
            nn.CrossEntropyLoss()(run.model(x), y).backward()
        run.opt.step()
        run.opt.zero_grad()
        i += 1


def test_gradient_accumulation_dividing_m_is_random_allocation_with_m_over_k():
    run = _Run(n=120, m=6, seed=1)
    _accumulate(run, lambda i: 2)
    _accumulate(run, lambda i: 3)     # a new epoch may use another k dividing M
    acc = run.engine.accountant
    assert acc.history == [(1.0, 2 / 6, 3), (1.0, 3 / 6, 2)]
    ref = dpbounds.RandomAllocationAccountant()
    ref.load_state_dict({**ref.state_dict(), "history": [[1.0, 1 / 3, 3], [1.0, 1 / 2, 2]]})
    assert acc.get_epsilon(DELTA) == ref.get_epsilon(DELTA)


def test_gradient_accumulation_not_dividing_m_or_changing_mid_epoch_is_refused():
    run = _Run(n=120, m=6, seed=1)
    with pytest.raises(DPBoundsError, match="k divides M"):
        _accumulate(run, lambda i: 4)
    run = _Run(n=120, m=6, seed=1)
    with pytest.raises(DPBoundsError, match="one accumulation throughout"):
        _accumulate(run, lambda i: 1 if i == 0 else 2)
    assert run.engine.accountant.history == [(1.0, 1 / 6, 1)]


@pytest.mark.parametrize("name", ["dpbounds_poisson", "dpbounds_rdp"])
def test_poisson_accountants_train_and_refuse_accumulation(name):
    data = _data(120)
    engine = PrivacyEngine(accountant=name)
    model = _model()
    model, opt, loader = engine.make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=DataLoader(data, batch_size=20), noise_multiplier=1.0, max_grad_norm=1.0)
    for x, y, _ in loader:
        opt.zero_grad()
        nn.CrossEntropyLoss()(model(x), y).backward()
        opt.step()
    assert engine.accountant.history == [(1.0, 1 / 6, 6)]
    assert engine.get_epsilon(DELTA) == _core(name, [(1.0, 1 / 6, 6)]).get_epsilon(DELTA)
    hook = engine.accountant.get_optimizer_hook_fn(sample_rate=1 / 6)

    class TwoBatches:
        accumulated_iterations = 2
        noise_multiplier = 1.0

    with pytest.raises(DPBoundsError, match="2 batches were accumulated"):
        hook(TwoBatches())


def test_make_private_random_allocation_in_one_call():
    data = _data(200)
    model = _model()
    made = dio.make_private_random_allocation(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), dataset=data, batch_size=20,
        epochs=2, target_epsilon=3.0, target_delta=DELTA, max_grad_norm=1.0, seed=0)
    assert made.sampler.rounds == 10 and made.privacy_engine.accountant.sampler is made.sampler
    assert made.noise_multiplier == dpbounds.calibrate_noise(3.0, DELTA, dataset_size=200, batch_size=20,
                                                             epochs=2)
    for _ in range(2):
        for x, y, _ in made.data_loader:
            made.optimizer.zero_grad()
            nn.CrossEntropyLoss()(made.module(x), y).backward()
            made.optimizer.step()
    br = made.privacy_engine.accountant.get_epsilon_bracket(DELTA)
    assert len(made.privacy_engine.accountant) == 20 and br.upper <= 3.0


def test_one_call_helper_takes_empty_batches():
    """N/M = 1.5 examples per batch: empty batches happen; the loader builds them, the step is taken."""
    data = _data(12)
    model = _model()
    made = dio.make_private_random_allocation(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), dataset=data, batch_size=1,
        epochs=1, target_epsilon=8.0, target_delta=1e-3, max_grad_norm=1.0, seed=3)
    sizes = []
    for x, y, idx in made.data_loader:
        made.optimizer.zero_grad()
        nn.CrossEntropyLoss(reduction="sum")(made.module(x), y).backward()  # 0 for an empty batch
        made.optimizer.step()
        sizes.append(len(idx))
    assert 0 in sizes and len(sizes) == 12 and sum(sizes) == 12
    assert len(made.privacy_engine.accountant) == 12


@pytest.mark.parametrize("kwargs, field", [
    ({"batch_size": 70}, "batch_size"), ({"batch_size": 0}, "batch_size"), ({"epochs": 0}, "epochs"),
    ({"target_epsilon": -1.0}, "target_epsilon"),
])
def test_one_call_helper_names_bad_arguments(kwargs, field):
    model = _model()
    args = dict(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), dataset=_data(120),
                batch_size=20, epochs=1, target_epsilon=3.0, target_delta=DELTA, max_grad_norm=1.0)
    with pytest.raises(DPBoundsError, match=field):
        dio.make_private_random_allocation(**{**args, **kwargs})


def test_one_call_helper_refuses_another_accountant():
    model = _model()
    with pytest.raises(DPBoundsError, match="dpbounds_random_allocation"):
        dio.make_private_random_allocation(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), dataset=_data(120), batch_size=20,
            epochs=1, target_epsilon=3.0, target_delta=DELTA, max_grad_norm=1.0,
            privacy_engine=PrivacyEngine(accountant="prv"))


def test_hook_adds_no_per_step_work_beyond_a_comparison():
    """The steady state of a training loop: equal steps only increment the last history entry."""
    acc = create_accountant("dpbounds_poisson")
    for _ in range(1000):
        acc.step(noise_multiplier=1.0, sample_rate=0.01)
    assert acc.history == [(1.0, 0.01, 1000)] and len(acc._entries) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(acc.get_epsilon(DELTA))
