"""diffprivlib's ``LinearRegression`` (and :class:`skdptune.linear_model.Ridge`, the same fit
correctly calibrated and with a penalty ``alpha``), every partition of a candidate without
diffprivlib.

``Ridge`` differs from what is described below in three places (``calibrated`` plans): its
rows are clipped with or without an intercept, each of the ``d + 1`` centring means gets
``epsilon * s / (d + 1)``, and each diagonal ``sum(x_j**2)`` gets the sensitivity
``max(|lower_j|, |upper_j|)**2``. Partition fits are never released, so emulating
diffprivlib's uncorrected law for its own model (which the refit gate refuses) is a question
of fidelity, not privacy.

Emulates ``diffprivlib.models.LinearRegression.fit`` (diffprivlib 0.6.6) followed by
``predict`` and :class:`~skdptune.utility.BoundedR2Scorer` (the score of
``scoring=None`` with the candidate's ``bounds_y``), partition by partition. The output has the
law of a diffprivlib fit on that partition with the candidate's (already rescaled) parameters;
the noise comes from the partition's own stream (not a secure sampler: partition fits are never
released). What diffprivlib's ``fit`` does (``d`` features, one target), and what is done here
in its place:

- ``validate_data`` (float ``X`` and ``y``), ``check_bounds`` of ``bounds_X`` (``d``) and
  ``bounds_y`` (1): the engine gives float64 ``X`` and ``y`` (``prepare_data`` with
  ``SCORE = BOUNDED_R2``); the bounds are expanded in :func:`plan`.
- ``_preprocess_data`` with ``epsilon * s``, ``s = 1 / (d + 1)`` with ``fit_intercept`` (else
  ``s = 0``): with ``fit_intercept``, ``X`` and ``y`` are clipped to the bounds, and centred on
  noisy means, ``diffprivlib.tools.mean``: per column (the ``epsilon * s`` split over the ``d``
  columns by ``_wrap_axis``) and for ``y`` (all of ``epsilon * s``), ``LaplaceTruncated(
  sensitivity=(upper - lower) / n, lower, upper)`` on the mean (``n``: the partition's training
  rows), that is Laplace noise then a clip to the bounds. Without ``fit_intercept``, nothing is
  clipped nor centred (diffprivlib does neither). Here: the same, Laplace by inverse CDF.
- The bounds are shifted by the noisy offsets; ``_construct_regression_obj`` with ``epsilon *
  (1 - s)`` split evenly over ``1 + d + d (d + 1) / 2`` monomials: ``sum(y**2)`` with
  ``LaplaceFolded(sensitivity=max(|y_lower|, |y_upper|)**2, lower=0, upper=inf)``; each
  ``sum(x_j y)`` with ``Laplace(sensitivity=max - min of the four corner products)``; each
  diagonal ``sum(x_j**2)`` with ``LaplaceFolded(sensitivity=x_lower_j**2, lower=0,
  upper=inf)`` (diffprivlib's own expression, ``max(|lower_j|, |lower_j|)**2``, reproduced
  as it is); each ``sum(x_i x_j)``, ``i < j``, with ``Laplace`` (corner products) and copied to
  ``(j, i)``. Folding at 0 with no upper bound is the absolute value. Here: the same draws.
- The solver: ``scipy.optimize.minimize(obj, zeros(d), jac=True)`` (BFGS, the default without
  bounds or constraints) of ``c - 2 b.w + w'Qw + alpha w'w`` (``alpha`` 0 for diffprivlib's
  model). When ``Q + alpha I`` is positive definite with condition number at most
  :data:`MAX_CONDITION`, its minimiser ``(Q + alpha I)^-1 b`` is what BFGS converges to (it
  stops at a gradient below ``1e-5``): solved here directly. When it is not (the noise can
  make ``Q`` indefinite, and the objective is then unbounded below), what BFGS returns depends
  on its path: that partition's noisy objective is handed to the same
  ``scipy.optimize.minimize`` call, partition by partition.
- ``intercept_ = y_offset - X_offset . coef_`` (0 without ``fit_intercept``); ``predict`` is
  ``X coef_ + intercept_``; the score is ``BoundedR2Scorer.scores_of`` (R² of predictions and
  targets clipped to ``bounds_y``), the one definition the per-fit path calls. A score that
  is not finite (a NaN prediction of a diverged solve) is
  :data:`~skdptune.batched.common.FIT_FAILED`, as the per-fit path scores a NaN
  ``error_score``.

Every quantity of a partition is a function of its own rows, the public parameters and its own
stream: nothing is computed across partitions from data.
"""

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ..linear_model import Ridge, _corner_range, _square_range, objective
from ..utility import BoundedR2Scorer
from ..validation import nonnegative_finite, positive_finite
from .common import (
    BOUNDED_R2,
    FIT_FAILED,
    declared_bounds,
    laplace,
)

#: The per-partition score this family computes: the engine batches a candidate only under the
#: search's default bounded R².
SCORE = BOUNDED_R2

