"""Type stub for dpbounds._ufuncs: every public name is a numpy ufunc."""
import numpy as np

_delta_bound_checked_exact: np.ufunc
_delta_bound_checked_simplified: np.ufunc
coef_exact: np.ufunc
coef_simplified: np.ufunc
compose_delta: np.ufunc
delta_bound_exact: np.ufunc
delta_bound_simplified: np.ufunc
delta_min_exact: np.ufunc
delta_min_simplified: np.ufunc
delta_terms_exact: np.ufunc
delta_terms_simplified: np.ufunc
log_ndtr: np.ufunc
lognormal_mu3: np.ufunc
lognormal_mu4: np.ufunc
lognormal_variance: np.ufunc
min_dataset_size: np.ufunc
ndtr: np.ufunc
ndtri: np.ufunc
ndtri_complement: np.ufunc
normal_pdf: np.ufunc
per_epoch_delta: np.ufunc
rho3: np.ufunc
rounds_closed_form: np.ufunc
rounds_required: np.ufunc
theorem31_status: np.ufunc
