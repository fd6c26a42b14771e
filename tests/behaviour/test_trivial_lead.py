"""The grid search's check of the released model against a trivial one (issue 18):
``trivial_lead_``, a Laplace estimate bought with ``check_share`` of the refit's budget, or
of ``selection_epsilon`` (skdptune._trivial.estimate_lead). The UselessModelWarning it
decides, and its rates: test_useless_model.py."""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import LinearRegression
from skdptune.naive_bayes import GaussianNB
from skdptune.linear_model import LogisticRegression
from scipy import stats
from sklearn.utils._param_validation import InvalidParameterError

from skdptune import PrivateGridSearchCV
from skdptune.linear_model import Ridge
from skdptune._trivial import (
    ACCURACY,
    BOUNDED_SQUARED_ERROR,
    LEAD_SENSITIVITY,
    _lead,
    estimate_lead,
    lead_kind,
)

CLASSES = [0, 1]  # the labels of the classification fixture, declared

HUGE_EPSILON = 1e12  # noise far below float resolution of the leads below


class Fixed:
    """A released model with fixed predictions per row (row i predicts ``table[i]``)."""

    def __init__(self, table, bounds_y=None):
        self.table = np.asarray(table)

    def predict(self, X):
        return self.table[np.asarray(X, dtype=int).ravel()]


def regression(coef, intercept, bounds_y=(0.0, 10.0)):
    model = LinearRegression(bounds_X=(0, 1), bounds_y=bounds_y)
    model.coef_, model.intercept_ = np.atleast_1d(np.asarray(coef, dtype=float)), intercept
    return model


# --- what the lead is ------------------------------------------------------------------------

def test_accuracy_lead_is_accuracy_minus_the_most_frequent_class_share():
    y = np.array([0, 0, 0, 1, 1, 2])  # most frequent: 0, share 1/2
    rows = np.arange(6)[:, None]
    right = Fixed(y)
    assert _lead(ACCURACY, right, rows, y) == pytest.approx(1 - 0.5)
    majority = Fixed(np.zeros(6, dtype=int))
    assert _lead(ACCURACY, majority, rows, y) == pytest.approx(0.0)
    wrong = Fixed(np.full(6, 2))
    assert _lead(ACCURACY, wrong, rows, y) == pytest.approx(1 / 6 - 1 / 2)


def test_regression_lead_is_the_bounded_score_minus_the_targets_mean():
    # The best constant for a squared error is the (clipped) targets' mean: issue 33 (the
    # middle of bounds_y, before, made a model no better than the mean look useful when the
    # targets sit off the middle, and a useful one look useless when they sit on it).
    X = np.zeros((4, 1))
    y = np.array([4.0, 6.0, 5.0, 12.0])  # the last is clipped to 10: mean 25 / 4 = 6.25
    mean = regression([0.0], 6.25)
    assert _lead(BOUNDED_SQUARED_ERROR, mean, X, y) == pytest.approx(0.0)
    middle = regression([0.0], 5.0)  # worse than the mean by (6.25 - 5)**2 / 100
    assert _lead(BOUNDED_SQUARED_ERROR, middle, X, y) == pytest.approx(-1.25 ** 2 / 100)
    at_the_top = regression([0.0], 30.0)  # clipped to 10 for every row
    sst = np.sum((np.array([4.0, 6.0, 5.0, 10.0]) - 6.25) ** 2)
    sse = np.sum((10.0 - np.array([4.0, 6.0, 5.0, 10.0])) ** 2)
    assert _lead(BOUNDED_SQUARED_ERROR, at_the_top, X, y) == pytest.approx((sst - sse) / 400)


