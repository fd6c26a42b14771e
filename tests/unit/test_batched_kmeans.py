"""Batched partition fits of diffprivlib's KMeans (batched.kmeans).

What is checked: which candidates take the batched path (``scoring=None``, declared bounds,
with or without ``y``) and which fall back; the pieces of diffprivlib's fit reproduced exactly
where the same uniforms give the same values (``_init_centers``, the folded geometric counts,
the bounded-domain scale, ``_calc_iters`` and ``_split_epsilon``); that a partition's utility
depends on its own records and stream only (replace one record: only its partition moves; the
cut into tasks and the company of other partitions and candidates change nothing); and that
the fitted centres and the partition utilities have the law of diffprivlib's own fits on the
same partitions, scored by ``KMeans.score``.

Statistical tests use alpha = 1e-3 per comparison; a test that makes several comparisons
states their count, and its false-failure rate is at most alpha times that count
(Bonferroni). Seeds are fixed, so a run is reproducible either way.
"""

import warnings

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.mechanisms import GeometricFolded, LaplaceBoundedDomain
from diffprivlib.models import GaussianNB, KMeans, StandardScaler
from scipy import stats
from sklearn.pipeline import Pipeline

from conftest import (
    assert_cut_and_company_change_nothing,
    batched_groups,
    batched_values,
    column_ks,
    count_paths,
    partitions_moved,
)
from skdptune import PrivateGridSearchCV
from skdptune._batched import engine, kmeans
from skdptune._batched.common import nearest_centres
from skdptune._batched.contract import FIT_FAILED
from skdptune._utility import kmeans_score_range, make_utility

ALPHA = 1e-3
BOUNDS = ((0.0, -1.0), (1.0, 2.0))


def _data(n, seed=0, n_features=2):
    """Three blobs in the box of ``BOUNDS`` (widened to ``n_features``), a few rows outside."""
    rng = np.random.default_rng(seed)
    means = np.array([[0.2, -0.5], [0.8, 0.0], [0.5, 1.5]])
    rows = means[rng.integers(0, 3, n)] + rng.normal(0, 0.15, (n, 2))
    if n_features > 2:
        rows = np.hstack([rows, rng.uniform(-0.1, 1.1, (n, n_features - 2))])
    return rows[:, :n_features]


def _bounds(n_features=2):
    lower, upper = (np.r_[bound, np.full(max(n_features - 2, 0), fill)][:n_features]
                    for bound, fill in zip(BOUNDS, (0.0, 1.0)))
    return lower, upper


def _estimator(n_features=2, **params):
    return KMeans(bounds=_bounds(n_features), **params)


def _utility(estimator, n_records=20, n_features=2):
    _, utility = make_utility(estimator, None, kmeans_score_range(_bounds(n_features),
                                                                  n_records))
    return utility


def _groups(candidates, X, y=None, estimator=None):
    estimator = estimator if estimator is not None else _estimator(X.shape[1])
    utility = _utility(estimator, n_features=X.shape[1])
    (family, ids, plans, data), = batched_groups(estimator, candidates, X, y, utility)
    assert family is kmeans and ids == list(range(len(candidates)))
    return plans, data, utility


def _values(candidates, X, splits, entropy=0, y=None, n_jobs=1, ids=None):
    """Per-partition utilities of the batched path, ``(n_candidates, n_partitions)``."""
    plans, data, utility = _groups(candidates, X, y)
    ids = list(range(len(candidates))) if ids is None else ids
    return batched_values(kmeans, ids, [plans[i] for i in ids], data, splits,
                                    utility, entropy, n_jobs,
                                    error_score=np.nan)


def _splits(n, k, validation_fraction=0.3, seed=1):
    from skdptune._partition import partition_labels, split_indices
    return split_indices(*partition_labels(n, k, validation_fraction, seed), k)


# --- Which path ------------------------------------------------------------------------------


@pytest.fixture
def paths(monkeypatch):
    return count_paths(monkeypatch, kmeans)


def _search(estimator, grid, **params):
    return PrivateGridSearchCV(estimator, grid, n_partitions=4, accountant=BudgetAccountant(),
                               random_state=0, refit=False, **{"default": None, **params})


def test_a_kmeans_grid_scored_by_default_takes_the_batched_path_without_y(paths):
    X = _data(400)
    _search(_estimator(), {"n_clusters": [2, 3], "epsilon": [1.0, 5.0]}).fit(X)
    assert paths == {"per_fit": 0, "batched": 4 * 4}


