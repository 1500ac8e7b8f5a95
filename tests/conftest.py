import os
import signal

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile("dev", deadline=None, max_examples=50)
# .ci/sanitize: the ci profile with fewer examples (each costs several times more under ASan)
settings.register_profile("sanitize", parent=settings.get_profile("ci"), max_examples=50)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _mpmath_precision_restored():
    """Many tests set mpmath's global precision; restoring it after each test keeps every
    test's references independent of which tests ran before it (an mpf reference negated or
    combined at the ambient precision would otherwise round differently by test order)."""
    import mpmath
    prec = mpmath.mp.prec
    yield
    mpmath.mp.prec = prec


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261129)


# the accuracy claims (the record_accuracy fixture; --record-accuracy publishes the measurements)
from accuracy_record import (  # noqa: E402,F401
    pytest_addoption,
    pytest_sessionfinish,
    record_accuracy,
)


def pytest_configure(config):
    # A shell starts background jobs (`cmd &`, nohup, some CI runners) with SIGINT ignored, and
    # an ignored signal stays ignored across exec: Python then never raises KeyboardInterrupt,
    # in this process or in the subprocesses the Ctrl-C tests signal.  Those tests check what a
    # user's Ctrl-C does, so they need Python's own handler here (children then inherit the
    # default disposition and install theirs).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