#: Unused by a regression family (``y`` is not encoded), kept for the engine's interface.
MAX_CLASSES = None

#: Above this many features the ``d (d + 1) / 2`` noisy monomials per partition stop being
#: cheap: the per-fit path takes over.
MAX_FEATURES = 64

#: Largest condition number of the noisy ``Q`` solved directly; above it (or not positive
#: definite) the partition goes to scipy's BFGS, as diffprivlib does.
MAX_CONDITION = 1e8


@dataclass(frozen=True)
class LinearRegressionPlan:
    """What a partition fit of one candidate needs: public parameters only.

    Attributes
    ----------
    epsilon : float
        The candidate's (partition-scaled) ``epsilon``.
    lower, upper : ndarray of shape (n_features,)
        ``bounds_X``, per feature.
    y_lower, y_upper : float
        ``bounds_y``.
    fit_intercept : bool
    alpha : float
        The ridge penalty, ``Ridge.total_alpha`` at the partition's ``epsilon`` (0 for
        diffprivlib's ``LinearRegression``, which has none).
    calibrated : bool
        skdptune's ``Ridge`` (its corrected calibration: see :func:`noisy_statistics`) rather
        than diffprivlib's ``LinearRegression``.
    """

    epsilon: float
    lower: np.ndarray
    upper: np.ndarray
    y_lower: float
    y_upper: float
    fit_intercept: bool
    alpha: float = 0.0
    calibrated: bool = False


def plan(estimator, n_features):
    """The plan of a diffprivlib ``LinearRegression`` or a skdptune ``Ridge``, or None
    (per-fit path).

    Parameters
    ----------
    estimator : diffprivlib.models.LinearRegression or skdptune.linear_model.Ridge
    n_features : int or None

    Returns
    -------
    plan : LinearRegressionPlan or None
        None without declared finite ``bounds_X`` and ``bounds_y`` (``y_lower < y_upper``), for
        an ``epsilon`` that is not positive and finite, an ``alpha`` or ``noise_alpha`` that is
        not a finite number at least 0, a ``fit_intercept`` that is not a bool, or more than
        :data:`MAX_FEATURES` features.
    """
    bounds = declared_bounds(estimator.bounds_X, n_features)
    bounds_y = declared_bounds(estimator.bounds_y, 1)
    if (bounds is None or bounds_y is None or not positive_finite(estimator.epsilon)
            or not isinstance(estimator.fit_intercept, (bool, np.bool_))
            or len(bounds[0]) > MAX_FEATURES or not bounds_y[0][0] < bounds_y[1][0]):
        return None
    alpha = _penalty(estimator, bounds)
    if alpha is None:
        return None
    return LinearRegressionPlan(float(estimator.epsilon), bounds[0], bounds[1],
                                float(bounds_y[0][0]), float(bounds_y[1][0]),
                                bool(estimator.fit_intercept), float(alpha),
                                calibrated=isinstance(estimator, Ridge))


def _penalty(estimator, bounds):
    """``Ridge.total_alpha`` (at the estimator's, i.e. the partition's, ``epsilon``), 0 for
    diffprivlib's ``LinearRegression``, None when a penalty parameter is not a finite number
    at least 0 (the per-fit path then raises scikit-learn's error)."""
    if not isinstance(estimator, Ridge):
        return 0.0
    if not (nonnegative_finite(estimator.alpha) and nonnegative_finite(estimator.noise_alpha)):
        return None
    return float(estimator.total_alpha(bounds)[0])


