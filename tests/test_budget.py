"""The budget named is the budget spent (epsilon, split by selection_share), the explicit split
(selection_epsilon), and the DP estimate behind best_score_."""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression
from diffprivlib.models import StandardScaler as DPStandardScaler
from scipy import stats
from sklearn.pipeline import make_pipeline

from skdptune import PrivateGridSearchCV
from skdptune.selection.score import estimate_utility

BOUNDS = (0.0, 1.0)


def test_epsilon_is_split_and_candidates_follow_their_share(binary_data):
    X, y = binary_data
    accountant = BudgetAccountant()
    pipeline = make_pipeline(DPStandardScaler(bounds=BOUNDS, epsilon=0.5),
                             LogisticRegression(data_norm=2.0, epsilon=1.0))
    search = PrivateGridSearchCV(
        pipeline, {"logisticregression__C": [0.1, 1.0],
                   "logisticregression__epsilon": [1.0, 3.0]},
        epsilon=2.0, selection_share=0.25, n_partitions=5, accountant=accountant,
        random_state=0,
    ).fit(X, y)
    assert tuple(search.privacy_spent_) == pytest.approx((2.0, 0.0))
    assert accountant.spent_budget == [pytest.approx((0.5, 0.0)), pytest.approx((1.5, 0.0))]
    # The refit's 1.5 is split between the steps in the candidate's own proportions.
    written = search.best_params_["logisticregression__epsilon"]
    steps = search.best_estimator_.named_steps
    assert steps["standardscaler"].epsilon == pytest.approx(1.5 * 0.5 / (0.5 + written))
    assert steps["logisticregression"].epsilon == pytest.approx(1.5 * written / (0.5 + written))
    assert search.best_params_ in search.cv_results_["params"]  # as the user wrote them


def test_epsilon_without_refit_goes_to_the_selection(binary_data):
    X, y = binary_data
    accountant = BudgetAccountant()
    PrivateGridSearchCV(
        GaussianNB(bounds=BOUNDS), {"var_smoothing": [1e-9, 1e-3]}, epsilon=0.8,
        refit=False, n_partitions=5, accountant=accountant, random_state=0,
    ).fit(X, y)
    assert accountant.spent_budget == [pytest.approx((0.8, 0.0))]


@pytest.mark.parametrize("budget", [{"epsilon": 1.0}, {}], ids=["epsilon=1", "default"])
def test_the_budget_named_is_the_budget_spent(binary_data, budget):
    # Before: 2.0, the selection's 1.0 plus the model's own default epsilon of 1.0.
    X, y = binary_data
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(
        LogisticRegression(data_norm=2.0), {"C": [0.1, 1.0]}, n_partitions=5,
        accountant=accountant, random_state=0, **budget,
    ).fit(X, y)
    assert tuple(search.privacy_spent_) == pytest.approx((1.0, 0.0))
    assert accountant.spent_budget == [pytest.approx((0.5, 0.0)), pytest.approx((0.5, 0.0))]
    assert search.best_estimator_.epsilon == pytest.approx(0.5)
    assert search.privacy_report_["budget_rule"] == "epsilon split by selection_share"


def test_selection_epsilon_is_the_explicit_split(binary_data):
    # The selection's epsilon alone; the refit spends what the estimator declares, on top.
    X, y = binary_data
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(
        LogisticRegression(data_norm=2.0, epsilon=0.7), {"C": [0.1, 1.0]},
        selection_epsilon=0.4, n_partitions=5, accountant=accountant, random_state=0,
    ).fit(X, y)
    assert tuple(search.privacy_spent_) == pytest.approx((1.1, 0.0))
    assert accountant.spent_budget == [pytest.approx((0.4, 0.0)), pytest.approx((0.7, 0.0))]
    assert search.best_estimator_.epsilon == 0.7
    assert search.privacy_report_["budget_rule"] == "selection_epsilon; refit as declared"
    assert "total_epsilon" not in search.get_params()


def test_epsilon_and_selection_epsilon_together_are_refused_before_data(binary_data):
    X, y = binary_data
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(GaussianNB(bounds=BOUNDS), {"var_smoothing": [1e-9]},
                                 epsilon=1.0, selection_epsilon=2.0, accountant=accountant)
    with pytest.raises(ValueError, match=r"epsilon=1.0 and selection_epsilon=2.0 were both "
                                         r"given; give epsilon \(the whole fit's budget"):
        search.fit(X, y)
    assert accountant.spent_budget == []


def test_estimate_is_unbiased_with_the_stated_scale():
    # 20,000 draws of Lap(0.1 / 0.5 = 0.2) around 0.5 (clipping at 0 and 1 touches
    # P(|Z| > 0.5) = exp(-2.5) = 8 % of draws, handled by comparing with the clipped law).
    # Kolmogorov-Smirnov against the clipped Laplace: false failure rate 1e-4.
    rng = np.random.RandomState(0)
    draws = np.array([estimate_utility([0.1, 0.5], 1, sensitivity=0.1, epsilon=0.5,
                                       random_state=rng) for _ in range(20_000)])
    assert draws.min() >= 0.0 and draws.max() <= 1.0
    interior = draws[(draws > 0) & (draws < 1)]
    law = stats.laplace(loc=0.5, scale=0.2)

    def interior_cdf(x):  # the Laplace law conditioned on (0, 1)
        return (law.cdf(x) - law.cdf(0)) / (law.cdf(1) - law.cdf(0))

    assert stats.kstest(interior, interior_cdf).pvalue > 1e-4
    assert np.mean(draws == 0.0) == pytest.approx(law.cdf(0.0), abs=0.01)


@pytest.mark.parametrize("selector", ["exponential", "doubling"])
def test_best_score_is_an_estimate_inside_the_utility_range(binary_data, selector):
    X, y = binary_data
    for seed in range(5):
        search = PrivateGridSearchCV(
            GaussianNB(bounds=BOUNDS), {"var_smoothing": [1e-9, 1e-3]}, selector=selector,
            selection_epsilon=1.0,
            scoring="accuracy", utility_range=(-1.0, 3.0), n_partitions=5,
            accountant=BudgetAccountant(), random_state=seed,
        ).fit(X, y)
        assert -1.0 <= search.best_score_ <= 3.0
        report = search.privacy_report_
        assert report["selector_epsilon"] + report["score_epsilon"] == report["selection_epsilon"]
    no_estimate = PrivateGridSearchCV(
        GaussianNB(bounds=BOUNDS), {"var_smoothing": [1e-9, 1e-3]}, selector="exponential",
        score_share=0.0, n_partitions=5, accountant=BudgetAccountant(), random_state=0,
    ).fit(X, y)
    assert np.isnan(no_estimate.best_score_)
    assert no_estimate.privacy_report_["score_epsilon"] == 0.0
