"""diffprivlib's ``KMeans``, all partitions of a candidate in one array program.

Emulates ``diffprivlib.models.KMeans.fit`` (diffprivlib 0.6.6) followed by ``KMeans.score``
(scikit-learn's: minus the inertia of the held-out rows, the utility of ``scoring=None``), for
every partition of a block at once. The output has the law of a diffprivlib fit on that
partition with the candidate's (already rescaled) parameters; the noise comes from the
partition's own stream (not a secure sampler: partition fits are never released). What
diffprivlib's ``fit`` does (``n`` training rows, ``d`` features, ``K = n_clusters``), and what
is done here in its place:

- ``_validate_params`` (``n_clusters`` an integer >= 1), ``accountant.check(epsilon, 0)``
  (the partition fit's accountant is a throw-away one), ``sample_weight`` ignored with a
  warning, ``y`` deleted, ``validate_data`` (float ``X``): the parameters are checked in
  :func:`plan` (anything else sends the candidate to the per-fit path); the engine gives
  float64 ``X`` and ignores ``y`` (``TARGET`` is ``NO_TARGET``: ``y`` may be None).
- ``n < K`` raises ``ValueError``: that partition is
  :data:`~skdptune._batched.contract.FIT_FAILED` (``error_score``, as on the per-fit path).
- ``iters = int(max(min(epsilon / epsilon_m, 7), 2))`` with ``epsilon_m = sqrt(500 K**3 / n**2
  (d + cbrt(4 d rho**2))**3)``, ``rho = 0.225`` (``_calc_iters``): here, the same expression of
  the partition's own ``n`` (:func:`iterations`); each partition runs its own number of passes.
- ``bounds`` is None: the bounds are computed from the data (a ``PrivacyLeakWarning``): not
  emulated, :func:`plan` returns None. Declared bounds are expanded per feature by
  ``check_bounds(..., min_separation=1e-5)`` (narrower intervals widened about their middle):
  the same call in :func:`plan`. ``X`` is clipped to them: the same clip.
- ``_init_centers``: ``proximity = min(upper - lower) / 2``; centres are drawn one at a time,
  uniformly in the box shrunk by ``proximity`` on each side, the first one kept, each next one
  kept when it lies at least ``2 * proximity`` from every kept one; after 100 rejections in a
  row the draw restarts from no centre with ``proximity`` halved (until it reaches 0, when
  ``_init_centers`` returns None and the fit fails). It depends on the public bounds and ``K``
  only: here, the same loop run for all partitions in lockstep (:func:`initial_centers`),
  each partition drawing its uniforms from its own stream.
- ``_split_epsilon(d, iters)``: ``normaliser = epsilon / iters / (d + cbrt(4 d rho**2))``;
  ``fit`` unpacks the returned pair in the other order, so the counts get ``normaliser`` and
  each coordinate sum ``cbrt(4 d rho**2) * normaliser`` (reproduced as diffprivlib runs it).
  (Not released: partition fits only need the law. For the record, one pass then costs
  ``normaliser * (1 + d * cbrt(4 d rho**2))`` by basic composition over the count and the
  ``d`` sums, a record being in one cluster; that exceeds ``epsilon / iters`` for ``d >= 5``.)
- ``iters`` passes of ``_update_centers`` after the first assignment (``range(-1, iters)``):
  each row's label is the first nearest centre (``((X - centre)**2).sum(axis=1)`` per centre,
  ``argmin``; the same expressions here). Per cluster present in the labels, in cluster order:
  ``GeometricFolded(epsilon_count, sensitivity=1, lower=0.5, upper=inf)`` on its count (the
  geometric variate from one uniform as ``Geometric.randomise`` computes it, rounded, then
  folded at 0.5: ``v <= 0`` becomes ``1 - v``; a non-finite variate, where diffprivlib's
  ``int()`` raises, is ``FIT_FAILED``); per dimension ``LaplaceBoundedDomain(epsilon_sum,
  sensitivity=upper_i - lower_i, lower=c * lower_i, upper=c * upper_i)`` on the sum of its
  clipped rows (``c`` the noisy count): the value clamped into the domain, then Laplace noise
  conditioned on the domain (diffprivlib's rejection sampler), here by inverse CDF
  (:func:`~skdptune._batched.common.laplace_within`). Its scale solves an equation homogeneous
  in ``(sensitivity, domain width)``: ``(upper_i - lower_i)`` times the solution for
  sensitivity 1 and domain ``[0, c]``, found by diffprivlib's own bisection run elementwise on
  arrays (:func:`unit_scales`). The centre is ``noisy_sum / c``; clusters absent from the
  labels keep their centre (no draw).
- ``score`` (scikit-learn's ``KMeans.score``, which diffprivlib does not override): minus the
  sum over the held-out rows, unclipped, of the squared distance to the nearest centre. The
  engine maps it by the utility's range and clip (:func:`skdptune.utility.kmeans_score_range`
  by default), as the per-fit path's scorer does.

``random_state`` is not reproduced (the partition's stream replaces it), as for the other
batched families. Every quantity of a partition is a function of its own rows, the public
parameters and its own stream: nothing is computed across partitions from data (the lockstep
initialisation and the arrays only stack partitions side by side; each partition's state
advances on its own draws).
"""