@pytest.mark.parametrize("kind", [ACCURACY, BOUNDED_SQUARED_ERROR])
def test_replacing_one_record_moves_the_lead_by_at_most_the_stated_sensitivity(kind):
    # Random datasets, models and replacements: the bound holds; a constructed replacement
    # attains it, so no smaller constant would do.
    rng = np.random.RandomState(0)
    n, worst = 12, 0.0
    for _ in range(3000):
        if kind == ACCURACY:
            y = rng.randint(3, size=n)
            model, X = Fixed(rng.randint(3, size=n + 1)), np.arange(n)[:, None]
            y2, X2 = y.copy(), X.copy()
            i = rng.randint(n)
            y2[i], X2[i] = rng.randint(3), n  # the new record's row gets row n's prediction
        else:
            X, y = rng.rand(n, 1), rng.uniform(-2, 12, size=n)
            model = regression(rng.uniform(-20, 20), rng.uniform(-5, 15))
            y2, X2 = y.copy(), X.copy()
            i = rng.randint(n)
            y2[i], X2[i] = rng.uniform(-2, 12), rng.rand()
        worst = max(worst, abs(_lead(kind, model, X, y) - _lead(kind, model, X2, y2)) * n)
    assert worst > 0.5 * LEAD_SENSITIVITY[kind]  # the random replacements came near it
    assert worst <= LEAD_SENSITIVITY[kind] + 1e-12
    if kind == ACCURACY:
        # Record 0 (class 1, predicted right) becomes class 0 (predicted wrong): the accuracy
        # falls by 1/n and the most frequent class (0) gains 1/n.
        y = np.array([1, 0, 0, 1, 2, 2])
        model = Fixed(np.array([1, 1, 1, 1, 1, 1, 1]))
        rows = np.arange(6)[:, None]
        y2 = y.copy()
        y2[0] = 0
        change = _lead(kind, model, rows, y) - _lead(kind, model, rows, y2)
    else:
        # Every target at the bottom, predicted exactly but one, at x = 1, predicted at the
        # top (its error the whole range); it becomes a target at the top at x = 1, predicted
        # exactly: the model's errors fall by 1 and the sum of squares about the mean rises
        # by 1 - 1/n (in units of range**2).
        model = regression([10.0], 0.0)  # predicts 10 * x, clipped to [0, 10]
        n = 1000
        X, y = np.zeros((n, 1)), np.zeros(n)
        X[0] = 1.0
        y2 = y.copy()
        y2[0] = 10.0
        change = _lead(kind, model, X, y2) - _lead(kind, model, X, y)
        assert change * n == pytest.approx(LEAD_SENSITIVITY[kind] - 1 / n)
        return
    assert change * len(y) == pytest.approx(LEAD_SENSITIVITY[kind])


def test_the_estimate_is_laplace_with_the_stated_scale():
    # Kolmogorov-Smirnov against Laplace(lead, LEAD_SENSITIVITY / (n epsilon)); the test
    # fails falsely with probability 1e-3. A scale off by 10 % fails it (power > 0.99 at
    # 4000 draws).
    y = np.array([0, 0, 1, 1, 1])
    model, rows = Fixed(np.array([0, 1, 1, 1, 1])), np.arange(5)[:, None]
    lead = _lead(ACCURACY, model, rows, y)
    rng = np.random.RandomState(0)
    draws = [estimate_lead(ACCURACY, model, rows, y, epsilon=0.5, random_state=rng)
             for _ in range(4000)]
    estimates = np.array([d[0] for d in draws])
    scale = LEAD_SENSITIVITY[ACCURACY] / (5 * 0.5)
    assert stats.kstest(estimates, stats.laplace(lead, scale).cdf).pvalue > 1e-3
    assert all(d[1] == pytest.approx(np.sqrt(2) * scale) for d in draws)


def test_a_model_that_cannot_predict_releases_no_lead():
    class Broken:
        def predict(self, X):
            raise ValueError("record 3 has value 42")  # would quote the data

    lead, std = estimate_lead(ACCURACY, Broken(), np.zeros((4, 1)), np.arange(4),
                              epsilon=1.0, random_state=0)
    assert np.isnan(lead) and std == pytest.approx(np.sqrt(2) * 2 / 4)


# --- the kind ----------------------------------------------------------------------------------

def test_lead_kind_is_decided_from_the_parameters():
    assert lead_kind(LogisticRegression(classes=CLASSES), None, None) == ACCURACY
    assert lead_kind(GaussianNB(classes=CLASSES), "accuracy", None) == ACCURACY
    assert lead_kind(LinearRegression(bounds_y=(0, 1)), None, None) == BOUNDED_SQUARED_ERROR
    assert lead_kind(LogisticRegression(classes=CLASSES), "balanced_accuracy", None) is None
    # Every squared-error scoring of a regressor with bounds_y, a declared range or not
    # (issue 33: scoring="r2" with a utility_range had no trivial model).
    for scoring, utility_range in ((None, (-1, 1)), ("r2", None), ("r2", (-200, 1)),
                                   ("neg_mean_squared_error", (-100, 0))):
        assert lead_kind(Ridge(bounds_y=(0, 1)), scoring, utility_range) == \
            BOUNDED_SQUARED_ERROR
    assert lead_kind(Ridge(bounds_y=(0, 1)), "neg_mean_absolute_error", (-1, 0)) is None
    assert lead_kind(Ridge(), "r2", (-1, 1)) is None  # no bounds_y: nothing to clip to


