"""diffprivlib's ``GaussianNB``, all partitions of a candidate in one array program (and
:class:`skdptune.naive_bayes.GaussianNB`: the same mechanisms over declared classes).

Emulates ``diffprivlib.models.GaussianNB.fit`` (diffprivlib 0.6.6) followed by ``predict``
and accuracy, or by ``predict_proba`` and ROC AUC, for every partition of a block at once. The output has the law of a
diffprivlib fit on that partition with the candidate's (already rescaled) parameters; the
noise is drawn from the partition's own stream (not a secure sampler: partition fits are never
released). What diffprivlib's ``fit`` does, and what is done here in its place:

- ``X`` is clipped to the declared ``bounds``; ``classes_`` are the labels present in the
  partition's training rows. skdptune's class with declared ``classes``: the declared ones on
  every partition, whichever labels its rows hold (a row joins the statistics of the class
  its label equals, :func:`bind_labels`); every step below then runs for each of them, a class
  without rows included (a count of 0 before its noise, sums of 0), and a partition with
  fewer training rows than classes fails (skdptune's fit raises: counts of at least 1 each
  could not add up to ``n``).
- Class counts, ``epsilon / 3``: ``GeometricTruncated(epsilon / 3, sensitivity=1, lower=1,
  upper=n)`` on each present class's count (``n``: the partition's training rows), then a
  deterministic round-robin that makes them add up to ``n``. Here: the same transform of one
  uniform per count, and :func:`adjust_counts` for the round-robin.
- Means, ``epsilon / 3`` split over the features: per class and feature,
  ``LaplaceTruncated(epsilon / 3 / n_features, sensitivity=upper - lower, lower=lower * n_c,
  upper=upper * n_c)`` on the sum of the class's clipped values (``n_c`` the noisy count), then
  divided by ``n_c``. Laplace noise is added and the result clipped: here, Laplace by inverse
  CDF and the same clip.
- Variances, ``epsilon / 3`` split over the features: ``LaplaceBoundedDomain(epsilon / 3 /
  n_features, sensitivity=s, lower=0, upper=s * n_c)`` on the sum of squared deviations from
  the noisy mean, ``s = max(mu - lower, upper - mu) ** 2``, then divided by ``n_c``; plus
  ``var_smoothing`` (absolute, not scaled by the largest variance as in scikit-learn). That
  mechanism clamps the value into its domain and rejection-samples Laplace noise until the
  result lies in it, that is Laplace noise conditioned on the domain: here, sampled by inverse
  CDF of the conditioned law. Its scale solves a fixed-point equation in ``(epsilon, s,
  s * n_c)``; the solution is ``s`` times the solution for ``(epsilon, 1, n_c)`` (the equation
  is homogeneous in ``s``), computed by diffprivlib's own ``_find_scale`` once per ``(epsilon,
  n_c)`` and cached.
- Priors: without ``priors``, the noisy counts over ``n``. With ``priors`` (the counts are
  still noisy and still spend their third: they weigh the means and variances), diffprivlib
  checks ``len(priors)`` against the classes present in the partition's training rows (or
  the declared ones: then decided from the parameters) and raises ``ValueError`` when they
  differ (also when they do not sum to 1 or one is negative);
  otherwise ``class_prior_`` is ``priors``, the i-th prior for the i-th present class in sorted
  order. Here: the same, per partition; a partition whose fit would raise is marked
  :data:`FIT_FAILED` and gets ``error_score``, as on the per-fit path (which
  raises the real error under ``error_score="raise"``). The checks that depend on the
  parameters only (sum, sign, finiteness) send the candidate to the per-fit path.
- ``predict``: scikit-learn's joint log-likelihood, argmax, first class on ties (classes in
  sorted order, as ``np.unique``).
- ``scoring="roc_auc"`` (two labels in ``y``; no more than two declared classes): scikit-learn's
  scorer reads ``predict_proba(X)[:, 1]`` (``GaussianNB`` has no decision function), computed
  as scikit-learn does: ``exp(jll[:, 1] - logsumexp(jll, axis=1))`` of the same joint
  log-likelihood, so that the same fitted statistics give the same values and ties (a
  probability rounded to 1 ties with every other, which a margin would not).
  :func:`~skdptune._batched.common.partition_roc_auc` then ranks them per partition.
  Where scikit-learn raises or returns NaN, the partition is :data:`FIT_FAILED`: a model
  of one class (``predict_proba`` of one column), a non-finite probability, held-out rows of
  one class.

Every quantity of a partition is a function of its own rows, the public parameters and its own
stream: nothing is computed across partitions from data (the block's arrays only stack them).
"""

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import numpy as np
from diffprivlib.mechanisms import LaplaceBoundedDomain

