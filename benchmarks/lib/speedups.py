"""Exact speed-ups of two pure diffprivlib helpers, for the fidelity study only.

Not library code, and no change to any number: each replacement returns what the original
returns (checked by :func:`check`, which the study runs in every worker before using them).

- ``LaplaceBoundedDomain._find_scale``: a deterministic bisection on the mechanism's public
  parameters ``(epsilon, delta, sensitivity, lower, upper)``; GaussianNB calls it twice per
  feature per fit (about half of a small fit's time). Memoised on those parameters.
- ``_FittingTree._check_bounds`` inside the random-tree build of RandomForestClassifier: it
  validates, per node, bounds that the build derived itself from already validated bounds
  (a Python loop over 104 features per node: 90 % of a forest fit). Replaced by the same
  checks, vectorised.
"""

from numbers import Integral

import numpy as np
from diffprivlib.mechanisms.laplace import LaplaceBoundedDomain
from diffprivlib.models import forest
from diffprivlib.validation import check_bounds

_ORIGINAL_FIND_SCALE = LaplaceBoundedDomain._find_scale
_SCALES = {}


def _memoised_find_scale(self):
    key = (type(self), float(self.epsilon), float(self.delta), float(self.sensitivity),
           float(self.lower), float(self.upper))
    if key not in _SCALES:
        _SCALES[key] = _ORIGINAL_FIND_SCALE(self)
    return _SCALES[key]


def fast_check_bounds(bounds, shape=0, min_separation=0.0, dtype=float):
    """``diffprivlib.validation.check_bounds`` for two equal-length 1-d arrays, vectorised."""
    if (not isinstance(bounds, tuple) or len(bounds) != 2 or not isinstance(shape, Integral)
            or shape == 0):
        return check_bounds(bounds, shape=shape, min_separation=min_separation, dtype=dtype)
    lower = np.asarray(bounds[0], dtype=dtype)
    upper = np.asarray(bounds[1], dtype=dtype)
    if lower.ndim != 1 or lower.shape != upper.shape or lower.size != shape or shape == 1:
        return check_bounds(bounds, shape=shape, min_separation=min_separation, dtype=dtype)
    if np.any(lower > upper) or np.any(np.isnan(lower)) or np.any(np.isnan(upper)):
        return check_bounds(bounds, shape=shape, min_separation=min_separation, dtype=dtype)
    narrow = upper - lower < min_separation
    if np.any(narrow):
        lower, upper = lower.copy(), upper.copy()
        mid = (upper[narrow] + lower[narrow]) / 2
        lower[narrow] = mid - min_separation / 2
        upper[narrow] = mid + min_separation / 2
    return lower, upper


def install():
    """Install both replacements (idempotent)."""
    LaplaceBoundedDomain._find_scale = _memoised_find_scale
    forest._FittingTree._check_bounds = staticmethod(fast_check_bounds)


def check(seed=0):
    """Raise if a replacement differs from the original on random inputs."""
    rng = np.random.RandomState(seed)
    for _ in range(200):
        d = rng.randint(2, 120)
        lower = rng.uniform(-2, 1, d)
        upper = lower + rng.uniform(0, 2, d) * (rng.rand(d) > 0.1)
        for sep in (0.0, 0.05):
            a = check_bounds((lower, upper), shape=d, min_separation=sep)
            b = fast_check_bounds((lower, upper), shape=d, min_separation=sep)
            assert all(np.array_equal(x, y) for x, y in zip(a, b))
    for _ in range(50):
        eps, lo = rng.uniform(0.001, 20), rng.uniform(-1, 0)
        mech = LaplaceBoundedDomain(epsilon=eps, delta=0, sensitivity=rng.uniform(0.01, 1),
                                    lower=lo, upper=lo + rng.uniform(0.5, 3))
        with np.errstate(invalid="ignore"):
            fast, original = _memoised_find_scale(mech), _ORIGINAL_FIND_SCALE(mech)
        assert fast == original or (np.isnan(fast) and np.isnan(original))