# --- in the search ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def classification():
    rng = np.random.RandomState(0)
    X = rng.rand(6000, 3) / 2
    y = (X[:, 0] + 0.05 * rng.randn(len(X)) > 0.25).astype(int)
    return X, y


@pytest.mark.parametrize("total, selection_share, check_share", [(1.0, 0.5, 0.05),
                                                                 (0.3, 0.25, 0.5)])
def test_the_check_takes_its_share_of_the_refit_and_the_total_is_unchanged(
        classification, total, selection_share, check_share):
    X, y = classification
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(
        LogisticRegression(classes=CLASSES, data_norm=1.0, random_state=0), {"C": [0.1, 1.0]},
        epsilon=total,
        selection_share=selection_share, check_share=check_share, accountant=accountant,
        random_state=0, default=None).fit(X, y)
    release = total - selection_share * total
    check = release - (1 - check_share) * release
    assert search.privacy_spent_ == (total, 0.0)  # bit for bit
    assert accountant.total() == (total, 0.0)
    assert search.best_estimator_.epsilon == pytest.approx((1 - check_share) * release)
    [charge] = [c for c in search.privacy_report_["charges"]
                if c["release"] == "trivial_lead_ estimate"]
    assert charge["epsilon"] == pytest.approx(check) and charge["entry"] == "refit"
    assert search.privacy_report_["check_epsilon"] == pytest.approx(check)
    assert search.trivial_lead_std_ == pytest.approx(np.sqrt(2) * 2 / (len(X) * check))
    assert search.trivial_lead_ > 0.1  # learnable labels, balanced classes (seeded refit)


def test_with_selection_epsilon_the_check_takes_its_share_of_it(classification):
    # Issue 40, item 8. Before: with selection_epsilon no check was bought (NaN, no
    # warning). Now check_share of selection_epsilon buys it, charged with the refit, which
    # spends what it declares: the total is selection_epsilon plus the declared budget.
    X, y = classification
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(
        LogisticRegression(classes=CLASSES, data_norm=1.0, epsilon=0.7, random_state=0),
        {"C": [0.1, 1.0]}, selection_epsilon=0.4, check_share=0.25, accountant=accountant,
        random_state=0, default=None).fit(X, y)
    assert accountant.spent_budget == [pytest.approx((0.3, 0.0)), pytest.approx((0.8, 0.0))]
    assert tuple(search.privacy_spent_) == pytest.approx((1.1, 0.0))
    assert search.best_estimator_.epsilon == 0.7  # as declared
    report = search.privacy_report_
    [check] = [c for c in report["charges"] if c["release"] == "trivial_lead_ estimate"]
    assert check["epsilon"] == pytest.approx(0.1) and check["entry"] == "refit"
    assert report["selection_epsilon"] == pytest.approx(0.3)
    assert report["selector_epsilon"] + report["score_epsilon"] == pytest.approx(0.3)
    assert search.trivial_lead_std_ == pytest.approx(np.sqrt(2) * 2 / (len(X) * 0.1))
    assert search.trivial_lead_ > 0.1  # learnable labels, balanced classes (seeded refit)


@pytest.mark.parametrize("kwargs", [dict(epsilon=1.0, check_share=0.0),
                                    dict(selection_epsilon=0.5, check_share=0.0),
                                    dict(epsilon=1.0, scoring="balanced_accuracy")])
def test_no_check_spends_nothing_and_releases_nan(classification, kwargs):
    X, y = classification
    search = PrivateGridSearchCV(LogisticRegression(classes=CLASSES, data_norm=1.0, epsilon=0.5),
                                 {"C": [0.1, 1.0]}, random_state=0, default=None,
                                 **kwargs).fit(X, y)
    assert np.isnan(search.trivial_lead_) and np.isnan(search.trivial_lead_std_)
    assert all(c["release"] != "trivial_lead_ estimate"
               for c in search.privacy_report_["charges"])
    if "epsilon" in kwargs:
        assert search.best_estimator_.epsilon == pytest.approx(0.5)  # the whole refit share


def test_check_share_is_validated_before_the_data():
    search = PrivateGridSearchCV(LogisticRegression(classes=CLASSES, data_norm=1.0), {"C": [1.0]},
                                 epsilon=1.0, check_share=0.6, default=None)
    with pytest.raises(InvalidParameterError, match="'check_share' parameter"):
        search.fit(None, None)
