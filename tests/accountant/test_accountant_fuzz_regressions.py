"""Regression tests for what the fuzz harnesses (fuzz/, docs/fuzzing.md) found in the accountants'
lattices.

Each test replays the input a harness reported, in plain pytest (no atheris), and checks the
contract that input broke; a test's comment names the harness that found it where the record says
which one did. Findings that are not fixed yet are ``xfail(strict=True)`` with the reason and the
owner, so that the fix turns them into passing tests (and the strict mark makes the run fail until
the ``xfail`` is removed).
"""
from __future__ import annotations

import pytest

import dpbounds


# fuzz_accountants (seed 11): RandomAllocationPLD(0.74, 16, 3).epsilon(~0.5) stays in bounded
# memory: an epsilon guess near 0 asks for loss cells of 2.7e-7 over a log-domain grid 34 wide
# (1.3e8 cells), and the cells are capped (2**20, as the Fourier law); checked here with a small
# cap so that the test is fast.
def test_log_domain_lattice_cells_are_capped(monkeypatch):
    from dpbounds.accountant._laws import logdomain as L

    law = dpbounds.RandomAllocationPLD(0.7405932788014288, 16, 3)._law
    assert isinstance(law, L.LogDomainLaw)
    monkeypatch.setattr(L, "_MAX_CELLS", 2 ** 12)
    seen = []
    real = law.lattice_masses
    monkeypatch.setattr(law, "lattice_masses", lambda d: seen.append(d) or real(d))
    out = law.lattice_pmfs(1e-3, cell_span=1e-12)
    span_u = law.fine.u[-1] - law.fine.u[0]
    assert seen == [pytest.approx(span_u / 2 ** 12)]
    assert set(out) == {"remove", "add"}
