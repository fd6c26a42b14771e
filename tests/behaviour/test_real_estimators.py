"""PrivateGridSearchCV on real diffprivlib estimators: each is tuned on a small grid, the refit
is private (the charge is the selection plus what the estimator's own budget really spends: its
epsilon times the gate's charge factor) and the refit model predicts."""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import KMeans
from skdptune.naive_bayes import GaussianNB
from diffprivlib.models import StandardScaler as DPStandardScaler
from sklearn.datasets import load_iris
from sklearn.pipeline import Pipeline
from sklearn.tree import DecisionTreeClassifier as SkDecisionTree

from conftest import grid_charges
from skdptune import PrivateGridSearchCV
from skdptune.ensemble import RandomForestClassifier
from skdptune._models.ensemble import forest_charge
from skdptune._models.naive_bayes import gaussian_nb_charge
from skdptune._models.tree import tree_charge
from skdptune.linear_model import LogisticRegression
from skdptune.tree import DecisionTreeClassifier

CLASSES = [0, 1]  # binary_data's labels, declared

# The binary_data fixture lies in [0, 1]^4 by construction (tests/conftest.py): declared bounds.
BOUNDS = (0.0, 1.0)
DATA_NORM = 2.0  # sqrt(4), the largest norm of a row in [0, 1]^4
SELECTION = (0.5, 0.0)  # the default permute-and-flip is pure DP
# What a GaussianNB with these bounds, a tree and a forest are charged per unit of the epsilon
# they record (skdptune.gate: their calibration falls short under replace-one adjacency).
GNB_CHARGE = gaussian_nb_charge(GaussianNB(classes=CLASSES, bounds=BOUNDS))
TREE_CHARGE = tree_charge(DecisionTreeClassifier(bounds=BOUNDS, classes=[0, 1]))
FOREST_CHARGE = forest_charge(RandomForestClassifier(bounds=BOUNDS, classes=[0, 1]))


def fit_search(estimator, grid, X, y, **params):
    acc = BudgetAccountant()
    search = PrivateGridSearchCV(
        estimator, grid, selection_epsilon=SELECTION[0], delta=SELECTION[1], n_partitions=5,
        accountant=acc, random_state=0, **{"default": None, **params},
    ).fit(X, y)
    assert acc.spent_budget == grid_charges(search)
    return search


def assert_private_refit(search, estimator_epsilon):
    assert search.privacy_spent_[0] == pytest.approx(SELECTION[0] + estimator_epsilon)
    assert search.privacy_spent_[1] == pytest.approx(SELECTION[1])
    assert search.privacy_report_["refit_epsilon"] == pytest.approx(estimator_epsilon)


def assert_classifier(search, X, classes):
    np.testing.assert_array_equal(search.classes_, classes)
    prediction = search.predict(X)
    assert prediction.shape == (len(X),)
    assert set(prediction) <= set(classes)


@pytest.mark.parametrize(
    "estimator, grid, estimator_epsilon",
    [
        (LogisticRegression(classes=CLASSES, data_norm=DATA_NORM, epsilon=0.8, random_state=0),
         {"C": [0.1, 1.0]}, 0.8),
        (GaussianNB(classes=CLASSES, bounds=BOUNDS, epsilon=0.8, random_state=0),
         {"var_smoothing": [1e-9, 1e-3]}, GNB_CHARGE * 0.8),  # charged, not recorded
        (RandomForestClassifier(n_estimators=3, bounds=BOUNDS, classes=[0, 1], epsilon=0.8,
                                random_state=0),
         {"max_depth": [2, 3]}, FOREST_CHARGE * 0.8),  # charged, not recorded
        (DecisionTreeClassifier(bounds=BOUNDS, classes=[0, 1], epsilon=0.8, random_state=0),
         {"max_depth": [2, 3]}, TREE_CHARGE * 0.8),  # charged, not recorded
        (Pipeline([
            ("scaler", DPStandardScaler(bounds=BOUNDS, epsilon=0.3, random_state=0)),
            ("lr",
             LogisticRegression(classes=CLASSES, data_norm=DATA_NORM, epsilon=0.8, random_state=0)),
        ]), {"lr__C": [0.1, 1.0]}, 0.3 + 0.8),
    ],
    ids=["LogisticRegression", "GaussianNB", "RandomForest", "DecisionTree", "Pipeline"],
)
def test_dp_classifier(binary_data, estimator, grid, estimator_epsilon):
    X, y = binary_data
    search = fit_search(estimator, grid, X, y)
    assert_private_refit(search, estimator_epsilon)
    assert_classifier(search, X, [0, 1])
    assert search.best_params_ in search.cv_results_["params"]
    assert search.predict_proba(X).shape == (len(X), 2)
    # score uses the search's scorer (accuracy) on the refit model.
    assert 0 <= search.score(X, y) <= 1


