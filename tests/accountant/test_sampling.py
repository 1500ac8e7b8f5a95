"""dpbounds.sampling: the samplers draw exactly the schemes the accountants analyse.

Structure (partitions, counts, determinism) is checked exactly.  The laws are checked by
seeded chi-square goodness-of-fit tests at p > 1e-3; each statistic is also applied to a
loader that is *not* the scheme (a shuffled fixed-size-batch loader, a fixed-size sampler,
...) and must reject it there, so the statistic has the power to fail.
"""
import doctest
import itertools
import math
import pathlib
import re
import sys
import types

import numpy as np
import pytest
from scipy import stats

import dpbounds
from dpbounds import _validation as V
from dpbounds.sampling import poisson, random_allocation

ALPHA = 1e-3  # rejection threshold of every goodness-of-fit test below


# ---------------------------------------------------------------- helpers


def _pooled_chisquare_p(counts, probs, min_expected=5.0):
    """Chi-square GOF p-value; adjacent cells are pooled until each expects >= min_expected."""
    counts = np.asarray(counts, dtype=float)
    probs = np.asarray(probs, dtype=float)
    assert counts.shape == probs.shape  # an observation outside the support must not vanish
    expected = counts.sum() * probs
    obs_bins, exp_bins = [], []
    o = e = 0.0
    for oi, ei in zip(counts, expected):
        o, e = o + oi, e + ei
        if e >= min_expected:
            obs_bins.append(o)
            exp_bins.append(e)
            o = e = 0.0
    obs_bins[-1] += o  # the remainder of the upper tail joins the last full cell
    exp_bins[-1] += e
    assert len(obs_bins) >= 2
    return stats.chisquare(obs_bins, exp_bins).pvalue


