"""Bounded utilities from scikit-learn scorers.

The selection mechanisms need every per-partition utility in ``[0, 1]``: that bound, divided by
the number of partitions, is the sensitivity of the mean utility. A scorer whose values are
known to lie in ``[0, 1]`` is used as it is (and clipped, which changes nothing). Any other scorer
needs a user-declared ``utility_range=(low, high)``: scores are rescaled affinely to ``[0, 1]``
and clipped. An unbounded scorer without a range is an error, never a silent clip, because a
clip at an arbitrary bound would make the utilities meaningless.
"""

import re
from collections.abc import Mapping
from numbers import Real

import numpy as np
from diffprivlib.models import KMeans as DPKMeans
from diffprivlib.models import LinearRegression as DPLinearRegression
from sklearn.base import ClassifierMixin
from sklearn.dummy import DummyClassifier
from sklearn.metrics import accuracy_score, check_scoring, pairwise_distances, roc_auc_score
from sklearn.multioutput import MultiOutputClassifier
from sklearn.neighbors import KNeighborsClassifier, RadiusNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags
from sklearn.utils.validation import _num_samples

from ._sklearn_compat import _check_multimetric_scoring, _PassthroughScorer
from ._models.cluster import KMeans
from .exceptions import ScorerOutputError

# Names of get_scorer scorers whose values lie in [0, 1] for every input.
_BOUNDED_SCORER_PATTERN = re.compile(
    r"^(accuracy|balanced_accuracy|top_k_accuracy|average_precision|roc_auc(_ov[or](_weighted)?)?"
    r"|(f1|precision|recall|jaccard)(_(binary|micro|macro|weighted|samples))?"
    r"|homogeneity_score|completeness_score|v_measure_score|fowlkes_mallows_score"
    r"|normalized_mutual_info_score)$"
)


#: Utility of a partition whose training or validation part the random split left empty
#: (possible for small data even when every part expects a record), when the fit or the score
#: cannot handle the empty part (it raises, or the score is not finite: accuracy on no
#: record). A fixed value, independent of the data and of error_score: an empty part is a
#: property of the record labels, not a failure of the estimator, so it is never an error,
#: also under error_score="raise". An estimator and scorer that handle an empty part (a
#: score that reads the fitted model only) keep their own utility.
EMPTY_PART_UTILITY = 0.0

# score methods that are scikit-learn's accuracy (ClassifierMixin.score, or a method that
# returns it or the mean subset accuracy), whose values lie in [0, 1]. Matched by identity: a
# subclass that overrides score is not covered.
_ACCURACY_SCORES = (
    ClassifierMixin.score,
    DummyClassifier.score,
    KNeighborsClassifier.score,
    RadiusNeighborsClassifier.score,
    MultiOutputClassifier.score,
)


class BoundedUtility:
    """A scorer followed by an affine map to ``[0, 1]`` and a clip.

    Parameters
    ----------
    scorer : callable
        ``scorer(estimator, X, y, **score_params) -> float``, or ``scorer(estimator, X,
        **score_params)`` when there is no ``y``.
    low, high : float
        The declared range of the scorer; scores are mapped by ``(s - low) / (high - low)``
        and clipped to ``[0, 1]``.
    key : str or None, default=None
        For a callable scorer that returns a dict of metrics: the metric to use (the search's
        ``refit``). Without it a dict is a :class:`~skdptune.exceptions.ScorerOutputError`.
    """

    def __init__(self, scorer, low, high, key=None):
        self.scorer = scorer
        self.low = low
        self.high = high
        self.key = key

    def to_utility(self, score):
        """Map a raw score (or an array of them) to ``[0, 1]``; NaN stays NaN (the caller
        applies ``error_score``)."""
        return np.clip((np.asarray(score, dtype=float) - self.low) / (self.high - self.low),
                       0.0, 1.0)

    def to_score(self, utility):
        """Map a utility back to the scorer's units (for reporting a DP estimate)."""
        return self.low + utility * (self.high - self.low)

    def __call__(self, estimator, X, y=None, **score_params):
        # Without y, the scorer is called as scorer(estimator, X), as scikit-learn does.
        if y is None:
            score = self.scorer(estimator, X, **score_params)
        else:
            score = self.scorer(estimator, X, y, **score_params)
        return float(self.to_utility(self.metric_value(score)))

    def metric_value(self, score):
        """The selection's metric from one output of the scorer.

        Raises
        ------
        ScorerOutputError
            For a dict without ``key`` (or any dict when ``key`` is None), or anything else
            that is not one number.
        """
        if isinstance(score, Mapping):
            if self.key is None:
                raise ScorerOutputError(
                    f"The scorer {self.scorer!r} returned a dict of metrics, but a private "
                    "search selects on one metric: name it with refit='<key>' (the others are "
                    "not released), or make the scorer return that metric alone (with "
                    "refit=False)."
                )
            if self.key not in score:
                raise ScorerOutputError(
                    "For multi-metric scoring, the parameter refit must be set to a scorer key: "
                    f"the scorer {self.scorer!r} returned a dict without the key "
                    f"refit={self.key!r}."
                )
            score = score[self.key]
        if isinstance(score, (bool, np.bool_)) or not (
            isinstance(score, (Real, np.number)) or (isinstance(score, np.ndarray)
                                                     and score.ndim == 0)
        ):
            raise ScorerOutputError(
                f"The scorer {self.scorer!r} returned a {type(score).__name__}, not one number."
            )
        return score


