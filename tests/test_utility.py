"""Tests of bounded utilities (skdptune.utility)."""

import numpy as np
import pytest
from diffprivlib.models import GaussianNB, KMeans
from sklearn.dummy import DummyClassifier, DummyRegressor

from skdptune.utility import make_utility


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
