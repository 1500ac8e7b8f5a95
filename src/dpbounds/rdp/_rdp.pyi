"""Type stubs for the compiled kernels dpbounds.rdp._rdp (raw: NaN for bad input, never raise)."""
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

gaussian: np.ufunc
laplace: np.ufunc
randomized_response: np.ufunc
poisson_gaussian_exact: np.ufunc
poisson_gaussian_compat: np.ufunc
poisson_quad_log: np.ufunc
poisson_negseries_log: np.ufunc
eps_objective_classic: np.ufunc
eps_objective_improved: np.ufunc
logdelta_objective_classic: np.ufunc
logdelta_objective_improved: np.ufunc
interp: np.ufunc

def wor_gaussian(alpha: ArrayLike, sigma: ArrayLike, gamma: ArrayLike, bound: int) -> Any: ...
def wor_table(eps_table: ArrayLike, eps_inf: float, gamma: ArrayLike, bound: int) -> NDArray[np.float64]: ...
def pv_logd(logs: ArrayLike) -> NDArray[np.float64]: ...
