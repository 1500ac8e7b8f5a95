"""RandomAllocationBatchSampler: random allocation for torch.utils.data.DataLoader.

Each example lands in exactly one of the M batches of every epoch; batch sizes follow the
multinomial law (seeded Monte Carlo against the binomial pmf and the multinomial covariance);
epochs are never cut short; a resumed sampler yields exactly what the uninterrupted one does.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (the PyTorch integration needs it)")
torch.set_num_threads(1)  # tiny models: threads only contend for the cores

from dpbounds import DPBoundsError  # noqa: E402
from dpbounds.integrations.pytorch import RandomAllocationBatchSampler  # noqa: E402


def _epochs(sampler: RandomAllocationBatchSampler, k: int) -> list[list[list[int]]]:
    return [list(sampler) for _ in range(k)]


def test_every_example_in_exactly_one_batch_per_epoch():
    n, m = 1003, 17
    sampler = RandomAllocationBatchSampler(n, m, seed=5)
    assert len(sampler) == m and sampler.sample_rate == 1 / m
    seen = []
    for epoch in _epochs(sampler, 6):
        assert len(epoch) == m
        flat = [i for b in epoch for i in b]
        assert sorted(flat) == list(range(n))          # exactly once
        assert all(isinstance(i, int) for i in flat)
        seen.append([len(b) for b in epoch])
    assert len({tuple(s) for s in seen}) == 6           # fresh allocation every epoch
    assert sampler.epoch == 6 and sampler.position == 0


def test_batch_sizes_follow_the_multinomial_law():
    """Seeded MC: sizes Binomial(N, 1/M) (chi-square over the pooled sizes), covariance -N/M^2,
    and every example's batch uniform over the M batches."""
    from scipy import stats

    n, m, epochs = 40, 4, 3000
    sampler = RandomAllocationBatchSampler(n, m, seed=20261129)
    sizes = np.empty((epochs, m))
    where = np.zeros((n, m))
    for e in range(epochs):
        for j, b in enumerate(sampler):
            sizes[e, j] = len(b)
            where[b, j] += 1
    assert (sizes.sum(axis=1) == n).all()
    # pooled batch sizes against Binomial(n, 1/m), bins with expected count >= 5
    k = np.arange(n + 1)
    expected = stats.binom.pmf(k, n, 1 / m) * sizes.size
    keep = expected >= 5
    observed = np.array([(sizes == v).sum() for v in k])
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    exp *= obs.sum() / exp.sum()
    assert stats.chisquare(obs, exp).pvalue > 1e-4
    # multinomial: Cov(S_i, S_j) = -n/m^2 for i != j, Var = n (1/m)(1 - 1/m)
    cov = np.cov(sizes.T)
    se_var = n * (1 / m) * (1 - 1 / m) * math.sqrt(2 / epochs) * 4  # loose, 4 standard errors
    assert abs(cov[0, 0] - n / m * (1 - 1 / m)) < se_var
    off = cov[~np.eye(m, dtype=bool)]
    assert np.all(np.abs(off + n / m ** 2) < 4 * math.sqrt((n / m) ** 2 / epochs) + 0.2)
    # each example's batch: uniform over the m batches
    assert stats.chisquare(where.sum(axis=0)).pvalue > 1e-4
    for row in where[:5]:
        assert stats.chisquare(row).pvalue > 1e-4


def test_resume_equals_uninterrupted():
    n, m = 250, 7
    ref = RandomAllocationBatchSampler(n, m, seed=3)
    stream = [b for epoch in _epochs(ref, 4) for b in epoch]
    got = []
    s = RandomAllocationBatchSampler(n, m, seed=3)
    cuts = [3, 7, 4, 9]  # stop mid-epoch, across epoch ends; save and resume in a new sampler each time
    for c in cuts:
        it = iter(s)
        for _ in range(c):
            try:
                got.append(next(it))
            except StopIteration:  # epoch end: the next pass starts the next epoch
                it = iter(s)
                got.append(next(it))
        state = s.state_dict()
        s = RandomAllocationBatchSampler(n, m)       # another seed: the state carries the seed
        s.load_state_dict(state)
    while len(got) < len(stream):
        got.extend(s)
    assert got == stream