def test_multiclass_with_natural_bounds():
    X, y = load_iris(return_X_y=True)
    bounds = ([4, 2, 1, 0], [8, 4.5, 7, 2.5])  # public ranges of the iris measurements (cm)
    search = fit_search(
        GaussianNB(classes=[0, 1, 2], bounds=bounds, random_state=0), {"epsilon": [0.5, 1.0]},
        X, y,
    )
    # The grid varies epsilon: its maximum is charged, times GaussianNB's factor for these
    # bounds (about 2.33: most of the ranges sit away from 0).
    assert_private_refit(search,
                         gaussian_nb_charge(GaussianNB(classes=CLASSES, bounds=bounds)) * 1.0)
    assert_classifier(search, X, [0, 1, 2])
    assert search.predict_proba(X).shape == (len(X), 3)


def test_kmeans_with_declared_utility_range(binary_data):
    X, _ = binary_data
    # KMeans.score is minus the inertia of the validation rows. Every row and (clipped) centre
    # lies in the bounds box [0, 1]^4, so a row's squared distance to its centre is at most
    # the squared diameter 4, and a validation part has at most len(X) rows.
    squared_diameter = X.shape[1] * (BOUNDS[1] - BOUNDS[0]) ** 2
    # refit=False: the refit gate refuses a released diffprivlib KMeans (not DP).
    search = fit_search(
        KMeans(bounds=([0.0] * 4, [1.0] * 4), epsilon=0.8, random_state=0),
        {"n_clusters": [2, 3]}, X, None,
        utility_range=(-len(X) * squared_diameter, 0.0), refit=False,
    )
    assert search.best_params_["n_clusters"] in (2, 3)
    assert not hasattr(search, "best_estimator_") and not hasattr(search, "classes_")
    assert search.best_score_ <= 0


def test_plain_sklearn_estimator_with_refit_false(binary_data):
    X, y = binary_data
    search = fit_search(SkDecisionTree(random_state=0), {"max_depth": [1, 2, 4]}, X, y,
                        refit=False)
    assert tuple(search.privacy_spent_) == SELECTION
    assert search.privacy_report_["refit_epsilon"] == 0
    assert search.best_params_ in search.cv_results_["params"]
    assert not hasattr(search, "predict")
    assert not hasattr(search, "best_estimator_")


def test_a_released_pca_that_centres_in_place_leaves_the_users_array_alone(allow_in_gate):
    # diffprivlib 0.6.6's PCA(centered=False) subtracts its DP mean from a float X in place
    # while fitting; the search's refit (a released fit) gets a copy of X. The gate refuses a
    # released diffprivlib PCA (it overspends): admitted here as a test double, since a copy
    # is what any step listed in skdptune._dp_fit.MUTATES_INPUT gets.
    from diffprivlib.models import PCA
    from sklearn.pipeline import make_pipeline

    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, (300, 4))
    y = (X[:, 0] > 0.5).astype(int)
    allow_in_gate(PCA)
    before = X.copy()
    changed = X.copy()  # what diffprivlib does to a float array it is given
    PCA(n_components=2, bounds=(0.0, 1.0), data_norm=2.0).fit(changed)
    assert not np.array_equal(changed, before)
    fit_search(make_pipeline(PCA(n_components=2, bounds=(0.0, 1.0), data_norm=2.0),
                             GaussianNB(classes=CLASSES, bounds=(-3.0, 3.0))),
               {"gaussiannb__var_smoothing": [1e-9, 1e-3]}, X, y)
    np.testing.assert_array_equal(X, before)