def _predicted(estimator, X, y):
    """``(prediction, y, bounds_y)``: what a ``bounds_y`` score reads of a fitted estimator."""
    y = np.asarray(y, dtype=float)
    prediction = np.asarray(estimator.predict(X), dtype=float).reshape(y.shape)
    return prediction, y, declared_bounds_y(estimator)


class _BoundsYScorer:
    """A score that reads the declared ``bounds_y`` of the estimator it scores."""

    def check_applies(self, estimator, params):
        """Raise ``ValueError`` before the data unless ``estimator`` (a candidate with
        ``params``) declares valid ``bounds_y``."""
        if declared_bounds_y(estimator, required=False) is None:
            raise ValueError(
                f"The scorer {self!r} (what scoring=None and scoring='r2' mean for a regressor "
                f"with bounds_y) reads the declared bounds_y, but {type(estimator).__name__} "
                f"with {params} does not end in diffprivlib's LinearRegression with bounds_y: "
                "declare bounds_y on every candidate, or pass a scorer that does not read "
                "them (e.g. 'neg_mean_absolute_error') with a utility_range."
            )

    def __repr__(self):
        return f"{type(self).__name__}()"


#: The range :class:`BoundedR2Scorer` is mapped from and clipped to, per partition, unless a
#: ``utility_range`` is declared. R² is at most 1; below, -1 (twice the error of predicting
#: the held-out mean) keeps candidates that fail badly on many partitions apart from merely
#: useless ones, which a clip at 0 would score alike and so favour erratic candidates at low
#: budgets (measured on three tables: benchmarks/RESULTS.md, "Selecting regression by R²").
R2_RANGE = (-1.0, 1.0)


