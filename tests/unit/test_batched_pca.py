"""diffprivlib's PCA as a batched partition step (batched.pca).

What is checked: which pipelines with a DP PCA take the batched path and which fall back (and
why ``centered=False`` does: diffprivlib's ``fit_transform`` then depends on the input's type);
that the emulated ``mean_`` and ``components_`` have the law of diffprivlib's fit (and the Bingham
draws the law of diffprivlib's mechanism); that the transform is scikit-learn's; that a
partition's utility depends on its own records and streams only (replace one record: only its
partition moves; the cut into tasks changes nothing); and that a batched PCA + GaussianNB
pipeline's partition utilities have the law of the per-fit path's.

Statistical tests use alpha = 1e-3 per comparison; a test that makes several comparisons
states their count, and its false-failure rate is at most alpha times that count
(Bonferroni). Seeds are fixed, so a run is reproducible either way.
"""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.mechanisms import Bingham
from diffprivlib.models import PCA, GaussianNB
from scipy import stats
from sklearn.pipeline import Pipeline

from conftest import batched_groups, batched_values, column_ks, count_paths, per_fit_values
from skdptune import PrivateGridSearchCV
from skdptune._batched import engine, gaussian_nb, pca
from skdptune._partition import partition_labels, split_indices
from skdptune._utility import make_utility
from skdptune._batched.common import project

ALPHA = 1e-3
BOUNDS = (-3.0, 3.0)
MIXING = np.array([[2.0, 0.5, 0.0], [0.0, 1.0, 0.3], [0.0, 0.0, 0.2]])