def test_with_a_y_it_is_batched_too_and_y_is_ignored(paths):
    X = _data(400)
    y = np.arange(400) % 3
    _search(_estimator(), {"n_clusters": [2, 3]}).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 2 * 4}
    splits = _splits(400, 5)
    np.testing.assert_array_equal(_values([{"n_clusters": 3}], X, splits, y=y),
                                  _values([{"n_clusters": 3}], X, splits))


def test_after_a_dp_scaler_in_a_pipeline_it_is_batched_too(paths):
    X = _data(400)
    estimator = Pipeline([("scale", StandardScaler(bounds=_bounds())),
                          ("km", KMeans(bounds=(-4.0, 4.0)))])
    _search(estimator, {"km__n_clusters": [2, 3]},
            utility_range=kmeans_score_range((-4.0, 4.0), 30, n_features=2)).fit(X)
    assert paths == {"per_fit": 0, "batched": 2 * 4}


def test_another_scoring_falls_back(paths):
    X = _data(400)

    def inertia(estimator, X, y=None):
        return estimator.score(X)

    _search(_estimator(), {"n_clusters": [2, 3]}, scoring=inertia,
            utility_range=(-100.0, 0.0)).fit(X)
    assert paths == {"per_fit": 2 * 4, "batched": 0}


def test_routing_needs_declared_bounds_and_the_estimators_own_score():
    utility = _utility(_estimator())
    candidates = [{}, {"bounds": None}, {"epsilon": float("inf")}, {"epsilon": 0.0},
                  {"n_clusters": 0}, {"n_clusters": kmeans.MAX_CLUSTERS + 1},
                  {"bounds": ((0.0, 0.0), (1.0, np.nan))}]
    assert engine.candidate_paths(_estimator(), candidates, utility, 2, y_ndim=None) == (
        "batched",) + ("per-fit",) * 6
    _, callable_scorer = make_utility(_estimator(), lambda est, X, y=None: est.score(X),
                                      (-10.0, 0.0))
    assert engine.candidate_paths(_estimator(), [{}], callable_scorer, 2) == ("per-fit",)
    # Without y, a family that reads y is not batched.
    _, accuracy = make_utility(GaussianNB(bounds=BOUNDS), None, None)
    assert engine.candidate_paths(GaussianNB(bounds=BOUNDS), [{}], accuracy, 2,
                                    y_ndim=None) == ("per-fit",)
    assert engine.candidate_paths(GaussianNB(bounds=BOUNDS), [{}], accuracy, 2) == (
        "batched",)


def test_the_plan_processes_the_bounds_as_fit_does():
    # Scalar bounds are expanded; an interval narrower than 1e-5 is widened about its middle.
    plan = kmeans.plan(KMeans(bounds=((0.0, 3.0), (1.0, 3.0)), n_clusters=2), 2)
    np.testing.assert_array_equal(plan.lower, [0.0, 3.0 - 5e-6])
    np.testing.assert_array_equal(plan.upper, [1.0, 3.0 + 5e-6])
    plan = kmeans.plan(KMeans(bounds=(-1, 2), epsilon=3), 4)
    np.testing.assert_array_equal(plan.lower, -np.ones(4))
    assert (plan.epsilon, plan.n_clusters) == (3.0, 8)


# --- The pieces of diffprivlib's fit ---------------------------------------------------------


class _StreamOf:
    """A ``Generator`` stand-in that hands out a ``RandomState``'s uniforms in order: the
    uniforms diffprivlib's ``_init_centers`` draws one point at a time."""

    def __init__(self, seed):
        self.state = np.random.RandomState(seed)

    def random(self, shape):
        return self.state.random(int(np.prod(shape))).reshape(shape)


@pytest.mark.parametrize("bounds, n_clusters", [
    (((0.0, -1.0), (1.0, 2.0)), 3),     # unequal spans: the first proximity fits
    (((0.0, 0.0), (1.0, 1.0)), 4),      # equal spans: the first proximity always fails
    (((0.0,), (1.0,)), 12),             # many clusters on a line: several halvings
    (((0.0, 0.0, 0.0), (1.0, 1.0, 1.0)), 1),
])
def test_initial_centres_are_diffprivlibs_for_the_same_uniforms(bounds, n_clusters):
    plan = kmeans.plan(KMeans(bounds=bounds, n_clusters=n_clusters), len(bounds[0]))
    seeds = range(6)
    ours, failed = kmeans.initial_centers(plan, [_StreamOf(seed) for seed in seeds])
    assert not failed.any()
    for seed, centers in zip(seeds, ours):
        model = KMeans(bounds=bounds, n_clusters=n_clusters)
        model.bounds = (np.asarray(bounds[0], float), np.asarray(bounds[1], float))
        theirs = model._init_centers(len(bounds[0]), np.random.RandomState(seed))
        np.testing.assert_array_equal(centers, theirs)