class BoundedR2Scorer(_BoundsYScorer):
    """R² of predictions and targets clipped to the declared ``bounds_y``.

    The default score of a search over diffprivlib's ``LinearRegression(bounds_y=(low,
    high))`` or :class:`skdptune.linear_model.Ridge` (also at the end of a pipeline) with
    ``scoring=None``: the estimator's own score, R², made a utility. Clipping to the public
    bounds is post-processing of the prediction. R² is at most 1 and unbounded below; the
    search maps each partition's value from ``R2_RANGE`` to ``[0, 1]`` and clips it, so
    every partition utility lies in ``[0, 1]`` and the mean over ``k`` disjoint partitions has
    sensitivity ``1 / k``, as for any bounded utility.

    Against :class:`BoundedSquaredErrorScorer` it resolves what users measure: one point of
    R² is half a point of this utility, while one point of the bounded squared error is
    ``(high - low)**2 / var(y)`` points of R² (30 to 50 on the benchmarks' tables), so the
    same selection noise blurs 15 to 25 times more R² there.

    Targets whose clipped values are constant score 1 for exact predictions and 0 otherwise
    (scikit-learn's ``r2_score(force_finite=True)``), as does a single record. With several
    targets, the score is the mean of each target's R².

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune.utility import BoundedR2Scorer
    >>> y = np.array([0.0, 5.0, 10.0])
    >>> round(float(BoundedR2Scorer.scores_of(np.array([0.0, 5.0, 20.0]), y, (0.0, 10.0))), 3)
    1.0
    """

    def __call__(self, estimator, X, y, sample_weight=None):
        """The score of ``estimator`` on ``(X, y)``: at most 1.

        Parameters
        ----------
        estimator : estimator
            A fitted diffprivlib ``LinearRegression`` with ``bounds_y``, or a pipeline
            ending in one.
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the records.

        Returns
        -------
        score : float
        """
        return self.scores_of(*_predicted(estimator, X, y), sample_weight)

    @staticmethod
    def scores_of(prediction, y, bounds_y, sample_weight=None):
        """The score of given predictions (the one definition, which the batched linear
        family reads too).

        Parameters
        ----------
        prediction, y : ndarray of the same shape, (n_samples,) or (n_samples, n_targets)
        bounds_y : (low, high)
            The declared bounds of the targets.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        low, high = bounds_y
        prediction, y = np.clip(prediction, low, high), np.clip(y, low, high)
        if y.ndim == 1:
            prediction, y = prediction[:, None], y[:, None]
        weights = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
        mean = np.average(y, axis=0, weights=weights) if len(y) else np.zeros(y.shape[1])
        residual = weights @ (prediction - y) ** 2
        total = weights @ (y - mean) ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = np.where(total > 0, 1.0 - residual / total,
                              np.where(residual == 0, 1.0, 0.0))
        return float(scores.mean())


class BoundedSquaredErrorScorer(_BoundsYScorer):
    """``1 - mean((clip(pred) - clip(y))**2) / (high - low)**2``, from declared ``bounds_y``.

    The default score of a search over diffprivlib's ``LinearRegression(bounds_y=(low,
    high))`` (also at the end of a pipeline) with ``scoring=None``: R² (its own ``score``)
    has no lower bound, while the declared, public bounds on ``y`` bound this one. Targets
    and predictions are clipped to ``[low, high]``, so every squared difference is at most
    ``(high - low)**2`` and the score lies in ``[0, 1]`` whatever the data: 1 for exact
    predictions, 0 when every prediction is at the opposite bound. With several targets,
    each is scaled by its own range and the score is the mean over targets. It reads the
    bounds of the estimator it scores (a grid may vary them).

    Examples
    --------
    >>> import numpy as np
    >>> from diffprivlib.models import LinearRegression
    >>> from skdptune.utility import BoundedSquaredErrorScorer
    >>> X, y = np.array([[0.0], [1.0]]), np.array([0.0, 10.0])
    >>> model = LinearRegression(bounds_X=(0, 1), bounds_y=(0, 10), epsilon=1e9,
    ...                          random_state=0).fit(X, y)
    >>> round(BoundedSquaredErrorScorer()(model, X, y), 3)
    1.0
    """

    def __call__(self, estimator, X, y, sample_weight=None):
        """The score of ``estimator`` on ``(X, y)``, in ``[0, 1]``.

        Parameters
        ----------
        estimator : estimator
            A fitted diffprivlib ``LinearRegression`` with ``bounds_y``, or a pipeline
            ending in one.
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the records' squared errors.

        Returns
        -------
        score : float
        """
        return 1.0 - float(np.average(1.0 - self.per_record(estimator, X, y),
                                      weights=sample_weight))

    def per_record(self, estimator, X, y):
        """Each record's score ``1 - (clip(pred) - clip(y))**2 / (high - low)**2``, in
        ``[0, 1]`` (the mean over targets with several).

        Parameters
        ----------
        estimator : estimator
            As for ``__call__``.
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        return self.scores_of(*_predicted(estimator, X, y))

    @staticmethod
    def scores_of(prediction, y, bounds_y):
        """Each record's score, as :meth:`per_record`, of given predictions.

        Parameters
        ----------
        prediction, y : ndarray of the same shape, (n_samples,) or (n_samples, n_targets)
        bounds_y : (low, high)
            The declared bounds of the targets.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        low, high = bounds_y
        # Clipped to the public bounds: each term lies in [0, 1], whatever y and the model.
        error = ((np.clip(prediction, low, high) - np.clip(y, low, high)) / (high - low)) ** 2
        error = np.clip(error, 0.0, 1.0)
        return 1.0 - (error.mean(axis=1) if error.ndim == 2 else error)

def _scoring_is_r2(scoring):
    """Whether ``scoring`` names scikit-learn's R² (``"r2"``)."""
    return isinstance(scoring, str) and scoring == "r2"


