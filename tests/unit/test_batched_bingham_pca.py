"""skdptune's PCA as a batched partition step (batched.bingham_pca).

What is checked: which pipelines with skdptune's PCA take the batched path (before skdptune's
LogisticRegression and KMeans, ``centered`` or not) and what falls back; that a partition's
fit is :meth:`skdptune.decomposition.PCA.fit` and ``transform`` for the same generator
(exactly, up to rounding), hence that the emulated ``mean_`` and ``components_`` have the
fit's law (and, by law, against secure-noise fits seeded otherwise); that a partition with
fewer training rows than ``n_components`` scores ``FIT_FAILED`` as the real fit raises; that
a partition's utility depends on its own records and streams only; that the engine's stream
conventions hold (numpy's global generator untouched); and that a batched ``PCA ->
LogisticRegression`` pipeline's partition utilities have the law of the per-fit path's, and a
search over it selects with the same law on both paths.

Statistical tests use alpha = 1e-3 per comparison unless they say otherwise; a test that
makes several comparisons states their count, and its false-failure rate is at most alpha
times that count (Bonferroni). The batched side is seeded; the model's fits are secure (no
seed) where the test says so and in the per-fit path's partition fits (clones, which would
share one copied seed), so those comparisons differ from run to run, at the stated rates.
"""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from scipy import stats
from sklearn.pipeline import Pipeline

from conftest import (
    batched_groups,
    batched_values,
    column_ks,
    count_paths,
    partitions_moved,
    per_fit_values,
    same_selection_law_p_value,
)
from skdptune import PrivateGridSearchCV
from skdptune._batched import bingham_pca, dp_lloyd, engine, logistic_regression, registry
from skdptune._batched.contract import FIT_FAILED
from skdptune.cluster import KMeans
from skdptune.decomposition import PCA
from skdptune.linear_model import LogisticRegression
from skdptune._partition import partition_labels, split_indices
from skdptune._utility import make_utility

ALPHA = 1e-3
BOUNDS = (-1.0, 1.0)
MIXING = np.array([[0.5, 0.15, 0.0], [0.0, 0.25, 0.1], [0.0, 0.0, 0.05]])


