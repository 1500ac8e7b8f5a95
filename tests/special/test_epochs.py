"""Multi-epoch composition of f_{0,delta} (docs/epochs.md) vs mpmath."""
import oracle
import pytest

import dpbounds


@pytest.mark.parametrize("delta", [1e-300, 1e-20, 1e-8, 1e-3, 0.01, 0.3, 0.9])
@pytest.mark.parametrize("epochs", [1, 2, 4, 100, 10**6])
def test_compose_delta(delta, epochs, record_accuracy):
    mp = oracle.mp
    regime = "delta in [1e-300, 0.9], E in [1, 1e6] (35 points, each a parametrization)"
    with oracle.workdps():  # 1 - (1 - d)^E, written so 60 digits suffice for d = 1e-300
        ref = -mp.expm1(epochs * mp.log1p(-mp.mpf(delta)))
    e = oracle.rel_error(dpbounds.compose_delta(delta, epochs), ref)
    record_accuracy("compose_delta", e, "relative", regime)
    assert e <= 1e-15 * max(1, epochs**0.5)
    with oracle.workdps():
        ref = -mp.expm1(mp.log1p(-mp.mpf(delta)) / epochs)
    e = oracle.rel_error(dpbounds.per_epoch_delta(delta, epochs), ref)
    record_accuracy("per_epoch_delta", e, "relative", regime)
    assert e <= 1e-15 * max(1, epochs**0.5)


def test_section_52_four_epochs():
    # E = 4 epochs at delta_epoch = 1/400 compose to ~0.01 (section 5.2)
    assert dpbounds.compose_delta(1 / 400, 4) == pytest.approx(0.0099625624609375, rel=1e-14, abs=0)
    assert dpbounds.compose_delta([0.0, 1.0], 3).tolist() == [0.0, 1.0]