from dataclasses import dataclass
from numbers import Integral

import numpy as np
from diffprivlib.validation import check_bounds

from .common import (
    checked_params,
    declared_bounds,
    label_sums,
    laplace_within,
    nearest_centres,
)
from .contract import FIT_FAILED, NEGATIVE_INERTIA, NO_TARGET

#: The family contract (:class:`~skdptune._batched.contract.Family`): the estimator's own
#: ``score`` (``scoring=None``); neither diffprivlib's ``fit`` nor ``KMeans.score`` reads
#: ``y``, which may be None.
SCORE, TARGET, MAX_CLASSES = NEGATIVE_INERTIA, NO_TARGET, None

#: Above this many clusters the per-row distance passes stop being cheap: per-fit path.
MAX_CLUSTERS = 64

#: diffprivlib's coordinate normalisation factor (``_calc_iters``, ``_split_epsilon``).
RHO = 0.225

#: diffprivlib's ``min_separation`` of the bounds in ``KMeans.fit``.
MIN_SEPARATION = 1e-5

#: Rejections in a row after which ``_init_centers`` halves the proximity.
MAX_RETRIES = 100

#: Uniform points a partition's initialisation draws from its stream at a time.
_CHUNK = 128


@dataclass(frozen=True)
class KMeansPlan:
    """What a partition fit of one candidate needs: public parameters only.

    Attributes
    ----------
    epsilon : float
        The candidate's (partition-scaled) ``epsilon``.
    n_clusters : int
    lower, upper : ndarray of shape (n_features,)
        The declared bounds, per feature, as ``fit`` processes them (``min_separation``).
    """

    epsilon: float
    n_clusters: int
    lower: np.ndarray
    upper: np.ndarray


def plan(estimator, n_features):
    """The :class:`KMeansPlan` of a configured diffprivlib ``KMeans``, or None to fall back.

    Parameters
    ----------
    estimator : diffprivlib.models.KMeans
        The candidate, its parameters set.
    n_features : int or None
        Columns of ``X``; None when not known (the forecast): the width the bounds declare.

    Returns
    -------
    plan : KMeansPlan or None
        None without declared finite bounds, for an ``epsilon`` that is not positive and
        finite, an ``n_clusters`` scikit-learn rejects or above :data:`MAX_CLUSTERS`.
    """
    params = checked_params(estimator)
    if params is None or params["bounds"] is None:
        return None
    n_clusters, epsilon = params["n_clusters"], params["epsilon"]
    if (isinstance(n_clusters, bool) or not isinstance(n_clusters, Integral)
            or not 1 <= n_clusters <= MAX_CLUSTERS):
        return None
    declared = declared_bounds(params["bounds"], n_features)
    if declared is None:
        return None
    # fit's own processing: intervals narrower than 1e-5 widened about their middle.
    lower, upper = check_bounds(declared, shape=len(declared[0]), min_separation=MIN_SEPARATION)
    return KMeansPlan(float(epsilon), int(n_clusters), np.asarray(lower, dtype=float),
                      np.asarray(upper, dtype=float))


