"""Generate the odd Taylor coefficients of rho^3 = E|Y-1|^3 in eps = 1/sigma.

rho^3(eps) = e^{3 eps^2} erf(5 eps/(2 sqrt2)) - 3 e^{eps^2} erf(3 eps/(2 sqrt2)) + 4 erf(eps/(2 sqrt2))
(Proposition D.2 of the random-allocation paper; docs/theorem31.md).  The function is odd
and entire; coefficients are exact rationals times 1/sqrt(2 pi) and are computed here with
mpmath at 60 digits.
Output is pasted into csrc/dpb_lognormal.c (RHO3_SERIES).
Run:  python tools/gen_rho3_series.py
"""
import mpmath as mp

mp.mp.dps = 80
NTERMS = 32  # eps^1 ... eps^63

def rho3(e):
    s = 2 * mp.sqrt(2)
    return (mp.exp(3 * e**2) * mp.erf(5 * e / s) - 3 * mp.exp(e**2) * mp.erf(3 * e / s)
            + 4 * mp.erf(e / s))

c = mp.taylor(rho3, 0, 2 * NTERMS)
odd = [c[2 * k + 1] for k in range(NTERMS)]
assert abs(odd[0]) < mp.mpf(10) ** -60, odd[0]
for k, v in enumerate(odd):
    print(f"    {mp.nstr(v, 25, min_fixed=-1, max_fixed=0)},  /* eps^{2 * k + 1} */")