def _assignments(batches, n, m):
    """(epochs, n) array: the step of each example in each epoch, from a flat batch stream."""
    batches = list(batches)
    assert len(batches) % m == 0
    out = np.full((len(batches) // m, n), -1, dtype=np.int64)
    for k, b in enumerate(batches):
        out[k // m, b] = k % m
    assert (out >= 0).all()
    return out


def _shuffled_fixed_size(n, m, rng, epochs):
    """The common data loader: a fresh permutation per epoch cut into m batches of n // m."""
    b = n // m
    assert b * m == n
    for _ in range(epochs):
        perm = rng.permutation(n)
        for j in range(m):
            yield np.sort(perm[j * b:(j + 1) * b])


def _sequential(n, m, epochs):
    """No shuffling at all: example i is always in step i // (n // m)."""
    b = n // m
    for _ in range(epochs):
        for j in range(m):
            yield np.arange(j * b, (j + 1) * b)


def _shuffled_once(n, m, rng, epochs):
    """One permutation reused every epoch (a classic loader bug)."""
    perm = rng.permutation(n)
    b = n // m
    for _ in range(epochs):
        for j in range(m):
            yield np.sort(perm[j * b:(j + 1) * b])


def _fixed_size(n, size, rng, steps):
    """Without-replacement subsampling of exactly `size` examples per step."""
    for _ in range(steps):
        yield np.sort(rng.choice(n, size, replace=False))


# ---------------------------------------------------------------- random allocation: structure


def _check_partitions(batches, n, m, epochs):
    assert len(batches) == epochs * m
    for e in range(epochs):
        epoch = batches[e * m:(e + 1) * m]
        for b in epoch:
            assert b.dtype == np.int64 and b.ndim == 1
            assert (np.diff(b) > 0).all()  # sorted, no repeats
        # each example exactly once per epoch
        assert np.array_equal(np.sort(np.concatenate(epoch)), np.arange(n))


@pytest.mark.parametrize("n, m, epochs", [(1000, 37, 4), (5, 12, 3), (7, 1, 2), (1, 1, 1), (300, 300, 2)])
def test_random_allocation_partitions_every_epoch(n, m, epochs):
    batches = list(random_allocation(n, m, rng=0, epochs=epochs))
    _check_partitions(batches, n, m, epochs)
    if m > n:  # documented: at least m - n empty batches per epoch
        for e in range(epochs):
            assert sum(b.size == 0 for b in batches[e * m:(e + 1) * m]) >= m - n


def test_random_allocation_batches_are_independent_arrays():
    batches = list(random_allocation(50, 5, rng=3, epochs=2))
    for b in batches:
        assert b.flags.owndata and b.flags.writeable
    before = [b.copy() for b in batches]
    batches[0][:] = -1
    assert all(np.array_equal(b, c) for b, c in zip(batches[1:], before[1:]))


def test_random_allocation_block_boundaries_of_huge_rounds():
    # rounds beyond one searchsorted block (2**16 steps): the batches stay a partition
    n, m = 2000, (1 << 16) + 123
    _check_partitions(list(random_allocation(n, m, rng=4)), n, m, 1)


def test_random_allocation_epochs_none_is_unbounded():
    n, m = 40, 6
    batches = list(itertools.islice(random_allocation(n, m, rng=1, epochs=None), 25 * m))
    _check_partitions(batches, n, m, 25)


def test_random_allocation_is_reproducible_and_epochs_differ():
    def run(seed):
        return list(random_allocation(1000, 10, rng=seed, epochs=3))

    a, b, c = run(7), run(7), run(8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))
    steps = _assignments(a, 1000, 10)
    # equal assignments in two epochs have probability 10^-1000 under the scheme
    assert not np.array_equal(steps[0], steps[1]) and not np.array_equal(steps[1], steps[2])


def test_rng_generator_is_used_in_place():
    seeded = list(random_allocation(100, 4, rng=np.random.default_rng(5), epochs=2))
    assert all(np.array_equal(x, y) for x, y in zip(seeded, random_allocation(100, 4, rng=5, epochs=2)))
    g = np.random.default_rng(5)
    first = list(random_allocation(100, 4, rng=g, epochs=2))
    second = list(random_allocation(100, 4, rng=g, epochs=2))  # continues g's stream
    assert all(np.array_equal(x, y) for x, y in zip(first, seeded))
    assert not all(np.array_equal(x, y) for x, y in zip(first, second))


# ---------------------------------------------------------------- random allocation: law


def test_full_assignment_law_is_uniform_and_shuffling_is_rejected():
    # The assignment vector (step of each example) is the whole mechanism: random allocation
    # makes it uniform on {0..M-1}^N, i.e. i.i.d. uniform steps and Multinomial batch sizes.
    n, m, epochs = 6, 3, 20_000  # 729 cells, ~27 expected per cell
    weights = m ** np.arange(n)

    def p_value(batches):
        codes = _assignments(batches, n, m) @ weights
        return stats.chisquare(np.bincount(codes, minlength=m ** n)).pvalue

    assert p_value(random_allocation(n, m, rng=11, epochs=epochs)) > ALPHA
    # a shuffled loader with fixed batches of 2 reaches only 90 of the 729 assignments
    assert p_value(_shuffled_fixed_size(n, m, np.random.default_rng(11), epochs)) < ALPHA


@pytest.mark.parametrize("step", [0, 7])  # the first and the last step of the epoch
def test_batch_size_is_binomial_and_shuffling_is_rejected(step):
    n, m, epochs = 200, 8, 5000
    pmf = stats.binom.pmf(np.arange(n + 1), n, 1 / m)

    def p_value(batches):
        # one batch per epoch: epochs are independent, the M sizes within one are not
        sizes = [b.size for k, b in enumerate(batches) if k % m == step]
        assert len(sizes) == epochs
        return _pooled_chisquare_p(np.bincount(sizes, minlength=n + 1), pmf)

    assert p_value(random_allocation(n, m, rng=12, epochs=epochs)) > ALPHA
    # every shuffled batch has exactly n / m = 25 examples
    assert p_value(_shuffled_fixed_size(n, m, np.random.default_rng(12), epochs)) < ALPHA


def test_each_example_is_uniform_over_steps():
    n, m, epochs = 50, 10, 5000

    def p_values(batches):
        steps = _assignments(batches, n, m)
        return [stats.chisquare(np.bincount(steps[:, i], minlength=m)).pvalue for i in (0, 23, 49)]

    assert min(p_values(random_allocation(n, m, rng=13, epochs=epochs))) > ALPHA
    assert max(p_values(_sequential(n, m, epochs))) < ALPHA


def test_epochs_are_independent_and_shuffle_once_is_rejected():
    # the steps of one example in epochs 2k and 2k + 1 are uniform on M x M cells
    n, m, epochs = 30, 5, 10_000

    def p_value(batches):
        s = _assignments(batches, n, m)[:, 0]
        return stats.chisquare(np.bincount(s[0::2] * m + s[1::2], minlength=m * m)).pvalue

    assert p_value(random_allocation(n, m, rng=14, epochs=epochs)) > ALPHA
    assert p_value(_shuffled_once(n, m, np.random.default_rng(14), epochs)) < ALPHA


# ---------------------------------------------------------------- poisson: structure


@pytest.mark.parametrize("n, q, steps", [(100, 0.1, 50), (20_000, 0.5, 5), (5, 1.0, 4), (3, 1e-9, 10)])
def test_poisson_batches_are_sorted_index_sets(n, q, steps):
    batches = list(poisson(n, q, rng=0, steps=steps))
    assert len(batches) == steps
    for b in batches:
        assert b.dtype == np.int64 and b.ndim == 1
        assert (np.diff(b) > 0).all()
        assert b.size == 0 or (0 <= b[0] and b[-1] < n)
    if q == 1.0:
        assert all(np.array_equal(b, np.arange(n)) for b in batches)


def test_poisson_steps_none_is_unbounded_and_reproducible():
    a = list(itertools.islice(poisson(50, 0.2, rng=9), 1000))
    b = list(itertools.islice(poisson(50, 0.2, rng=9, steps=None), 1000))
    c = list(itertools.islice(poisson(50, 0.2, rng=10), 1000))
    assert len(a) == 1000
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


# ---------------------------------------------------------------- poisson: law


def test_poisson_full_step_law_and_fixed_size_is_rejected():
    # N = 3: the included set is one of 8 subsets with probability q^|S| (1 - q)^(3 - |S|)
    n, q, steps = 3, 0.3, 20_000
    masks = np.arange(2 ** n)
    sizes = np.array([bin(s).count("1") for s in masks])
    probs = q ** sizes * (1 - q) ** (n - sizes)

    def p_value(batches):
        codes = [int(np.sum(1 << b)) for b in batches]
        return stats.chisquare(np.bincount(codes, minlength=2 ** n), steps * probs).pvalue

    assert p_value(poisson(n, q, rng=21, steps=steps)) > ALPHA
    assert p_value(_fixed_size(n, 1, np.random.default_rng(21), steps)) < ALPHA


@pytest.mark.parametrize("n, q, steps", [(40, 0.05, 20_000), (20_000, 0.5, 400)])
def test_poisson_inclusion_frequency_of_every_example(n, q, steps):
    # counts c_i ~ Binomial(T, q), independent over i: sum of squared z-scores ~ chi2(N)
    def p_value(batches, rate):
        counts = np.bincount(np.concatenate(list(batches)), minlength=n)
        z2 = (counts - steps * rate) ** 2 / (steps * rate * (1 - rate))
        return stats.chi2.sf(z2.sum(), df=n)

    assert p_value(poisson(n, q, rng=22, steps=steps), q) > ALPHA
    # resolution: a sampler whose rate is 5 % too high is rejected
    assert p_value(poisson(n, 1.05 * q, rng=22, steps=steps), q) < ALPHA


def test_poisson_batch_size_is_binomial_and_fixed_size_is_rejected():
    n, q, steps = 30, 0.2, 20_000
    pmf = stats.binom.pmf(np.arange(n + 1), n, q)

    def p_value(batches):
        return _pooled_chisquare_p(np.bincount([b.size for b in batches], minlength=n + 1), pmf)

    assert p_value(poisson(n, q, rng=23, steps=steps)) > ALPHA
    assert p_value(_fixed_size(n, 6, np.random.default_rng(23), steps)) < ALPHA


def _joint_inclusion_p(first, second, q):
    """Chi-square of the 2 x 2 table of two inclusion indicators against independence at rate q."""
    codes = 2 * np.asarray(first, dtype=np.int64) + np.asarray(second, dtype=np.int64)
    probs = np.array([(1 - q) ** 2, (1 - q) * q, q * (1 - q), q * q])
    return stats.chisquare(np.bincount(codes, minlength=4), codes.size * probs).pvalue


def test_poisson_two_examples_are_independent_within_a_step():
    n, q, steps = 100, 0.1, 20_000
    included = np.zeros((steps, n), dtype=bool)
    for t, b in enumerate(poisson(n, q, rng=24, steps=steps)):
        included[t, b] = True
    for i, j in [(0, 1), (17, 99)]:
        assert _joint_inclusion_p(included[:, i], included[:, j], q) > ALPHA


def test_poisson_steps_are_independent_and_random_allocation_is_not_poisson():
    # one example in steps 2k and 2k + 1: joint inclusion q^2.  Random allocation has the same
    # per-step inclusion rate 1/M but never puts an example in two steps of one epoch.
    n, m, steps = 20, 10, 20_000
    q = 1 / m

    def p_value(batches):
        inc = np.array([0 in b for b in batches])
        return _joint_inclusion_p(inc[0::2], inc[1::2], q)

    assert p_value(poisson(n, q, rng=25, steps=steps)) > ALPHA
    assert p_value(random_allocation(n, m, rng=25, epochs=steps // m)) < ALPHA


# ---------------------------------------------------------------- validation

BAD_COUNTS = [0, -3, 60000.5, True, np.bool_(True), math.nan, math.inf, "100", None, np.array([10, 20])]


@pytest.mark.parametrize("bad", BAD_COUNTS, ids=repr)
def test_bad_dataset_size(bad):
    # raised by the call itself, before any batch is drawn
    with pytest.raises(ValueError, match="dataset_size"):
        random_allocation(bad, 3)
    with pytest.raises(ValueError, match="dataset_size"):
        poisson(bad, 0.5)


@pytest.mark.parametrize("bad", [b for b in BAD_COUNTS if b is not None], ids=repr)
def test_bad_rounds_epochs_steps(bad):
    with pytest.raises(ValueError, match="rounds"):
        random_allocation(100, bad)
    with pytest.raises(ValueError, match="epochs"):
        random_allocation(100, 3, epochs=bad)
    with pytest.raises(ValueError, match="steps"):
        poisson(100, 0.5, steps=bad)


@pytest.mark.parametrize("bad", [0, -0.1, 1.0000001, 2, math.nan, math.inf, True, [0.1, 0.2], "x", None],
                         ids=repr)
def test_bad_sample_rate(bad):
    with pytest.raises(ValueError, match="sample_rate"):
        poisson(100, bad)


def test_counts_beyond_int64_are_rejected_at_the_call():
    # numpy cannot draw from them; the error names the parameter instead of surfacing mid-training
    with pytest.raises(ValueError, match="rounds"):
        random_allocation(10, 2 ** 63)
    with pytest.raises(ValueError, match="dataset_size"):
        poisson(2 ** 63, 0.5)
    assert next(random_allocation(10, 2 ** 63 - 1, rng=0)).dtype == np.int64


@pytest.mark.parametrize("bad", ["seed", 1.5, -1])
def test_bad_rng(bad):
    with pytest.raises(ValueError, match="rng"):
        random_allocation(100, 3, rng=bad)
    with pytest.raises(ValueError, match="rng"):
        poisson(100, 0.5, rng=bad)


@pytest.mark.parametrize("size", [np.int64(60), 60.0, 6e1, np.float32(60.0), np.array(60), np.uint8(60)], ids=repr)
def test_integer_like_counts_are_accepted(size):
    ref_a = list(random_allocation(60, 4, rng=1, epochs=2))
    got_a = list(random_allocation(size, np.int32(4), rng=1, epochs=np.int64(2)))
    assert all(np.array_equal(x, y) for x, y in zip(ref_a, got_a, strict=True))
    ref_p = list(poisson(60, 0.25, rng=1, steps=3))
    got_p = list(poisson(size, np.float64(0.25), rng=1, steps=3.0))
    assert all(np.array_equal(x, y) for x, y in zip(ref_p, got_p, strict=True))


def test_check_count_is_exact_for_large_integers():
    assert V.check_count("n", 2 ** 70 + 1) == 2 ** 70 + 1
    assert V.check_count("n", np.uint64(2 ** 64 - 1)) == 2 ** 64 - 1
    assert V.check_count("n", 1e20) == 10 ** 20
    with pytest.raises(ValueError, match="n must be an integer >= 2"):
        V.check_count("n", 1, minimum=2)
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, 5\]"):
        V.check_count("n", 6, maximum=5)
    assert V.check_rate("q", 1) == 1.0


# ---------------------------------------------------------------- package and docs


def test_exported_from_package():
    assert dpbounds.sampling.random_allocation is random_allocation
    assert "sampling" in dpbounds.__all__


def test_docstring_examples():
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(dpbounds.sampling, dpbounds.sampling.__name__)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0 and runner.tries >= 10


DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "sampling.md"


def _docs_block(marker):
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.S)
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, marker
    return found[0]


@pytest.mark.skipif(not DOCS.exists(), reason="docs/ not next to tests/ (wheel test from test-sources)")
def test_docs_torch_batch_sampler(monkeypatch):
    # runs the snippet against a stand-in for torch (torch is not a test dependency): it only
    # needs a generic Sampler base class
    class Sampler:
        def __class_getitem__(cls, item):
            return cls

    torch = types.ModuleType("torch")
    torch.utils = types.SimpleNamespace(data=types.SimpleNamespace(Sampler=Sampler))
    monkeypatch.setitem(sys.modules, "torch", torch)
    ns = {}
    exec(_docs_block("class RandomAllocationBatchSampler"), ns)
    sampler = ns["RandomAllocationBatchSampler"](1000, 7, seed=0)
    assert len(sampler) == 7
    first, second = list(sampler), list(sampler)
    for epoch in (first, second):
        assert len(epoch) == 7 and all(isinstance(b, list) for b in epoch)
        assert sorted(i for b in epoch for i in b) == list(range(1000))
    assert first != second  # each pass over the loader is a fresh epoch


@pytest.mark.skipif(not DOCS.exists(), reason="docs/ not next to tests/ (wheel test from test-sources)")
def test_docs_numpy_batch_iterators():
    ns = {}
    exec(_docs_block("def padded_batches"), ns)
    n, m, epochs = 500, 9, 3
    x = np.arange(n) * 10
    y = -np.arange(n)
    plain = list(ns["batches"](x, y, m, epochs, seed=5))
    assert len(plain) == epochs * m
    for e in range(epochs):
        assert np.array_equal(np.sort(np.concatenate([xb for xb, _ in plain[e * m:(e + 1) * m]])), x)
    assert all(np.array_equal(yb, -xb // 10) for xb, yb in plain)
    padded = list(ns["padded_batches"](x, y, m, epochs, capacity=120, seed=5))
    for (xb, yb), (xp, yp, mask) in zip(plain, padded, strict=True):
        assert xp.shape == yp.shape == mask.shape == (120,)
        assert np.array_equal(xp[mask], xb) and np.array_equal(yp[mask], yb)
    with pytest.raises(RuntimeError, match="capacity"):
        list(ns["padded_batches"](x, y, m, epochs, capacity=40, seed=5))


# ---------------------------------------------------------------- memory cap
def test_random_allocation_refuses_above_the_memory_cap_before_allocating():
    import tracemalloc

    from dpbounds.sampling import MAX_DATASET_SIZE

    assert MAX_DATASET_SIZE == 2 ** 27
    for n in (MAX_DATASET_SIZE + 1, 10 ** 12, 1e15):
        tracemalloc.start()
        try:
            with pytest.raises(dpbounds.DPBoundsError,
                               match=r"^dataset_size must be <= 2\*\*27 = 134,217,728 .*memory cap.*shards"):
                random_allocation(n, 100, rng=0)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 1 << 20, peak   # refused before drawing: nothing near 24 bytes per example
    # at the cap the call is accepted (drawing is deferred to iteration, so nothing is allocated here)
    it = random_allocation(MAX_DATASET_SIZE, 100, rng=0)
    assert hasattr(it, "__next__")


@pytest.mark.parametrize("n, q", [(10 ** 12, 0.5), (10 ** 12, 0.03), (4 * 10 ** 8 + 1, 1.0), (10 ** 15, 2e-7)])
def test_poisson_refuses_a_step_above_the_memory_cap_before_allocating(n, q):
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(dpbounds.DPBoundsError, match=r"^dataset_size=.* with sample_rate=.*memory cap.*shards"):
            poisson(n, q, rng=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


def test_poisson_below_the_memory_cap_draws():
    # N = 1e12 with an expected batch of 1e4: numpy's choice keeps the batch, not the N indices
    batch = next(poisson(10 ** 12, 1e-8, rng=0))
    assert 9_000 < batch.size < 11_000 and batch.max() < 10 ** 12 and np.all(np.diff(batch) > 0)
    # a whole dataset per step at the cap's edge is accepted (drawing deferred)
    assert hasattr(poisson(3 * 2 ** 26, 1.0, rng=0), "__next__")


def test_shards_drawn_independently_are_random_allocation():
    # the documented way past the cap: per-example step assignments are independent and uniform,
    # so the union of shards' step-j batches partitions the dataset with each example's step
    # uniform on the M steps; checked on the step counts of every example (chi-square, seeded)
    n_shard, shards, m, epochs = 50, 4, 5, 400
    seqs = np.random.SeedSequence(11).spawn(shards)
    counts = np.zeros((n_shard * shards, m))
    gens = [random_allocation(n_shard, m, np.random.default_rng(s), epochs=epochs) for s in seqs]
    for _ in range(epochs):
        seen = []
        for j in range(m):
            batch = np.concatenate([next(g) + k * n_shard for k, g in enumerate(gens)])
            counts[batch, j] += 1
            seen.append(batch)
        assert np.array_equal(np.sort(np.concatenate(seen)), np.arange(n_shard * shards))
    stat = float(((counts - epochs / m) ** 2 / (epochs / m)).sum())
    dof = counts.shape[0] * (m - 1)
    assert stats.chi2.sf(stat, dof) > 1e-4
