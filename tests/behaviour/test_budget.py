"""The budget named is the budget spent (epsilon, split by selection_share), the explicit split
(selection_epsilon), and the DP estimate behind best_score_."""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from skdptune.naive_bayes import GaussianNB
from skdptune.linear_model import LogisticRegression
from diffprivlib.models import StandardScaler as DPStandardScaler
from scipy import stats
from sklearn.pipeline import make_pipeline

from skdptune import PrivateGridSearchCV
from skdptune.selection._score import estimate_utility

CLASSES = [0, 1]  # binary_data's labels, declared

BOUNDS = (0.0, 1.0)


def test_epsilon_is_split_and_candidates_follow_their_share(binary_data):
    X, y = binary_data
    accountant = BudgetAccountant()
    pipeline = make_pipeline(DPStandardScaler(bounds=BOUNDS, epsilon=0.5),
                             LogisticRegression(classes=CLASSES, data_norm=2.0, epsilon=1.0))
    search = PrivateGridSearchCV(
        pipeline, {"logisticregression__C": [0.1, 1.0],
                   "logisticregression__epsilon": [1.0, 3.0]},
        epsilon=2.0, selection_share=0.25, n_partitions=5, accountant=accountant,
        random_state=0, default=None,
    ).fit(X, y)
    assert tuple(search.privacy_spent_) == pytest.approx((2.0, 0.0))
    assert accountant.spent_budget == [pytest.approx((0.5, 0.0)), pytest.approx((1.5, 0.0))]
    # The refit's 1.5, less check_share of it (trivial_lead_, charged in the same entry), is
    # split between the steps in the candidate's own proportions.
    refit = 1.5 * (1 - search.check_share)
    assert search.privacy_report_["check_epsilon"] == pytest.approx(1.5 * search.check_share)
    written = search.best_params_["logisticregression__epsilon"]
    steps = search.best_estimator_.named_steps
    assert steps["standardscaler"].epsilon == pytest.approx(refit * 0.5 / (0.5 + written))
    assert steps["logisticregression"].epsilon == pytest.approx(refit * written / (0.5 + written))
    assert search.best_params_ in search.cv_results_["params"]  # as the user wrote them


def test_epsilon_without_refit_goes_to_the_selection(binary_data):
    X, y = binary_data
    accountant = BudgetAccountant()
    PrivateGridSearchCV(
        GaussianNB(classes=CLASSES, bounds=BOUNDS), {"var_smoothing": [1e-9, 1e-3]}, epsilon=0.8,
        refit=False, n_partitions=5, accountant=accountant, random_state=0, default=None,
    ).fit(X, y)
    assert accountant.spent_budget == [pytest.approx((0.8, 0.0))]


@pytest.mark.parametrize("budget", [{"epsilon": 1.0}, {}], ids=["epsilon=1", "default"])
def test_the_budget_named_is_the_budget_spent(binary_data, budget):
    # Before: 2.0, the selection's 1.0 plus the model's own default epsilon of 1.0.
    X, y = binary_data
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(
        LogisticRegression(classes=CLASSES, data_norm=2.0), {"C": [0.1, 1.0]}, n_partitions=5,
        accountant=accountant, random_state=0, default=None, **budget,
    ).fit(X, y)
    assert tuple(search.privacy_spent_) == pytest.approx((1.0, 0.0))
    assert accountant.spent_budget == [pytest.approx((0.5, 0.0)), pytest.approx((0.5, 0.0))]
    # The refit's half less the check of the released model (trivial_lead_), charged with it.
    assert search.best_estimator_.epsilon == pytest.approx(0.5 * (1 - search.check_share))
    assert search.privacy_report_["budget_rule"] == ("epsilon split by selection_share and "
                                                     "check_share")


@pytest.mark.parametrize("params, share", [
    ({}, "policy"),  # with a default (the estimator), the tuning policy's share
    ({"default": None}, 0.5),  # no default: "auto" is half
    ({"selection_share": 0.5}, 0.5),  # a number is used as given, with a default too
    ({"default": None, "selection_share": 0.1}, 0.1),
])
def test_auto_selection_share_comes_from_the_policy_or_is_half(binary_data, params, share):
    X, y = binary_data
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(
        LogisticRegression(classes=CLASSES, data_norm=2.0, C=1.0), {"C": [0.1, 1.0]}, epsilon=2.0,
        n_partitions=5, accountant=accountant, random_state=0, **params,
    ).fit(X, y)
    assert search.selection_share == params.get("selection_share", "auto")  # kept as given
    policy = search.privacy_report_["tuning_policy"]
    assert (policy is None) == ("default" in params)  # a policy exactly when there is a default
    if share == "policy":
        share = policy["share"]
        assert 0.0 <= share <= 0.5
    assert search.privacy_report_["selection_share"] == share
    assert search.privacy_report_["selection_epsilon"] == pytest.approx(2.0 * share)
    selection = [pytest.approx((2.0 * share, 0.0))] if share else []  # a decline charges none
    assert accountant.spent_budget == selection + [pytest.approx((2.0 * (1 - share), 0.0))]
    assert tuple(search.privacy_spent_) == pytest.approx((2.0, 0.0))


