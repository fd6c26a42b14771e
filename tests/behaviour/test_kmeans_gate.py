"""The refit gate's KMeans entry: diffprivlib 0.6.6's KMeans spends more than it records on 5
or more features (skdptune.gate.kmeans_overspend), so such a release is refused."""

import math

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import KMeans
from diffprivlib.models import k_means as dp_k_means

from skdptune import PrivateGridSearchCV, PrivateRandomizedSearchCV
from skdptune.exceptions import GateError
from skdptune.gate import kmeans_overspend


def _spent_per_iteration(n_features, epsilon=1.0, iters=1):
    """What one of diffprivlib's update passes spends, read off the mechanisms it builds."""
    spent = []

    class Recording:
        def __init__(self, cls):
            self.cls = cls

        def __call__(self, *args, epsilon, **kwargs):
            spent.append((self.cls.__name__, epsilon))
            return self.cls(*args, epsilon=epsilon, **kwargs)

    model = KMeans(n_clusters=1, epsilon=epsilon, bounds=(np.zeros(n_features),
                                                          np.ones(n_features)))
    X = np.full((5, n_features), 0.5)
    original = (dp_k_means.GeometricFolded, dp_k_means.LaplaceBoundedDomain)
    dp_k_means.GeometricFolded = Recording(original[0])
    dp_k_means.LaplaceBoundedDomain = Recording(original[1])
    try:
        model.bounds = model._check_bounds(model.bounds, n_features, min_separation=1e-5)
        model._update_centers(X, centers=np.full((1, n_features), 0.5),
                              labels=np.zeros(5, dtype=int), dims=n_features,
                              total_iters=iters, random_state=np.random.RandomState(0))
    finally:
        dp_k_means.GeometricFolded, dp_k_means.LaplaceBoundedDomain = original
    return spent


@pytest.mark.parametrize("n_features", [2, 4, 5, 10, 50])
def test_overspend_is_what_diffprivlibs_mechanisms_take(n_features):
    # One cluster, one iteration: the count and each coordinate sum compose sequentially, so a
    # pass spends the sum of its mechanisms' epsilons, which diffprivlib means to be epsilon.
    spent = _spent_per_iteration(n_features)
    assert [name for name, _ in spent] == ["GeometricFolded"] + ["LaplaceBoundedDomain"] * n_features
    assert math.isclose(sum(e for _, e in spent), kmeans_overspend(n_features), rel_tol=1e-12)


def test_overspend_crosses_one_at_five_features():
    assert [kmeans_overspend(d) > 1 for d in range(1, 8)] == [False] * 4 + [True] * 3


def _blobs(n_features):
    rng = np.random.RandomState(0)
    return rng.uniform(0, 1, (200, n_features))


@pytest.mark.parametrize("search", [PrivateGridSearchCV, PrivateRandomizedSearchCV])
@pytest.mark.parametrize("bounds, match", [
    ((np.zeros(6), np.ones(6)), "spends 1.0[0-9]+ times the epsilon it records on 6 features"),
    ((0.0, 1.0), "give per-feature bounds=\\(lower, upper\\) arrays, of at most 4 features"),
])
def test_a_release_that_would_overspend_is_refused_before_anything_is_charged(search, bounds,
                                                                                match):
    n_features = 6
    X = _blobs(n_features)
    accountant = BudgetAccountant()
    with pytest.raises(GateError, match=match):
        search(KMeans(bounds=bounds), {"n_clusters": [2, 3]}, epsilon=1.0,
               accountant=accountant, utility_range=(-1000, 0)).fit(X, np.zeros(len(X)))
    assert accountant.spent_budget == []


def test_four_declared_features_are_released_and_charged_what_they_spend():
    X = _blobs(4)
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(KMeans(bounds=(np.zeros(4), np.ones(4))), {"n_clusters": [2, 3]},
                                 epsilon=1.0, accountant=accountant, n_partitions=5,
                                 random_state=0).fit(X)
    assert search.best_estimator_.cluster_centers_.shape[1] == 4
    assert tuple(search.privacy_spent_) == pytest.approx((1.0, 0.0))


def test_selection_only_needs_no_release(binary_data):
    # refit=False: nothing fitted on all the data is released, so the gate does not apply.
    X, _ = binary_data
    X = np.hstack([X, X])  # 8 features
    search = PrivateGridSearchCV(KMeans(bounds=(0.0, 1.0)), {"n_clusters": [2, 3]},
                                 epsilon=1.0, refit=False, n_partitions=5,
                                 utility_range=(-1000, 0), random_state=0).fit(X)
    assert search.best_params_["n_clusters"] in (2, 3)
