"""The scripts in examples/ run and do what they claim.

``examples/dpsgd_logistic_regression.py --quick`` is run as a user would run it (a subprocess):
it must exit cleanly, print a certified epsilon after every epoch that grows with the epochs and
ends at or below the target, and train a private model that is clearly better than chance.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import pathlib
import re
import subprocess
import sys
from types import ModuleType

import numpy as np
import pytest

import dpbounds

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
DPSGD = EXAMPLES / "dpsgd_logistic_regression.py"

pytestmark = pytest.mark.skipif(not DPSGD.exists(), reason="examples/ not next to tests/ (wheel test)")

NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
EPOCH_LINE = re.compile(rf"^\s*epoch\s+(\d+)/(\d+)\s+train acc {NUMBER}\s+test acc {NUMBER}\s+epsilon <= {NUMBER}",
                        re.MULTILINE)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    # The child must import the same dpbounds as this test process (an in-place build under
    # src/ or an installed wheel), whatever the caller's PYTHONPATH.
    package_root = str(pathlib.Path(dpbounds.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([package_root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    # -W error: the example must run without a single warning (issue 23: the README loop warned)
    return subprocess.run([sys.executable, "-W", "error", str(DPSGD), *args], capture_output=True, text=True,
                          env=env, timeout=600, check=False)


@pytest.fixture(scope="module")
def quick_run() -> str:
    proc = _run("--quick")
    assert proc.returncode == 0, f"exit status {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


def _number_after(label: str, text: str) -> float:
    match = re.search(re.escape(label) + r"\s*:?\s*sigma = " + NUMBER, text)
    assert match is not None, f"no {label!r} line in:\n{text}"
    return float(match.group(1))


def test_dpsgd_example_prints_certified_epsilon_every_epoch(quick_run: str) -> None:
    rows = EPOCH_LINE.findall(quick_run)
    assert rows, quick_run
    total = int(rows[0][1])
    assert [int(r[0]) for r in rows] == list(range(1, total + 1)), quick_run
    assert total == 3  # --quick's default number of epochs
    epsilons = [float(r[4]) for r in rows]
    # more steps, more privacy spent; and the calibrated noise keeps the end within the target
    assert all(a < b for a, b in zip(epsilons, epsilons[1:])), epsilons
    assert 0.0 < epsilons[0] and epsilons[-1] <= 2.0, epsilons

    bracket = re.search(rf"epsilon\(delta = 1e-05\) in \[{NUMBER}, {NUMBER}\]", quick_run)
    assert bracket is not None, quick_run
    lower, upper = float(bracket.group(1)), float(bracket.group(2))
    assert lower <= upper == epsilons[-1] <= 2.0
    # the exact accountant's bracket is narrow (default relative width 2e-3, plus printed rounding)
    assert upper - lower <= 2e-3 * upper + 2e-4


def test_dpsgd_example_calibration_lines(quick_run: str) -> None:
    sigma = _number_after("random allocation, exact accountant", quick_run)
    poisson_exact = _number_after("Poisson sampling,  exact accountant", quick_run)
    poisson_rdp = _number_after("Poisson sampling,  RDP accountant", quick_run)
    assert re.search(r"Training: DP-SGD, sigma = " + re.escape(f"{sigma:.4f}"), quick_run), quick_run
    # sigma is within the exact accountant's range and the comparison values are positive
    assert 0.3 <= sigma <= 20.0 and poisson_exact > 0.0 and poisson_rdp > 0.0


def test_dpsgd_example_private_model_learns(quick_run: str) -> None:
    private = re.search(rf"Private model:\s+train acc {NUMBER}\s+test acc {NUMBER}", quick_run)
    baseline = re.search(rf"Non-private baseline.*?train acc {NUMBER}\s+test acc {NUMBER}", quick_run)
    assert private is not None and baseline is not None, quick_run
    private_test, baseline_test = float(private.group(2)), float(baseline.group(2))
    # classes are balanced (chance 0.5) and no classifier beats 0.885 on this data
    assert private_test > 0.7, quick_run
    assert 0.85 < baseline_test < 0.92, quick_run
    assert private_test > baseline_test - 0.05, quick_run
    # the last epoch line reports the same model
    assert float(EPOCH_LINE.findall(quick_run)[-1][3]) == private_test


def _load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dpsgd_logistic_regression", DPSGD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dpsgd_example_training_is_reproducible() -> None:
    # Same random state, same data, batches, noise and printout; another one gives other noise.
    ex = _load_example()
    args = ex.parse_args(["--quick", "--epochs", "1", "--dataset-size", "4000", "--batch-size", "200"])

    def train(state: int) -> tuple[np.ndarray, str]:
        data_rng, training_rng = np.random.default_rng(state).spawn(2)
        data = ex.make_dataset(args.dataset_size, data_rng)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            w, accountant = ex.train_dp_sgd(data, 1.0, args, training_rng)
        assert len(accountant) == 20
        return w, out.getvalue()

    w1, out1 = train(7)
    w2, out2 = train(7)
    w3, _ = train(8)
    assert np.array_equal(w1, w2) and out1 == out2
    assert not np.allclose(w1, w3)


def test_dpsgd_example_clipping_and_gradients() -> None:
    # The per-example gradient is the logistic loss's gradient (central differences) and clipping
    # leaves every row with norm <= C, shorter rows unchanged.
    ex = _load_example()
    rng = np.random.default_rng(3)
    x, y, w = rng.standard_normal((5, 4)), (rng.random(5) < 0.5).astype(float), rng.standard_normal(4)

    def loss(v: np.ndarray, i: int) -> float:
        z = float(x[i] @ v)
        return float(np.logaddexp(0.0, z) - y[i] * z)

    g = ex.per_example_gradients(w, x, y)
    h = 1e-6
    for i in range(5):
        numeric = [(loss(w + h * e, i) - loss(w - h * e, i)) / (2 * h) for e in np.eye(4)]
        np.testing.assert_allclose(g[i], numeric, rtol=1e-6, atol=1e-8)
    clipped = ex.clip_rows(g, 0.3)
    norms, clipped_norms = np.linalg.norm(g, axis=1), np.linalg.norm(clipped, axis=1)
    assert 0 < np.sum(norms <= 0.3) < 5  # both cases occur
    assert np.all(clipped_norms <= 0.3 * (1 + 1e-12))
    np.testing.assert_array_equal(clipped[norms <= 0.3], g[norms <= 0.3])
    np.testing.assert_allclose(clipped[norms > 0.3] / clipped_norms[norms > 0.3, None],
                               g[norms > 0.3] / norms[norms > 0.3, None], rtol=1e-12)


def test_dpsgd_example_noise_scale() -> None:
    # With all-zero features every gradient vanishes, so the model after one epoch is the noise
    # alone: -lr / (N / M) times a sum of M draws of N(0, (sigma C)^2 I), i.e. each of the d
    # coordinates is N(0, M (lr sigma C M / N)^2).  d = 400 coordinates estimate that variance
    # to within about +-7% (one standard error), so a noise scale off by 25% in the standard
    # deviation (56% in variance) is caught.
    ex = _load_example()
    n, d, sigma = 4000, 400, 1.3
    args = ex.parse_args(["--epochs", "1", "--dataset-size", str(n), "--batch-size", "200",
                          "--clip-norm", "0.7", "--learning-rate", "3"])
    m = n // 200
    zeros = np.zeros((n, d))
    labels = (np.arange(n) % 2).astype(float)
    data = ex.Dataset(zeros, labels, zeros[:10], labels[:10])
    with contextlib.redirect_stdout(io.StringIO()):
        w, _ = ex.train_dp_sgd(data, sigma, args, np.random.default_rng(11))
    expected_variance = m * (3 * sigma * 0.7 * m / n) ** 2
    ratio = float(np.mean(w**2)) / expected_variance
    assert 0.75 < ratio < 1.3, ratio


@pytest.mark.slow
def test_dpsgd_example_prints_what_the_readme_shows() -> None:
    # the README shows the full run's output (no wall-clock times: it is reproducible); it was
    # stale ("found in 19.1 s" against under a second) with nothing to catch it
    import doctest

    import docs_blocks

    readme = docs_blocks.ROOT / "README.md"
    if not readme.exists():
        pytest.skip("README.md not next to tests/")
    prompt = "$ python examples/dpsgd_logistic_regression.py"
    shown = [b.text for b in docs_blocks.blocks(readme) if b.text.startswith(prompt + "\n")]
    assert len(shown) == 1
    proc = _run()
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    want = shown[0][len(prompt) + 1:]
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    assert doctest.OutputChecker().check_output(want, proc.stdout, flags), f"shown:\n{want}\nprinted:\n{proc.stdout}"
    assert "found in" not in proc.stdout and "about a minute" not in DPSGD.read_text()

