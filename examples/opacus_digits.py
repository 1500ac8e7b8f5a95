"""Opacus DP-SGD with random allocation, accounted exactly by dpbounds: a small MLP on the digits.

What this example shows, end to end:

1. **Calibration up front.**  :func:`dpbounds.integrations.opacus.make_private_random_allocation`
   calibrates the noise multiplier for (epsilon, delta) = (2, 1e-5) with dpbounds' certified
   calibration, builds the ``DataLoader`` on a
   :class:`~dpbounds.integrations.pytorch.RandomAllocationBatchSampler` (every example in exactly
   one of the M = N // B batches of each epoch), and makes the model and optimizer private with
   Opacus' ``PrivacyEngine(accountant="dpbounds_random_allocation")``.  For comparison it prints
   the noise multiplier that Opacus' own PRV accountant would need for the same target with
   Opacus' default Poisson loader (``make_private_with_epsilon``'s calibration, sample rate
   ``1 / len(DataLoader(batch_size=B))``).
2. **Training.**  Opacus clips per-example gradients, adds the noise and steps; its optimizer
   hook records every step in the dpbounds accountant, which checks it against the sampler.
3. **Reporting.**  After every epoch: test accuracy and the certified epsilon spent so far; at
   the end the accountant's whole bracket, and the accuracy of the same model trained without
   privacy.

The data are scikit-learn's bundled handwritten digits (``sklearn.datasets.load_digits``: 1797
8x8 images, nothing is downloaded).  Requirements: torch, opacus and scikit-learn
(``pip install torch`` for your platform first, then ``pip install "dpbounds[opacus]" scikit-learn``).

    python examples/opacus_digits.py            # 20 epochs, about a minute
    python examples/opacus_digits.py --quick    # 3 epochs, well under a minute (used in CI)

For a given ``--seed`` the output is reproducible, except for the wall-clock times.
"""
from __future__ import annotations

import argparse
import time
import warnings

DELTA = 1e-5
TARGET_EPSILON = 2.0


def load(seed: int):
    """Train and test tensors of the digits, features scaled to [0, 1]."""
    import numpy as np
    import torch
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = torch.tensor(digits.data / 16.0, dtype=torch.float32)
    y = torch.tensor(digits.target, dtype=torch.long)
    perm = torch.from_numpy(np.random.default_rng(seed).permutation(len(y)))
    n_test = 360
    test, train = perm[:n_test], perm[n_test:]
    return (x[train], y[train]), (x[test], y[test])


def mlp():
    from torch import nn

    return nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))


def accuracy(model, x, y) -> float:
    import torch

    with torch.no_grad():
        return float((model(x).argmax(dim=1) == y).float().mean())


def baseline(train, test, epochs: int, batch_size: int, seed: int) -> float:
    """Test accuracy of the same model trained without privacy (shuffled batches, plain SGD)."""
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(seed)
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    loader = DataLoader(TensorDataset(*train), batch_size=batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(seed))
    for _ in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    return accuracy(model, *test)


def prv_sigma(n: int, batch_size: int, epochs: int) -> tuple[float, float]:
    """The noise multiplier Opacus' PRV accountant needs with its Poisson loader, and that loader's rate."""
    from opacus.accountants.utils import get_noise_multiplier

    rate = 1 / -(-n // batch_size)   # 1 / len(DataLoader(dataset, batch_size=batch_size))
    with warnings.catch_warnings():   # its internal RDP bound of the PRV domain warns about its orders
        warnings.simplefilter("ignore", UserWarning)
        return get_noise_multiplier(target_epsilon=TARGET_EPSILON, target_delta=DELTA, sample_rate=rate,
                                    epochs=epochs, accountant="prv"), rate


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 epochs instead of 20 (CI)")
    parser.add_argument("--epochs", type=int, default=None, help="epochs (default 20, or 3 with --quick)")
    parser.add_argument("--batch-size", type=int, default=64, help="B: M = N // B batches per epoch")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    epochs = args.epochs or (3 if args.quick else 20)

    import torch
    from torch import nn

    from dpbounds.integrations.opacus import make_private_random_allocation

    warnings.filterwarnings("ignore", message="Secure RNG turned off")   # Opacus' reminder, not ours
    warnings.filterwarnings("ignore", message="Full backward hook is firing")
    train, test = load(args.seed)
    n = len(train[1])
    print(f"Data: scikit-learn digits, N = {n} train / {len(test[1])} test examples, 64 features, 10 classes")

    t0 = time.perf_counter()
    torch.manual_seed(args.seed)
    model = mlp()
    made = make_private_random_allocation(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.5),
        dataset=torch.utils.data.TensorDataset(*train), batch_size=args.batch_size, epochs=epochs,
        target_epsilon=TARGET_EPSILON, target_delta=DELTA, max_grad_norm=1.0, seed=args.seed)
    m = made.sampler.rounds
    print(f"Calibration: (epsilon, delta) = ({TARGET_EPSILON:g}, {DELTA:g}), M = N // B = {m} steps per epoch "
          f"(expected batch {n / m:.1f}), epochs E = {epochs}")
    print(f"  random allocation, dpbounds exact accountant : sigma = {made.noise_multiplier:.4f}   "
          f"(found in {time.perf_counter() - t0:.1f} s)")
    t1 = time.perf_counter()
    sigma_prv, rate = prv_sigma(n, args.batch_size, epochs)
    print(f"  Poisson loader,    Opacus' PRV accountant    : sigma = {sigma_prv:.4f}   "
          f"(sample rate 1/{round(1 / rate)}, found in {time.perf_counter() - t1:.1f} s)")

    print(f"Training: Opacus DP-SGD, sigma = {made.noise_multiplier:.4f}, clip norm C = 1, learning rate 0.5")
    acc = made.privacy_engine.accountant
    for epoch in range(1, epochs + 1):
        for x, y in made.data_loader:
            made.optimizer.zero_grad()
            # a sum over the batch (Opacus divides by the expected batch size): 0 for an empty batch
            nn.functional.cross_entropy(made.module(x), y, reduction="sum").backward()
            made.optimizer.step()
        eps = made.privacy_engine.get_epsilon(DELTA)
        print(f"  epoch {epoch:2d}/{epochs}  test acc {accuracy(made.module, *test):.4f}  "
              f"epsilon <= {eps:.4f}  (delta = {DELTA:g}, {len(acc)} steps)")
    br = acc.get_epsilon_bracket(DELTA)
    print(f"Privacy spent: epsilon(delta = {DELTA:g}) in [{br.lower:.4f}, {br.upper:.4f}] "
          f"(certified; target {TARGET_EPSILON:g})")
    base = baseline(train, test, epochs, args.batch_size, args.seed)
    print(f"Non-private baseline: test acc {base:.4f}")
    print(f"Private model:        test acc {accuracy(made.module, *test):.4f}")


if __name__ == "__main__":
    main()