class SimplifiedSilhouetteScorer:
    """The simplified silhouette of the scored rows under the fitted centres, discounted by
    the share of centres the fit found empty.

    The default score of a search over :class:`skdptune.cluster.KMeans` (also at the end of a
    pipeline) with ``scoring=None``. Each scored row (after the pipeline's earlier steps) has
    distance ``a`` to its nearest centre and ``b`` to the second nearest; its simplified
    silhouette is ``(b - a) / b`` (Vendramin, Campello & Hruschka 2010), in ``[0, 1]``: near
    1 when it sits at its centre and far from any other, near 0 between two centres. The
    score is their (weighted) mean times the share of centres not in ``empty_clusters_``
    (centres whose noisy count showed no records, redrawn from the box; 1 for a clusterer
    without that attribute): in ``[0, 1]`` whatever the data, so the search uses it without a
    ``utility_range``.

    Held-out inertia (``KMeans.score``) only falls as ``n_clusters`` grows. This score peaks
    where clusters are compact and apart: too few centres leave rows between clusters'
    centres, too many split clusters (rows between two close centres), and a centre no
    record is near, which a silhouette of the rows alone would not see, is discounted. It
    reads the fitted centres and the scored rows only (one pass, ``O(n_rows *
    n_clusters)``); rows in a single cluster, or no second centre, score 0.

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune.cluster import KMeans
    >>> from skdptune.utility import SimplifiedSilhouetteScorer
    >>> X = np.array([[0.0, 0.0], [0.0, 0.1], [1.0, 1.0], [1.0, 0.9]])
    >>> model = KMeans(n_clusters=2, bounds=(0, 1), epsilon=1e6, random_state=0).fit(X)
    >>> round(SimplifiedSilhouetteScorer()(model, X), 2)
    0.93
    """

    def __call__(self, estimator, X, y=None, sample_weight=None):
        """The score of ``estimator``'s centres on ``X``.

        Parameters
        ----------
        estimator : estimator
            A fitted clusterer with ``cluster_centers_``, or a pipeline ending in one.
        X : array-like of shape (n_samples, n_features)
        y : ignored
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows' simplified silhouettes.

        Returns
        -------
        score : float
            In ``[0, 1]``; NaN without rows.
        """
        while isinstance(estimator, Pipeline):
            X = estimator[:-1].transform(X)
            estimator = estimator.steps[-1][1]
        centres = estimator.cluster_centers_
        if _num_samples(X) == 0:
            return float("nan")
        if len(centres) < 2:
            return 0.0
        distances = np.sort(pairwise_distances(X, centres), axis=1)
        silhouettes = simplified_silhouettes(distances[:, 0], distances[:, 1])
        kept = 1.0 - np.mean(getattr(estimator, "empty_clusters_", False))
        return float(np.average(silhouettes, weights=sample_weight) * kept)

    def check_applies(self, estimator, params):
        """Raise ``ValueError`` before the data unless ``estimator`` (a candidate with
        ``params``) is, or ends in, a clusterer with ``cluster_centers_`` (k-means)."""
        final = _final_step(estimator)
        if _kind(estimator) != "clusterer" or not hasattr(final, "n_clusters"):
            raise ValueError(
                f"The scorer {self!r} (scoring=None's for skdptune.cluster.KMeans) reads the "
                f"centres of a k-means, but {type(estimator).__name__} with {params} does not "
                "end in one: pass scoring=... for this candidate."
            )

    def __repr__(self):
        return f"{type(self).__name__}()"


def simplified_silhouettes(nearest, second):
    """Each row's simplified silhouette ``(b - a) / b`` from its distances ``a`` to the
    nearest centre and ``b`` to the second nearest (0 where ``b`` is 0): what
    :class:`SimplifiedSilhouetteScorer` averages, also over the batched engine's partitions
    (``skdptune._batched.dp_lloyd``).

    Parameters
    ----------
    nearest, second : ndarray of shape (n_rows,)

    Returns
    -------
    silhouettes : ndarray of shape (n_rows,)
        In ``[0, 1]``.
    """
    return np.divide(second - nearest, second, out=np.zeros_like(second), where=second > 0)


