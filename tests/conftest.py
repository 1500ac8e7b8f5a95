import os

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


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261129)


# the measured-accuracy record (--record-accuracy, the record_accuracy fixture)
from accuracy_record import pytest_addoption, pytest_sessionfinish, record_accuracy  # noqa: E402,F401
