"""Private k-means that spends what it records under replace-one adjacency."""

from numbers import Integral, Real

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.mechanisms import Laplace
from diffprivlib.models import KMeans as DPKMeans

from .._clipping import validate_clippable
from .._sklearn_compat import Interval
from .._validation import declared_box
from .base import accountant_of, random_sources, start_fit
from .facts import ModelFacts

#: Su et al.'s coordinate normalisation factor (diffprivlib's ``rho``): with it, the share of
#: an iteration's budget that buys the counts against one coordinate's sums is
#: ``cbrt(4 d RHO**2) : 1``.
RHO = 0.225

#: The smallest width a declared interval is given (diffprivlib's ``min_separation``).
MIN_WIDTH = 1e-5

#: A centre whose noisy count is below this many scales of the count's noise (``2 /
#: count_epsilon``) is taken as empty and redrawn: an empty cluster passes with probability
#: ``exp(-EMPTY_SCALES) / 2`` (7 %).
EMPTY_SCALES = 2.0

#: k-means++ starts of the weighted k-means that reduces the oversampled seeds
#: (``reduce_centres``); the best is kept.
REDUCTION_STARTS = 3

#: Lloyd iterations of each of those starts, at most.
REDUCTION_ITERATIONS = 50

#: Uniform draws per seed from which :func:`initial_centres` picks its seeds.
POOL = 20

#: L1 sensitivity of one iteration's vector of counts under replace-one adjacency: the
#: replaced record leaves one cluster and the new one joins another.
COUNT_SENSITIVITY = 2.0


def budget_split(epsilon, n_features, n_iter):
    """``(count_epsilon, coordinate_epsilon)``: what one iteration gives its counts and each
    coordinate's sums.

    Each of the ``n_iter`` iterations gets ``epsilon / n_iter``, split between the counts and
    the ``d`` coordinates' sums in the ratio ``cbrt(4 d RHO**2) : 1 : ... : 1`` (Su et al.
    2016, as diffprivlib's ``_split_epsilon`` computes it; diffprivlib 0.6.6 then swaps the two
    values, giving the counts one coordinate's share and every coordinate the counts'
    share, which spends ``(1 + d c) / (d + c)`` times what it records, ``c = cbrt(4 d
    RHO**2)``: 1.52 at 20 features).

    Parameters
    ----------
    epsilon : float
        The fit's budget.
    n_features : int
        ``d``.
    n_iter : int
        The number of iterations.

    Returns
    -------
    count_epsilon, coordinate_epsilon : float
        ``count_epsilon + n_features * coordinate_epsilon == epsilon / n_iter``.
    """
    count_weight = np.cbrt(4 * n_features * RHO ** 2)
    per_iteration = epsilon / n_iter
    return (per_iteration * count_weight / (n_features + count_weight),
            per_iteration / (n_features + count_weight))


def initial_centres(lower, upper, unit):
    """Seeds spread over the declared box, drawn from the box alone.

    A greedy sphere packing (the aim of diffprivlib's and Su et al.'s initialisation): from
    :data:`POOL` uniform draws per seed, the first kept is the one farthest from the box's
    boundary, and each next one maximises the smaller of its distance to the points kept
    and twice its distance to the boundary (distances in units of each feature's width). No
    data are read. Batched over leading axes: the batched engine draws every partition's
    seeds with this function (``skdptune._batched.dp_lloyd``).

    Parameters
    ----------
    lower, upper : ndarray of shape (n_features,)
    unit : ndarray of shape (..., POOL * n_seeds, n_features)
        Uniform draws in ``[0, 1)``, independent of the data.

    Returns
    -------
    seeds : ndarray of shape (..., n_seeds, n_features)
    """
    n_seeds = unit.shape[-2] // POOL
    room = 2 * np.minimum(unit, 1 - unit).min(axis=-1)
    kept = []
    for _ in range(n_seeds):
        chosen = np.take_along_axis(unit, np.argmax(room, axis=-1)[..., None, None], axis=-2)
        kept.append(chosen[..., 0, :])
        gap = unit - chosen
        room = np.minimum(room, np.sqrt(np.einsum("...i,...i->...", gap, gap)))
    return lower + np.stack(kept, axis=-2) * (upper - lower)


