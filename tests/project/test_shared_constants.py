"""Every constant and enum the C core and Python share has one definition, and both sides read it.

The declaration table lists them (``_ufunc_table.CONSTANTS``, ``DEFINED_HERE`` and
``KERNEL_CHOICES``); Python reads each through :mod:`dpbounds.ufuncs`, which compiles it from the
C headers.  These tests compare the compiled values with the headers and with the Python
definitions, and check that C and Python draw the same line at each limit.
"""
import math
import pathlib
import re

import numpy as np
import pytest

import dpbounds
from dpbounds import _ufunc_table, _validation, rdp, ufuncs

CSRC = pathlib.Path(__file__).resolve().parents[2] / "csrc"
needs_csrc = pytest.mark.skipif(not CSRC.is_dir(), reason="csrc/ not next to tests/ (wheel test)")


def _c_define(macro):
    for h in sorted(CSRC.glob("*.h")):
        m = re.search(rf"^#define\s+{macro}\s+\(?([-+0-9.eE]+)\)?\s*(/\*.*)?$", h.read_text(), re.M)
        if m:
            return float(m.group(1))
    raise KeyError(macro)


def test_every_constant_is_exported():
    for py, _macro, _doc in _ufunc_table.CONSTANTS:
        assert isinstance(getattr(ufuncs, py), float), py
    for py, _doc, pairs in _ufunc_table.KERNEL_CHOICES:
        exported = getattr(ufuncs, py)
        assert [c for c, _ in exported] == [c for c, _ in pairs]
        assert len({v for _, v in exported}) == len(pairs)   # distinct C values


def test_constants_defined_in_python_are_what_c_compiled():
    # DEFINED_HERE is written into csrc/dpb_domain.h by tools/gen_ufuncs.py: the compiled value
    # must be the Python one (a stale header or a stale build fails here)
    macros = {macro: py for py, macro, _ in _ufunc_table.CONSTANTS}
    for macro, value in _ufunc_table.DEFINED_HERE.items():
        assert getattr(ufuncs, macros[macro]) == value, macro
    assert _ufunc_table.DEFINED_HERE["DPB_CLT_SIGMA_MIN"] == _validation.CLT_SIGMA_MIN


@needs_csrc
def test_constants_defined_in_c_are_what_python_reads():
    for py, macro, _doc in _ufunc_table.CONSTANTS:
        assert getattr(ufuncs, py) == _c_define(macro), macro


@needs_csrc
def test_kernel_choices_are_the_c_enum():
    text = (CSRC / "dpb_rdp_wor.h").read_text()
    enum = dict((n, int(v)) for n, v in re.findall(r"(DPB_WOR_[A-Z0-9_]+)\s*=\s*(\d+)", text))
    (_py, _doc, pairs), = [k for k in _ufunc_table.KERNEL_CHOICES if k[0] == "WOR_BOUNDS"]
    assert dict(ufuncs.WOR_BOUNDS) == {choice: enum[macro] for choice, macro in pairs}


def test_each_bound_name_selects_its_variant():
    # a swapped mapping would break the order the three variants obey (docs/rdp.md)
    a = np.array([2.0, 3.0, 10.0, 64.0])
    names = ("lower", "improved", "theorem9")
    lower, improved, thm9 = (rdp.subsampled_gaussian_wor(a, 2.0, 0.05, bound=b) for b in names)
    assert np.all(lower <= improved) and np.all(improved <= thm9) and np.any(improved < thm9)
    base = rdp.Laplace(2.0)
    lower, improved, thm9 = (rdp.subsampled_wor(a, base, 0.05, bound=b) for b in names)
    assert np.all(lower <= improved) and np.all(improved <= thm9) and np.any(lower < improved)


def test_clt_sigma_minimum_is_one_line_in_c_and_python():
    s_min = ufuncs.CLT_SIGMA_MIN
    below = math.nextafter(s_min, 0.0)
    assert dpbounds.tradeoff.CLT_SIGMA_MIN == s_min == _validation.CLT_SIGMA_MIN
    # the raw kernels answer from the limit on and refuse (NaN) just below it
    for f in (ufuncs.tradeoff_clt, ufuncs.tradeoff_clt_truncated, ufuncs.tradeoff_clt_slope):
        assert np.isfinite(f(0.5, s_min, 3.0)) and np.isnan(f(0.5, below, 3.0)), f.__name__
    # the validated functions draw the same line, through the table's constraint
    c = _validation.Constraint.CLT_SIGMA
    assert c.holds(np.array(s_min)) and not c.holds(np.array(below))
    for f in (dpbounds.tradeoff_clt, dpbounds.tradeoff_clt_slope):
        assert np.isfinite(f(0.5, s_min, 3.0))
        with pytest.raises(dpbounds.DPBoundsError, match=rf"^sigma must be >= {s_min}\b"):
            f(0.5, below, 3.0)
    # and the documentation states the same number
    for doc in (dpbounds.tradeoff_clt.__doc__, dpbounds.tradeoff_clt_slope.__doc__, ufuncs.tradeoff_clt.__doc__,
                ufuncs.tradeoff_clt_truncated.__doc__, ufuncs.tradeoff_clt_slope.__doc__):
        assert f"{s_min}" in doc


def test_rdp_alpha_max_is_one_line_in_c_and_python():
    top = ufuncs.RDP_ALPHA_MAX
    above = math.nextafter(top, math.inf)
    assert np.isnan(ufuncs.rdp_poisson_gaussian_exact(above, 1.0, 0.01))
    assert np.isfinite(rdp.poisson_gaussian(top, 1.0, 0.01))
    for f in (lambda a: rdp.poisson_gaussian(a, 1.0, 0.01), lambda a: rdp.subsampled_gaussian_wor(a, 1.0, 0.01)):
        with pytest.raises(dpbounds.DPBoundsError, match=r"^alpha must be <= 1e6"):
            f(above)
    with pytest.raises(dpbounds.DPBoundsError, match=r"^max_order must be in \[2, 1e6\]"):
        rdp.RDPAccountant(max_order=above)
