from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

def lognormal_cf_m1(sigma: float, t: ArrayLike, size_biased: bool = ...) -> NDArray[np.complex128]: ...
def lognormal_cf_m1_tilted(sigma: float, t: ArrayLike, lam: float,
                           size_biased: bool = ..., raw: bool = ...) -> NDArray[np.complex128]: ...
def lognormal_cf_m1_tilted_grid(sigma: float, n0: int, count: int, dt: float, lam: float,
                                size_biased: bool = ..., raw: bool = ...) -> NDArray[np.complex128]: ...

def logsum_convolve(qx: NDArray[np.float64], qz: NDArray[np.float64], h: float, K: int,
                    off: ArrayLike, w: ArrayLike, coef: ArrayLike,
                    tail_scale: float) -> NDArray[np.float64]: ...


FOURIER_SERIES_ERR_UNITS: float

def fourier_series_re(q: ArrayLike, coefs: Sequence[NDArray[np.complex128]]) -> NDArray[np.float64]: ...
def lognormal_cf_m1_pair_grid(sigma: float, n0: int, count: int,
                              dt: float) -> tuple[NDArray[np.complex128], NDArray[np.complex128]]: ...
