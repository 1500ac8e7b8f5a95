import numpy as np
import pytest

N_DELTA = 10**6
N_ROUNDS = 10**4


@pytest.fixture(scope="session")
def sigma_rounds():
    """10**6 distinct (sigma, M) pairs: no broadcasting shortcut applies."""
    rng = np.random.default_rng(1)
    s = rng.uniform(0.3, 5.0, N_DELTA)
    m = np.floor(10 ** rng.uniform(2, 12, N_DELTA))
    return s, m


@pytest.fixture(scope="session")
def sigma_delta():
    rng = np.random.default_rng(2)
    return rng.uniform(0.5, 3.0, N_ROUNDS), 10 ** rng.uniform(-4, -1, N_ROUNDS)
