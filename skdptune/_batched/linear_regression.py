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
  ``bounds_y`` (1): the engine gives float64 ``X`` and ``y`` (``TARGET`` is ``VALUES``);
  the bounds are expanded in :func:`plan`.
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
  ``MAX_CONDITION``, its minimiser ``(Q + alpha I)^-1 b`` is what BFGS converges to (it
  stops at a gradient below ``1e-5``): solved here directly. When it is not (the noise can
  make ``Q`` indefinite, and the objective is then unbounded below), what BFGS returns depends
  on its path: that partition's noisy objective is handed to the same
  ``scipy.optimize.minimize`` call, partition by partition.
- ``intercept_ = y_offset - X_offset . coef_`` (0 without ``fit_intercept``); ``predict`` is
  ``X coef_ + intercept_``; the score is ``BoundedR2Scorer.scores_of`` (R² of predictions and
  targets clipped to ``bounds_y``), the one definition the per-fit path calls. A score that
  is not finite (a NaN prediction of a diverged solve) is
  :data:`~skdptune._batched.contract.FIT_FAILED`, as the per-fit path scores a NaN
  ``error_score``.

Here every partition of a block at once: each partition's sums (``n``, ``X'1``, ``X'X``,
``X'y``, ``y'1``, ``y'y`` of its clipped training rows, :func:`partition_sums`, shared by the
candidates with the same bounds) are centred on its noisy means algebraically (``X_c'X_c =
X'X - o s' - s o' + n o o'``: the same value as centring the rows, to rounding), the noise is
added to many partitions at once (:func:`noisy_statistics`), and the test of the condition
number (a Cholesky factor, the eigenvalues only where it cannot decide) and the direct solves
are batched (:func:`solve`), at any number of features; :func:`partition_scores` takes the
partitions a few at a time (:data:`CHUNK_CELLS`), so that their ``d x d`` statistics stay in
the cache.

