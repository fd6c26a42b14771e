"""Tests of bounded utilities (skdptune.utility)."""

import numpy as np
import pytest
from diffprivlib.models import GaussianNB, KMeans
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.preprocessing import StandardScaler

from skdptune.utility import kmeans_score_range, make_utility


def test_classifier_default_is_accuracy():
    X = np.zeros((4, 1))
    y = np.array([0, 0, 0, 1])
    estimator = DummyClassifier(strategy="most_frequent").fit(X, y)
    scorer, utility = make_utility(estimator, None, None)
    assert utility(estimator, X, y) == 0.75


@pytest.mark.parametrize("scoring", ["accuracy", "balanced_accuracy", "roc_auc", "f1_macro",
                                     "precision", "recall_weighted", "jaccard"])
def test_bounded_scorers_need_no_range(scoring):
    make_utility(GaussianNB(), scoring, None)


@pytest.mark.parametrize(
    "estimator, scoring, shown",
    [
        (DummyRegressor(), None, "estimator.score"),
        (KMeans(), None, "estimator.score"),
        (DummyRegressor(), "r2", "'r2'"),
        (DummyRegressor(), "neg_mean_squared_error", "'neg_mean_squared_error'"),
        (GaussianNB(), "neg_log_loss", "'neg_log_loss'"),
        (GaussianNB(), lambda est, X, y: 0.5, "<function"),
    ],
)
def test_unbounded_scorer_without_range_is_an_error(estimator, scoring, shown):
    with pytest.raises(ValueError, match=r"not known to be bounded.*utility_range") as error:
        make_utility(estimator, scoring, None)
    assert shown in str(error.value)


def test_declared_range_rescales_and_clips():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0.0, 1.0, 2.0, 3.0])
    estimator = DummyRegressor(strategy="constant", constant=10.0).fit(X, y)
    # MSE = mean((10 - y)^2) = (100 + 81 + 64 + 49) / 4 = 73.5.
    _, utility = make_utility(estimator, "neg_mean_squared_error", (-100.0, 0.0))
    assert utility(estimator, X, y) == pytest.approx(1 - 73.5 / 100)
    _, clipped = make_utility(estimator, "neg_mean_squared_error", (-50.0, 0.0))
    assert clipped(estimator, X, y) == 0.0
    _, above = make_utility(estimator, "neg_mean_squared_error", (-200.0, -100.0))
    assert above(estimator, X, y) == 1.0
    assert clipped.to_score(0.5) == -25.0


@pytest.mark.parametrize("bad", [(1.0, 1.0), (2.0, 1.0), (0.0, np.inf), (np.nan, 1.0), (1.0,),
                                 "ab", 3.0])
def test_bad_range_is_named(bad):
    with pytest.raises(ValueError, match="utility_range must be a pair"):
        make_utility(DummyRegressor(), "r2", bad)


@pytest.mark.parametrize(
    "estimator, scoring, advice",
    [
        (KMeans(bounds=(0, 1)), None, r"kmeans_score_range\(bounds, n_records\)"),
        (KMeans(bounds=(0, 1)), "adjusted_rand_score", r"'v_measure_score'.*\[-0.5, 1\]"),
        (DummyRegressor(), None, r"utility_range=\(-1, 1\)"),
        (DummyRegressor(), "neg_mean_absolute_error", r"\(-\(y_max - y_min\), 0\)"),
        (GaussianNB(), "neg_log_loss", "'accuracy'"),
    ],
    ids=["kmeans-score", "kmeans-ari", "regressor-score", "regressor-mae", "classifier"],
)
def test_unbounded_scorer_advice_fits_the_estimator(estimator, scoring, advice):
    # Before: every estimator was told to use classifier scorers.
    with pytest.raises(ValueError, match=advice) as error:
        make_utility(estimator, scoring, None)
    if estimator._estimator_type != "classifier":
        assert "'balanced_accuracy'" not in str(error.value)


def test_kmeans_score_range_from_declared_bounds():
    assert kmeans_score_range(([0, -1], [1, 1]), 10) == (-50.0, 0.0)  # D^2 = 1 + 4
    assert kmeans_score_range((0, 2), 3, n_features=4) == (-48.0, 0.0)
    with pytest.raises(ValueError, match="n_features"):
        kmeans_score_range((0, 2), 3)
    with pytest.raises(ValueError, match="lower <= upper"):
        kmeans_score_range(([1], [0]), 3)
    # The range holds: records and centres inside the box score within it.
    X = np.array([[0.0, -1.0], [1.0, 1.0], [0.5, 0.0]])
    fitted = KMeans(n_clusters=1, bounds=([0, -1], [1, 1]), epsilon=1e6, random_state=0).fit(X)
    low, high = kmeans_score_range(([0, -1], [1, 1]), len(X))
    assert low <= fitted.score(X) <= high


def test_plain_classifier_score_is_bounded_other_scores_are_not():
    scorer, utility = make_utility(GaussianNB(), None, None)
    assert (utility.low, utility.high) == (0.0, 1.0)
    _, declared = make_utility(GaussianNB(), None, (-1, 1))  # a declared range is used
    assert (declared.low, declared.high) == (-1.0, 1.0)
    with pytest.raises(TypeError, match="should have a 'score' method"):
        make_utility(StandardScaler(), None, None)
