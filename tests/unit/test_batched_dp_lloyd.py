"""Batched partition fits of skdptune's KMeans (batched.dp_lloyd).

What is checked: which candidates take the batched path (``scoring=None``, the search's
simplified silhouette, declared bounds; with or without ``y``; after a partition step) and
which fall back; that each partition makes its own ``_calc_iters`` iterations with
``budget_split``'s epsilons and the model's noise scales; that a partition's utility depends
on its own records and stream only (replace one record: only its partition moves; the cut
into tasks and the company of other candidates change nothing); the engine's stream
conventions (fresh entropy without a seed, numpy's global generator untouched, a candidate's
own seed ignored); that the fitted centres, the empty centres and the partition utilities have
the law of :meth:`skdptune.cluster.KMeans.fit` scored by ``SimplifiedSilhouetteScorer`` on the
same partitions; and that a search selects ``n_clusters`` with the same law on both paths.

Statistical tests use alpha = 1e-3 per comparison; a test that makes several comparisons
states their count, and its false-failure rate is at most alpha times that count
(Bonferroni). Seeds are fixed, except in the per-fit path's partition fits of the search
comparison (clones, which would share one copied seed: secure noise), whose runs differ, at
the stated rate.
"""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from sklearn.pipeline import Pipeline

from conftest import (
    assert_cut_and_company_change_nothing,
    batched_groups,
    batched_values,
    column_ks,
    count_paths,
    partitions_moved,
    same_selection_law_p_value,
)
from skdptune import PrivateGridSearchCV
from skdptune._batched import dp_lloyd, engine, registry
from skdptune._batched.contract import FIT_FAILED
from skdptune._models.cluster import COUNT_SENSITIVITY, KMeans, budget_split
from skdptune.decomposition import PCA
from skdptune._partition import partition_labels, split_indices
from skdptune._utility import make_utility

ALPHA = 1e-3
BOUNDS = ((0.0, -1.0), (1.0, 2.0))
MEANS = np.array([[0.2, -0.5], [0.8, 0.0], [0.5, 1.5]])


def _data(n, seed=0):
    """Three blobs in the box of ``BOUNDS``, a few rows outside it."""
    rng = np.random.default_rng(seed)
    return MEANS[rng.integers(0, 3, n)] + rng.normal(0, 0.12, (n, 2))


def _kmeans(**params):
    return KMeans(**{"bounds": BOUNDS, **params})


def _utility(estimator):
    _, utility = make_utility(estimator, None, None)
    return utility


def _splits(n, k, validation_fraction=0.3, seed=1):
    return split_indices(*partition_labels(n, k, validation_fraction, seed), k)


def _values(candidates, X, splits, entropy=0, n_jobs=1, ids=None, estimator=None):
    """Per-partition utilities of the batched path, ``(n_candidates, n_partitions)``."""
    estimator = _kmeans() if estimator is None else estimator
    utility = _utility(estimator)
    (family, group_ids, plans, data), = batched_groups(estimator, candidates, X, None, utility)
    assert family is dp_lloyd and group_ids == list(range(len(candidates)))
    ids = group_ids if ids is None else ids
    return batched_values(dp_lloyd, ids, [plans[i] for i in ids], data, splits, utility,
                          entropy, n_jobs, error_score=np.nan)


# --- Which path ------------------------------------------------------------------------------


@pytest.fixture
def paths(monkeypatch):
    return count_paths(monkeypatch, dp_lloyd)


def _search(estimator, grid, **params):
    return PrivateGridSearchCV(estimator, grid, n_partitions=4, accountant=BudgetAccountant(),
                               random_state=0, refit=False, default=None, **params)


def test_a_kmeans_grid_scored_by_default_takes_the_batched_path(paths):
    X = _data(400)
    _search(_kmeans(), {"n_clusters": [2, 3], "epsilon": [1.0, 5.0]}).fit(X)
    assert paths == {"per_fit": 0, "batched": 4 * 4}
    _search(_kmeans(), {"n_clusters": [2, 3]}).fit(X, np.arange(400) % 3)  # y is ignored
    assert paths == {"per_fit": 0, "batched": 4 * 4 + 2 * 4}