def noisy_statistics(candidate, X, y, rng):
    """One partition's noisy offsets and monomial coefficients, with the law of the fit.

    diffprivlib's ``LinearRegression`` as it draws them; with ``candidate.calibrated``,
    skdptune's ``Ridge`` (``skdptune.linear_model.noisy_objective``): the rows are clipped
    with or without an intercept, each of the ``d + 1`` centring means gets ``epsilon * s /
    (d + 1)``, and the diagonal's sensitivity is ``max(|lower_j|, |upper_j|) ** 2``.

    Parameters
    ----------
    candidate : LinearRegressionPlan
    X : ndarray of shape (n, d)
        The partition's training rows (``n >= 1``).
    y : ndarray of shape (n,)
    rng : numpy.random.Generator
        The partition's own stream.

    Returns
    -------
    stats : tuple
        ``(X_offset, y_offset, c, b, Q)``: noisy means (zeros without ``fit_intercept``), the
        noisy ``sum(y**2)``, ``X'y`` (shape ``(d,)``) and ``X'X`` (shape ``(d, d)``).
    """
    n, d = X.shape
    lower, upper = candidate.lower, candidate.upper
    y_lower, y_upper = candidate.y_lower, candidate.y_upper
    eps = candidate.epsilon
    n_pairs = d * (d - 1) // 2
    uniforms = rng.random(d + 1 + 1 + d + d + n_pairs)
    draws = laplace(uniforms)
    if candidate.fit_intercept or candidate.calibrated:
        X = np.clip(X, lower, upper)
        y = np.clip(y, y_lower, y_upper)
    if candidate.fit_intercept:
        share = 1.0 / (d + 1)
        # diffprivlib.tools.mean: LaplaceTruncated, sensitivity (upper - lower) / n, epsilon
        # split over the columns; then clipped to the bounds. diffprivlib gives X's means
        # epsilon * s and y's again; Ridge gives each of the d + 1 means epsilon * s / (d + 1).
        x_eps, y_eps = ((eps * share / (d + 1),) * 2 if candidate.calibrated
                        else (eps * share / d, eps * share))
        X_offset = np.clip(X.mean(axis=0) - (upper - lower) / n / x_eps * draws[:d],
                           lower, upper)
        y_offset = float(np.clip(y.mean() - (y_upper - y_lower) / n / y_eps * draws[d],
                                 y_lower, y_upper))
        X, y = X - X_offset, y - y_offset
    else:
        share, X_offset, y_offset = 0.0, np.zeros(d), 0.0
    lower, upper = lower - X_offset, upper - X_offset
    y_lower, y_upper = y_lower - y_offset, y_upper - y_offset
    local = eps * (1 - share) / (1 + d + d * (d + 1) / 2)
    draws = draws[d + 1:]
    # Folded at 0 with no upper bound: the absolute value.
    c = abs(y @ y - max(abs(y_lower), abs(y_upper)) ** 2 / local * draws[0])
    b = X.T @ y - _corner_range(y_lower, y_upper, lower, upper) / local * draws[1:1 + d]
    gram = X.T @ X
    Q = np.empty((d, d))
    # diffprivlib's diagonal sensitivity is max(|lower_j|, |lower_j|) ** 2; Ridge's corrects it.
    square = _square_range(lower, upper) if candidate.calibrated else lower ** 2
    Q[np.diag_indices(d)] = np.abs(np.diag(gram) - square / local * draws[1 + d:1 + 2 * d])
    i, j = np.triu_indices(d, 1)
    off = gram[i, j] - _corner_range(lower[i], upper[i], lower[j], upper[j]) / local \
        * draws[1 + 2 * d:]
    Q[i, j] = off
    Q[j, i] = off
    return X_offset, y_offset, c, b, Q


def solve(c, b, Q, alpha=0.0):
    """diffprivlib's solution of ``min c - 2 b.w + w'Qw + alpha w'w``: ``(Q + alpha I)^-1 b``
    when ``Q + alpha I`` is positive definite and well conditioned (:data:`MAX_CONDITION`),
    else scipy's BFGS from zeros on the same objective, as diffprivlib calls it."""
    penalised = Q + alpha * np.eye(len(b))
    eigenvalues = np.linalg.eigvalsh(penalised)
    if eigenvalues[0] > 0 and eigenvalues[-1] <= MAX_CONDITION * eigenvalues[0]:
        return np.linalg.solve(penalised, b)

    with np.errstate(all="ignore"):
        return minimize(objective(c, b, Q, alpha), np.zeros(len(b)), jac=True).x


def partition_accuracies(plans, X_train, y_train, part_train, X_val, y_val, part_val,
                         n_parts, n_classes, rngs):
    """The bounded R² of every plan's fit on every partition of a block.

    Parameters
    ----------
    plans : list of LinearRegressionPlan
    X_train : ndarray of shape (n_train, n_features), float64
    y_train : ndarray of shape (n_train,), float64
    part_train : ndarray of shape (n_train,), int
        Partition of each training row within the block.
    X_val, y_val, part_val
        The same for the held-out rows.
    n_parts : int
    n_classes : int
        Unused.
    rngs : list of list of numpy.random.Generator
        ``rngs[j][p]``: the stream of plan ``j`` on partition ``p``.

    Returns
    -------
    scores : ndarray of shape (len(plans), n_parts)
        :meth:`~skdptune.utility.BoundedR2Scorer.scores_of`, at most 1 (the engine clips it
        to ``[0, 1]``); NaN where a partition has no training or no held-out rows;
        ``FIT_FAILED`` where it is not finite.
    """
    train_rows = [np.flatnonzero(part_train == p) for p in range(n_parts)]
    val_rows = [np.flatnonzero(part_val == p) for p in range(n_parts)]
    result = np.full((len(plans), n_parts), np.nan)
    for j, candidate in enumerate(plans):
        bounds_y = (candidate.y_lower, candidate.y_upper)
        for p in range(n_parts):
            train, val = train_rows[p], val_rows[p]
            if not len(train) or not len(val):
                continue
            X_offset, y_offset, c, b, Q = noisy_statistics(candidate, X_train[train],
                                                           y_train[train], rngs[j][p])
            coef = solve(c, b, Q, candidate.alpha)
            intercept = y_offset - X_offset @ coef if candidate.fit_intercept else 0.0
            with np.errstate(all="ignore"):
                score = BoundedR2Scorer.scores_of(X_val[val] @ coef + intercept, y_val[val],
                                                  bounds_y)
            result[j, p] = score if np.isfinite(score) else FIT_FAILED
    return result