@pytest.mark.parametrize("value", ["Auto", 0.0, 1.0, None])
def test_selection_share_outside_its_range_is_refused_before_the_charge(binary_data, value):
    X, y = binary_data
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match="selection_share"):
        PrivateGridSearchCV(LogisticRegression(classes=CLASSES, data_norm=2.0), {"C": [0.1, 1.0]},
                            selection_share=value, accountant=accountant).fit(X, y)
    assert accountant.spent_budget == []


def test_selection_epsilon_is_the_explicit_split(binary_data):
    # The selection's epsilon alone; the refit spends what the estimator declares, on top.
    # check_share (0.05) of the selection's 0.4 buys trivial_lead_, charged in the refit's
    # entry (issue 40): 0.38 and 0.7 + 0.02, the total unchanged.
    X, y = binary_data
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(
        LogisticRegression(classes=CLASSES, data_norm=2.0, epsilon=0.7), {"C": [0.1, 1.0]},
        selection_epsilon=0.4, n_partitions=5, accountant=accountant, random_state=0,
        default=None,
    ).fit(X, y)
    assert tuple(search.privacy_spent_) == pytest.approx((1.1, 0.0))
    assert accountant.spent_budget == [pytest.approx((0.38, 0.0)), pytest.approx((0.72, 0.0))]
    assert search.best_estimator_.epsilon == 0.7
    assert search.privacy_report_["check_epsilon"] == pytest.approx(0.02)
    assert search.privacy_report_["budget_rule"] == (
        "selection_epsilon, check_share of it for trivial_lead_; refit as declared")
    assert search.privacy_report_["selection_share"] is None  # no total to share
    assert "total_epsilon" not in search.get_params()


def test_epsilon_and_selection_epsilon_together_are_refused_before_data(binary_data):
    X, y = binary_data
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(GaussianNB(classes=CLASSES, bounds=BOUNDS),
                                 {"var_smoothing": [1e-9]},
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
            GaussianNB(classes=CLASSES, bounds=BOUNDS), {"var_smoothing": [1e-9, 1e-3]},
            selector=selector, selection_epsilon=1.0, default=None,
            scoring="accuracy", utility_range=(-1.0, 3.0), n_partitions=5,
            accountant=BudgetAccountant(), random_state=seed,
        ).fit(X, y)
        assert -1.0 <= search.best_score_ <= 3.0
        report = search.privacy_report_
        assert report["selector_epsilon"] + report["score_epsilon"] == report["selection_epsilon"]
    no_estimate = PrivateGridSearchCV(
        GaussianNB(classes=CLASSES, bounds=BOUNDS), {"var_smoothing": [1e-9, 1e-3]},
        selector="exponential",
        score_share=0.0, n_partitions=5, accountant=BudgetAccountant(), random_state=0,
    ).fit(X, y)
    assert np.isnan(no_estimate.best_score_)
    assert no_estimate.privacy_report_["score_epsilon"] == 0.0


# --- best_score_std_: the noise scale released beside best_score_ (issue 19, item 7) ---


def test_best_score_std_is_the_laplace_std_in_the_scorers_units(binary_data):
    # Independent computation: Laplace(b) has standard deviation sqrt(2) * b; here
    # b = (1 / k) / (score_share * epsilon) in [0, 1] utility units, times (high - low).
    X, y = binary_data
    k, epsilon, share, (low, high) = 6, 0.8, 0.25, (-1.0, 3.0)
    search = PrivateGridSearchCV(
        GaussianNB(classes=CLASSES, bounds=BOUNDS), {"var_smoothing": [1e-9, 1e-3]},
        epsilon=epsilon,
        score_share=share, scoring="accuracy", utility_range=(low, high), n_partitions=k,
        refit=False, accountant=BudgetAccountant(), random_state=0,
    ).fit(X, y)
    expected = np.sqrt(2) * (1 / k) / (share * epsilon) * (high - low)
    assert search.best_score_std_ == pytest.approx(expected, rel=1e-12)