def iterations(candidate, n_features, n_samples):
    """diffprivlib's ``_calc_iters``: the passes of a fit on ``n_samples`` rows."""
    epsilon_m = np.sqrt(500 * (candidate.n_clusters ** 3) / (n_samples ** 2) *
                        (n_features + np.cbrt(4 * n_features * (RHO ** 2))) ** 3)
    return int(max(min(candidate.epsilon / epsilon_m, 7), 2))


def split_epsilon(candidate, n_features, iters):
    """``(epsilon_count, epsilon_sum)`` as ``fit`` receives them from ``_split_epsilon``.

    diffprivlib returns ``(epsilon_i * normaliser, epsilon_0 * normaliser)`` and ``fit`` binds
    them to ``epsilon_0, epsilon_i``: the counts get ``normaliser``, the sums ``cbrt(4 d
    rho**2) * normaliser``.
    """
    epsilon_0 = np.cbrt(4 * n_features * RHO ** 2)
    normaliser = candidate.epsilon / iters / (1 * n_features + epsilon_0)
    return 1 * normaliser, epsilon_0 * normaliser


def initial_centers(candidate, rngs):
    """``_init_centers`` for every partition, each from its own stream.

    The partitions run diffprivlib's loop in lockstep: at each step every partition not yet
    done draws its next uniform point (from a chunk of its own stream) and accepts or rejects
    it by its own state only.

    Parameters
    ----------
    candidate : KMeansPlan
    rngs : list of numpy.random.Generator
        One stream per partition.

    Returns
    -------
    centers : ndarray of shape (n_parts, n_clusters, n_features)
    failed : ndarray of shape (n_parts,), bool
        Where ``_init_centers`` returns None (the proximity reached 0).
    """
    lower, upper = candidate.lower, candidate.upper
    span, n_clusters, n_parts, dims = upper - lower, candidate.n_clusters, len(rngs), len(lower)
    proximity = np.full(n_parts, np.min(span) / 2.0)
    centers = np.zeros((n_parts, n_clusters, dims))
    cluster = np.zeros(n_parts, dtype=np.intp)
    retry = np.zeros(n_parts, dtype=np.intp)
    done = np.zeros(n_parts, dtype=bool)
    failed = ~(proximity > 0)
    buffer = np.empty((n_parts, _CHUNK, dims))
    position = np.full(n_parts, _CHUNK)
    columns = np.arange(n_clusters)
    while True:
        active = np.flatnonzero(~(done | failed))
        if not len(active):
            return centers, failed
        for p in active[position[active] == _CHUNK]:
            buffer[p] = rngs[p].random((_CHUNK, dims))
            position[p] = 0
        uniforms = buffer[active, position[active]]
        position[active] += 1
        prox = proximity[active, None]
        # diffprivlib's expression, term by term.
        temp = uniforms * (span - 2 * prox) + lower + prox
        first = cluster[active] == 0
        squared = ((centers[active] - temp[:, None, :]) ** 2).sum(axis=2)
        squared[columns[None, :] >= cluster[active, None]] = np.inf
        with np.errstate(invalid="ignore"):
            far = np.sqrt(squared.min(axis=1)) >= 2 * proximity[active]
        accept = first | far
        kept = active[accept]
        centers[kept, cluster[kept]] = temp[accept]
        cluster[kept] += 1
        retry[kept] = 0
        retry[active[~accept]] += 1
        done[active] = cluster[active] >= n_clusters
        restart = active[~done[active] & (retry[active] >= MAX_RETRIES)]
        proximity[restart] /= 2.0
        failed[restart[~(proximity[restart] > 0)]] = True
        cluster[restart], retry[restart] = 0, 0
        centers[restart] = 0.0


