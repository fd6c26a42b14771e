"""Every record brought into a model's declared domain, whatever its values.

A DP model's sensitivity holds because each record is clipped to what its parameters declare
(``bounds``, ``data_norm``) before anything reads it. The clip must therefore be defined for
every value a record can take, or one record decides whether the fit releases a model or
raises, and a search has charged the fit by then (DESIGN.md, "Charges"). So skdptune's models
validate ``X`` in float64 letting infinities through (:func:`validate_clippable`), clip, and
cast only then: a value finite in float64 but beyond float32's range, an infinity that an
earlier step's overflow made (``diffprivlib.models.StandardScaler``'s division, a
``PolynomialFeatures`` product) or a subnormal all reach the bound that declares them. NaN has
no place in a declared domain: it is refused, as scikit-learn's models refuse it.
"""

import numpy as np

from ._diffprivlib import validate_data
from ._sklearn_compat import ALL_FINITE_KEYWORD

#: The largest finite float64: an infinity is clipped to it before a row's norm is computed.
_LARGEST = np.finfo(np.float64).max


def validate_clippable(estimator, X, y="no_validation", **check_params):
    """diffprivlib's ``validate_data``, with infinite values of ``X`` let through for the clip.

    Parameters
    ----------
    estimator : estimator
        The model being fitted (its ``n_features_in_`` and feature names are set, as by
        ``validate_data``).
    X : array-like
    y : array-like, default="no_validation"
        Checked as ``validate_data`` checks it: NaN and infinities are refused there.
    **check_params
        ``validate_data``'s other parameters (``dtype``, ``multi_output``...).

    Returns
    -------
    X or (X, y)
        As ``validate_data`` returns them.

    Raises
    ------
    ValueError
        When ``X`` holds NaN (named, without quoting any value), and whatever
        ``validate_data`` raises.
    """
    validated = validate_data(estimator, X, y, **{ALL_FINITE_KEYWORD: False}, **check_params)
    values = validated[0] if isinstance(validated, tuple) else validated
    if values.dtype.kind == "f" and np.isnan(values).any():
        raise ValueError(
            f"X contains NaN, which {type(estimator).__name__} cannot clip to a declared "
            "bound. Remove or impute those values before fit (infinite values are clipped).")
    return validated


def clip_to_norm(X, norm):
    """Scale every row of ``X`` whose L2 norm exceeds ``norm`` down to ``norm``.

    diffprivlib's ``clip_to_norm`` for every value: a row whose squared entries overflow
    (a value above about ``1e154``) has an infinite norm there, and becomes zeros (or NaN when
    it holds an infinity). Here a row's norm is computed from the row divided by its largest
    absolute entry, an infinity first taken as the largest finite float, so a row outside the
    ball keeps its direction (an infinity's sign); a row inside it is returned unchanged.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Without NaN.
    norm : float
        Positive and finite.

    Returns
    -------
    rows : ndarray of shape (n_samples, n_features), float64
        Every row of L2 norm at most ``norm`` (up to rounding): the bound a model's
        sensitivity assumes.
    """
    X = np.clip(np.asarray(X, dtype=np.float64), -_LARGEST, _LARGEST)
    largest = np.max(np.abs(X), axis=1, initial=0.0)[:, np.newaxis]
    unit = X / np.where(largest > 0, largest, 1.0)  # entries in [-1, 1]: no overflow
    unit_norm = np.maximum(np.linalg.norm(unit, axis=1), 1.0)[:, np.newaxis]  # 1 for zeros
    # The row's norm is largest * unit_norm, which may overflow: compared without computing it.
    inside = largest <= norm / unit_norm
    return np.where(inside, X, unit * (norm / unit_norm))
