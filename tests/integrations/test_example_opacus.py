"""examples/opacus_digits.py --quick runs as a user runs it and does what it claims.

It must exit cleanly, print a certified epsilon after every epoch that grows and ends at or
below the target (2, 1e-5), print the noise multiplier Opacus' PRV accountant needs with its
Poisson loader, and train a private model clearly better than chance (10 classes).
"""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

import dpbounds

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent.parent / "examples" / "opacus_digits.py"
NUMBER = r"([0-9]+(?:\.[0-9]+)?)"

pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="examples/ not next to tests/ (wheel test)")


@pytest.fixture(scope="module")
def quick_run() -> str:
    for mod in ("torch", "opacus", "sklearn"):
        pytest.importorskip(mod, reason=f"{mod} is not installed (the example needs torch, opacus, scikit-learn)")
    package_root = str(pathlib.Path(dpbounds.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([package_root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("OMP_NUM_THREADS", "1")
    proc = subprocess.run([sys.executable, str(EXAMPLE), "--quick"], capture_output=True, text=True, env=env,
                          timeout=600, check=False)
    assert proc.returncode == 0, f"exit status {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.stderr == "", proc.stderr   # no warning escapes
    return proc.stdout


def test_certified_epsilon_every_epoch_up_to_the_target(quick_run: str) -> None:
    rows = re.findall(rf"epoch\s+(\d+)/(\d+)\s+test acc {NUMBER}\s+epsilon <= {NUMBER}", quick_run)
    assert rows and len(rows) == int(rows[0][1]), quick_run
    eps = [float(r[3]) for r in rows]
    assert eps == sorted(eps) and eps[0] > 0
    assert eps[-1] <= 2.0
    lo, hi = map(float, re.search(rf"in \[{NUMBER}, {NUMBER}\] \(certified; target 2\)", quick_run).groups())
    assert lo <= hi == pytest.approx(eps[-1], abs=1e-4) and hi <= 2.0


def test_noise_multipliers_and_accuracy(quick_run: str) -> None:
    ours = float(re.search(rf"dpbounds exact accountant\s*: sigma = {NUMBER}", quick_run).group(1))
    prv = float(re.search(rf"Opacus' PRV accountant\s*: sigma = {NUMBER}", quick_run).group(1))
    assert 0.3 < ours < 20 and 0.3 < prv < 20
    private = float(re.search(rf"Private model:\s+test acc {NUMBER}", quick_run).group(1))
    base = float(re.search(rf"Non-private baseline: test acc {NUMBER}", quick_run).group(1))
    assert private > 0.5 and base > 0.8       # chance is 0.1