def declared_bounds_y(estimator, required=True):
    """``(low, high)`` arrays of the ``bounds_y`` a diffprivlib ``LinearRegression`` declares
    (also at the end of a pipeline), or None when there are none (``required=False``).

    Raises
    ------
    ValueError
        For bounds that are not finite with ``low < high``, or (``required=True``) none.
    """
    final = _final_step(estimator)
    bounds = getattr(final, "bounds_y", None) if isinstance(final, DPLinearRegression) else None
    if bounds is None:
        if required:
            raise ValueError(f"{type(estimator).__name__} declares no bounds_y.")
        return None
    try:
        low, high = (np.asarray(bound, dtype=float) for bound in bounds)
        low, high = np.broadcast_arrays(low, high)
    except (TypeError, ValueError):
        low = high = np.asarray(np.nan)
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high)) and np.all(low < high)):
        raise ValueError(f"bounds_y must be (lower, upper), finite, with lower < upper; got "
                         f"bounds_y={bounds!r}.")
    return low, high


def default_kmeans_range(candidates, n_records, n_features):
    """``utility_range`` for ``scoring=None`` on diffprivlib's ``KMeans(bounds=...)``, or None
    (:class:`skdptune.cluster.KMeans` is scored by :class:`SimplifiedSilhouetteScorer` instead).

    The widest :func:`kmeans_score_range` over the candidates (a grid may vary ``bounds``):
    each candidate's score lies in its own range, hence in the widest. From public
    quantities only: the declared bounds and ``n_records``, the expected number of records a
    partition scores (``n_samples * validation_fraction / n_partitions``).

    Parameters
    ----------
    candidates : list of estimators
        Every candidate, unfitted.
    n_records : float
        Records one partition is expected to score.
    n_features : int or None
        Number of features of ``X``; used for scalar bounds when the candidate is the
        ``KMeans`` itself (in a pipeline its input width is not known before the fit).

    Returns
    -------
    utility_range : (float, float) or None
        None unless every candidate is (or ends in) diffprivlib's own ``KMeans`` with declared
        ``bounds``.
    """
    ranges = []
    for candidate in candidates:
        final = _final_step(candidate)
        if (not isinstance(final, DPKMeans) or isinstance(final, KMeans)
                or final.bounds is None):
            return None  # skdptune's KMeans is scored by the silhouette (make_utility)
        scalar = all(np.ndim(bound) == 0 for bound in final.bounds)
        if scalar and (final is not candidate or n_features is None):
            return None
        ranges.append(kmeans_score_range(final.bounds, n_records,
                                         n_features=n_features if scalar else None))
    return min(ranges)