from .._validation import nonnegative_finite
from scipy.special import logsumexp

from .common import (
    bind_classifier_score,
    bind_declared,
    checked_params,
    declared_bounds,
    declared_labels,
    labelling,
    laplace,
    laplace_within,
    partition_roc_auc,
)
from .contract import ACCURACY, CODES, FIT_FAILED, ROC_AUC, Score

#: The family's per-partition score and what it reads of ``y`` (the family contract,
#: :class:`~skdptune._batched.contract.Family`), and every score it computes
#: (:class:`~skdptune._batched.contract.BindsScore`).
SCORE, TARGET = ACCURACY, CODES
SCORES = (ACCURACY, ROC_AUC)

#: Above this many classes the per-partition arrays (partitions x classes x features) and the
#: scoring pass (rows x classes x features) stop being cheap: the per-fit path takes over.
MAX_CLASSES = 64


@dataclass(frozen=True)
class GaussianNBPlan:
    """What a partition fit of one candidate needs: public parameters only.

    Attributes
    ----------
    epsilon : float
        The candidate's (partition-scaled) ``epsilon``.
    lower, upper : ndarray of shape (n_features,)
        The declared bounds, per feature, as diffprivlib's ``check_bounds`` expands them.
    var_smoothing : float
        Added to every variance, as diffprivlib does (absolute).
    priors : ndarray of shape (n_priors,) or None, default=None
        The declared class priors (for the classes present in a partition, or declared, in
        sorted order).
    classes : ndarray or None, default=None
        skdptune's declared ``classes`` (sorted, deduplicated), whose statistics every
        partition fits; None: the classes present in each partition's rows.
    code_map : ndarray of shape (n_labels,) or None, default=None
        Set by :func:`bind_labels` for declared ``classes``: each label code's position among
        them.
    score : Score, default=ACCURACY
        What a partition's fit is scored by (:func:`bind_score`).
    """

    epsilon: float
    lower: np.ndarray
    upper: np.ndarray
    var_smoothing: float
    priors: np.ndarray = None
    classes: Optional[np.ndarray] = None
    code_map: Optional[np.ndarray] = None
    score: Score = ACCURACY

    @property
    def uniforms_per_class(self):
        """Uniforms a class draws: its count, and a mean and a variance per feature."""
        return 1 + 2 * len(self.lower)


def plan(estimator, n_features):
    """The :class:`GaussianNBPlan` of a configured ``GaussianNB``, or None to fall back.

    Decided from the parameters and the number of features only. Anything this emulation does
    not reproduce exactly (missing or degenerate bounds, priors that are not finite,
    non-negative and summing to 1, a non-finite or non-positive epsilon, declared classes
    the fit refuses, more than :data:`MAX_CLASSES` of them or as many as priors, parameters
    scikit-learn rejects) falls back to the per-fit path, which gives it the behaviour of a
    real fit (``error_score`` included).

    Parameters
    ----------
    estimator : diffprivlib.models.GaussianNB or skdptune.naive_bayes.GaussianNB
        The candidate, its parameters set.
    n_features : int or None
        Columns of ``X``; None when not known (the forecast, before the data): the width the
        bounds declare is taken.

    Returns
    -------
    plan : GaussianNBPlan or None
    """
    params = checked_params(estimator)
    if params is None or params["bounds"] is None:
        return None
    var_smoothing, priors = params["var_smoothing"], params["priors"]
    if priors is not None:
        try:
            priors = np.asarray(priors, dtype=float)
        except (TypeError, ValueError):
            return None
        # diffprivlib's own checks (np.isclose of the sum, sign); non-finite ones left to it.
        if (priors.ndim != 1 or not len(priors) or not np.all(np.isfinite(priors))
                or not np.isclose(priors.sum(), 1.0) or np.any(priors < 0)):
            return None
    classes = params.get("classes")  # skdptune's class only
    if classes is not None:
        classes = declared_labels(classes, MAX_CLASSES)
        if classes is None or (priors is not None and len(priors) != len(classes)):
            return None
    if not nonnegative_finite(var_smoothing):
        return None
    declared = declared_bounds(params["bounds"], n_features)
    if declared is None:
        return None
    lower, upper = declared
    # Zero-width bounds make diffprivlib's mechanisms degenerate: left to the real fit.
    if not np.all(upper > lower):
        return None
    return GaussianNBPlan(float(params["epsilon"]), lower, upper, float(var_smoothing), priors,
                          classes)


