"""skdptune's ``KMeans`` (Su et al.'s DPLloyd), all partitions of a candidate in one array
program.

Emulates :meth:`skdptune.cluster.KMeans.fit` followed by
:class:`~skdptune.utility.SimplifiedSilhouetteScorer` (the utility of ``scoring=None``) on each
partition's held-out rows, for every partition of a block at once. The output has the law of
that fit on the partition with the candidate's (already partition-rescaled) parameters; the
noise comes from the partition's own stream (not a secure sampler: partition fits are never
released). The pieces of the fit that carry its law are the model module's own functions,
called here on arrays that stack the partitions: :func:`~skdptune.cluster.initial_centres`,
:func:`~skdptune.cluster.budget_split`, :func:`~skdptune.cluster.reduce_centres`,
:func:`~skdptune.cluster.released_centres`, and
:func:`~skdptune.utility.simplified_silhouettes` for the score. What ``fit`` does (``n``
training rows, ``d`` features, ``K = n_clusters``, ``m = K * oversampling`` seeds), and what is
done here in its place:

- ``_validate_params``, the declared ``bounds`` (``declared_box`` with ``min_separation=1e-5``):
  the same calls in :func:`plan` (anything the fit would refuse, or ``bounds=None``, sends the
  candidate to the per-fit path, which gives it the real fit's outcome). ``y`` and
  ``sample_weight`` are not read (``TARGET`` is ``NO_TARGET``).
- ``n < K`` raises ``ValueError``: that partition is
  :data:`~skdptune._batched.contract.FIT_FAILED` (``error_score``, as on the per-fit path).
- ``n_iter = _calc_iters(d, n)`` (diffprivlib's, the method the fit calls, on the partition's
  own ``n``) and ``budget_split(epsilon, d, n_iter)``: each partition its own.
- The seeds: ``initial_centres`` of ``POOL * m`` uniform draws (from the partition's stream in
  place of the fit's geometry generator).
- Each iteration: every clipped row labelled with its first nearest centre (squared Euclidean
  distance, a running minimum over the centres here); per centre, the count of its rows and
  the sum of their ``x - c`` (``c`` the box's middle); Laplace noise of scale
  ``COUNT_SENSITIVITY / count_epsilon`` on every count and ``(upper_j - lower_j) /
  coordinate_epsilon`` on every sum (diffprivlib's ``Laplace`` with those sensitivities and
  ``delta = 0``; here ``Generator.laplace``), empty or not; ``released_centres`` with box
  uniforms for the redraws. After the first, with ``oversampling > 1``, ``reduce_centres`` of
  the noisy centres weighted by their noisy counts (0 where empty) with its k-means++
  uniforms.
- ``cluster_centers_`` and ``empty_clusters_`` from the last iteration; the score: each
  held-out row's Euclidean distances to its nearest and second nearest centre (unclipped
  rows, as the scorer reads them), ``simplified_silhouettes``, their mean over the
  partition's held-out rows times the share of centres not empty; 0 with one centre.

``random_state`` is not reproduced (the partition's stream replaces it), as for the other
batched families. Each partition's stream is consumed in a fixed layout (seeds, the first
iteration's noise and redraws, the later iterations' for its own ``n_iter``, the reduction's
uniforms), so its draws do not depend on the other partitions. Every quantity of a partition
is a function of its own rows, the public parameters and its own stream: the arrays only
stack partitions side by side, and each partition stops at its own ``n_iter``.

Candidates are fitted one after the other, each over all the block's partitions: candidates
of one shape (``K``, ``oversampling``) stacked together would label the rows once per
candidate all the same, so stacking them saves no arithmetic.
"""

from dataclasses import dataclass

import numpy as np

from .._models.cluster import (
    COUNT_SENSITIVITY,
    MIN_WIDTH,
    POOL,
    REDUCTION_STARTS,
    budget_split,
    initial_centres,
    reduce_centres,
    released_centres,
)
from .._models.cluster import KMeans as PrivateKMeans
from .._utility import SimplifiedSilhouetteScorer, simplified_silhouettes
from .._validation import declared_box
from .common import checked_params, declared_bounds, label_sums, nearest_centres
from .contract import FIT_FAILED, NO_TARGET, Score


def _is_silhouette(utility, candidate):
    """Whether the search's utility is the simplified silhouette (``SCORE.matches``)."""
    return type(getattr(utility, "scorer", None)) is SimplifiedSilhouetteScorer