def make_utility(estimator, scoring, utility_range, key=None):
    """Build the scorer and its bounded utility, or raise if the scorer is not bounded.

    Parameters
    ----------
    estimator : estimator
        The estimator being tuned (decides the default scorer).
    scoring : str, callable or None
        As for :func:`sklearn.metrics.check_scoring`; None means ``estimator.score``, as in
        scikit-learn's searches. It is known to lie in ``[0, 1]`` when it is scikit-learn's
        accuracy (``ClassifierMixin.score``, also at the end of a pipeline). Without a
        ``utility_range``, for diffprivlib's ``LinearRegression`` with ``bounds_y`` (also at
        the end of a pipeline) it means :class:`BoundedR2Scorer`: R² of the predictions and
        targets clipped to ``bounds_y``, mapped from ``R2_RANGE``. So does ``"r2"`` for
        such an estimator, with or without a ``utility_range`` (mapped from it when given).
        For :class:`skdptune.cluster.KMeans` (also at the end of a pipeline) it means
        :class:`SimplifiedSilhouetteScorer`, in ``[0, 1]``.
    utility_range : (float, float) or None
        Declared ``(low, high)`` of the scorer's values; when given, it is used whatever the
        scorer (``scoring=None`` then means ``estimator.score``, R² for a regressor).
    key : str or None, default=None
        The metric to take from a callable scorer that returns a dict (see
        :func:`selection_metric`).

    Returns
    -------
    scorer : callable
        The scikit-learn scorer (for ``score``): ``scorer(estimator, X, y)``, or
        ``scorer(estimator, X)`` when there is no ``y``.
    utility : BoundedUtility

    Raises
    ------
    TypeError
        When ``scoring`` is None and the estimator has no ``score`` method: every partition
        would score ``error_score`` and the selection would be pure noise.
    ValueError
        When the scorer is not known to be bounded and no ``utility_range`` is declared; the
        message advises on a range for the kind of estimator.
    """
    if declared_bounds_y(estimator, required=False) is not None and (
            (scoring is None and utility_range is None) or _scoring_is_r2(scoring)):
        # The estimator's own R² (of the clipped predictions), mapped from R2_RANGE (or the
        # declared utility_range) and clipped per partition (see the class): each partition
        # utility lies in [0, 1], so the mean's sensitivity is 1 / n_partitions, as for every
        # utility. scoring="r2" means the same R², so it gets the same bounded form.
        scorer = BoundedR2Scorer()
        low, high = R2_RANGE if utility_range is None else _check_utility_range(utility_range)
        return scorer, BoundedUtility(scorer, low, high, key)
    if scoring is None and utility_range is None and isinstance(_final_step(estimator), KMeans):
        # The simplified silhouette of each partition's held-out rows, in [0, 1]: held-out
        # inertia only falls with n_clusters. Sensitivity 1 / n_partitions as ever.
        scoring = SimplifiedSilhouetteScorer()
    if isinstance(scoring, (BoundedSquaredErrorScorer, BoundedR2Scorer,
                            SimplifiedSilhouetteScorer)):
        scorer = scoring
    elif scoring is None:
        if not hasattr(estimator, "score"):
            raise TypeError(
                "If no scoring is specified, the estimator passed should have a 'score' "
                f"method. The estimator {type(estimator).__name__} does not: every partition "
                "would score error_score and the selection would be pure noise. Pass "
                f"scoring=... ({_scoring_advice(estimator)})."
            )
        scorer = check_scoring(estimator, None)
    else:
        scorer = check_scoring(estimator, scoring)

    if utility_range is not None:
        low, high = _check_utility_range(utility_range)
        return scorer, BoundedUtility(scorer, low, high, key)
    if (scoring is None and scores_accuracy(estimator)) or (
        isinstance(scoring, str) and _BOUNDED_SCORER_PATTERN.match(scoring)
    ) or isinstance(scoring, (BoundedSquaredErrorScorer, SimplifiedSilhouetteScorer)):
        return scorer, BoundedUtility(scorer, 0.0, 1.0, key)
    if isinstance(scoring, BoundedR2Scorer):
        return scorer, BoundedUtility(scorer, *R2_RANGE, key)
    described = (f"estimator.score of {type(estimator).__name__}" if scoring is None
                 else repr(scoring))
    raise ValueError(
        f"The scorer {described} is not known to be bounded, and utilities must lie in [0, 1] "
        "for a private selection. Declare its range with utility_range=(low, high) from "
        "public knowledge (scores are rescaled to [0, 1] and clipped): "
        f"{_range_advice(estimator, scoring)}"
    )


def selection_metric(estimator, scoring, refit):
    """The one metric a private selection uses, from ``scoring`` and ``refit``.

    A private search releases a selection made on one metric; with several metrics (a list,
    tuple, set or dict, as in scikit-learn's multi-metric scoring) ``refit`` names it, as it
    does for ``GridSearchCV``, and the other metrics are not computed (releasing their
    per-candidate scores would not be private). Decided from the parameters alone.

    Parameters
    ----------
    estimator : estimator
        The estimator being tuned.
    scoring : str, callable, list, tuple, set, dict or None
        The search's ``scoring``.
    refit : bool, str or callable
        The search's ``refit``.

    Returns
    -------
    metric : str, callable or None
        The ``scoring`` of the selection's metric, for :func:`make_utility`.
    key : str or None
        For a callable ``scoring`` and ``refit=<name>``: the key to take when the callable
        returns a dict of metrics (as ``GridSearchCV`` does).

    Raises
    ------
    ValueError
        For several metrics without ``refit=<one of their names>``.
    """
    if not isinstance(scoring, (list, tuple, set, dict)):
        return scoring, (refit if callable(scoring) and isinstance(refit, str) else None)
    names = sorted(_check_multimetric_scoring(estimator, scoring))
    if isinstance(refit, str) and refit in names:
        return (scoring[refit] if isinstance(scoring, dict) else refit), None
    if refit is False:
        remedy = (f"With refit=False, a private search still selects one candidate on one "
                  f"metric: pass that metric alone, e.g. scoring={names[0]!r}.")
    elif callable(refit):
        remedy = ("A callable refit sees only the released cv_results_, which hold no score "
                  "per metric: name the metric instead.")
    else:
        remedy = f"E.g. refit={names[0]!r}."
    raise ValueError(
        "For multi-metric scoring, the parameter refit must be set to a scorer key naming the "
        f"metric the private selection uses, one of {names}; got refit={refit!r}. A private "
        "search selects on one metric and computes no other: releasing every metric's score "
        f"per candidate would not be private. {remedy}"
    )


