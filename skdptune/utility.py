"""Bounded utilities from scikit-learn scorers.

The selection mechanisms need every per-partition utility in ``[0, 1]``: that bound, divided by
the number of partitions, is the sensitivity of the mean utility. A scorer whose values are
known to lie in ``[0, 1]`` is used as it is (and clipped, which changes nothing). Any other scorer
needs a user-declared ``utility_range=(low, high)``: scores are rescaled affinely to ``[0, 1]``
and clipped. An unbounded scorer without a range is an error, never a silent clip, because a
clip at an arbitrary bound would make the utilities meaningless.
"""

import re
from numbers import Real

import numpy as np
from sklearn.base import is_classifier
from sklearn.metrics import get_scorer

# Names of get_scorer scorers whose values lie in [0, 1] for every input.
_BOUNDED_SCORER_PATTERN = re.compile(
    r"^(accuracy|balanced_accuracy|top_k_accuracy|average_precision|roc_auc(_ov[or](_weighted)?)?"
    r"|(f1|precision|recall|jaccard)(_(binary|micro|macro|weighted|samples))?"
    r"|homogeneity_score|completeness_score|v_measure_score|fowlkes_mallows_score"
    r"|normalized_mutual_info_score)$"
)


class BoundedUtility:
    """A scorer followed by an affine map to ``[0, 1]`` and a clip.

    Parameters
    ----------
    scorer : callable
        ``scorer(estimator, X, y) -> float``.
    low, high : float
        The declared range of the scorer; scores are mapped by ``(s - low) / (high - low)``
        and clipped to ``[0, 1]``.
    """

    def __init__(self, scorer, low, high):
        self.scorer = scorer
        self.low = low
        self.high = high

    def to_utility(self, score):
        """Map a raw score (or an array of them) to ``[0, 1]``; NaN stays NaN (the caller
        applies ``error_score``)."""
        return np.clip((np.asarray(score, dtype=float) - self.low) / (self.high - self.low),
                       0.0, 1.0)

    def to_score(self, utility):
        """Map a utility back to the scorer's units (for reporting a DP estimate)."""
        return self.low + utility * (self.high - self.low)

    def __call__(self, estimator, X, y):
        return float(self.to_utility(self.scorer(estimator, X, y)))


def make_utility(estimator, scoring, utility_range):
    """Build the scorer and its bounded utility, or raise if the scorer is not bounded.

    Parameters
    ----------
    estimator : estimator
        The estimator being tuned (decides the default scorer).
    scoring : str, callable or None
        As for :func:`sklearn.metrics.get_scorer`; None means accuracy for classifiers and
        ``estimator.score`` otherwise.
    utility_range : (float, float) or None
        Declared ``(low, high)`` of the scorer's values.

    Returns
    -------
    scorer : callable
        The scikit-learn scorer (for ``score``).
    utility : BoundedUtility
    """
    if scoring is None and is_classifier(estimator):
        scoring = "accuracy"
    if scoring is None:
        scorer = _estimator_score
    else:
        scorer = get_scorer(scoring)

    if utility_range is not None:
        low, high = _check_utility_range(utility_range)
        return scorer, BoundedUtility(scorer, low, high)
    if isinstance(scoring, str) and _BOUNDED_SCORER_PATTERN.match(scoring):
        return scorer, BoundedUtility(scorer, 0.0, 1.0)
    described = "estimator.score" if scoring is None else repr(scoring)
    raise ValueError(
        f"The scorer {described} is not known to be bounded, and utilities must lie in [0, 1] "
        "for a private selection. Declare its range with utility_range=(low, high) (scores are "
        "rescaled to [0, 1] and clipped), or use a bounded scorer such as 'accuracy', "
        "'balanced_accuracy', 'roc_auc' or 'f1'."
    )


def _estimator_score(estimator, X, y=None):
    # Mirrors scikit-learn's passthrough scorer (scoring=None): the estimator's own score.
    if y is None:
        return estimator.score(X)
    return estimator.score(X, y)


def _check_utility_range(utility_range):
    try:
        low, high = utility_range
    except (TypeError, ValueError):
        raise ValueError(
            f"utility_range must be a pair (low, high) of finite numbers with low < high, got "
            f"{utility_range!r}."
        ) from None
    if not (
        isinstance(low, Real) and isinstance(high, Real) and np.isfinite(low)
        and np.isfinite(high) and low < high
    ):
        raise ValueError(
            f"utility_range must be a pair (low, high) of finite numbers with low < high, got "
            f"{utility_range!r}."
        )
    return float(low), float(high)
