"""Benchmarks: dpbounds inside Opacus, against Opacus' own PRV accountant, in one run.

Run:  PYTHONPATH=src python -m pytest bench/test_bench_integrations.py --benchmark-only -s
(skipped without torch and opacus).  Three figures:

1. the cost dpbounds adds to an Opacus training step: the optimizer's step hook (which calls the
   accountant's ``step``) for the dpbounds accountants and for Opacus' PRV accountant, and the
   ``optim.accumulated_iterations`` lookup that every one of those hooks makes, interleaved, best
   of several repeats (target: the hook and step <= 2 us);
2. ``get_epsilon`` in a training loop at 10^5 steps: cold, and after one more step (random
   allocation and Poisson, as the registered Opacus accountants serve them);
3. ``PrivacyEngine.make_private_with_epsilon`` for N = 60,000, B = 256, E = 10, (epsilon, delta) =
   (3, 1e-5): the dpbounds random-allocation accountant on the random-allocation loader, and
   Opacus' PRV accountant on its Poisson loader.
"""
from __future__ import annotations

import time
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
opacus = pytest.importorskip("opacus", reason="opacus is not installed")
torch.set_num_threads(1)

from opacus import PrivacyEngine  # noqa: E402
from opacus.accountants import create_accountant  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from dpbounds.integrations.opacus import RandomAllocationBatchSampler  # noqa: E402

pytestmark = [
    pytest.mark.filterwarnings("ignore:Secure RNG turned off:UserWarning"),
    # a bracket wider than its tolerance (its upper end stays certified): reported, not a failure here
    pytest.mark.filterwarnings("ignore::dpbounds.PrecisionWarning"),
    pytest.mark.filterwarnings("ignore:Optimal order is the largest alpha:UserWarning"),
]
DELTA = 1e-5


def _private_optimizer(accountant: str):
    """A DPOptimizer after one real step (per-sample gradients in place), and its engine."""
    n, m = 64, 4
    data = TensorDataset(torch.randn(n, 8), torch.randint(0, 2, (n,)))
    engine = PrivacyEngine(accountant=accountant)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    sampler = RandomAllocationBatchSampler(n, m, seed=0)
    loader = DataLoader(data, batch_sampler=sampler) if accountant == "dpbounds_random_allocation" \
        else DataLoader(data, batch_size=n // m)
    model, opt, loader = engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                                             data_loader=loader, noise_multiplier=1.0, max_grad_norm=1.0,
                                             poisson_sampling=accountant != "dpbounds_random_allocation")
    if accountant == "dpbounds_random_allocation":
        engine.accountant.attach_sampler(sampler)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, y = next(iter(loader))
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    if accountant == "dpbounds_random_allocation":
        sampler._drawn = 10 ** 9 * m  # as if the sampler had drawn every batch the timing loop accounts
    return engine, opt


def _best(fn, arg, calls: int = 20_000, repeats: int = 7) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(arg)
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


class _Stub:
    """What the hook reads from a DPOptimizer, as plain attributes: the hook's own cost alone."""

    accumulated_iterations = 1
    noise_multiplier = 1.0


def test_step_hook_cost():
    """The hook Opacus calls after every noisy step, dpbounds' and Opacus' PRV, interleaved.

    With the real DPOptimizer the hook also pays Opacus' ``accumulated_iterations`` property (a
    pass over the parameters), the same for every accountant; with a stub that has the two
    attributes as plain values, the hook's and the accountant's own cost is what remains.
    """
    hooks = {}
    for name in ("dpbounds_random_allocation", "dpbounds_poisson", "prv"):
        engine, opt = _private_optimizer(name)
        hooks[name] = (opt.step_hook, opt, engine.accountant)
    bare = lambda o: o.accumulated_iterations  # noqa: E731  (what every hook looks up)
    stub = _Stub()
    real: dict[str, list[float]] = {k: [] for k in (*hooks, "accumulated_iterations")}
    alone: dict[str, list[float]] = {k: [] for k in hooks}
    for _ in range(3):  # interleaved: ours, theirs, the bare lookup, several times; best of each
        for name, (hook, o, _) in hooks.items():
            real[name].append(_best(hook, o))
            alone[name].append(_best(hook, stub))
        real["accumulated_iterations"].append(_best(bare, hooks["prv"][1]))
    for _, _, acc in hooks.values():
        assert sum(n for _, _, n in acc.history) > 200_000  # every call was accounted
    best_real = {k: min(v) for k, v in real.items()}
    best_alone = {k: min(v) for k, v in alone.items()}
    print("\nOpacus step hook, best of 21 x 20,000 calls (interleaved):")
    print(f"  {'accountant':28s} {'hook + step':>12s} {'with DPOptimizer':>18s}")
    for k in hooks:
        print(f"  {k:28s} {best_alone[k] * 1e6:9.3f} us {best_real[k] * 1e6:15.3f} us")
    print(f"  {'accumulated_iterations alone':28s} {'':12s} {best_real['accumulated_iterations'] * 1e6:15.3f} us")
    ratio = best_alone["dpbounds_random_allocation"] / best_alone["prv"]
    print(f"  hook + step, random allocation / PRV: {ratio:.2f}")
    assert best_alone["dpbounds_random_allocation"] <= 2e-6 and best_alone["dpbounds_poisson"] <= 2e-6