def kmeans_score_range(bounds, n_records, *, n_features=None):
    """``utility_range`` for ``KMeans.score`` from public quantities only.

    ``KMeans.score(X)`` is minus the inertia of ``X``: the sum, over the records of ``X``, of
    the squared distance from the record to its nearest centre. When every feature ``j`` lies
    in a declared interval ``[lower_j, upper_j]`` (diffprivlib's ``KMeans(bounds=...)`` needs
    them anyway) and the centres lie in the same box (diffprivlib's do: they are noisy means
    of clipped records, clipped to the bounds), one record contributes at most the squared
    diagonal ``D^2 = sum_j (upper_j - lower_j)^2``. On ``n_records`` records the score
    therefore lies in ``[-n_records * D^2, 0]``.

    Parameters
    ----------
    bounds : (float or array-like, float or array-like)
        ``(lower, upper)`` per feature, as declared to diffprivlib; scalars apply to every
        feature (then give ``n_features``).
    n_records : int
        The number of records one partition scores: about ``n_samples * validation_fraction
        / n_partitions`` for :class:`~skdptune.PrivateGridSearchCV` (the dataset size is
        public under the library's replace-one adjacency). A partition that happens to score
        more records is clipped (to utility 0) only if its records are almost all at the
        worst-case distance.
    n_features : int or None, default=None
        Number of features; needed only when both bounds are scalars.

    Returns
    -------
    utility_range : (float, float)
        ``(-n_records * D^2, 0.0)``.

    Notes
    -----
    Only public quantities enter: the declared bounds and a record count fixed before the
    data. Records outside the declared bounds can score below the range; they are clipped,
    which keeps every utility in ``[0, 1]`` (the privacy guarantee never depends on the range
    being right, only the usefulness of the selection does). With ``sample_weight`` given to
    the scorer, multiply ``n_records`` by the largest total weight a partition can have.

    Examples
    --------
    >>> from skdptune.utility import kmeans_score_range
    >>> n_samples, n_partitions, validation_fraction = 1000, 10, 0.2
    >>> kmeans_score_range(([0, 0], [1, 2]), n_samples * validation_fraction / n_partitions)
    (-100.0, 0.0)
    """
    lower, upper = (np.asarray(bound, dtype=float) for bound in bounds)
    if lower.ndim == upper.ndim == 0:
        if n_features is None:
            raise ValueError(f"bounds={bounds!r} are scalars: give n_features, the number of "
                             "features they apply to.")
        lower = np.full(int(n_features), float(lower))
    lower, upper = np.broadcast_arrays(lower, upper)
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))
            and np.all(lower <= upper)):
        raise ValueError(f"bounds must be finite (lower, upper) with lower <= upper, got "
                         f"{bounds!r}.")
    if not (isinstance(n_records, Real) and np.isfinite(n_records) and n_records > 0):
        raise ValueError(f"n_records must be a positive number, got {n_records!r}.")
    squared_diagonal = float(np.sum((upper - lower) ** 2))
    return (-float(n_records) * squared_diagonal, 0.0)


def _final_step(estimator):
    """The step whose ``score`` a pipeline's ``score`` calls."""
    while isinstance(estimator, Pipeline):
        estimator = estimator.steps[-1][1]
    return estimator


def scores_accuracy(estimator):
    """Whether ``estimator.score`` is scikit-learn's accuracy, hence in ``[0, 1]``.

    Parameters
    ----------
    estimator : estimator
        An estimator or a pipeline (whose ``score`` is its final step's).

    Returns
    -------
    bool
        True when the (final step's) class's ``score`` is one of scikit-learn's accuracies
        (``ClassifierMixin.score`` and the methods that return it), matched by identity.
    """
    return getattr(type(_final_step(estimator)), "score", None) in _ACCURACY_SCORES