def bind_labels(candidate, labels):
    """``candidate`` (a :class:`GaussianNBPlan`) bound to the labels of ``y``, or None:
    :func:`~skdptune._batched.common.bind_declared` (the family contract,
    :class:`~skdptune._batched.contract.BindsLabels`)."""
    return bind_declared(candidate, labels)


def bind_score(candidate, score):
    """``candidate`` bound to ``score``, or None:
    :func:`~skdptune._batched.common.bind_classifier_score` (the family contract,
    :class:`~skdptune._batched.contract.BindsScore`)."""
    return bind_classifier_score(candidate, score)


def partition_scores(plans, block, rngs):
    """Accuracy or ROC AUC (the plan's ``score``) of every plan's fit on every partition of a
    block (the family contract,
    :meth:`~skdptune._batched.contract.Family.partition_scores`); :data:`FIT_FAILED` where the
    real fit raises (``priors`` whose length is not the partition's number of classes;
    fewer training rows than declared classes) or, for ROC AUC, where scikit-learn's scorer
    raises or returns NaN."""
    result = np.empty((len(plans), block.n_parts))
    by_labelling = {}  # the rows grouped by (partition, class), once per labelling
    for j, candidate in enumerate(plans):
        key = None if candidate.code_map is None else candidate.code_map.tobytes()
        if key not in by_labelling:
            by_labelling[key] = _Grouped(block.X_train, block.y_train, block.part_train,
                                         block.n_parts, block.n_classes, candidate)
        grouped = by_labelling[key]
        theta, var, noisy = _fit(candidate, grouped, rngs[j])
        jll = _joint_log_likelihood(theta, var, noisy, block.X_val, block.part_val,
                                    candidate.priors)
        y_val = labelling(candidate, block.y_val, block.n_classes)[0]
        # Where the real fit raises: skdptune's with fewer training rows than declared
        # classes (no model), diffprivlib's "Number of priors must match number of classes."
        failed = ~grouped.fitted.any(axis=1)
        if candidate.priors is not None:
            failed |= grouped.fitted.sum(axis=1) != len(candidate.priors)
        if candidate.score is ROC_AUC:
            scores, unscored = _roc_auc(jll, y_val, block, grouped.fitted)
            failed |= unscored
        else:
            predicted = np.argmax(jll, axis=1) if jll.shape[1] else np.zeros(len(jll), int)
            scores = block.accuracy(predicted == y_val)
        result[j] = block.scored(np.where(failed, FIT_FAILED, scores))
    return result


def fit_partitions(candidate, X_train, y_train, part_train, n_parts, n_classes, rngs):
    """The emulated fitted attributes of one plan on every partition of a block.

    Parameters
    ----------
    candidate : GaussianNBPlan
        Bound to the labels (:func:`bind_labels`) when it declares classes.
    X_train, y_train, part_train, n_parts, n_classes
        A block's training rows, codes, partitions (as
        :class:`~skdptune._batched.contract.Block`).
    rngs : list of numpy.random.Generator
        One stream per partition.

    Returns
    -------
    theta, var : ndarray of shape (n_parts, n_classes, n_features)
        diffprivlib's ``theta_`` and ``var_`` of each partition's fit, in the rows of the
        classes present in its training rows, or of every declared class (the others are
        placeholders); ``n_classes`` the declared classes' number when declared.
    class_count : ndarray of shape (n_parts, n_classes)
        Its ``class_count_``; 0 for classes outside its model (absent ones without declared
        classes; all of a partition whose fit fails).
    """
    grouped = _Grouped(X_train, y_train, part_train, n_parts, n_classes, candidate)
    return _fit(candidate, grouped, rngs)


class _Grouped:
    """Training rows grouped by (partition, class): sorted rows, counts, group starts, and
    the classes each partition's model holds (``fitted``).

    The classes are the block's codes (``fitted``: those present), or, for a plan with
    declared classes, each row's position among them (``fitted``: all of them, on a
    partition with at least as many training rows; none elsewhere, where the fit raises)."""

    def __init__(self, X, y, part, n_parts, n_classes, candidate):
        y, n_classes, declared = labelling(candidate, y, n_classes)
        group = part * n_classes + y
        order = np.argsort(group, kind="stable")
        self.group, self.X = group[order], X[order]
        self.counts = np.bincount(group, minlength=n_parts * n_classes).reshape(n_parts,
                                                                                 n_classes)
        self.starts = (np.flatnonzero(np.r_[True, self.group[1:] != self.group[:-1]])
                       if len(group) else np.empty(0, dtype=np.intp))
        self.present_groups = self.group[self.starts]
        if declared:
            enough = self.counts.sum(axis=1) >= n_classes
            self.fitted = np.broadcast_to(enough[:, None], self.counts.shape)
        else:
            self.fitted = self.counts > 0


