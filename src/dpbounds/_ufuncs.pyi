"""Type stub for dpbounds._ufuncs: every public name is a numpy ufunc."""
import numpy as np

ndtr: np.ufunc
log_ndtr: np.ufunc
ndtri: np.ufunc
ndtri_complement: np.ufunc
normal_pdf: np.ufunc
lognormal_variance: np.ufunc
lognormal_mu3: np.ufunc
lognormal_mu4: np.ufunc
rho3: np.ufunc
coef_simplified: np.ufunc
coef_exact: np.ufunc
delta_min_simplified: np.ufunc
delta_min_exact: np.ufunc
delta_bound_simplified: np.ufunc
delta_bound_exact: np.ufunc
_delta_bound_checked: np.ufunc
delta_terms_simplified: np.ufunc
delta_terms_exact: np.ufunc
theorem31_status: np.ufunc
rounds_closed_form: np.ufunc
rounds_required: np.ufunc
min_dataset_size: np.ufunc
compose_delta: np.ufunc
per_epoch_delta: np.ufunc
