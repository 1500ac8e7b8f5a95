# Type stub for the compiled module dpbounds._tradeoff (numpy ufuncs over csrc/dpb_tradeoff.c, csrc/dpb_gdp.c).
import numpy as np

gaussian_tradeoff: np.ufunc
f0delta_tradeoff: np.ufunc
gaussian_f0delta_tradeoff: np.ufunc
multi_epoch_tradeoff: np.ufunc
gaussian_max_gap: np.ufunc
tradeoff_clt: np.ufunc
tradeoff_clt_truncated: np.ufunc
tradeoff_clt_slope: np.ufunc
tradeoff_edgeworth: np.ufunc
edgeworth_status: np.ufunc
edgeworth_p: np.ufunc
tradeoff_lower_bound_exact: np.ufunc
tradeoff_lower_bound_simplified: np.ufunc
normal_mills: np.ufunc
gdp_delta: np.ufunc
gdp_log_delta: np.ufunc
gdp_epsilon: np.ufunc
gdp_mu_random_allocation: np.ufunc
gdp_mu_poisson: np.ufunc
gdp_mu_poisson_drs: np.ufunc
