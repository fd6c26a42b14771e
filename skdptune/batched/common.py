"""What batched families and steps share: the failed-fit marker, the checks of declared
parameters, and Laplace variates by inverse CDF.

Kept apart from :mod:`skdptune.batched` so that family modules can import it while the
package imports them.
"""


import numpy as np
from diffprivlib.validation import check_bounds

#: What a family's ``partition_accuracies`` returns for a partition whose real fit raises (a
#: condition of the partition's own rows, such as diffprivlib's ``LogisticRegression`` on
#: training rows of one class): the engine scores it ``error_score``, as the per-fit path does
#: (and under ``error_score="raise"`` reruns the candidates on the per-fit path, which raises
#: the real fit's error). NaN, a partition without training or held-out rows, takes
#: precedence.
FIT_FAILED = -np.inf

#: What a family's ``partition_accuracies`` computes per partition, its module attribute
#: ``SCORE`` (absent: :data:`ACCURACY`). The engine batches a candidate only when the search's
#: utility is that score (:func:`skdptune.evaluate.batched_route`).
#: Plain accuracy of predicted class codes (``y`` encoded as codes by ``prepare_data``).
ACCURACY = "accuracy"
#: :class:`~skdptune.utility.BoundedR2Scorer` with the candidate's ``bounds_y`` (the default of
#: ``scoring=None`` on diffprivlib's ``LinearRegression``); ``y`` stays float.
BOUNDED_R2 = "bounded_r2"
#: The estimator's own ``score`` (``scoring=None``, scikit-learn's ``_PassthroughScorer``) of
#: diffprivlib's ``KMeans``: scikit-learn's ``KMeans.score``, minus the inertia of the
#: held-out rows; the family returns the raw score and the engine maps it by the utility's
#: declared or default range (:func:`skdptune.utility.kmeans_score_range`).
NEGATIVE_INERTIA = "negative_inertia"


def family_score(family):
    """The per-partition score a family computes (:data:`ACCURACY` unless it declares one)."""
    return getattr(family, "SCORE", ACCURACY)


def uses_labels(family):
    """Whether a family's fit or score reads ``y`` (its ``USES_LABELS``, default True); one
    that does not is batched without ``y`` too."""
    return getattr(family, "USES_LABELS", True)


def declared_bounds(bounds, n_features):
    """Per-feature ``(lower, upper)`` of declared ``bounds``, as diffprivlib's ``check_bounds``
    expands them, or None (the family then falls back to the per-fit path, which gives the real
    fit's outcome).

    Parameters
    ----------
    bounds : tuple
        A diffprivlib model's ``bounds`` parameter.
    n_features : int or None
        Columns of ``X``; None before the data (the forecast): the width the bounds declare.

    Returns
    -------
    bounds : tuple of ndarray of shape (n_features,), or None
        Float arrays, finite, ``lower <= upper``.
    """
    if bounds is None:
        return None
    try:
        if n_features is None:
            n_features = int(max(np.size(bounds[0]), np.size(bounds[1])))
        lower, upper = check_bounds(bounds, shape=n_features)
    except Exception:  # noqa: BLE001 - whatever the real fit would make of it
        return None
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper)) and np.all(upper >= lower)):
        return None
    return lower, upper


def laplace(uniforms):
    """Standard Laplace variates by inverse CDF."""
    centred = uniforms - 0.5
    with np.errstate(divide="ignore"):
        return -np.sign(centred) * np.log1p(-2.0 * np.abs(centred))


def laplace_within(uniforms, low, high):
    """Standard Laplace variates conditioned on ``[low, high]`` (``low <= 0 <= high``), by
    inverse CDF: the law of diffprivlib's rejection sampler in ``LaplaceBoundedDomain``."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        below = 0.5 * np.exp(low)         # P(L < low)
        above = 0.5 * np.exp(-high)       # P(L > high)
        mass = 1.0 - below - above
        p = below + uniforms * mass       # CDF value of the draw, from the left
        q = above + (1.0 - uniforms) * mass  # 1 - p, from the right, without cancellation
        draw = np.where(p < 0.5, np.log(2.0 * p), -np.log(2.0 * q))
    return np.clip(draw, low, high)