def reduce_centres(points, weights, n_clusters, uniforms):
    """``n_clusters`` starting centres from an oversampled first iteration: a weighted
    k-means of its noisy centres.

    The best of :data:`REDUCTION_STARTS` runs of Lloyd's algorithm from k-means++ seeds. A
    function of released values and of data-independent draws only (post-processing).
    scikit-learn's ``KMeans`` does the same with about 10 ms of fixed cost per call, which
    every partition fit of a search would pay; here the problem has ``oversampling *
    n_clusters`` points. Batched over leading axes (each problem on its own: the batched
    engine reduces every partition's seeds with this function).

    Parameters
    ----------
    points : ndarray of shape (..., n_seeds, n_features)
        The first iteration's noisy centres.
    weights : ndarray of shape (..., n_seeds)
        Their noisy counts, 0 for the centres found empty: weights in units of records, so
        that a partition's fit (whose noise the search scales with its records) reduces its
        seeds as the refit does. Negative values count as 0; with no positive weight, every
        point weighs the same.
    n_clusters : int
    uniforms : ndarray of shape (..., REDUCTION_STARTS, n_clusters)
        Uniform draws in ``[0, 1)``, independent of the data: the k-means++ draws.

    Returns
    -------
    centres : ndarray of shape (..., n_clusters, n_features)
    """
    lead, (n_seeds, n_features) = points.shape[:-2], points.shape[-2:]
    points = points.reshape(-1, n_seeds, n_features)
    uniforms = uniforms.reshape(len(points), REDUCTION_STARTS, n_clusters)
    weights = np.maximum(weights.reshape(len(points), n_seeds), 0.0)
    weights = np.where(weights.sum(axis=1, keepdims=True) > 0, weights, 1.0)
    problems = np.arange(len(points))
    best = np.zeros((len(points), n_clusters, n_features))
    best_cost = np.full(len(points), np.inf)
    for start in range(REDUCTION_STARTS):
        # k-means++ seeds: each next one drawn with probability proportional to its weight
        # times its squared distance to the seeds already drawn.
        chosen = _draw(weights, uniforms[:, start, 0])
        centres = points[problems, chosen][:, None, :]
        for k in range(1, n_clusters):
            mass = weights * _squared_distances(points, centres).min(axis=2)
            # Fewer weighted points than clusters: any point.
            mass = np.where(mass.sum(axis=1, keepdims=True) > 0, mass, 1.0)
            chosen = _draw(mass, uniforms[:, start, k])
            centres = np.concatenate([centres, points[problems, chosen][:, None, :]], axis=1)
        for _ in range(REDUCTION_ITERATIONS):
            labels = _squared_distances(points, centres).argmin(axis=2)
            members = (labels[..., None] == np.arange(n_clusters)) * weights[..., None]
            totals = members.sum(axis=1)
            moved = np.where(totals[..., None] > 0,
                             (members.transpose(0, 2, 1) @ points)
                             / np.maximum(totals, 1e-300)[..., None], centres)
            # A problem that has converged moves no more: the others go on.
            if np.array_equal(moved, centres):
                break
            centres = moved
        cost = (weights * _squared_distances(points, centres).min(axis=2)).sum(axis=1)
        better = cost < best_cost
        best[better], best_cost[better] = centres[better], cost[better]
    return best.reshape(lead + (n_clusters, n_features))


def _draw(weights, uniforms):
    """One index per row of ``weights`` (non-negative, positive sum), with probability
    proportional to its weight, by inverse CDF of ``uniforms`` (as numpy's ``choice`` with
    ``p`` draws it)."""
    cdf = np.cumsum(weights / weights.sum(axis=1, keepdims=True), axis=1)
    cdf /= cdf[:, -1:]
    return np.minimum((cdf <= uniforms[:, None]).sum(axis=1), weights.shape[1] - 1)