Every quantity of a partition is a function of its own rows, the public parameters and its own
stream: nothing is computed across partitions from data.
"""

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from .._models.linear_model import (MAX_CONDITION, Ridge, _corner_range, _square_range,
                                    penalised_minimiser)
from .._utility import BoundedR2Scorer
from .._validation import nonnegative_finite
from .common import at_least, checked_params, declared_bounds, laplace
from .contract import BOUNDED_R2, FIT_FAILED, VALUES

#: The family contract (:class:`~skdptune._batched.contract.Family`): the search's default
#: bounded R², from float targets (``y`` is not encoded).
SCORE, TARGET, MAX_CLASSES = BOUNDED_R2, VALUES, None


#: Cells of a ``d x d`` statistic processed at once in :func:`partition_scores` (about 1 MB a
#: statistic): measured on 103 features, 16 to 32 partitions at a time took 40 % less time
#: in the noise and 20 % less in the solves than a block of 103.
CHUNK_CELLS = 2 ** 17


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

    @property
    def clips(self):
        """Whether the fit clips its rows to the bounds (always for ``Ridge``; with an
        intercept for diffprivlib's model)."""
        return self.fit_intercept or self.calibrated

    @property
    def n_draws(self):
        """Standard draws a partition's fit takes: ``d + 1`` means, ``c``, ``d`` of ``b``,
        ``d`` diagonal and ``d (d - 1) / 2`` off-diagonal entries of ``Q``."""
        d = len(self.lower)
        return 3 * d + 2 + d * (d - 1) // 2


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
        not a finite number at least 0, a ``fit_intercept`` that is not a bool, or parameters
        scikit-learn rejects.
    """
    params = checked_params(estimator)
    if params is None:
        return None
    bounds = declared_bounds(params["bounds_X"], n_features)
    bounds_y = declared_bounds(params["bounds_y"], 1)
    if (bounds is None or bounds_y is None
            or not isinstance(params["fit_intercept"], (bool, np.bool_))
            or not bounds_y[0][0] < bounds_y[1][0]):
        return None
    alpha = _penalty(estimator, bounds)
    if alpha is None:
        return None
    return LinearRegressionPlan(float(params["epsilon"]), bounds[0], bounds[1],
                                float(bounds_y[0][0]), float(bounds_y[1][0]),
                                bool(params["fit_intercept"]), float(alpha),
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


def partition_sums(candidate, X, y, part, n_parts):
    """The sums each partition's fit reads, of its training rows clipped as the fit clips
    them (:attr:`LinearRegressionPlan.clips`): a function of the partition's own rows.

    Parameters
    ----------
    candidate : LinearRegressionPlan
    X : ndarray of shape (n_rows, d)
    y : ndarray of shape (n_rows,)
    part : ndarray of shape (n_rows,), int
        Partition of each row, ``0 .. n_parts - 1``.
    n_parts : int

    Returns
    -------
    sums : types.SimpleNamespace
        ``n`` (rows, shape ``(n_parts,)``), ``x`` (``X'1``, ``(n_parts, d)``), ``y``,
        ``xx`` (``X'X``, ``(n_parts, d, d)``), ``xy`` (``X'y``, ``(n_parts, d)``), ``yy``.
    """
    if candidate.clips:
        X = np.clip(X, candidate.lower, candidate.upper)
        y = np.clip(y, candidate.y_lower, candidate.y_upper)
    d = X.shape[1]
    sums = SimpleNamespace(n=np.zeros(n_parts), x=np.zeros((n_parts, d)), y=np.zeros(n_parts),
                           xx=np.zeros((n_parts, d, d)), xy=np.zeros((n_parts, d)),
                           yy=np.zeros(n_parts))
    order = np.argsort(part, kind="stable")
    starts = np.searchsorted(part[order], np.arange(n_parts + 1))
    for p in range(n_parts):
        rows = order[starts[p]:starts[p + 1]]
        X_p, y_p = X[rows], y[rows]
        sums.n[p], sums.x[p], sums.y[p] = len(rows), X_p.sum(axis=0), y_p.sum()
        sums.xx[p], sums.xy[p], sums.yy[p] = X_p.T @ X_p, X_p.T @ y_p, y_p @ y_p
    return sums


def noisy_statistics(candidate, sums, draws):
    """Every partition's noisy offsets and monomial coefficients, with the law of its fit.

    diffprivlib's ``LinearRegression`` as it draws them; with ``candidate.calibrated``,
    skdptune's ``Ridge`` (``skdptune.linear_model.noisy_objective``): the rows are clipped
    with or without an intercept, each of the ``d + 1`` centring means gets ``epsilon * s /
    (d + 1)``, and the diagonal's sensitivity is ``max(|lower_j|, |upper_j|) ** 2``.

    Parameters
    ----------
    candidate : LinearRegressionPlan
    sums : types.SimpleNamespace
        :func:`partition_sums` (partitions with at least one row are meaningful).
    draws : ndarray of shape (n_parts, candidate.n_draws)
        Each partition's standard Laplace draws, from its own stream, in a fixed layout: the
        ``d`` means of ``X``, ``y``'s, ``c``, ``b``, the diagonal and the upper triangle of
        ``Q``.

    Returns
    -------
    stats : tuple
        ``(X_offset, y_offset, c, b, Q)`` per partition: noisy means (zeros without
        ``fit_intercept``, shapes ``(n_parts, d)`` and ``(n_parts,)``), the noisy
        ``sum(y**2)``, ``X'y`` (``(n_parts, d)``) and ``X'X`` (``(n_parts, d, d)``) of the
        centred rows.
    """
    d = len(candidate.lower)
    n = np.maximum(sums.n, 1.0)
    lower, upper = candidate.lower, candidate.upper
    y_lower, y_upper = candidate.y_lower, candidate.y_upper
    eps = candidate.epsilon
    if candidate.fit_intercept:
        share = 1.0 / (d + 1)
        # diffprivlib.tools.mean: LaplaceTruncated, sensitivity (upper - lower) / n, epsilon
        # split over the columns; then clipped to the bounds. diffprivlib gives X's means
        # epsilon * s and y's again; Ridge gives each of the d + 1 means epsilon * s / (d + 1).
        x_eps, y_eps = ((eps * share / (d + 1),) * 2 if candidate.calibrated
                        else (eps * share / d, eps * share))
        X_offset = np.clip(sums.x / n[:, None] - (upper - lower) / n[:, None] / x_eps
                           * draws[:, :d], lower, upper)
        y_offset = np.clip(sums.y / n - (y_upper - y_lower) / n / y_eps * draws[:, d],
                           y_lower, y_upper)
    else:
        share, X_offset, y_offset = 0.0, np.zeros(sums.x.shape), np.zeros(len(n))
    # The sums of the centred rows, from the raw sums (the same values, to rounding):
    # X'X - o s' - s o' + n o o' = X'X - o u' - u o' with u = s - n o / 2.
    o, t, s = X_offset, y_offset, sums.x
    u = s - sums.n[:, None] / 2 * o
    xx = sums.xx - o[:, :, None] * u[:, None, :]
    xx -= u[:, :, None] * o[:, None, :]
    xy = sums.xy - t[:, None] * s - o * sums.y[:, None] + (sums.n * t)[:, None] * o
    yy = sums.yy - 2 * t * sums.y + sums.n * t * t
    lower, upper = lower - o, upper - o
    y_lower, y_upper = y_lower - t, y_upper - t
    local = eps * (1 - share) / (1 + d + d * (d + 1) / 2)
    rest = draws[:, d + 1:]
    # Folded at 0 with no upper bound: the absolute value.
    c = np.abs(yy - np.maximum(np.abs(y_lower), np.abs(y_upper)) ** 2 / local * rest[:, 0])
    b = xy - _corner_range(y_lower[:, None], y_upper[:, None], lower, upper) / local \
        * rest[:, 1:1 + d]
    Q = np.empty(xx.shape)
    diagonal = np.arange(d)
    # diffprivlib's diagonal sensitivity is max(|lower_j|, |lower_j|) ** 2; Ridge's corrects it.
    square = _square_range(lower, upper) if candidate.calibrated else lower ** 2
    Q[:, diagonal, diagonal] = np.abs(xx[:, diagonal, diagonal] - square / local
                                      * rest[:, 1 + d:1 + 2 * d])
    i, j = np.triu_indices(d, 1)
    # xx[i, j] - range / local * draw, written in place (d (d - 1) / 2 values a partition).
    noise = _corner_range(lower[:, i], upper[:, i], lower[:, j], upper[:, j])
    noise /= local
    noise *= rest[:, 1 + 2 * d:]
    off = np.subtract(xx[:, i, j], noise, out=noise)
    Q[:, i, j] = off
    Q[:, j, i] = off
    return X_offset, y_offset, c, b, Q


def partition_statistics(candidate, X, y, part, n_parts, rngs, sums=None):
    """:func:`noisy_statistics` of every partition of a block, each drawing from its own
    stream (``rngs[p]``); ``sums`` when already computed (:func:`partition_sums`)."""
    if sums is None:
        sums = partition_sums(candidate, X, y, part, n_parts)
    return noisy_statistics(candidate, sums, _draws(candidate, rngs))


def _draws(candidate, rngs):
    """Each partition's standard Laplace draws from its own stream (``rngs[p]``), in
    :func:`noisy_statistics`' layout."""
    return laplace(np.stack([rng.random(candidate.n_draws) for rng in rngs]))


def solve(c, b, Q, alpha=0.0):
    """diffprivlib's solution of ``min c - 2 b.w + w'Qw + alpha w'w``, per partition, by the
    rule of ``Ridge``'s own fit (``skdptune._models.linear_model.penalised_minimiser``):
    ``(Q + alpha I)^-1 b`` where ``Q + alpha I`` is positive definite and well conditioned
    (``MAX_CONDITION``), else scipy's BFGS from zeros on the same objective, as diffprivlib
    calls it.

    Parameters
    ----------
    c : ndarray of shape (n_parts,)
    b : ndarray of shape (n_parts, d)
    Q : ndarray of shape (n_parts, d, d)
    alpha : float, default=0.0

    Returns
    -------
    coef : ndarray of shape (n_parts, d)
    """
    penalised = Q + alpha * np.eye(b.shape[-1])
    # A Cholesky factor decides most partitions at once: the largest absolute row sum bounds
    # the largest eigenvalue, so a smallest one above it over MAX_CONDITION satisfies the
    # rule. The others go to the rule itself (its eigenvalues, then the solve or BFGS).
    bound = np.max(np.sum(np.abs(penalised), axis=-1), axis=-1)
    direct = at_least(penalised, bound / MAX_CONDITION) & (bound > 0)
    coef = np.empty(b.shape)
    if direct.any():
        coef[direct] = np.linalg.solve(penalised[direct], b[direct][..., None])[..., 0]
    for p in np.flatnonzero(~direct):
        coef[p] = penalised_minimiser(c[p], b[p], Q[p], alpha)
    return coef


def partition_scores(plans, block, rngs):
    """The bounded R² of every plan's fit on every partition of a block (the family
    contract, :meth:`~skdptune._batched.contract.Family.partition_scores`):
    :meth:`~skdptune.utility.BoundedR2Scorer.scores_of`, at most 1 (the engine maps it by the
    utility's range); :data:`FIT_FAILED` where it is not finite (a diverged solve)."""
    fitted = block.n_train > 0
    val_order = np.argsort(block.part_val, kind="stable")
    val_starts = np.searchsorted(block.part_val[val_order], np.arange(block.n_parts + 1))
    result = np.full((len(plans), block.n_parts), np.nan)
    shared = {}
    for j, candidate in enumerate(plans):
        # The sums depend on the bounds only where the rows are clipped: shared otherwise.
        key = ((candidate.lower.tobytes(), candidate.upper.tobytes(), candidate.y_lower,
                candidate.y_upper) if candidate.clips else None)
        if key not in shared:
            shared[key] = partition_sums(candidate, block.X_train, block.y_train,
                                         block.part_train, block.n_parts)
        draws = _draws(candidate, rngs[j])
        n_features = len(candidate.lower)
        coef, intercept = np.zeros((block.n_parts, n_features)), np.zeros(block.n_parts)
        # A few partitions at a time: their d x d statistics stay in the cache through the
        # noise, the test of the condition number and the solve (each partition's values
        # are its own whatever the grouping).
        step = max(1, CHUNK_CELLS // n_features ** 2)
        for start in range(0, block.n_parts, step):
            rows = slice(start, start + step)
            X_offset, y_offset, c, b, Q = noisy_statistics(
                candidate, SimpleNamespace(**{name: value[rows] for name, value
                                              in vars(shared[key]).items()}), draws[rows])
            done = fitted[rows]
            if done.any():
                coef[rows][done] = solve(c[done], b[done], Q[done], candidate.alpha)
            if candidate.fit_intercept:
                intercept[rows] = y_offset - np.einsum("pd,pd->p", X_offset, coef[rows])
        bounds_y = (candidate.y_lower, candidate.y_upper)
        for p in np.flatnonzero(fitted):
            val = val_order[val_starts[p]:val_starts[p + 1]]
            if not len(val):
                continue
            with np.errstate(all="ignore"):
                score = BoundedR2Scorer.scores_of(block.X_val[val] @ coef[p] + intercept[p],
                                                  block.y_val[val], bounds_y)
            result[j, p] = score if np.isfinite(score) else FIT_FAILED
    return block.scored(result)
