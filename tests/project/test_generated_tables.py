"""The committed coefficient headers are exactly what their generators write.

csrc/dpb_gl20.h (Gauss-Legendre rule) and csrc/dpb_rho3_series.h (rho^3 series) say "GENERATED ...
do not edit"; this test keeps that true: it runs each generator into a temporary directory and
compares the output with the committed file byte for byte, so a hand edit of a header, or a
generator change whose output was not committed, fails here.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

GENERATED = [
    ("tools/gen_gauss_legendre.py", "csrc/dpb_gl20.h"),
    ("tools/gen_rho3_series.py", "csrc/dpb_rho3_series.h"),
]


# the rho3 series regenerates with mpmath (seconds): slow tier
@pytest.mark.parametrize(("script", "header"),
                         [pytest.param(s, h, marks=pytest.mark.slow) if h == "csrc/dpb_rho3_series.h" else (s, h)
                          for s, h in GENERATED], ids=[h for _, h in GENERATED])
def test_committed_header_is_generator_output(script: str, header: str, tmp_path: Path) -> None:
    committed = ROOT / header
    if not (ROOT / script).exists() or not committed.exists():
        pytest.skip("needs a source checkout (tools/ and csrc/)")
    out = tmp_path / committed.name
    subprocess.run([sys.executable, str(ROOT / script), "--output", str(out)], check=True, cwd=tmp_path)
    assert out.read_bytes() == committed.read_bytes(), (
        f"{header} differs from the output of {script}: regenerate it with "
        f"`python {script}` and commit the result"
    )