#: The family contract (:class:`~skdptune._batched.contract.Family`): the score is
#: :class:`~skdptune.utility.SimplifiedSilhouetteScorer` (the default of ``scoring=None`` on
#: skdptune's ``KMeans``), the held-out rows' mean simplified silhouette times the share of
#: centres not found empty, in ``[0, 1]``; ``fit`` does not read ``y``, which may be None.
SCORE = Score("simplified_silhouette", 1.0, 0.0, _is_silhouette)
TARGET, MAX_CLASSES = NO_TARGET, None

#: Above this many seeds (``n_clusters * oversampling``) the per-row distance passes (one per
#: seed) stop being cheap: per-fit path.
MAX_SEEDS = 256


@dataclass(frozen=True)
class LloydPlan:
    """What a partition fit of one candidate needs: public parameters only.

    Attributes
    ----------
    epsilon : float
        The candidate's (partition-scaled) ``epsilon``.
    n_clusters, oversampling : int
    lower, upper : ndarray of shape (n_features,)
        The declared box, as ``fit`` processes it (``declared_box``, ``MIN_WIDTH``).
    """

    epsilon: float
    n_clusters: int
    oversampling: int
    lower: np.ndarray
    upper: np.ndarray

    @property
    def n_seeds(self):
        """Centres of the first iteration."""
        return self.n_clusters * self.oversampling

    def n_iter(self, n_samples):
        """The fit's iterations on ``n_samples`` rows (diffprivlib's ``_calc_iters``, which
        :meth:`skdptune.cluster.KMeans.fit` calls)."""
        model = PrivateKMeans(n_clusters=self.n_clusters, epsilon=self.epsilon)
        return int(model._calc_iters(len(self.lower), n_samples))


def plan(estimator, n_features):
    """The :class:`LloydPlan` of a configured :class:`skdptune.cluster.KMeans`, or None (the
    per-fit path).

    Parameters
    ----------
    estimator : skdptune.cluster.KMeans
        The candidate, its parameters set.
    n_features : int or None
        Columns of ``X``; None when not known (the forecast): the width the bounds declare.

    Returns
    -------
    plan : LloydPlan or None
        None for parameters ``fit`` refuses, without declared finite bounds (of that width),
        or above :data:`MAX_SEEDS` seeds.
    """
    params = checked_params(estimator)
    if params is None or params["bounds"] is None:
        return None
    if n_features is None:
        declared = declared_bounds(params["bounds"], None)
        if declared is None:
            return None
        n_features = len(declared[0])
    try:
        lower, upper = declared_box(estimator, n_features, min_separation=MIN_WIDTH)
    except Exception:  # noqa: BLE001 - whatever the real fit would make of them
        return None
    if params["n_clusters"] * params["oversampling"] > MAX_SEEDS:
        return None
    return LloydPlan(float(params["epsilon"]), int(params["n_clusters"]),
                     int(params["oversampling"]), np.asarray(lower, dtype=float),
                     np.asarray(upper, dtype=float))


def partition_scores(plans, block, rngs):
    """The simplified silhouette of every plan's fit on every partition of a block (the family
    contract, :meth:`~skdptune._batched.contract.Family.partition_scores`);
    :data:`~skdptune._batched.contract.FIT_FAILED` where the real fit raises."""
    result = np.empty((len(plans), block.n_parts))
    for j, candidate in enumerate(plans):
        centres, empty, failed = fit_partitions(candidate, block.X_train, block.part_train,
                                                block.n_parts, rngs[j])
        scores = score_partitions(centres, empty, block.X_val, block.part_val, block.n_parts)
        result[j] = block.scored(np.where(failed, FIT_FAILED, scores))
    return result