def released_centres(noisy_counts, noisy_sums, lower, upper, count_epsilon, redraws):
    """The centres one iteration releases, from its noisy counts and sums (post-processing).

    A centre is ``c + S_k / N_k`` (``c`` the box's middle, ``S_k`` the noisy sum of its
    records' ``x - c``, ``N_k`` the noisy count) clipped to the box where ``N_k`` is at least
    :data:`EMPTY_SCALES` scales of the count's noise (``COUNT_SENSITIVITY / count_epsilon``),
    and is otherwise taken as empty and replaced by its entry of ``redraws``. A threshold in
    noise scales makes the same decision on a partition's records as on all of them when
    epsilon is scaled with the number of records (:mod:`skdptune.partition_scaling`). Batched
    over leading axes: the batched engine's partition fits release theirs with this function.

    Parameters
    ----------
    noisy_counts : ndarray of shape (..., n_centres)
    noisy_sums : ndarray of shape (..., n_centres, n_features)
    lower, upper : ndarray of shape (n_features,)
    count_epsilon : float or ndarray broadcasting against ``noisy_counts``
    redraws : ndarray of shape (..., n_centres, n_features)
        Points drawn uniformly from the box, independent of the data.

    Returns
    -------
    centres : ndarray of shape (..., n_centres, n_features)
    empty : ndarray of shape (..., n_centres), bool
    """
    empty = noisy_counts < EMPTY_SCALES * COUNT_SENSITIVITY / count_epsilon
    means = np.clip((lower + upper) / 2
                    + noisy_sums / np.where(empty, 1.0, noisy_counts)[..., None], lower, upper)
    return np.where(empty[..., None], redraws, means), empty


def _squared_distances(X, centres):
    """``(..., n_rows, n_centres)`` squared Euclidean distances (``|x|^2 - 2 x.c + |c|^2``,
    clipped at 0), batched over leading axes."""
    return np.maximum((X ** 2).sum(axis=-1)[..., :, None] - 2 * X @ np.swapaxes(centres, -1, -2)
                      + (centres ** 2).sum(axis=-1)[..., None, :], 0.0)