def test_folded_geometric_counts_are_diffprivlibs_for_the_same_uniform():
    counts = np.array([1, 2, 5, 40])
    for epsilon in (0.05, 0.7, 4.0):
        for seed in range(200):
            uniform = np.random.RandomState(seed).random()
            ours = kmeans._geometric_folded(counts, np.full(4, uniform), epsilon)
            theirs = [GeometricFolded(epsilon=epsilon, sensitivity=1, lower=0.5,
                                      upper=float("inf"),
                                      random_state=np.random.RandomState(seed)).randomise(c)
                      for c in counts]
            np.testing.assert_array_equal(ours, theirs)
    assert np.all(kmeans._geometric_folded(np.zeros(1000), np.random.default_rng(0).random(1000),
                                           0.3) >= 1)


def test_folded_geometric_counts_have_diffprivlibs_law():
    # 2 counts x 1 epsilon: 2 comparisons (chi-square on the pooled support).
    rng, state = np.random.default_rng(3), np.random.RandomState(3)
    for count in (1, 6):
        ours = kmeans._geometric_folded(np.full(4000, count), rng.random(4000), 0.4)
        mech = GeometricFolded(epsilon=0.4, sensitivity=1, lower=0.5, upper=float("inf"),
                               random_state=state)
        theirs = np.array([mech.randomise(count) for _ in range(4000)])
        edges = np.r_[np.arange(1, 16), np.inf]
        table = np.array([np.histogram(ours, edges)[0], np.histogram(theirs, edges)[0]])
        table = table[:, table.sum(axis=0) > 0]
        assert stats.chi2_contingency(table)[1] > ALPHA


def test_bounded_domain_unit_scales_are_diffprivlibs():
    epsilon = np.array([0.01, 0.05, 0.3, 1.0, 7.0, 0.2, 0.2])
    n_c = np.array([1.0, 3.0, 17.0, 200.0, 5000.0, 1.0, 100000.0])
    theirs = [LaplaceBoundedDomain(epsilon=e, delta=0.0, sensitivity=1.0, lower=0.0,
                                   upper=c)._find_scale() for e, c in zip(epsilon, n_c)]
    np.testing.assert_allclose(kmeans.unit_scales(epsilon, n_c), theirs, rtol=1e-13)


@pytest.mark.parametrize("n_features, n_samples, epsilon, n_clusters", [
    (2, 50, 1.0, 3), (5, 10000, 3.0, 2), (1, 200000, 50.0, 4), (8, 30, 0.1, 8)])
def test_iterations_and_epsilon_split_are_diffprivlibs(n_features, n_samples, epsilon,
                                                       n_clusters):
    model = KMeans(n_clusters=n_clusters, epsilon=epsilon, bounds=(0, 1))
    plan = kmeans.plan(model, n_features)
    iters = kmeans.iterations(plan, n_features, n_samples)
    assert iters == model._calc_iters(n_features, n_samples)
    epsilon_0, epsilon_i = model._split_epsilon(n_features, iters)  # as fit binds them
    assert kmeans.split_epsilon(plan, n_features, iters) == (epsilon_0, epsilon_i)


def test_one_pass_has_the_law_of_diffprivlibs_update_centers():
    # Fixed labels: a small cluster (its noisy count often far from 4, so the clamp into
    # [c * lower, c * upper] matters), a large one, and an absent one (kept, no draw).
    # 2 present clusters x 2 dimensions: 4 comparisons, false-failure rate 4e-3.
    rng = np.random.default_rng(11)
    plan = kmeans.plan(_estimator(n_clusters=3, epsilon=1.0), 2)
    X = np.clip(_data(34, seed=2), plan.lower, plan.upper)
    X[:4] = (0.9, 1.95)  # near the upper corner: a noisy count below 4 clamps their sum
    labels = np.r_[np.zeros(4, dtype=np.intp), np.ones(30, dtype=np.intp)]
    centers = np.array([[0.1, 0.0], [0.7, 1.0], [0.4, -0.8]])
    epsilon_count, epsilon_sum = kmeans.split_epsilon(plan, 2, 2)
    n = 3000
    counts = np.tile(np.bincount(labels, minlength=3), (n, 1))
    sums = np.tile(np.stack([X[labels == c].sum(axis=0) if c < 2 else np.zeros(2)
                             for c in range(3)]), (n, 1, 1))
    ours, blown = kmeans.update_centers(plan, np.tile(centers, (n, 1, 1)), counts, sums,
                                        np.ones(n, dtype=bool), np.full(n, epsilon_count),
                                        np.full(n, epsilon_sum), rng.random((n, 3, 3)))
    assert not blown.any()
    model = _estimator(n_clusters=3, epsilon=1.0)
    model.bounds = (plan.lower, plan.upper)
    state = np.random.RandomState(11)
    theirs = np.array([model._update_centers(X, centers.copy(), labels, 2, 2, state)
                       for _ in range(n)])
    p_value, n_tests = column_ks([(ours.reshape(n, -1), theirs.reshape(n, -1))])
    assert n_tests == 4 and p_value > ALPHA
    np.testing.assert_array_equal(ours[:, 2], np.tile(centers[2], (n, 1)))