def _data(n, seed=0):
    """Three correlated features in about [-1, 1] and a label that moves the first two."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.normal(0, 0.7, (n, 3)) @ MIXING + np.outer(y - 0.5, [0.4, 0.3, 0.0])
    return np.clip(X, *BOUNDS), y


def _pca(**params):
    return PCA(**{"n_components": 2, "data_norm": 1.0, "bounds": BOUNDS, "epsilon": 2.0,
                  **params})


def _pipeline(lr_epsilon=2.0, **params):
    return Pipeline([("pca", _pca(**params)),
                     ("lr", LogisticRegression(epsilon=lr_epsilon, data_norm=1.0))])


def _splits(n, k, validation_fraction=0.3, seed=1):
    return split_indices(*partition_labels(n, k, validation_fraction, seed), k)


def _values(estimator, candidates, X, y, splits, entropy=0, n_jobs=1):
    _, utility = make_utility(estimator, "accuracy", None)
    (family, ids, plans, data), = batched_groups(estimator, candidates, X, y, utility)
    assert family is logistic_regression and ids == list(range(len(candidates)))
    return batched_values(family, ids, plans, data, splits, utility, entropy, n_jobs,
                          error_score=np.nan)


# --- Which path ------------------------------------------------------------------------------


@pytest.fixture
def paths(monkeypatch):
    return count_paths(monkeypatch)


def _search(estimator, grid, **params):
    return PrivateGridSearchCV(estimator, grid, n_partitions=4, accountant=BudgetAccountant(),
                               random_state=0, refit=False, default=None, **params)


def test_a_pca_logistic_regression_grid_takes_the_batched_path(paths):
    X, y = _data(600)
    _search(_pipeline(), {"pca__n_components": [1, 2], "lr__C": [0.1, 1.0]}).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 4 * 4}
    _search(_pipeline(centered=True, bounds=None), {"pca__n_components": [1, 2]}).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 4 * 4 + 2 * 4}


def test_a_pca_kmeans_pipeline_takes_the_batched_path(monkeypatch):
    paths = count_paths(monkeypatch, dp_lloyd)
    X, _ = _data(600)
    estimator = Pipeline([("pca", _pca()), ("km", KMeans(bounds=(-2.0, 2.0)))])
    _search(estimator, {"km__n_clusters": [2, 3]}).fit(X)
    assert paths == {"per_fit": 0, "batched": 2 * 4}


@pytest.mark.parametrize("change", [
    {"n_components": None}, {"n_components": 0.9}, {"n_components": "mle"},
    {"n_components": 4}, {"whiten": True}, {"data_norm": None}, {"epsilon": float("inf")},
    {"bounds": None}, {"bounds": (np.zeros(2), np.ones(2))}, {"bounds": (0.0, np.nan)},
])
def test_what_the_step_cannot_emulate_falls_back(change):
    assert bingham_pca.plan(_pca(**change), 3) is None
    assert bingham_pca.plan(_pca(), 3) is not None
    assert bingham_pca.plan(_pca(centered=True, bounds=None), 3).bounds is None


# --- The fit and the transform ---------------------------------------------------------------


class _SeedOf:
    """A stream whose seed draw is a fixed array: the step's ``RandomState`` is then one the
    test can build too."""

    def __init__(self, seed):
        self.seed = np.asarray(seed, dtype=np.uint32)

    def integers(self, *args, **kwargs):
        return self.seed


@pytest.mark.parametrize("params", [{}, {"centered": True, "bounds": None},
                                    {"n_components": 3, "epsilon": 0.5},
                                    {"n_components": 1, "data_norm": 0.2}])  # rows clipped
def test_a_partition_fit_is_the_models_fit_and_transform_for_the_same_generator(params):
    X, _ = _data(300, seed=3)
    part = np.repeat(np.arange(3), 100)
    plan = bingham_pca.plan(_pca(**params), 3)
    seeds = [[p, 1, 2, 3] for p in range(3)]
    mean, components, failed = bingham_pca.fit_partitions(plan, X, part, 3,
                                                          [_SeedOf(s) for s in seeds])
    assert not failed.any()
    rows = np.random.default_rng(5).normal(0, 0.5, (40, 3))  # unclipped, as transform reads
    block = type("Block", (), {"X_train": X, "part_train": part, "X_val": np.tile(rows, (3, 1)),
                               "part_val": np.repeat(np.arange(3), 40), "n_parts": 3})
    _, projected = bingham_pca.transform_partitions(plan, block, [_SeedOf(s) for s in seeds])
    for p, seed in enumerate(seeds):
        model = _pca(random_state=np.random.RandomState(np.asarray(seed, dtype=np.uint32)),
                     accountant=BudgetAccountant(), **params).fit(X[part == p])
        np.testing.assert_allclose(mean[p], model.mean_, atol=1e-12)
        np.testing.assert_allclose(components[p], model.components_, atol=1e-9)
        np.testing.assert_allclose(projected[40 * p:40 * (p + 1)], model.transform(rows),
                                   atol=1e-9)


def test_mean_and_components_have_the_law_of_secure_fits():
    # Against the model's fits with secure noise (random_state=None, the released model's
    # sampler), not the same generator: 3 mean coordinates + 6 component entries at
    # ALPHA / 10 each, false-failure rate 9e-4.
    X, _ = _data(80, seed=2)
    n = 400
    plan = bingham_pca.plan(_pca(), 3)
    mean, components, _ = bingham_pca.fit_partitions(
        plan, np.tile(X, (n, 1)), np.repeat(np.arange(n), 80), n,
        [np.random.default_rng([2, p]) for p in range(n)])
    models = [_pca(accountant=BudgetAccountant()).fit(X) for _ in range(n)]
    p_value, n_tests = column_ks([
        (mean, np.array([model.mean_ for model in models])),
        (components.reshape(n, -1), np.array([model.components_.ravel() for model in models]))])
    assert n_tests == 9 and p_value > ALPHA / 10


def test_fewer_training_rows_than_components_fail_and_empty_parts_are_nan():
    X, y = _data(80)
    splits = [(np.arange(1), np.arange(50, 60)), (np.arange(0), np.arange(50, 60)),
              (np.arange(40), np.arange(60, 80)), (np.arange(2, 40), np.arange(0))]
    estimator = _pipeline(n_components=2)
    _, utility = make_utility(estimator, "accuracy", None)
    (_, _, plans, data), = batched_groups(estimator, [{}], X, y, utility)
    task = engine._block_task(splits, np.arange(4), data.codes)
    scores = engine._run_block(logistic_regression, plans, [0], data.X, task, data.n_classes,
                               0, data.steps)[0]
    assert scores[0] == FIT_FAILED and np.isnan(scores[1]) and np.isnan(scores[3])
    assert 0 <= scores[2] <= 1


# --- Privacy: a partition's values are its own -----------------------------------------------


def test_replacing_one_record_moves_only_its_partition():
    # Before a k-means, whose utility (a mean silhouette) moves with any change of the rows.
    X, _ = _data(600)
    splits = _splits(len(X), 6)
    estimator = Pipeline([("pca", _pca(epsilon=100.0)),
                          ("km", KMeans(n_clusters=2, epsilon=1000.0, bounds=(-2.0, 2.0)))])
    _, utility = make_utility(estimator, None, None)

    def values(X):
        (family, ids, plans, data), = batched_groups(estimator, [{}], X, None, utility)
        assert family is dp_lloyd
        return batched_values(family, ids, plans, data, splits, utility, 0, 1,
                              error_score=np.nan)

    # One training record of each partition in turn.
    assert partitions_moved(values, X, splits, (1.0, -1.0, 0.5), sides=(0,)) == [6]


def test_partitions_do_not_depend_on_how_they_are_cut_into_tasks(monkeypatch):
    X, y = _data(900)
    splits = _splits(len(y), 9)
    estimator, candidates = _pipeline(), [{}, {"pca__epsilon": 0.3}]
    np.random.seed(7)
    expected = np.random.random_sample()
    np.random.seed(7)
    whole = _values(estimator, candidates, X, y, splits)
    assert np.random.random_sample() == expected  # numpy's global generator left alone
    monkeypatch.setattr(engine, "BLOCK_CELLS", 200)
    np.testing.assert_array_equal(_values(estimator, candidates, X, y, splits), whole)
    assert not np.array_equal(_values(estimator, candidates, X, y, splits, entropy=1), whole)


# --- The batched pipeline has the per-fit path's law -----------------------------------------


def _compare(n_train, pca_epsilon, repetitions, seed, **params):
    X, y = _data(n_train + 300, seed=seed)
    splits = [(np.arange(n_train), np.arange(n_train, n_train + 300))] * repetitions
    estimator = _pipeline(epsilon=pca_epsilon, **params)
    ours = _values(estimator, [{}], X, y, splits, entropy=seed)[0]
    _, utility = make_utility(estimator, "accuracy", None)
    theirs = per_fit_values(estimator, [{}], X, y, splits, utility, "raise")[0]
    return stats.ks_2samp(ours, theirs).pvalue, ours.mean(), theirs.mean()


@pytest.mark.parametrize("params", [{}, {"n_components": 1, "centered": True,
                                         "bounds": None}])
def test_pipeline_partition_utilities_have_the_per_fit_law(params):
    # One KS comparison per case at ALPHA.
    p_value, ours, theirs = _compare(80, 1.0, 150, seed=5, **params)
    assert p_value > ALPHA, (ours, theirs)


@pytest.mark.slow_audit
@pytest.mark.parametrize("n_train, pca_epsilon", [(40, 0.5), (150, 2.0), (400, 8.0)])
def test_pipeline_partition_utilities_have_the_per_fit_law_audit(n_train, pca_epsilon):
    p_value, ours, theirs = _compare(n_train, pca_epsilon, 800, seed=n_train)
    assert p_value > ALPHA, (ours, theirs)


def test_a_search_selects_with_the_same_law_on_both_paths(monkeypatch):
    # 40 searches per path over n_components x C: the selected candidate compared by a
    # chi-square test, 1 comparison.
    X, y = _data(1200, seed=11)
    grid = {"pca__n_components": [1, 3], "lr__C": [0.01, 1.0]}

    def selected(seeds):
        chosen = []
        for seed in seeds:
            search = PrivateGridSearchCV(_pipeline(epsilon=0.5, lr_epsilon=0.5), grid,
                                         epsilon=0.5, n_partitions=5, refit=False,
                                         accountant=BudgetAccountant(), default=None,
                                         random_state=seed).fit(X, y)
            chosen.append(search.best_index_)
        return chosen

    assert same_selection_law_p_value(selected, monkeypatch, registry.PARTITION_STEPS, PCA,
                                      40, 4 * 5) > ALPHA