def _fit(candidate, grouped, rngs):
    """Noisy ``theta_``, ``var_`` and class counts, shape ``(n_parts, n_classes[,
    n_features])``; classes outside a partition's model (``grouped.fitted``) count 0, their
    ``theta_`` and ``var_`` are placeholders."""
    X, group, counts = grouped.X, grouped.group, grouped.counts
    starts, present_groups = grouped.starts, grouped.present_groups
    n_parts, n_classes = counts.shape
    n_features = X.shape[1]
    # Each partition's uniforms come from its own stream, in a fixed layout per class: its
    # count, then a mean and a variance per feature.
    uniforms = np.stack([
        rng.random(n_classes * candidate.uniforms_per_class) for rng in rngs
    ]).reshape(n_parts, n_classes, candidate.uniforms_per_class)
    lower, upper = candidate.lower, candidate.upper
    present = grouped.fitted  # the classes of each partition's model
    n_total = counts.sum(axis=1)

    # Class counts (epsilon / 3, sensitivity 1, one count per class: a record is in one class).
    noisy = _geometric_truncated(counts, uniforms[..., 0], candidate.epsilon / 3, n_total)
    for p in np.flatnonzero(present.any(axis=1)):
        if noisy[p, present[p]].sum() != n_total[p]:
            noisy[p, present[p]] = adjust_counts(noisy[p, present[p]], n_total[p])
    noisy = np.where(present, noisy, 1).astype(float)  # other classes: unused placeholder

    clipped = np.clip(X, lower, upper)
    sums = np.zeros((n_parts * n_classes, n_features))
    if len(X):
        sums[present_groups] = np.add.reduceat(clipped, starts, axis=0)
    sums = sums.reshape(n_parts, n_classes, n_features)

    # Means: Laplace (epsilon / 3 / n_features per feature, sensitivity upper - lower), clipped.
    local_epsilon = candidate.epsilon / 3 / n_features
    n_c = noisy[..., None]
    noisy_sums = sums - (upper - lower) / local_epsilon * laplace(
        uniforms[..., 1:1 + n_features])
    mu = np.clip(noisy_sums, lower * n_c, upper * n_c) / n_c

    # Variances: bounded-domain Laplace on the squared deviations from the noisy mean.
    deviations = (clipped - mu.reshape(-1, n_features)[group]) ** 2
    squares = np.zeros((n_parts * n_classes, n_features))
    if len(X):
        squares[present_groups] = np.add.reduceat(deviations, starts, axis=0)
    squares = squares.reshape(n_parts, n_classes, n_features)
    sensitivity = np.maximum(mu - lower, upper - mu) ** 2
    domain = sensitivity * n_c
    scale = sensitivity * _unit_scales(local_epsilon, noisy, present)[..., None]
    value = np.clip(squares, 0.0, domain)
    noisy_squares = value + scale * laplace_within(
        uniforms[..., 1 + n_features:], -value / scale, (domain - value) / scale)
    var = np.clip(noisy_squares, 0.0, domain) / n_c + candidate.var_smoothing
    return mu, var, np.where(present, noisy, 0.0)