def test_a_fit_makes_diffprivlibs_passes_with_its_epsilons(monkeypatch):
    # diffprivlib's _calc_iters passes, each with _split_epsilon's pair as fit binds it (the
    # counts get the first), per partition from its own number of rows.
    calls = []
    update = kmeans.update_centers

    def spy(candidate, centers, counts, sums, active, epsilon_count, epsilon_sum, uniforms):
        calls.append((active.copy(), epsilon_count.copy(), epsilon_sum.copy()))
        return update(candidate, centers, counts, sums, active, epsilon_count, epsilon_sum,
                      uniforms)

    monkeypatch.setattr(kmeans, "update_centers", spy)
    model = _estimator(n_clusters=2, epsilon=2.0)
    plan = kmeans.plan(model, 2)
    sizes = [30, 400, 3000]
    X = _data(sum(sizes))
    part = np.repeat(np.arange(3), sizes)
    kmeans.fit_partitions(plan, X, part, 3, [np.random.default_rng(p) for p in range(3)])
    for p, size in enumerate(sizes):
        iters = model._calc_iters(2, size)
        passes = [(count[p], total[p]) for active, count, total in calls if active[p]]
        assert passes == [model._split_epsilon(2, iters)] * iters
    assert len({sum(active) for active, _, _ in calls}) > 1  # the partitions differ


def test_the_score_is_kmeans_score_on_unclipped_rows():
    X = _data(300, seed=6)
    X[::7] *= 3.0  # rows far outside the bounds: score does not clip them
    part = np.arange(300) % 3
    models = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in range(3):
            models.append(_estimator(n_clusters=2 + p % 2 * 2, epsilon=2.0, random_state=p,
                                     accountant=BudgetAccountant()).fit(X[part == p]))
    # Partitions with different numbers of clusters: pad with far-away copies never nearest.
    centers = np.full((3, 4, 2), 1e6)
    for p, model in enumerate(models):
        centers[p, :len(model.cluster_centers_)] = model.cluster_centers_
    ours = kmeans.score_partitions(centers, X, part, 3)
    np.testing.assert_allclose(ours, [model.score(X[part == p]) for p, model in enumerate(models)],
                               rtol=1e-12)


def test_fewer_rows_than_clusters_fail_and_empty_parts_are_nan():
    X = _data(60)
    splits = [(np.arange(2), np.arange(50, 60)), (np.arange(0), np.arange(50, 60)),
              (np.arange(40), np.arange(0)), (np.arange(40), np.arange(40, 60))]
    plans, data, _ = _groups([{"n_clusters": 3}], X)
    task = engine._block_task(splits, np.arange(4), data.codes)
    scores = engine._run_block(kmeans, plans, [0], data.X, task, 0, 0)[0]
    assert scores[0] == FIT_FAILED and np.isnan(scores[1]) and np.isnan(scores[2])
    assert np.isfinite(scores[3]) and scores[3] < 0


def test_with_little_noise_the_centres_are_lloyds_on_the_clipped_rows():
    # epsilon large: the noisy counts and sums are the true ones; after diffprivlib's passes
    # every centre is the mean of the clipped rows nearest to it (a fixed point of Lloyd).
    X = _data(600, seed=4)
    plan = kmeans.plan(_estimator(n_clusters=3, epsilon=1e9), 2)
    centers, failed = kmeans.fit_partitions(plan, X, np.zeros(600, dtype=np.intp), 1,
                                            [np.random.default_rng(0)])
    assert not failed[0]
    clipped = np.clip(X, plan.lower, plan.upper)
    labels, _ = nearest_centres(clipped, centers, np.zeros(600, dtype=np.intp))
    for cluster in np.unique(labels):
        np.testing.assert_allclose(centers[0, cluster], clipped[labels == cluster].mean(axis=0),
                                   atol=1e-3)


# --- Privacy: a partition's values are its own -----------------------------------------------


