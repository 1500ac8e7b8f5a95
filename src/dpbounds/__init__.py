"""dpbounds: fast, exact differential-privacy bounds for DP-SGD."""
from dpbounds import _ufuncs as ufuncs

__version__ = "0.1.0"