def fit_partitions(candidate, X_train, part_train, n_parts, rngs):
    """The emulated ``cluster_centers_`` and ``empty_clusters_`` of one plan on every
    partition of a block.

    Parameters
    ----------
    candidate : LloydPlan
    X_train, part_train, n_parts, rngs
        A block's training rows (float64), their partitions within the block and its
        partition count, and the candidate's streams (one per partition), as
        :func:`partition_scores` receives them.

    Returns
    -------
    centres : ndarray of shape (n_parts, n_clusters, n_features)
    empty : ndarray of shape (n_parts, n_clusters), bool
    failed : ndarray of shape (n_parts,), bool
        Where the real fit raises (fewer rows than clusters, none included).
    """
    lower, upper = candidate.lower, candidate.upper
    n_clusters, dims = candidate.n_clusters, len(lower)
    n_rows = np.bincount(part_train, minlength=n_parts)
    failed = (n_rows == 0) | (n_rows < n_clusters)
    n_iter = np.array([0 if bad else candidate.n_iter(int(n))
                       for n, bad in zip(n_rows, failed)], dtype=np.intp)
    split = np.array([budget_split(candidate.epsilon, dims, t) if t else (1.0, 1.0)
                      for t in n_iter])
    draws = [_Draws(candidate, rng, t) for rng, t in zip(rngs, n_iter)]
    centres = initial_centres(lower, upper, np.stack([draw.seeds for draw in draws]))
    empty = np.zeros(centres.shape[:2], dtype=bool)
    X = np.clip(X_train, lower, upper)
    about_middle = X - (lower + upper) / 2  # what the sums add up
    # Laplace scales of each partition's counts and sums (cluster.KMeans's sensitivities:
    # COUNT_SENSITIVITY for the counts, the feature's width for its sums about the middle).
    count_scale = COUNT_SENSITIVITY / split[:, 0]
    sum_scale = (upper - lower)[None, :] / split[:, 1:2]
    for t in range(n_iter.max(initial=0)):
        active = t < n_iter
        labels, _ = nearest_centres(X, centres, part_train)
        counts, sums = label_sums(about_middle, labels, part_train, n_parts, centres.shape[1])
        noise, redraws = (np.stack(arrays) for arrays in zip(
            *(draw.at(t, centres.shape[1]) for draw in draws)))
        noisy_counts = counts + count_scale[:, None] * noise[..., 0]
        noisy_sums = sums + sum_scale[:, None, :] * noise[..., 1:]
        new, new_empty = released_centres(noisy_counts, noisy_sums, lower, upper,
                                          split[:, :1], redraws)
        if t == 0 and candidate.oversampling > 1:
            # Every fitted partition makes at least two iterations: all are active here.
            centres = reduce_centres(new, np.where(new_empty, 0.0, noisy_counts), n_clusters,
                                     np.stack([draw.reduction for draw in draws]))
            empty = np.zeros((n_parts, n_clusters), dtype=bool)
            continue
        centres = np.where(active[:, None, None], new, centres)
        empty = np.where(active[:, None], new_empty, empty)
    return centres, empty, failed


class _Draws:
    """One partition's draws for one plan, from its own stream in a fixed layout: the seeds'
    uniforms, then per iteration of its own ``n_iter`` the standard Laplace variates (per
    centre: its count, then its sums) and the box uniforms of the redraws, then the
    reduction's uniforms."""

    def __init__(self, candidate, rng, n_iter):
        lower, upper = candidate.lower, candidate.upper
        dims, n_seeds, n_clusters = len(lower), candidate.n_seeds, candidate.n_clusters
        self.seeds = rng.random((POOL * n_seeds, dims))
        sizes = ([n_seeds] + [n_clusters] * (n_iter - 1))[:n_iter]
        self.noise = [rng.laplace(size=(size, 1 + dims)) for size in sizes]
        self.redraws = [lower + rng.random((size, dims)) * (upper - lower) for size in sizes]
        self.reduction = rng.random((REDUCTION_STARTS, n_clusters))
        self.dims = dims

    def at(self, t, n_centres):
        """Iteration ``t``'s Laplace variates and redraws; zeros past the partition's own
        iterations (its centres are then kept)."""
        if t < len(self.noise):
            return self.noise[t], self.redraws[t]
        return np.zeros((n_centres, 1 + self.dims)), np.zeros((n_centres, self.dims))


def score_partitions(centres, empty, X_val, part_val, n_parts):
    """:class:`~skdptune.utility.SimplifiedSilhouetteScorer` of each partition's centres on
    its held-out rows.

    Parameters
    ----------
    centres : ndarray of shape (n_parts, n_clusters, n_features)
    empty : ndarray of shape (n_parts, n_clusters), bool
    X_val : ndarray of shape (n_val, n_features), float64
        Held-out rows, not clipped (the scorer does not clip).
    part_val : ndarray of shape (n_val,), int
    n_parts : int

    Returns
    -------
    scores : ndarray of shape (n_parts,)
        In ``[0, 1]``; NaN without held-out rows.
    """
    n_val = np.bincount(part_val, minlength=n_parts)
    if centres.shape[1] < 2:
        return np.where(n_val > 0, 0.0, np.nan)
    _, squared = nearest_centres(X_val, centres, part_val, second=True)
    distances = np.sqrt(squared)
    silhouettes = simplified_silhouettes(distances[:, 0], distances[:, 1])
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(part_val, weights=silhouettes, minlength=n_parts) / n_val
    return mean * (1.0 - empty.mean(axis=1))