def _loop_accountant(name: str, steps: int):
    acc = create_accountant(name)
    acc.history = [(1.0, 1 / 234, steps)]
    return acc


@pytest.mark.parametrize("name", ["dpbounds_random_allocation", "dpbounds_poisson"])
def test_get_epsilon_after_one_more_step_at_1e5_steps(name):
    acc = _loop_accountant(name, 100_000)
    t0 = time.perf_counter()
    cold = acc.get_epsilon_bracket(DELTA)
    t_cold = time.perf_counter() - t0
    acc.step(noise_multiplier=1.0, sample_rate=1 / 234)
    t0 = time.perf_counter()
    after_step = acc.get_epsilon_bracket(DELTA)
    t_step = time.perf_counter() - t0
    for _ in range(233):  # to the end of the epoch
        acc.step(noise_multiplier=1.0, sample_rate=1 / 234)
    t0 = time.perf_counter()
    after_epoch = acc.get_epsilon_bracket(DELTA)
    t_epoch = time.perf_counter() - t0
    # the same history from scratch gives the same certified bracket
    fresh = _loop_accountant(name, 100_000 + 234).get_epsilon_bracket(DELTA)
    assert tuple(after_epoch) == tuple(fresh)
    assert cold.upper <= after_step.upper <= after_epoch.upper
    print(f"\n{name} at 1e5 steps (sigma 1, q 1/234): get_epsilon cold {t_cold:.3f} s, after one more step "
          f"{t_step:.3f} s, after one more epoch {t_epoch:.3f} s; epsilon {cold.upper:.4f} "
          f"(bracket {cold.lower:.4f}..{cold.upper:.4f}, tolerance met: {cold.tolerance_met})")


def _make_private_with_epsilon(accountant: str, n: int = 60_000, b: int = 256, epochs: int = 10) -> float:
    data = TensorDataset(torch.randn(n, 4), torch.randint(0, 2, (n,)))
    model = nn.Linear(4, 2)
    engine = PrivacyEngine(accountant=accountant)
    if accountant == "dpbounds_random_allocation":
        loader, poisson = DataLoader(data, batch_sampler=RandomAllocationBatchSampler(n, n // b, seed=0)), False
    else:
        loader, poisson = DataLoader(data, batch_size=b), True
    _, opt, _ = engine.make_private_with_epsilon(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
        target_epsilon=3.0, target_delta=DELTA, epochs=epochs, max_grad_norm=1.0, poisson_sampling=poisson)
    return float(opt.noise_multiplier)


def test_make_private_with_epsilon_against_prv():
    out = {}
    for name in ("dpbounds_random_allocation", "prv"):
        t0 = time.perf_counter()
        sigma = _make_private_with_epsilon(name)
        out[name] = (sigma, time.perf_counter() - t0)
    print("\nmake_private_with_epsilon, N = 60000, B = 256, E = 10, (3, 1e-5):")
    for name, (sigma, t) in out.items():
        print(f"  {name:28s} sigma = {sigma:.4f}   {t:6.2f} s")
    print(f"  time ratio dpbounds / prv: {out['dpbounds_random_allocation'][1] / out['prv'][1]:.2f}")
    assert 0.3 < out["dpbounds_random_allocation"][0] < out["prv"][0]