class KMeans(DPKMeans):
    r"""Private k-means (Su et al.'s DPLloyd) under replace-one adjacency.

    diffprivlib's ``KMeans``, with its parameters and the algorithm it intends: ``n_iter_``
    Lloyd iterations (diffprivlib's ``_calc_iters``: 2 to 7, from ``epsilon``,
    ``n_clusters`` and the numbers of records and features, all public), each labelling
    every record with its nearest centre and replacing each centre by a noisy mean of its
    records, from seeds drawn from the declared ``bounds`` alone. diffprivlib 0.6.6's own fit
    is not private (the refit gate refuses it): a cluster no record is nearest to keeps its
    centre exactly, with no noise; it swaps the budget shares of counts and sums
    (``budget_split``), spending up to 1.5 times what it records at 20 features; and it
    keeps every training record's cluster (``labels_``) and the exact ``inertia_``. This
    class fixes all three.

    One change to the algorithm: the first iteration runs from ``oversampling *
    n_clusters`` seeds, and a weighted k-means of its noisy centres gives the
    ``n_clusters`` centres the other iterations start from (``reduce_centres``;
    ``oversampling=1``: ``n_clusters`` seeds, as diffprivlib starts). Lloyd's iterations from seeds that ignore the
    data often end with one centre between two clusters and two in a third; the
    oversampled iteration is a noisy histogram of the data over the seeds' cells, as Su et
    al.'s hybrid method starts from a noisy grid histogram. It costs nothing more: the
    sensitivities below do not depend on the number of centres.

    Privacy (replace-one adjacency with ``n`` public, as diffprivlib's models): every record
    is clipped to the declared box ``[lower, upper]`` (width ``w_j`` per feature, middle
    ``c``). Iteration ``t`` releases, for every centre ``k`` (its cluster empty or not):

    - its count ``N_k`` with Laplace noise of scale ``2 / epsilon_count``. Replacing one
      record moves it out of one cluster and into another: two counts change by 1, an L1
      sensitivity of 2 for the vector of counts;
    - the sum ``S_kj`` of ``x_j - c_j`` over its records, per feature ``j``, with Laplace
      noise of scale ``w_j / epsilon_coordinate``. Replacing one record changes at most two
      clusters' sums, by ``x_j - c_j`` and ``x'_j - c_j`` (each at most ``w_j / 2``), or
      one cluster's by ``x'_j - x_j`` (at most ``w_j``): an L1 sensitivity of ``w_j`` for
      feature ``j`` across the clusters (sums of the raw values would need ``max(w_j, 2
      max(|lower_j|, |upper_j|))``).

    ``epsilon_count + d epsilon_coordinate = epsilon / n_iter_`` (``budget_split``, Su et
    al.'s ratio); the labels of iteration ``t`` are a function of each record and of the
    centres released before, so adaptive sequential composition over all iterations gives
    ``epsilon``, which the fit records on ``accountant``. A centre is ``c + S_k / N_k``
    (noisy values) clipped to the box where the noisy count ``N_k`` is at least
    ``EMPTY_SCALES`` scales of its noise, and is otherwise taken as empty and redrawn
    uniformly from the box: a decision on released values and a data-independent draw. The
    reduction of the seeds is post-processing too. The released model holds the centres,
    which of them the last iteration found empty, the number of iterations and the input's
    shape: no labels, no inertia.

    Parameters
    ----------
    n_clusters : int, default=8
        The number of centres.
    epsilon : float, default=1.0
        The privacy budget of one fit (pure epsilon-DP, replace-one adjacency of one record
        with ``n`` public).
    bounds : tuple, default=None
        ``(lower, upper)``, scalars or one value per feature, declared from public knowledge;
        records are clipped to them. Required: bounds read from the data are not private.
    oversampling : int, default=4
        Seeds of the first iteration per cluster (1: ``n_clusters`` seeds, as diffprivlib
        starts).
    random_state : int, RandomState or None, default=None
        None draws the noise from :mod:`secrets` (through diffprivlib's mechanisms) and the
        data-independent draws (seeds, redrawn centres, the reduction's starts) from fresh
        OS entropy: the only setting with a privacy guarantee. A seed drives both, as two
        independent streams (the data-independent draws are the same whatever the noise
        drew), and makes fits reproducible, for tests and examples; its noise is
        predictable, so a seeded fit is not private.
    accountant : BudgetAccountant or None, default=None
        Where the fit records ``epsilon``; None uses diffprivlib's default accountant (looked
        up at fit time).

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The released centres, inside the declared box.
    empty_clusters_ : ndarray of shape (n_clusters,), dtype=bool
        The centres whose noisy count in the last iteration was below ``EMPTY_SCALES``
        scales of its noise, and which were redrawn uniformly from the box: as far as the fit
        can tell, no records are near them (post-processing of its noisy counts).
    n_iter_ : int
        The number of Lloyd iterations (public: a function of the parameters and of the
        shape of ``X``).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of the features seen during fit, when ``X`` has string column names.

    See Also
    --------
    skdptune.utility.SimplifiedSilhouetteScorer : The default score of a search over this class.

    References
    ----------
    .. [1] Su, Cao, Li, Bertino and Jin, "Differentially private k-means clustering",
       CODASPY 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune.cluster import KMeans
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(centre, 0.05, (5000, 2)) for centre in (0.25, 0.75)])
    >>> model = KMeans(n_clusters=2, epsilon=1.0, bounds=(0, 1), random_state=0).fit(X)
    >>> bool(np.abs(np.sort(model.cluster_centers_[:, 0]) - [0.25, 0.75]).max() < 0.05)
    True
    """

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "bounds": [tuple, list, None],
        "oversampling": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "accountant": [BudgetAccountant, None],
    }

    # Parameters stored as given (diffprivlib's __init__ resolves the accountant and sets
    # fitted attributes to None; scikit-learn's stores parameters this class does not take).
    def __init__(self, n_clusters=8, *, epsilon=1.0, bounds=None, oversampling=4,
                 random_state=None, accountant=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.oversampling = oversampling
        self.random_state = random_state
        self.accountant = accountant

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags

    def fit(self, X, y=None, sample_weight=None):
        """Fit the centres privately (see the class docstring for the mechanism).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        sample_weight : ignored
            As in diffprivlib (warned about).

        Returns
        -------
        self : KMeans
        """
        self._start_fit(sample_weight)
        X = validate_clippable(self, X, accept_sparse=False, dtype=[np.float64, np.float32])
        n_samples, n_features = X.shape
        self._check_samples(n_samples)
        lower, upper = declared_box(self, n_features, min_separation=MIN_WIDTH)
        X_clipped, middle = np.clip(X, lower, upper), (lower + upper) / 2
        return self._release(lambda centres: cluster_sums(X_clipped, centres, middle),
                             n_samples, (lower, upper), X.dtype)

    def _start_fit(self, sample_weight=None):
        """The shared prologue (:func:`~skdptune._models.base.start_fit`: ``bounds``
        declared): what every fit does before it reads the data."""
        start_fit(self, ("bounds",), sample_weight)

    def _check_samples(self, n_samples):
        if n_samples < self.n_clusters:
            raise ValueError(f"n_samples={n_samples} should be >= n_clusters={self.n_clusters}")

    def _release(self, statistics, n_samples, box, dtype):
        """The private Lloyd iterations, each from ``statistics(centres)``: the true counts
        and sums about the box's middle of the clipped records nearest each centre
        (:func:`cluster_sums`), computed in memory (:meth:`fit`) or reduced over chunks
        (``skdptune._distributed``); every noise term is drawn here, in the same order
        either way (the class docstring gives the mechanisms and their privacy)."""
        lower, upper = box
        n_features = len(lower)
        # The seeds, the redrawn centres and the reduction's starts are data-independent: their
        # own stream, apart from the noise (the same seeds whatever the noise drew).
        noise, geometry = random_sources(self.random_state, structure=True)
        n_iter = int(self._calc_iters(n_features, n_samples))
        count_epsilon, coordinate_epsilon = budget_split(self.epsilon, n_features, n_iter)
        lloyd = _Iteration(statistics, lower, upper, count_epsilon, coordinate_epsilon, noise,
                           geometry)
        n_seeds = self.n_clusters * self.oversampling
        centres = initial_centres(lower, upper, geometry.random((POOL * n_seeds, n_features)))
        for iteration in range(n_iter):
            centres, empty = lloyd(centres)
            if iteration == 0 and self.oversampling > 1:
                centres = reduce_centres(
                    centres, np.where(empty, 0.0, lloyd.noisy_counts), self.n_clusters,
                    geometry.random((REDUCTION_STARTS, self.n_clusters)))
        self.cluster_centers_ = centres.astype(dtype)  # as scikit-learn's: X's dtype
        self.empty_clusters_ = empty
        self.n_iter_ = n_iter
        self._n_threads = 1  # scikit-learn's predict reads it
        accountant_of(self).spend(self.epsilon, 0)
        return self

    def fit_predict(self, X, y=None, sample_weight=None):
        """Fit privately, then label ``X`` with its nearest released centre.

        The labels are computed from ``X`` (which the caller holds) and the released centres;
        the model keeps none.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        sample_weight : ignored

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return self.fit(X, sample_weight=sample_weight).predict(X)


class _Iteration:
    """One private Lloyd iteration over records clipped to the box (the class docstring of
    :class:`KMeans` gives the sensitivities), its statistics from ``statistics(centres)``."""

    def __init__(self, statistics, lower, upper, count_epsilon, coordinate_epsilon, noise,
                 geometry):
        self.statistics, self.lower, self.upper = statistics, lower, upper
        self.geometry = geometry
        self.count_epsilon = count_epsilon
        self.count_noise = Laplace(epsilon=count_epsilon, sensitivity=COUNT_SENSITIVITY,
                                   random_state=noise)
        self.sum_noise = [Laplace(epsilon=coordinate_epsilon, sensitivity=float(width),
                                  random_state=noise) for width in upper - lower]

    def __call__(self, centres):
        """``(new centres, which were empty)`` from the released ``centres``; keeps the noisy
        counts in ``noisy_counts``."""
        n_centres, n_features = centres.shape
        counts, sums = self.statistics(centres)
        # Counts: L1 sensitivity 2 (one record leaves a cluster, one joins another);
        # count_epsilon of this iteration's epsilon / n_iter. Every centre, empty or not.
        self.noisy_counts = np.array([self.count_noise.randomise(int(count))
                                      for count in counts])
        # Sums about the middle, feature j: L1 sensitivity w_j across the centres;
        # coordinate_epsilon each, d of them.
        noisy_sums = np.array([[self.sum_noise[j].randomise(float(sums[k, j]))
                                for j in range(n_features)] for k in range(n_centres)])
        # Post-processing of the released counts and sums (and public draws).
        return released_centres(self.noisy_counts, noisy_sums, self.lower, self.upper,
                                self.count_epsilon,
                                self.geometry.uniform(self.lower, self.upper,
                                                      (n_centres, n_features)))


def cluster_sums(X, centres, middle):
    """Each centre's count of the records of ``X`` (clipped to the box) nearest it, and the
    sum of their ``x - middle``: summable over any split of the records.

    Returns
    -------
    counts : ndarray of int, shape (n_centres,)
    sums : ndarray of shape (n_centres, n_features)
    """
    n_centres = len(centres)
    labels = _squared_distances(X, centres).argmin(axis=1)  # each record's label
    sums = np.zeros((n_centres, X.shape[1]))
    np.add.at(sums, labels, X - middle)
    return np.bincount(labels, minlength=n_centres), sums


def kmeans_zero_out(step):
    """What :class:`KMeans` spends per unit of its ``epsilon`` under zero-out adjacency: 1/2.

    Each iteration releases the clusters' counts (Laplace, L1 sensitivity 2 when a record is
    replaced: one count falls, another rises) and their sums of ``x_j - c_j`` about the box's
    middle ``c`` (sensitivity ``w_j``, the box's width: the record leaves one cluster's sum
    and joins another's, each change at most ``w_j / 2``). A null record is in no cluster: one
    count moves by 1 and one sum by ``|x_j - c_j| <= w_j / 2``, half of each calibrated
    sensitivity. Sequential composition over the iterations: half.
    """
    return 0.5


def kmeans_noise_dimension(step, width):
    """The tuning policy's ``D`` for k-means: ``n_clusters * (width + 1)``, a noisy sum per
    cluster and feature and a noisy count per cluster (the released centres are their
    ratios)."""
    return step.n_clusters * (width + 1)


#: What a released fit keeps, each with why its mechanism covers it (besides the public
#: shape).
RELEASES = {
    "cluster_centers_": "the last iteration's noisy sums over noisy counts, clipped to the box "
                        "(post-processing), empty ones redrawn from the box",
    "empty_clusters_": "which noisy counts fell below 2 noise scales: post-processing",
    "n_iter_": "diffprivlib's KMeans._calc_iters(d, n): int(max(2, min(7, epsilon / e_m))) "
               "with e_m = sqrt(500 n_clusters**3 / n**2 * (d + cbrt(4 d 0.225**2))**3), of "
               "epsilon, n_clusters and the numbers of records n and features d: public",
    "_n_threads": "1, a constant scikit-learn's predict reads",
}

#: The facts of :class:`KMeans` (the refit gate's row reads them). No charge: every count and
#: sum is calibrated to replace-one adjacency (``COUNT_SENSITIVITY``, the box's widths), so a
#: fit spends the ``epsilon`` it records.
FACTS = ModelFacts(
    why="Su et al.'s k-means with every cluster's count and sums noised each iteration, "
        "calibrated to replace-one adjacency (skdptune.cluster.KMeans): pure epsilon-DP given "
        "declared bounds; spends `epsilon` once per fit",
    declared=("bounds",),
    charge=None,
    zero_out=kmeans_zero_out,
    releases=RELEASES,
    noise_dimension=kmeans_noise_dimension,
)