def test_breaking_out_continues_the_same_epoch():
    s = RandomAllocationBatchSampler(100, 5, seed=1)
    full = RandomAllocationBatchSampler(100, 5, seed=1).epoch_batches(0)
    first = []
    for b in s:
        first.append(b)
        if len(first) == 2:
            break
    rest = list(s)       # a new pass yields the rest of epoch 0, not a new epoch
    assert first + rest == full
    assert s.epoch == 1 and s.position == 0


def test_seed_reproduces_and_distinguishes():
    a = RandomAllocationBatchSampler(300, 6, seed=11)
    b = RandomAllocationBatchSampler(300, 6, seed=np.random.SeedSequence(11))
    c = RandomAllocationBatchSampler(300, 6, seed=12)
    ea, eb, ec = _epochs(a, 2), _epochs(b, 2), _epochs(c, 2)
    assert ea == eb and ea != ec
    assert ea[0] == a.epoch_batches(0) and ea[1] == a.epoch_batches(1)
    fresh = RandomAllocationBatchSampler(300, 6)            # OS entropy, kept in the state
    again = RandomAllocationBatchSampler(300, 6)
    again.load_state_dict({**fresh.state_dict()})
    assert list(fresh) == list(again)


def test_a_newer_pass_owns_the_position():
    s = RandomAllocationBatchSampler(60, 6, seed=2)
    old = iter(s)
    next(old)
    new = iter(s)           # the first batch was drawn but the old pass is abandoned
    assert len(list(new)) == 5
    assert list(old) == []  # the abandoned pass stops


def test_dataloader_takes_it_as_batch_sampler():
    from torch.utils.data import DataLoader, TensorDataset

    n, m = 64, 4
    data = TensorDataset(torch.arange(n))
    sampler = RandomAllocationBatchSampler(n, m, seed=0)
    loader = DataLoader(data, batch_sampler=sampler)
    assert len(loader) == m
    got = torch.cat([x for (x,) in loader]).tolist()
    assert sorted(got) == list(range(n))


@pytest.mark.parametrize("kwargs, field", [
    ({"dataset_size": 0, "rounds": 3}, "dataset_size"),
    ({"dataset_size": 2 ** 27 + 1, "rounds": 3}, "dataset_size"),
    ({"dataset_size": 10, "rounds": 1}, "rounds"),
    ({"dataset_size": 10, "rounds": 2.5}, "rounds"),
    ({"dataset_size": 10, "rounds": 3, "seed": -1}, "seed"),
    ({"dataset_size": 10, "rounds": 3, "seed": "x"}, "seed"),
    ({"dataset_size": 10, "rounds": 3, "seed": np.random.SeedSequence(1).spawn(1)[0]}, "seed"),
])
def test_bad_arguments_name_the_parameter(kwargs, field):
    with pytest.raises(DPBoundsError, match=field):
        RandomAllocationBatchSampler(**kwargs)


@pytest.mark.parametrize("change, field", [
    ({"rounds": 4}, "rounds"), ({"dataset_size": 11}, "dataset_size"), ({"position": 3}, "position"),
    ({"position": -1}, "position"), ({"epoch": 1.5}, "epoch"), ({"entropy": "abc"}, "entropy"),
    ({"entropy": None}, "entropy"), ({"version": 99}, "version"),
])
def test_bad_state_is_refused_and_changes_nothing(change, field):
    s = RandomAllocationBatchSampler(10, 3, seed=1)
    next(iter(s))
    before = s.state_dict()
    with pytest.raises(DPBoundsError, match=field):
        s.load_state_dict({**before, **change})
    assert s.state_dict() == before
