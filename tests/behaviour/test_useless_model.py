"""A released model no better than a trivial one is reported (issue 18): UselessModelWarning,
decided from DP outputs and public parameters only (skdptune.trivial)."""

import math
import warnings

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import LinearRegression, StandardScaler
from skdptune.linear_model import LogisticRegression
from sklearn.metrics import get_scorer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from skdptune import PrivateGridSearchCV, PrivateRandomizedSearchCV
from skdptune.exceptions import UselessModelWarning
from skdptune.linear_model import Ridge
from skdptune.trivial import (
    MARGIN_STDS,
    MIDDLE_OF_BOUNDS_Y_SCORE,
    constant_class,
    trivial_findings,
)
from skdptune.utility import BoundedR2Scorer, BoundedSquaredErrorScorer

ACCURACY = get_scorer("accuracy")


def released_lr(coef, intercept, classes, data_norm=1.0):
    """A diffprivlib LogisticRegression with the given released coefficients."""
    model = LogisticRegression(data_norm=data_norm)
    model.coef_ = np.atleast_2d(np.asarray(coef, dtype=float))
    model.intercept_ = np.ravel(np.asarray(intercept, dtype=float))
    model.classes_ = np.asarray(classes)
    return model


def ball_points(n_features, data_norm, extra, seed=0):
    """Random points of the ball of radius data_norm, its surface, and the ``extra`` points."""
    rng = np.random.RandomState(seed)
    directions = rng.randn(2000, n_features)
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    radii = data_norm * rng.rand(2000, 1) ** (1 / n_features)
    return np.vstack([directions * radii, directions * data_norm, np.atleast_2d(extra)])


def useless_warnings(search, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y)
    return [w for w in caught if issubclass(w.category, UselessModelWarning)]


# --- the constant-classifier rule, against brute force on the declared ball ---------------

@pytest.mark.parametrize("sign", [1, -1])
def test_binary_linear_classifier_constant_exactly_when_the_intercept_outweighs_the_ball(sign):
    w, norm = np.array([0.6, -0.8, 0.0]), 2.0  # ||w|| = 1: the decision spans b -/+ 2
    worst = -sign * norm * w  # the row of the ball that pushes the decision furthest back
    constant = released_lr(w, sign * 2.01, ["no", "yes"], data_norm=norm)
    X = ball_points(3, norm, worst)
    expected = "yes" if sign > 0 else "no"
    assert set(constant.predict(X)) == {expected}
    assert constant_class(constant) == expected
    # A hair less intercept: the worst row of the ball crosses over, and the rule says so.
    crossing = released_lr(w, sign * 1.99, ["no", "yes"], data_norm=norm)
    assert len(set(crossing.predict(X))) == 2
    assert constant_class(crossing) is None


def test_multiclass_linear_classifier_constant_exactly_when_every_pairwise_margin_holds():
    coef = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.0]])
    # Class 2 wins at 0. Against class 1 it needs b2 - b1 >= ||w2 - w1|| * 1 = 1.118 (a
    # bound from ||w2|| + ||w1|| = 1.5 would be too strict); against class 0, only 0.5.
    constant = released_lr(coef, [0.0, -0.5, 0.63], [0, 1, 2])
    crossing = released_lr(coef, [0.0, -0.5, 0.61], [0, 1, 2])
    X = ball_points(2, 1.0, [[-0.5 / 1.118, 1 / 1.118]])
    assert set(constant.predict(X)) == {2} and constant_class(constant) == 2
    assert len(set(crossing.predict(X))) > 1 and constant_class(crossing) is None


def test_constant_class_uses_the_box_a_bounded_dp_scaler_maps_the_inputs_to():
    scaler = StandardScaler(bounds=(0.0, 1.0))
    scaler.mean_, scaler.scale_ = np.full(2, 0.5), np.full(2, 0.5)  # [0, 1] -> [-1, 1]
    inputs = np.vstack([np.random.RandomState(0).rand(2000, 2), [[0.0, 0.0], [0.0, 1.0]]])
    # data_norm=10 is loose: on its ball the decision x0 + 1.5 changes sign, on the box not.
    constant = Pipeline([("scale", scaler), ("lr", released_lr([1.0, 0.0], 1.5, [0, 1], 10))])
    assert set(constant.predict(inputs)) == {1} and constant_class(constant) == 1
    [finding] = trivial_findings(None, None, ACCURACY, constant)
    assert "data_norm=10 reaching it (or in the box its StandardScaler steps" in finding
    crossing = Pipeline([("scale", scaler), ("lr", released_lr([1.0, 0.0], 0.9, [0, 1], 10))])
    assert set(crossing.predict(inputs)) == {0, 1} and constant_class(crossing) is None
    # Three classes: class 2 wins on the box [-1, 1]^2 though not at every row of the ball.
    three = released_lr([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], [0.0, 0.0, 1.01], [0, 1, 2], 10)
    assert set(Pipeline([("scale", scaler), ("lr", three)]).predict(inputs)) == {2}
    assert constant_class(Pipeline([("scale", scaler), ("lr", three)])) == 2
    assert constant_class(three) is None