def unit_scales(epsilon, n_c):
    """``LaplaceBoundedDomain(epsilon, delta=0, sensitivity=1, lower=0, upper=n_c)._find_scale()``
    elementwise: diffprivlib's bisection, each element stopping by its own rule.

    Parameters
    ----------
    epsilon, n_c : ndarray of the same shape
        Positive ``epsilon`` and domain widths (noisy counts, ``>= 1``).

    Returns
    -------
    scales : ndarray
    """
    epsilon = np.asarray(epsilon, dtype=float)
    diam = np.asarray(n_c, dtype=float)
    delta_q = 1.0

    def f(shape):
        delta_c = ((2 - np.exp(- delta_q / shape) - np.exp(- (diam - delta_q) / shape))
                   / (1 - np.exp(- diam / shape)))
        return delta_q / (epsilon - np.log(delta_c) - np.log(1 - 0.0))

    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        left = delta_q / (epsilon - np.log(1 - 0.0))
        right = f(left)
        old_interval_size = (right - left) * 2
        while True:
            active = old_interval_size > right - left
            if not active.any():
                break
            old_interval_size = np.where(active, right - left, old_interval_size)
            middle = (right + left) / 2
            value = f(middle)
            left = np.where(active & (value >= middle), middle, left)
            right = np.where(active & (value <= middle), middle, right)
    return (right + left) / 2


def _geometric_folded(counts, uniforms, epsilon):
    """``GeometricFolded(epsilon, sensitivity=1, lower=0.5, upper=inf).randomise(count)`` as
    the same function of one uniform; NaN where diffprivlib's ``int()`` of the variate raises
    (a uniform of exactly 0.5)."""
    scale = -epsilon  # Geometric._scale: -epsilon / sensitivity
    with np.errstate(divide="ignore", invalid="ignore"):
        unif = (uniforms - 0.5) * (1 + np.exp(scale))
        sign = np.where(unif < 0, -1.0, 1.0)
        noisy = np.round(counts + sign * np.floor(np.log(sign * unif) / scale))
    noisy = np.where(np.isfinite(noisy), noisy, np.nan)
    # Folded at 0.5 (integers): v < 0.5 becomes 1 - v; no upper fold.
    return np.where(noisy < 0.5, 1.0 - noisy, noisy)


def fit_partitions(candidate, X_train, part_train, n_parts, rngs):
    """The emulated ``cluster_centers_`` of one plan on every partition of a block.

    Parameters
    ----------
    candidate : KMeansPlan
    X_train : ndarray of shape (n_train, n_features), float64
    part_train : ndarray of shape (n_train,), int
        Partition of each training row within the block.
    n_parts : int
    rngs : list of numpy.random.Generator
        One stream per partition.

    Returns
    -------
    centers : ndarray of shape (n_parts, n_clusters, n_features)
    failed : ndarray of shape (n_parts,), bool
        Where the real fit raises (fewer rows than clusters, no centres from
        ``_init_centers``, a count variate ``int()`` rejects); also partitions without rows.
    """
    n_clusters, dims = candidate.n_clusters, len(candidate.lower)
    lower, upper = candidate.lower, candidate.upper
    n_rows = np.bincount(part_train, minlength=n_parts)
    fitted = (n_rows > 0) & (n_rows >= n_clusters)
    iters = np.array([iterations(candidate, dims, int(n)) if ok else 0
                      for n, ok in zip(n_rows, fitted)], dtype=np.intp)
    epsilons = np.array([split_epsilon(candidate, dims, i) if i else (1.0, 1.0) for i in iters])
    centers, failed = initial_centers(candidate, rngs)
    failed = failed | ~fitted
    # Each pass draws, per cluster, a count uniform and one per dimension (fixed layout; an
    # absent cluster's are unused), all from the partition's own stream.
    width = n_clusters * (1 + dims)
    uniforms = np.zeros((n_parts, max(iters.max(initial=0), 1), n_clusters, 1 + dims))
    for p in np.flatnonzero(iters):
        uniforms[p, :iters[p]] = rngs[p].random(iters[p] * width).reshape(
            iters[p], n_clusters, 1 + dims)
    X = np.clip(X_train, lower, upper)
    for t in range(iters.max(initial=0)):
        labels, _ = nearest_centres(X, centers, part_train)
        counts, sums = label_sums(X, labels, part_train, n_parts, n_clusters)
        active = (t < iters) & ~failed
        centers, blown = update_centers(candidate, centers, counts, sums, active,
                                        epsilons[:, 0], epsilons[:, 1], uniforms[:, t])
        failed |= blown
    return centers, failed