def test_best_score_std_is_nan_where_no_laplace_estimate_is_released(binary_data):
    X, y = binary_data
    common = dict(n_partitions=5, accountant=BudgetAccountant(), random_state=0, default=None)
    grid = {"var_smoothing": [1e-9, 1e-3]}
    # score_share=0 with a one-shot selector: no estimate at all.
    none = PrivateGridSearchCV(GaussianNB(classes=CLASSES, bounds=BOUNDS), grid, score_share=0.0,
                               **common).fit(X, y)
    assert np.isnan(none.best_score_) and np.isnan(none.best_score_std_)
    # score_share=0 with the doubling selector: best_score_ is its final threshold u, whose
    # error has no closed-form standard deviation.
    doubling = PrivateGridSearchCV(GaussianNB(classes=CLASSES, bounds=BOUNDS), grid,
                                   score_share=0.0, selector="doubling", **common).fit(X, y)
    assert np.isfinite(doubling.best_score_) and np.isnan(doubling.best_score_std_)
    # A callable refit releases neither.
    chosen = PrivateGridSearchCV(GaussianNB(classes=CLASSES, bounds=BOUNDS), grid,
                                 refit=lambda results: 0, **common).fit(X, y)
    assert not hasattr(chosen, "best_score_") and not hasattr(chosen, "best_score_std_")


def test_best_score_std_matches_the_spread_of_repeated_selections(binary_data, monkeypatch):
    # Every partition utility is fixed at 0.5 (the partition fits are replaced), so
    # best_score_ varies only by its Laplace noise across seeds: scale b = (1/20) / (0.5 * 2)
    # = 0.05 in utility units, so the clip to [0, 1] (0.5 away) touches exp(-10) = 5e-5 of
    # draws. Sample std of n = 1500 Laplace draws: relative standard error
    # sqrt((kurtosis - 1) / (4 n)) = sqrt(5 / 6000) = 2.9 %; a 12 % tolerance is 4.2 standard
    # errors, a false-failure rate below 1e-4 over seeds.
    from skdptune import _plan as plan_module
    from skdptune import _search as search_module

    monkeypatch.setattr(search_module, "partition_utilities",
                        lambda estimator, candidates, *args, **kwargs:
                        np.full(len(candidates), 0.5))
    # The same configuration 1,500 times: rehearsed once (skdptune._rehearsal), not each time.
    plan_module.rehearse(
        [GaussianNB(classes=CLASSES, bounds=BOUNDS, var_smoothing=v) for v in (1e-9, 1e-3)],
        ["1e-9", "1e-3"], plan_module.schema_of(*binary_data))
    monkeypatch.setattr(plan_module, "rehearse", lambda *args, **kwargs: None)
    X, y = binary_data
    scores, stds = [], set()
    for seed in range(1500):
        search = PrivateGridSearchCV(
            GaussianNB(classes=CLASSES, bounds=BOUNDS), {"var_smoothing": [1e-9, 1e-3]},
            epsilon=2.0,
            score_share=0.5, scoring="accuracy", utility_range=(-2.0, 6.0), n_partitions=20,
            refit=False, accountant=BudgetAccountant(), random_state=seed,
        ).fit(X, y)
        scores.append(search.best_score_)
        stds.add(search.best_score_std_)
    scores = np.array(scores)
    (std,) = stds  # a function of public quantities: the same at every seed
    assert std == pytest.approx(np.sqrt(2) * 0.05 * 8.0)
    assert np.mean(scores) == pytest.approx(2.0, abs=0.1)  # 6.8 standard errors of the mean
    assert np.std(scores) == pytest.approx(std, rel=0.12)


def test_a_grid_over_the_only_dp_steps_epsilon_is_refused_when_epsilon_is_the_total():
    # With epsilon the whole fit's budget, the refit's share replaces the model's epsilon:
    # a grid over it would compare identical candidates. Refused before the data, with the
    # remedy (selection_epsilon); a pipeline's proportions between DP steps stay tunable.
    X = np.random.RandomState(0).uniform(size=(200, 3))
    y = (X[:, 0] > 0.5).astype(int)
    search = PrivateGridSearchCV(GaussianNB(classes=CLASSES, bounds=(0, 1)),
                                 {"epsilon": [0.5, 2.0]},
                                 epsilon=2.0, n_partitions=5, random_state=0,
                                 accountant=BudgetAccountant())
    with pytest.raises(ValueError, match="selection_epsilon"):
        search.fit(X, y)
    assert search.accountant.spent_budget == []
    search.set_params(epsilon=None, selection_epsilon=1.0).fit(X, y)
    pipeline = make_pipeline(DPStandardScaler(bounds=(0, 1)),
                             GaussianNB(classes=CLASSES, bounds=(0, 1)))
    PrivateGridSearchCV(pipeline, {"standardscaler__epsilon": [0.1, 1.0]}, epsilon=2.0,
                        n_partitions=5, random_state=0,
                        accountant=BudgetAccountant()).fit(X, y)