def test_constant_class_reads_the_classifier_at_the_end_of_a_pipeline():
    # data_norm bounds the rows reaching the classifier, whatever the steps before it.
    lr = released_lr([1.0, 0.0], -3.0, [0, 1])
    assert constant_class(Pipeline([("id", FunctionTransformer()), ("lr", lr)])) == 0
    assert constant_class(released_lr([1.0, 0.0], -3.0, [0, 1], data_norm=None)) is None


# --- the score rule ------------------------------------------------------------------------

def test_score_rule_warns_below_baseline_plus_k_stds_and_not_above():
    std = 0.05
    threshold = 0.5 + MARGIN_STDS * std
    model = released_lr([1.0, 1.0], 0.0, [0, 1])  # not constant
    below = trivial_findings(threshold - 1e-3, std, ACCURACY, model)
    assert len(below) == 1 and "0.5 + 2 * 0.05 = 0.6" in below[0]
    assert trivial_findings(threshold + 1e-3, std, ACCURACY, model) == []
    # Three classes: the baseline is 1/3.
    three = released_lr(np.eye(3), [0, 0, 0], [0, 1, 2])
    assert trivial_findings(1 / 3 + MARGIN_STDS * std - 1e-3, std, ACCURACY, three)
    assert not trivial_findings(1 / 3 + MARGIN_STDS * std + 1e-3, std, ACCURACY, three)


def test_score_rule_is_not_decided_when_the_estimate_cannot_tell():
    model = released_lr([1.0, 1.0], 0.0, [0, 1])
    # 0.5 + 2 * 0.13 > 0.75, halfway from the baseline to 1: too noisy to tell.
    assert trivial_findings(0.0, 0.13, ACCURACY, model) == []
    assert trivial_findings(0.0, 0.12, ACCURACY, model)
    assert trivial_findings(0.0, math.nan, ACCURACY, model) == []  # doubling's own estimate
    assert trivial_findings(None, None, ACCURACY, model) == []  # callable refit
    # No released model: the number of classes is not public.
    assert trivial_findings(0.0, 0.01, ACCURACY, None) == []
    # A scorer with no known trivial baseline.
    assert trivial_findings(0.0, 0.01, get_scorer("neg_log_loss"), model) == []


def test_middle_of_bounds_y_scores_at_least_the_regression_baseline_whatever_the_data():
    scorer = BoundedSquaredErrorScorer()
    middle = LinearRegression(bounds_X=(0, 1), bounds_y=(0, 10))
    middle.coef_, middle.intercept_ = np.zeros(1), 5.0
    X = np.zeros((4, 1))
    # Targets at the bounds (and beyond, clipped) are the worst case: exactly the baseline.
    assert scorer(middle, X, np.array([0.0, 10.0, -3.0, 14.0])) == MIDDLE_OF_BOUNDS_Y_SCORE
    assert scorer(middle, X, np.array([5.0, 2.0, 8.0, 7.0])) > MIDDLE_OF_BOUNDS_Y_SCORE
    findings = trivial_findings(0.7, 0.01, scorer, middle)
    assert len(findings) == 1 and "middle of bounds_y" in findings[0]
    assert trivial_findings(0.8, 0.01, scorer, middle) == []


def test_a_regression_whose_r2_is_not_clearly_above_zero_is_reported():
    # scoring=None's R² of a regressor: a constant predicting the held-out mean scores 0.
    scorer = BoundedR2Scorer()
    model = LinearRegression(bounds_X=(0, 1), bounds_y=(0, 10))
    findings = trivial_findings(0.015, 0.01, scorer, model)
    assert len(findings) == 1 and "held-out targets' mean" in findings[0]
    assert trivial_findings(0.03, 0.01, scorer, model) == []


# --- end to end ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def X():
    return np.random.RandomState(0).rand(6000, 3) / 2  # L2 norm <= 0.87 <= data_norm=1