def _roc_auc(jll, y_val, block, fitted):
    """Each partition's ROC AUC of ``predict_proba(X)[:, 1]`` (two labels: codes 0 and 1,
    the larger positive), and where scikit-learn's scorer raises or returns NaN: a model
    without exactly two classes, a non-finite probability, held-out rows of one class."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # scikit-learn's predict_proba: exp(predict_log_proba), jll less its logsumexp.
        probability = np.exp(jll[:, 1] - logsumexp(jll, axis=1))
    auc = partition_roc_auc(probability, y_val == 1, block.part_val, block.n_parts)
    finite = np.bincount(block.part_val, weights=~np.isfinite(probability),
                         minlength=block.n_parts) == 0
    return auc, (fitted.sum(axis=1) != 2) | ~finite | np.isnan(auc)


def _joint_log_likelihood(theta, var, counts, X, part, priors=None):
    """scikit-learn's ``GaussianNB`` joint log-likelihood of each row under its partition's
    model, ``(n_rows, n_classes)``, the same operations in the same order (so the same fitted
    statistics give the same values); absent classes ``-inf`` (their argmax never wins, as
    ``predict`` never returns them). Priors: the noisy counts over their sum (the
    partition's training rows), or the declared ``priors`` in the order of each partition's
    present classes (a partition with another number of classes is a failed fit, whose
    values are not used)."""
    n_classes = theta.shape[1]
    present = counts > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if priors is None:
            log_prior = np.where(present,
                                 np.log(counts / counts.sum(axis=1, keepdims=True)), -np.inf)
        else:
            rank = np.clip(np.cumsum(present, axis=1) - 1, 0, len(priors) - 1)
            log_prior = np.where(present, np.log(priors)[rank], -np.inf)
    jll = np.empty((len(X), n_classes))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for c in range(n_classes):
            normaliser = -0.5 * np.sum(np.log(2.0 * np.pi * var[:, c, :]), axis=1)
            mean, variance = theta[part, c, :], var[part, c, :]
            jll[:, c] = log_prior[part, c] + (
                normaliser[part] - 0.5 * np.sum((X - mean) ** 2 / variance, axis=1))
    # An absent class's placeholder variance may be 0 (var_smoothing=0): -inf + inf is NaN,
    # which argmax would pick. It is not a class of that partition's model.
    jll[~np.isfinite(log_prior[part])] = -np.inf
    return jll


def _geometric_truncated(values, uniforms, epsilon, n_total):
    """diffprivlib's ``GeometricTruncated(epsilon, sensitivity=1, lower=1, upper=n_total)``
    applied to each count, as the same function of one uniform (its ``randomise``)."""
    scale = -epsilon  # diffprivlib's Geometric._scale: -epsilon / sensitivity
    with np.errstate(divide="ignore", invalid="ignore"):
        unif = (uniforms - 0.5) * (1 + np.exp(scale))
        sign = np.where(unif < 0, -1.0, 1.0)
        noisy = np.round(values + sign * np.floor(np.log(sign * unif) / scale))
    upper = np.maximum(n_total, 1)[:, None]
    return np.clip(noisy, 1, upper).astype(np.int64)


def adjust_counts(noisy, n_total):
    """diffprivlib's round-robin that makes noisy class counts add up to ``n_total``.

    Its loop (``GaussianNB._noisy_class_counts``) steps through the classes in
    ``np.argsort`` order of the noisy counts, one unit at a time: upward from the smallest,
    decrementing (never below 1), when the counts are too large; downward from the largest,
    incrementing, when they are too small. This computes the same result in whole rounds.

    Parameters
    ----------
    noisy : ndarray of shape (n_classes,), int
        Noisy counts, each in ``[1, n_total]``.
    n_total : int
        The partition's training rows (its own fit's ``n``).

    Returns
    -------
    counts : ndarray of shape (n_classes,), int
    """
    noisy = np.asarray(noisy, dtype=np.int64).copy()
    order = np.argsort(noisy)  # the same call on the same int64 values: the same tie order
    missing = int(n_total - noisy.sum())
    if missing > 0:
        rounds, rest = divmod(missing, len(noisy))
        noisy += rounds
        noisy[order[::-1][:rest]] += 1
        return noisy
    excess = -missing
    visited = noisy[order]
    while excess > 0:
        active = visited > 1
        n_active = int(active.sum())
        rounds = min(int(visited[active].min()) - 1, excess // n_active)
        if rounds:
            visited[active] -= rounds
            excess -= rounds * n_active
        else:  # a last partial round, in visiting order
            visited[np.flatnonzero(active)[:excess]] -= 1
            excess = 0
    noisy[order] = visited
    return noisy


def _unit_scales(epsilon, noisy, present):
    """The bounded-domain Laplace scale for sensitivity 1 and domain ``[0, n_c]``, per
    present class (1 elsewhere)."""
    scales = np.ones(noisy.shape)
    distinct, where = np.unique(noisy[present].astype(np.int64), return_inverse=True)
    scales[present] = np.array([_unit_scale(epsilon, int(n_c)) for n_c in distinct])[where]
    return scales


@lru_cache(maxsize=4096)
def _unit_scale(epsilon, n_c):
    # diffprivlib's own solver, so the scale is the one its mechanism uses (to rounding).
    return LaplaceBoundedDomain(epsilon=epsilon, delta=0.0, sensitivity=1.0, lower=0.0,
                                upper=float(n_c))._find_scale()