def _data(n, seed=0):
    """Three correlated features in about [-3, 3] and a label that moves the first two."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.normal(0, 0.7, (n, 3)) @ MIXING + np.outer(y - 0.5, [1.5, 1.0, 0.0])
    return X, y


def _pca(**params):
    return PCA(**{"n_components": 2, "data_norm": 4.0, "centered": True, "epsilon": 2.0,
                  **params})


def _pipeline(nb_epsilon=2.0, **params):
    return Pipeline([("pca", _pca(**params)),
                     ("nb", GaussianNB(epsilon=nb_epsilon, bounds=(-4.0, 4.0)))])


def _splits(n, k, validation_fraction=0.3, seed=1):
    return split_indices(*partition_labels(n, k, validation_fraction, seed), k)


def _values(estimator, candidates, X, y, splits, entropy=0, n_jobs=1):
    _, utility = make_utility(estimator, "accuracy", None)
    (family, ids, plans, data), = batched_groups(estimator, candidates, X, y, utility)
    assert family is gaussian_nb and ids == list(range(len(candidates)))
    return batched_values(family, ids, plans, data, splits, utility, entropy, n_jobs)


def _per_fit(estimator, candidates, X, y, splits):
    _, utility = make_utility(estimator, "accuracy", None)
    return per_fit_values(estimator, candidates, X, y, splits, utility, "raise")


# --- Which path ------------------------------------------------------------------------------


@pytest.fixture
def paths(monkeypatch):
    return count_paths(monkeypatch, gaussian_nb)


def test_a_pca_pipeline_grid_takes_the_batched_path(paths):
    X, y = _data(400)
    PrivateGridSearchCV(_pipeline(), {"pca__epsilon": [0.5, 2.0], "pca__n_components": [1, 2]},
                        n_partitions=4, accountant=BudgetAccountant(), random_state=0,
                        refit=False).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 4 * 4}


@pytest.mark.parametrize("change", [
    {"n_components": None}, {"n_components": 0.9}, {"n_components": 4}, {"whiten": True},
    {"data_norm": None}, {"epsilon": float("inf")}, {"centered": False, "bounds": BOUNDS},
])
def test_what_the_step_cannot_emulate_falls_back(change):
    assert pca.plan(_pca(**change), 3) is None
    assert pca.plan(_pca(), 3) is not None


def test_without_centered_diffprivlibs_fit_transform_depends_on_the_input_type():
    # Why centered=False takes the per-fit path: on a float array, fit_transform subtracts the
    # noisy mean twice (in place in _fit_full, then in transform); on integers, once. If this
    # fails, diffprivlib changed and centered=False could be emulated.
    X = np.round(_data(60, seed=1)[0] * 10)
    outputs = []
    for rows in (X.astype(float), X.astype(int)):
        model = _pca(centered=False, bounds=(-40.0, 40.0), data_norm=60.0, random_state=0,
                     accountant=BudgetAccountant())
        outputs.append(model.fit_transform(rows) - model.transform(X))
    np.testing.assert_allclose(outputs[0], np.tile(-model.mean_ @ model.components_.T, (60, 1)))
    np.testing.assert_array_equal(outputs[1], 0.0)
    assert np.abs(model.mean_ @ model.components_.T).max() > 0.1


# --- The fit and the transform ---------------------------------------------------------------


def _theirs(X, repetitions, seed, **params):
    state = np.random.RandomState(seed)
    means, components = [], []
    for _ in range(repetitions):
        # A copy: diffprivlib's fit centres its input in place.
        model = _pca(random_state=state, accountant=BudgetAccountant(), **params).fit(X.copy())
        means.append(model.mean_)
        components.append(model.components_.ravel())
    return np.array(means), np.array(components)


@pytest.mark.parametrize("params", [{}, {"epsilon": 8.0}, {"n_components": 3, "epsilon": 0.5},
                                    {"data_norm": 1.0, "epsilon": 8.0}])  # most rows clipped
def test_mean_and_components_have_diffprivlibs_law(params):
    # Up to 9 components entries (the means are zeros, compared exactly): at most 9
    # comparisons, false-failure rate 9e-3.
    X, _ = _data(80, seed=2)
    n = 600
    plan = pca.plan(_pca(**params), 3)
    mean, components, _ = pca.fit_partitions(plan, np.tile(X, (n, 1)),
                                             np.repeat(np.arange(n), 80), n,
                                             [np.random.default_rng(p) for p in range(n)])
    their_mean, their_components = _theirs(X, n, 3, **params)
    p_value, _ = column_ks([(mean, their_mean), (components.reshape(n, -1), their_components)])
    assert p_value > ALPHA


def test_bingham_draws_have_diffprivlibs_law():
    # 3 coordinates (sign-normalised: the law is antipodally symmetric): 3 comparisons.
    value = np.array([[2.0, 0.6, 0.1], [0.6, 1.0, 0.2], [0.1, 0.2, 0.5]])
    rng, n = np.random.default_rng(5), 2000
    ours = np.array([pca.bingham(value, 1.5, rng) for _ in range(n)])
    mech = Bingham(epsilon=1.5, random_state=np.random.RandomState(5))
    theirs = np.array([mech.randomise(value) for _ in range(n)])
    ours, theirs = (v * np.sign(v[:, :1]) for v in (ours, theirs))
    assert column_ks([(ours, theirs)])[0] > ALPHA


def test_the_transform_is_scikit_learns():
    X, _ = _data(100, seed=4)
    model = _pca(accountant=BudgetAccountant()).fit(X[:60].copy())
    ours = project(model.mean_[None], model.components_[None], X[60:], np.zeros(40, int))
    np.testing.assert_allclose(ours, model.transform(X[60:]), atol=1e-12)


# --- Privacy: a partition's values are its own -----------------------------------------------


def test_replacing_one_record_moves_only_its_partition():
    X, y = _data(600)
    splits = _splits(len(y), 6)
    estimator = _pipeline(nb_epsilon=50.0, epsilon=20.0)
    before = _values(estimator, [{}], X, y, splits)
    moved = 0
    for p in range(6):
        rest = np.arange(6) != p
        X2 = X.copy()
        X2[splits[p][0][:3]] = (3.0, -3.0, 0.5)  # three training records of partition p
        after = _values(estimator, [{}], X2, y, splits)
        np.testing.assert_array_equal(after[:, rest], before[:, rest])
        moved += after[0, p] != before[0, p]
    assert moved >= 4  # accuracy is coarse: a changed fit may still classify alike


def test_partitions_do_not_depend_on_how_they_are_cut_into_tasks(monkeypatch):
    X, y = _data(900)
    splits = _splits(len(y), 9)
    estimator, candidates = _pipeline(), [{}, {"pca__epsilon": 0.3}]
    whole = _values(estimator, candidates, X, y, splits)
    monkeypatch.setattr(engine, "BLOCK_CELLS", 200)
    np.testing.assert_array_equal(_values(estimator, candidates, X, y, splits), whole)
    assert not np.array_equal(_values(estimator, candidates, X, y, splits, entropy=1), whole)


# --- The batched pipeline has the per-fit path's law -----------------------------------------


def _compare(n_train, pca_epsilon, repetitions, seed):
    X, y = _data(n_train + 300, seed=seed)
    splits = [(np.arange(n_train), np.arange(n_train, n_train + 300))] * repetitions
    estimator = _pipeline(epsilon=pca_epsilon)
    ours = _values(estimator, [{}], X, y, splits, entropy=seed)[0]
    np.random.seed(seed)  # diffprivlib's unseeded fits draw from numpy's global generator
    theirs = _per_fit(estimator, [{}], X, y, splits)[0]
    return stats.ks_2samp(ours, theirs).pvalue, ours.mean(), theirs.mean()


def test_pipeline_partition_utilities_have_the_per_fit_law():
    # One KS comparison at ALPHA.
    p_value, ours, theirs = _compare(80, 1.0, 200, seed=5)
    assert p_value > ALPHA, (ours, theirs)


@pytest.mark.slow_audit
@pytest.mark.parametrize("n_train, pca_epsilon", [(40, 0.5), (150, 2.0), (400, 8.0)])
def test_pipeline_partition_utilities_have_the_per_fit_law_audit(n_train, pca_epsilon):
    p_value, ours, theirs = _compare(n_train, pca_epsilon, 1000, seed=n_train)
    assert p_value > ALPHA, (ours, theirs)