def test_grid_search_reports_a_released_constant_classifier(X):
    rng = np.random.RandomState(1)
    y = (rng.rand(len(X)) < 0.8).astype(int)  # labels unrelated to X: majority 80 %
    # Strong regularisation: the intercept dominates, the refit predicts the majority.
    search = PrivateGridSearchCV(LogisticRegression(data_norm=1.0, random_state=0),
                                 {"C": [1e-3, 1e-2]}, epsilon=2, random_state=0,
                                 accountant=BudgetAccountant())
    caught = useless_warnings(search, X, y)
    assert constant_class(search.best_estimator_) == 1
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "predicts class 1 for every row of L2 norm <= data_norm=1 " in message
    assert "constant predictor" in message and "larger epsilon" in message
    # Its best_score_std_ is too large for the score rule: only the released model spoke.
    assert search.best_score_std_ > 0.125 and "best_score_=" not in message


# The grid search with most of a large selection budget on best_score_ (std 0.02). The random
# search at chance with a per-trial budget small enough for one trial's noise std (0.024) to
# dominate the held-out sampling error, which best_score_std_ does not cover; on learnable
# labels with a budget its model can learn with.
CHANCE_SETTINGS = [
    (PrivateGridSearchCV, [{}, {}], [dict(epsilon=20, score_share=0.9)] * 2,
     "fewer partitions"),
    (PrivateRandomizedSearchCV, [dict(epsilon=0.05), dict(epsilon=2)],
     [dict(trial_epsilon=0.05, n_iter=2), dict(trial_epsilon=2, n_iter=2)], "fewer trials"),
]


@pytest.mark.parametrize("Search, models, searches, advice", CHANCE_SETTINGS)
def test_searches_report_a_score_not_distinguishable_from_chance(X, Search, models, searches,
                                                                   advice):
    rng = np.random.RandomState(1)
    noise = rng.randint(2, size=len(X))  # nothing to learn: every model is at chance
    signal = (X[:, 0] + 0.05 * rng.randn(len(X)) > 0.25).astype(int)

    def search(model, kwargs):
        return Search(LogisticRegression(data_norm=1.0, random_state=0, **model),
                      {"C": [1.0, 10.0]}, random_state=0, accountant=BudgetAccountant(),
                      **kwargs)

    at_chance = search(models[0], searches[0])
    caught = useless_warnings(at_chance, X, noise)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert f"best_score_={at_chance.best_score_:.3g}" in message and advice in message
    assert at_chance.best_score_ < 0.5 + MARGIN_STDS * at_chance.best_score_std_
    assert constant_class(at_chance.best_estimator_) is None  # the score rule spoke
    # On labels it can learn: no warning.
    learnt = search(models[1], searches[1])
    assert useless_warnings(learnt, X, signal) == []
    assert learnt.best_score_ > 0.5 + MARGIN_STDS * learnt.best_score_std_


def test_grid_search_reports_a_regression_no_better_than_a_constant(X):
    rng = np.random.RandomState(1)
    y = 10 * X[:, 0] + rng.rand(len(X))
    # The partition fits spend epsilon=1e-3 each: their predictions are noise.
    bad = PrivateGridSearchCV(Ridge(alpha=0.0, noise_alpha=0.0, bounds_X=(0, 0.5),
                                    bounds_y=(0, 6), epsilon=1e-3, random_state=0),
                              {"fit_intercept": [True, False]}, selection_epsilon=20,
                              score_share=0.9, random_state=0, accountant=BudgetAccountant())
    caught = useless_warnings(bad, X, y)
    assert len(caught) == 1 and "held-out targets' mean" in str(caught[0].message)
    good = PrivateGridSearchCV(Ridge(alpha=0.0, noise_alpha=0.0, bounds_X=(0, 0.5),
                                     bounds_y=(0, 6), random_state=0),
                               {"fit_intercept": [True, False]}, epsilon=20,
                               score_share=0.9, random_state=0, accountant=BudgetAccountant())
    assert useless_warnings(good, X, y) == []


def test_useless_model_warning_points_at_the_callers_line(X):
    rng = np.random.RandomState(1)
    noise = rng.randint(2, size=len(X))
    for search in (
        PrivateGridSearchCV(LogisticRegression(data_norm=1.0, random_state=0), {"C": [1.0]},
                            epsilon=20, score_share=0.9, random_state=0,
                            accountant=BudgetAccountant()),
        PrivateRandomizedSearchCV(LogisticRegression(data_norm=1.0, random_state=0,
                                                     epsilon=0.05),
                                  {"C": [1.0]}, trial_epsilon=0.05, n_iter=2, random_state=0,
                                  accountant=BudgetAccountant()),
    ):
        caught = useless_warnings(search, X, noise)
        assert [w.filename for w in caught] == [__file__]
