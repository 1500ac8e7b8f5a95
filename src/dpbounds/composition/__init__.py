"""Composition of (epsilon, delta)-DP guarantees: the baselines RDP accounting is compared against.

The mechanism-agnostic tools a user without a moments accountant would reach for, as the
comparisons of "Subsampled Rényi Differential Privacy and Analytical Moments Accountant"
(Section 4, Figure 2) use them.  In reading order, one module per concept:

* ``_theorems`` -- the general theorems: :func:`subsample`, the standard subsampling lemma
  (sampling without replacement, replace-one neighbours): (eps, delta) -> (log(1 + gamma
  (e^eps - 1)), gamma delta); :func:`naive`, basic composition, (k eps, k delta); and
  :func:`advanced`, the advanced ("strong") composition theorem of Dwork, Rothblum and Vadhan;
* ``_optimal`` -- :func:`optimal` and :func:`optimal_delta`, the optimal composition theorem
  for k homogeneous (eps, delta)-DP mechanisms of Kairouz, Oh and Viswanath ("The Composition
  Theorem for Differential Privacy", 2015), evaluated exactly;
* ``_baseline`` -- :func:`subsampled_epsilon`, the paper's baseline curves: a base mechanism (a
  Gaussian on its privacy profile, or a pure-DP mechanism), the subsampling lemma, then k-fold
  naive, advanced or optimal composition, with the base delta and the composition slack chosen
  per k to minimise the total epsilon within a total delta budget.

All functions validate their arguments (:class:`dpbounds.DPBoundsError` naming the parameter),
broadcast over arrays and return Python floats for scalar input.  See docs/composition.md.
"""
from dpbounds.composition._baseline import SubsampledComposition, subsampled_epsilon
from dpbounds.composition._optimal import WINDOW_MAX as WINDOW_MAX  # the memory cap optimal's docstring names
from dpbounds.composition._optimal import optimal, optimal_delta
from dpbounds.composition._theorems import advanced, naive, subsample

__all__ = ["subsample", "naive", "advanced", "optimal", "optimal_delta",
           "subsampled_epsilon", "SubsampledComposition"]