def update_centers(candidate, centers, counts, sums, active, epsilon_count, epsilon_sum,
                   uniforms):
    """One pass of diffprivlib's ``_update_centers`` on every active partition.

    Parameters
    ----------
    candidate : KMeansPlan
    centers : ndarray of shape (n_parts, n_clusters, n_features)
        The centres the labels were computed from.
    counts : ndarray of shape (n_parts, n_clusters), int
        Rows per label.
    sums : ndarray of shape (n_parts, n_clusters, n_features)
        Sums of the clipped rows per label.
    active : ndarray of shape (n_parts,), bool
        The partitions that make this pass (the others keep their centres).
    epsilon_count, epsilon_sum : ndarray of shape (n_parts,)
        Each partition's ``epsilon`` of the counts and of each coordinate sum
        (:func:`split_epsilon`).
    uniforms : ndarray of shape (n_parts, n_clusters, 1 + n_features)
        Each partition's uniforms for this pass, from its own stream: per cluster, one for
        the count and one per coordinate.

    Returns
    -------
    centers : ndarray of shape (n_parts, n_clusters, n_features)
        A new array.
    blown : ndarray of shape (n_parts,), bool
        Where a count variate is not finite (diffprivlib's ``int()`` raises).
    """
    lower, upper = candidate.lower, candidate.upper
    centers = centers.copy()
    # A cluster absent from its partition's labels keeps its centre and draws nothing.
    update = (counts > 0) & active[:, None]
    # GeometricFolded(epsilon_count, sensitivity=1, lower=0.5, upper=inf) on each count.
    noisy_count = _geometric_folded(counts, uniforms[..., 0], epsilon_count[:, None])
    blown = update & np.isnan(noisy_count)
    parts, clusters = np.nonzero(update & ~blown.any(axis=1)[:, None])
    if len(parts):
        # LaplaceBoundedDomain(epsilon_sum, sensitivity=upper - lower, lower=c * lower,
        # upper=c * upper) on each coordinate sum: the value clamped into the domain, then
        # Laplace noise conditioned on it, of scale (upper - lower) * unit scale(c).
        n_c = noisy_count[parts, clusters][:, None]
        low, high = n_c * lower, n_c * upper
        value = np.clip(sums[parts, clusters], low, high)
        scale = (upper - lower) * unit_scales(epsilon_sum[parts], n_c[:, 0])[:, None]
        noisy_sum = value + scale * laplace_within(
            uniforms[parts, clusters, 1:], (low - value) / scale, (high - value) / scale)
        centers[parts, clusters] = np.clip(noisy_sum, low, high) / n_c
    return centers, blown.any(axis=1)


def score_partitions(centers, X_val, part_val, n_parts):
    """scikit-learn's ``KMeans.score`` of each partition's centres on its held-out rows.

    Parameters
    ----------
    centers : ndarray of shape (n_parts, n_clusters, n_features)
    X_val : ndarray of shape (n_val, n_features), float64
        Held-out rows, not clipped (``score`` does not clip).
    part_val : ndarray of shape (n_val,), int
    n_parts : int

    Returns
    -------
    scores : ndarray of shape (n_parts,)
        Minus the sum of each row's squared distance to its nearest centre (0 without rows).
    """
    _, distances = nearest_centres(X_val, centers, part_val)
    return -np.bincount(part_val, weights=distances[:, 0], minlength=n_parts)


def partition_scores(plans, block, rngs):
    """``KMeans.score`` (minus the held-out inertia, not yet mapped to a utility) of every
    plan's fit on every partition of a block (the family contract,
    :meth:`~skdptune._batched.contract.Family.partition_scores`); :data:`FIT_FAILED` where the
    real fit raises."""
    result = np.empty((len(plans), block.n_parts))
    for j, candidate in enumerate(plans):
        centers, failed = fit_partitions(candidate, block.X_train, block.part_train,
                                         block.n_parts, rngs[j])
        scores = score_partitions(centers, block.X_val, block.part_val, block.n_parts)
        result[j] = block.scored(np.where(failed, FIT_FAILED, scores))
    return result
