"""The single-epoch laws of random allocation (private).

One epoch with noise multiplier sigma and M rounds is the pair H0: x ~ N(0, I_M) against
H1: x ~ (1/M) sum_j N(e_j/sigma, I_M), whose likelihood ratio is S/M with S a sum of M
i.i.d. lognormals.  Each module here represents the law of S one way; all share one interface.

Reading order: ``interface`` (what a law answers, and its error budget), ``select`` (the only
place that decides which law serves (sigma, M)), ``tails`` (the rigorous tail bounds that
certify every window), then the laws themselves: ``fourier`` (the characteristic-function
series, the fast path), ``tilted`` (the exponentially tilted series for small sigma and large
M), ``logdomain`` (the law of log S on a grid, for small sigma and small M) and ``partial``
(k of the M steps of an epoch released).

Nothing is imported here, so that ``import dpbounds.accountant._laws.tails`` loads no law.
"""