def is_plain_accuracy(utility, estimator=None):
    """Whether a utility's scorer is scikit-learn's accuracy scorer without options, or
    ``estimator.score`` (``scoring=None``) where that is scikit-learn's accuracy.

    Parameters
    ----------
    utility : BoundedUtility
    estimator : estimator or None, default=None
        The candidate, for ``scoring=None`` (decided per candidate: a grid swaps steps).

    Returns
    -------
    bool
    """
    scorer = getattr(utility, "scorer", None)
    if isinstance(scorer, _PassthroughScorer):
        return estimator is not None and scores_accuracy(estimator)
    return (getattr(scorer, "_score_func", None) is accuracy_score
            and getattr(scorer, "_sign", None) == 1 and not getattr(scorer, "_kwargs", True))


def is_plain_roc_auc(utility, estimator=None):
    """Whether a utility's scorer is scikit-learn's ``"roc_auc"`` scorer without options:
    ``roc_auc_score`` of the decision function (or, without one, of the positive class's
    probability), sign 1, no keyword (no ``multi_class``, ``max_fpr`` or ``labels``).

    Parameters
    ----------
    utility : BoundedUtility
    estimator : estimator or None, default=None
        Unused (the scorer alone decides); the signature of a batched ``Score``'s ``matches``.

    Returns
    -------
    bool
    """
    scorer = getattr(utility, "scorer", None)
    return (getattr(scorer, "_score_func", None) is roc_auc_score
            and getattr(scorer, "_sign", None) == 1 and not getattr(scorer, "_kwargs", True)
            and getattr(scorer, "_response_method", None)
            == ("decision_function", "predict_proba"))


def _kind(estimator):
    return get_tags(_final_step(estimator)).estimator_type


def _scoring_advice(estimator):
    """A bounded scorer to suggest for this kind of estimator."""
    kind = _kind(estimator)
    if kind == "classifier":
        return "e.g. 'accuracy', 'balanced_accuracy', 'roc_auc' or 'f1', bounded in [0, 1]"
    if kind == "regressor":
        return "e.g. 'r2' with utility_range=(-1, 1)"
    if kind == "clusterer":
        return ("with y, a bounded clustering score such as 'v_measure_score' or "
                "'fowlkes_mallows_score'; without y, a callable scorer(estimator, X) with a "
                "declared utility_range")
    return "a callable scorer(estimator, X[, y]) with a declared utility_range"


def _range_advice(estimator, scoring):
    """How to choose ``utility_range`` for this scorer and kind of estimator."""
    kind = _kind(estimator)
    final = _final_step(estimator)
    if kind == "classifier":
        return ("for a classifier, prefer a bounded scorer such as 'accuracy', "
                "'balanced_accuracy', 'roc_auc' or 'f1'.")
    if kind == "regressor" or (isinstance(scoring, str)
                               and (scoring == "r2" or scoring.startswith("neg_"))):
        return ("R² has no lower bound: utility_range=(-1, 1) counts every R² below -1 as -1; "
                "an error such as 'neg_mean_absolute_error' lies in (-(y_max - y_min), 0) for "
                "public bounds on y (those declared to diffprivlib's bounds_y), squared errors "
                "in (-(y_max - y_min)**2, 0).")
    if kind == "clusterer":
        if scoring is None and hasattr(final, "n_clusters") and hasattr(final, "bounds"):
            return ("KMeans.score is minus the sum of squared distances to the nearest centre "
                    "over the scored records; derive its range from the declared bounds with "
                    "utility_range=skdptune.utility.kmeans_score_range(bounds, n_records), "
                    "n_records being about n_samples * validation_fraction / n_partitions. A "
                    "guess such as (-1e13, 0) maps every candidate to a utility near 1 and "
                    "leaves nothing to select. With y, prefer a bounded score: "
                    "'v_measure_score', 'fowlkes_mallows_score', 'homogeneity_score', "
                    "'completeness_score' or 'normalized_mutual_info_score' (in [0, 1]); "
                    "'adjusted_rand_score' lies in [-0.5, 1].")
        return ("with y, use a bounded clustering score: 'v_measure_score', "
                "'fowlkes_mallows_score', 'homogeneity_score', 'completeness_score' or "
                "'normalized_mutual_info_score' (in [0, 1]); 'adjusted_rand_score' lies in "
                "[-0.5, 1]. Without y, declare the range the scorer can take on one partition's "
                "validation records, from public bounds on the features.")
    return ("it must hold whatever the data, so derive it from public bounds (a score summed "
            "over records also scales with the number of records a partition scores, about "
            "n_samples * validation_fraction / n_partitions).")


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