def test_after_a_partition_step_it_is_batched_too(paths):
    X = _data(400)
    estimator = Pipeline([("pca", PCA(n_components=2, data_norm=3.0, bounds=BOUNDS)),
                          ("km", KMeans(bounds=(-3.0, 3.0)))])
    _search(estimator, {"km__n_clusters": [2, 3]}).fit(X)
    assert paths == {"per_fit": 0, "batched": 2 * 4}


def test_another_scoring_falls_back(paths):
    X = _data(400)

    def inertia(estimator, X, y=None):
        return estimator.score(X)

    _search(_kmeans(), {"n_clusters": [2, 3]}, scoring=inertia,
            utility_range=(-100.0, 0.0)).fit(X)
    assert paths == {"per_fit": 2 * 4, "batched": 0}


def test_routing_needs_declared_bounds_and_what_fit_accepts():
    utility = _utility(_kmeans())
    candidates = [{}, {"bounds": None}, {"epsilon": float("inf")}, {"epsilon": 0.0},
                  {"n_clusters": 0}, {"oversampling": 0},
                  {"n_clusters": 65, "oversampling": 4},  # beyond MAX_SEEDS
                  {"bounds": ((0.0, 0.0), (1.0, np.nan))},
                  {"bounds": ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))}]  # another width
    assert engine.candidate_paths(_kmeans(), candidates, utility, 2, y_ndim=None) == (
        "batched",) + ("per-fit",) * 8


def test_the_plan_processes_the_bounds_as_fit_does():
    # Scalar bounds are expanded; an interval narrower than MIN_WIDTH is widened about its
    # middle (the model's own declared_box).
    plan = dp_lloyd.plan(_kmeans(bounds=((0.0, 3.0), (1.0, 3.0))), 2)
    np.testing.assert_allclose(plan.lower, [0.0, 3.0 - 5e-6])
    np.testing.assert_allclose(plan.upper, [1.0, 3.0 + 5e-6])
    plan = dp_lloyd.plan(_kmeans(bounds=(-1, 2), epsilon=3, oversampling=2), 4)
    np.testing.assert_array_equal(plan.lower, -np.ones(4))
    assert (plan.epsilon, plan.n_clusters, plan.n_seeds) == (3.0, 8, 16)
    assert dp_lloyd.plan(_kmeans(), None).lower.shape == (2,)  # the forecast's width


# --- The pieces of the fit -------------------------------------------------------------------


def test_each_partition_makes_its_own_iterations_with_the_models_split(monkeypatch):
    calls = []

    def spy(epsilon, n_features, n_iter):
        calls.append((epsilon, n_features, n_iter))
        return budget_split(epsilon, n_features, n_iter)

    monkeypatch.setattr(dp_lloyd, "budget_split", spy)
    model = _kmeans(n_clusters=2, epsilon=20.0)
    plan = dp_lloyd.plan(model, 2)
    sizes = [30, 400, 3000]
    part = np.repeat(np.arange(3), sizes)
    dp_lloyd.fit_partitions(plan, _data(sum(sizes)), part, 3,
                            [np.random.default_rng(p) for p in range(3)])
    expected = [(20.0, 2, model._calc_iters(2, size)) for size in sizes]
    assert calls == expected and len({call[2] for call in calls}) > 1