def test_replacing_one_record_moves_only_its_partition():
    X = _data(600)
    splits = _splits(len(X), 10)
    # Little noise, so that a moved record moves its partition's score.
    candidates = [{"n_clusters": 2, "epsilon": 50.0}, {"n_clusters": 3, "epsilon": 200.0}]
    # A training record, then a held-out one, of each partition in turn.
    moved = partitions_moved(lambda X: _values(candidates, X, splits), X, splits, (1.0, 2.0))
    assert np.all(moved == 20)


def test_partitions_do_not_depend_on_tasks_or_company(monkeypatch):
    X = _data(900)
    splits = _splits(len(X), 9)
    candidates = [{"n_clusters": 2}, {"n_clusters": 4, "epsilon": 3.0}, {"epsilon": 0.2}]
    # Blocks of about one partition each.
    assert_cut_and_company_change_nothing(
        lambda candidates, **kw: _values(candidates, X, splits, **kw), candidates,
        monkeypatch, 150)


def test_a_partition_alone_in_its_block_scores_as_among_others():
    X = _data(600)
    splits = _splits(len(X), 6)
    plans, data, _ = _groups([{"n_clusters": 3}], X)
    together = engine._run_block(
        kmeans, plans, [0], data.X, engine._block_task(splits, np.arange(6), data.codes), 0, 7)
    for p in range(6):
        alone = engine._run_block(
            kmeans, plans, [0], data.X, engine._block_task(splits, np.array([p]), data.codes),
            0, 7)
        assert alone[0, 0] == together[0, p]


# --- The law of the centres and of the utilities ---------------------------------------------


def _theirs(X, train, validation, candidate, repetitions, seed, n_features, utility):
    state = np.random.RandomState(seed)
    centres, values = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repetitions):
            model = _estimator(n_features, random_state=state, accountant=BudgetAccountant(),
                               **candidate).fit(X[train])
            centres.append(model.cluster_centers_.ravel())
            values.append(utility(model, X[validation]))
    return np.array(centres), np.array(values)


def _compare(n_train, candidate, repetitions, seed, n_features=2):
    """The batched against diffprivlib's fits on one partition repeated: KS of the centres'
    coordinates and of the utilities, ``(smallest p-value, number of tests, our mean, their
    mean)``."""
    X = _data(n_train + 100, seed=seed, n_features=n_features)
    train, validation = np.arange(n_train), np.arange(n_train, n_train + 100)
    estimator = _estimator(n_features)
    utility = _utility(estimator, n_records=100, n_features=n_features)
    (_, _, (plan,), data), = batched_groups(estimator, [candidate], X, None, utility)
    rngs = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(p,)))
            for p in range(repetitions)]
    part = np.repeat(np.arange(repetitions), n_train)
    centres, _ = kmeans.fit_partitions(plan, np.tile(data.X[train], (repetitions, 1)), part,
                                       repetitions, rngs)
    splits = [(train, validation)] * repetitions
    ours = batched_values(kmeans, [0], [plan], data, splits, utility, seed, 1, error_score=np.nan)[0]
    their_centres, theirs = _theirs(X, train, validation, candidate, repetitions, seed,
                                    n_features, utility)
    p_value, n_tests = column_ks([(centres.reshape(repetitions, -1), their_centres),
                                  (ours[:, None], theirs[:, None])])
    return p_value, n_tests, ours.mean(), theirs.mean()


def test_centres_and_utilities_have_diffprivlibs_law():
    # 3 clusters x 2 dimensions + the utility: 7 comparisons, false-failure rate 7e-3.
    p_value, n_tests, ours, theirs = _compare(80, {"n_clusters": 3, "epsilon": 3.0}, 300,
                                              seed=5)
    assert n_tests == 7
    assert p_value > ALPHA, (ours, theirs)


@pytest.mark.slow_audit
@pytest.mark.parametrize("n_train, candidate, n_features", [
    (40, {"n_clusters": 2, "epsilon": 0.5}, 2),
    (150, {"n_clusters": 3, "epsilon": 5.0}, 2),
    (300, {"n_clusters": 4, "epsilon": 20.0}, 3),
    (60, {"n_clusters": 5, "epsilon": 1.0}, 1),
    (500, {"n_clusters": 3, "epsilon": 50.0}, 6),
])
def test_centres_and_utilities_have_diffprivlibs_law_audit(n_train, candidate, n_features):
    # K * d + 1 comparisons per case (at most 19): false-failure rate at most 1.9e-2 per case.
    p_value, n_tests, ours, theirs = _compare(n_train, candidate, 1500, n_train, n_features)
    assert p_value > ALPHA, (n_tests, ours, theirs)