class _UnitNoise:
    """A stream whose Laplace variates are all 1 (its uniforms are a generator's)."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def random(self, shape):
        return self.rng.random(shape)

    def laplace(self, size):
        return np.ones(size)


def test_counts_and_sums_about_the_middle_get_the_models_noise_scales(monkeypatch):
    # One centre, so every row is in it: noisy count n + 2 / count_epsilon, noisy sum of the
    # clipped rows' x - middle plus width / coordinate_epsilon, at every iteration.
    released = []
    real = dp_lloyd.released_centres

    def spy(noisy_counts, noisy_sums, *args):
        released.append((noisy_counts.copy(), noisy_sums.copy()))
        return real(noisy_counts, noisy_sums, *args)

    monkeypatch.setattr(dp_lloyd, "released_centres", spy)
    X = _data(500, seed=3)
    X[:20] = (3.0, -4.0)  # clipped to the box
    lower, upper = np.array(BOUNDS[0]), np.array(BOUNDS[1])
    plan = dp_lloyd.plan(_kmeans(n_clusters=1, oversampling=1, epsilon=4.0), 2)
    dp_lloyd.fit_partitions(plan, X, np.zeros(500, dtype=np.intp), 1, [_UnitNoise(0)])
    n_iter = plan.n_iter(500)
    count_epsilon, coordinate_epsilon = budget_split(4.0, 2, n_iter)
    sums = (np.clip(X, lower, upper) - (lower + upper) / 2).sum(axis=0)
    assert len(released) == n_iter
    for noisy_counts, noisy_sums in released:
        np.testing.assert_allclose(noisy_counts, [[500 + COUNT_SENSITIVITY / count_epsilon]])
        np.testing.assert_allclose(noisy_sums, [[sums + (upper - lower) / coordinate_epsilon]])


def test_fewer_rows_than_clusters_fail_and_empty_parts_are_nan():
    X = _data(60)
    splits = [(np.arange(2), np.arange(50, 60)), (np.arange(0), np.arange(50, 60)),
              (np.arange(40), np.arange(0)), (np.arange(40), np.arange(40, 60))]
    utility = _utility(_kmeans())
    (_, _, plans, data), = batched_groups(_kmeans(), [{"n_clusters": 3, "epsilon": 50.0}], X,
                                          None, utility)
    task = engine._block_task(splits, np.arange(4), data.codes)
    scores = engine._run_block(dp_lloyd, plans, [0], data.X, task, 0, 0)[0]
    assert scores[0] == FIT_FAILED and np.isnan(scores[1]) and np.isnan(scores[2])
    assert 0 < scores[3] <= 1


def test_one_cluster_scores_zero():
    X = _data(300)
    assert np.all(_values([{"n_clusters": 1}], X, _splits(300, 3)) == 0.0)


# --- Privacy: a partition's values are its own -----------------------------------------------


def test_replacing_one_record_moves_only_its_partition():
    X = _data(600)
    splits = _splits(len(X), 10)
    # Little noise, so that a moved record moves its partition's score.
    candidates = [{"n_clusters": 2, "epsilon": 500.0}, {"n_clusters": 3, "epsilon": 2000.0}]
    moved = partitions_moved(lambda X: _values(candidates, X, splits), X, splits, (1.0, 2.0))
    assert np.all(moved == 20)


def test_partitions_do_not_depend_on_tasks_or_company(monkeypatch):
    X = _data(900)
    splits = _splits(len(X), 9)
    candidates = [{"n_clusters": 2}, {"n_clusters": 4, "epsilon": 3.0}, {"oversampling": 1}]
    # Blocks of about one partition each.
    assert_cut_and_company_change_nothing(
        lambda candidates, **kw: _values(candidates, X, splits, **kw), candidates,
        monkeypatch, 150)


def test_streams_follow_the_engines_conventions():
    X = _data(600)
    splits = _splits(len(X), 6)
    utility = _utility(_kmeans())
    # Without a seed, fresh OS entropy; numpy's global generator is left alone.
    np.random.seed(7)
    expected = np.random.random_sample()
    np.random.seed(7)
    work = [engine.batched_work(_kmeans(), [{}], X, None, splits, utility, np.nan,
                                random_state=None) for _ in range(2)]
    values = [w.collect([task[0](*task[1], **task[2]) for task in w.tasks])[0] for w in work]
    assert np.random.random_sample() == expected
    assert not np.array_equal(values[0], values[1])
    # A candidate's own seed is not the partition's stream: the same draws with or without.
    np.testing.assert_array_equal(_values([{"random_state": 0}], X, splits),
                                  _values([{}], X, splits))


# --- The law of the centres and of the utilities ---------------------------------------------


def _compare(n_train, candidate, repetitions, seed):
    """The batched against the model's own fits on one partition repeated: KS of the centres'
    coordinates, of the number of empty centres and of the utilities, ``(smallest p-value,
    number of tests, our mean utility, theirs)``."""
    X = _data(n_train + 150, seed=seed)
    train, validation = np.arange(n_train), np.arange(n_train, n_train + 150)
    plan = dp_lloyd.plan(_kmeans(**candidate), 2)
    rngs = [np.random.default_rng([seed, p]) for p in range(repetitions)]
    centres, empty, _ = dp_lloyd.fit_partitions(plan, np.tile(X[train], (repetitions, 1)),
                                                np.repeat(np.arange(repetitions), n_train),
                                                repetitions, rngs)
    splits = [(train, validation)] * repetitions
    ours = _values([candidate], X, splits, entropy=seed)[0]
    state = np.random.RandomState(seed)
    models = [_kmeans(random_state=state, accountant=BudgetAccountant(), **candidate).fit(
        X[train]) for _ in range(repetitions)]
    their_centres = np.array([model.cluster_centers_.ravel() for model in models])
    their_empty = np.array([[model.empty_clusters_.sum()] for model in models])
    utility = _utility(_kmeans())
    theirs = np.array([utility(model, X[validation]) for model in models])
    p_value, n_tests = column_ks([(centres.reshape(repetitions, -1), their_centres),
                                  (empty.sum(axis=1)[:, None], their_empty),
                                  (ours[:, None], theirs[:, None])])
    return p_value, n_tests, ours.mean(), theirs.mean()


@pytest.mark.parametrize("n_train, candidate", [
    (150, {"n_clusters": 3, "epsilon": 3.0}),                      # oversampled seeds, reduced
    (60, {"n_clusters": 4, "epsilon": 0.5, "oversampling": 1}),    # many empty centres
])
def test_centres_empty_centres_and_utilities_have_the_fits_law(n_train, candidate):
    # K * 2 coordinates + the empty count + the utility: at most 10 comparisons per case,
    # false-failure rate at most 1e-2 per case.
    p_value, n_tests, ours, theirs = _compare(n_train, candidate, 300, seed=n_train)
    assert n_tests <= 10 and p_value > ALPHA, (ours, theirs)


@pytest.mark.slow_audit
@pytest.mark.parametrize("n_train, candidate", [
    (40, {"n_clusters": 2, "epsilon": 0.5}),
    (300, {"n_clusters": 3, "epsilon": 20.0}),
    (500, {"n_clusters": 5, "epsilon": 5.0, "oversampling": 2}),
    (2000, {"n_clusters": 8, "epsilon": 50.0}),
])
def test_centres_empty_centres_and_utilities_have_the_fits_law_audit(n_train, candidate):
    # At most 2 K + 2 comparisons per case (18): false-failure rate at most 1.8e-2 per case.
    p_value, n_tests, ours, theirs = _compare(n_train, candidate, 1500, seed=n_train)
    assert p_value > ALPHA, (n_tests, ours, theirs)


# --- A search selects with the same law on both paths ----------------------------------------


def test_a_search_selects_n_clusters_with_the_same_law_on_both_paths(monkeypatch):
    # 60 searches per path on the same data (each its own partitions and selection noise):
    # the selected n_clusters compared by a chi-square test, 1 comparison.
    X = _data(1500, seed=11)
    grid = {"n_clusters": [2, 3, 5]}

    def selected(searches):
        return [PrivateGridSearchCV(_kmeans(epsilon=0.3), grid, epsilon=0.5, n_partitions=5,
                                    accountant=BudgetAccountant(), refit=False, default=None,
                                    random_state=seed).fit(X).best_params_["n_clusters"]
                for seed in searches]

    assert same_selection_law_p_value(selected, monkeypatch, registry.FAMILIES, KMeans, 60,
                                      3 * 5) > ALPHA
