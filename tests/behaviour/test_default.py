"""The default candidate (issue 35): the estimator as given, favoured by the tuning policy's
margin, and released without a selection when no share of the budget pays."""

import math
import warnings

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB
from sklearn.datasets import make_classification
from sklearn.pipeline import Pipeline

from skdptune import PrivateGridSearchCV, _default_policy as default_policy
from skdptune._tuning_evidence import evidence_for
from skdptune.exceptions import SelectionDeclinedWarning, UselessModelWarning
from skdptune.linear_model import LogisticRegression
from skdptune.selection import PermuteAndFlip, ReportNoisyMax

GRID = {"C": [0.01, 0.1, 1.0, 10.0]}


class RecordingPermuteAndFlip(PermuteAndFlip):
    """Permute-and-flip that records what the search hands it (the search clones it)."""

    calls = []

    def select(self, utilities, **kwargs):
        type(self).calls.append({"utilities": np.asarray(utilities), **kwargs})
        return super().select(utilities, **kwargs)


@pytest.fixture
def recording():
    RecordingPermuteAndFlip.calls = []
    return RecordingPermuteAndFlip


def logistic(**params):
    return LogisticRegression(data_norm=2.0, classes=[0, 1], **params)


def search(estimator=None, grid=GRID, **params):
    estimator = logistic(C=1.0) if estimator is None else estimator
    defaults = dict(epsilon=1.0, n_partitions=10, accountant=BudgetAccountant(),
                    random_state=0)
    return PrivateGridSearchCV(estimator, grid, **{**defaults, **params})


@pytest.fixture(scope="module")
def large_data():
    """20,000 records: enough for the policy to select at a total epsilon of 4."""
    X, y = make_classification(n_samples=20_000, n_features=4, n_informative=3, n_redundant=0,
                               flip_y=0.05, random_state=0)
    return (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0)), y


def _policy_margin(n_samples, share, n_candidates=4, total=1.0, estimator=None):
    """The margin the policy gives a fixed share at n_partitions=10 (its closed form), with
    the evidence of ``estimator``'s family (the searches' logistic regression if None)."""
    evidence = evidence_for(logistic() if estimator is None else estimator)
    return default_policy.choose(
        total, n_samples=n_samples, n_candidates=n_candidates, refit_noise=0.0,
        score_share=0.1, validation_fraction=0.2, share=share, n_partitions=10,
        evidence=evidence).margin


@pytest.mark.parametrize("default, index", [
    ("estimator", 2), ({"C": 10.0}, 3), ({"C": 0.01}, 0), ({"C": 1}, 2),
])
def test_the_default_gets_the_policys_margin_before_the_selection(binary_data, recording,
                                                                 default, index):
    X, y = binary_data
    fitted = search(default=default, selection_share=0.25, selector=recording()).fit(X, y)
    (call,) = recording.calls
    # The margin depends on the share, k, m and the selection's epsilon only (the refit's
    # noise enters the share, which is fixed here).
    margin = _policy_margin(len(X), 0.25)
    np.testing.assert_allclose(call["offsets"], np.eye(4)[index] * margin)
    assert call["epsilon"] == pytest.approx(0.25 * 0.9)
    assert fitted.default_index_ == index
    assert fitted.default_margin_ == pytest.approx(margin)


def test_the_estimator_as_given_is_the_default_by_default(binary_data):
    X, y = binary_data
    fitted = search(selection_share=0.25).fit(X, y)
    assert fitted.default_index_ == 2  # C=1.0, the estimator's own
    assert fitted.privacy_report_["default_index"] == 2


def test_the_estimator_as_given_is_added_when_no_candidate_has_its_values(binary_data):
    # Before: refused ("no candidate of param_grid has the estimator's own values").
    X, y = binary_data
    fitted = search(logistic(C=5.0), selection_share=0.25).fit(X, y)
    assert fitted.default_index_ == 4
    assert fitted.cv_results_["params"][4] == {"C": 5.0}
    assert len(fitted.cv_results_["params"]) == 5


def test_a_given_margin_and_pipeline_parameter_names(binary_data, recording):
    X, y = binary_data
    pipeline = Pipeline([("clf", logistic(C=0.1))])
    fitted = search(pipeline, {"clf__C": GRID["C"]}, default_margin=0.05,
                    selection_share=0.25, selector=recording()).fit(X, y)
    np.testing.assert_allclose(recording.calls[0]["offsets"], [0, 0.05, 0, 0])
    assert fitted.default_index_ == 1


def test_a_list_of_grids_matches_the_default_by_its_keys(binary_data, recording):
    X, y = binary_data
    grid = [{"C": [0.1, 1.0]}, {"C": [1.0], "fit_intercept": [False]}]
    fitted = search(grid=grid, default={"C": 1.0, "fit_intercept": False},
                    selection_share=0.25, selector=recording()).fit(X, y)
    assert fitted.default_index_ == 2


def test_without_a_default_every_candidate_is_alike_and_the_share_is_half(binary_data,
                                                                          recording):
    X, y = binary_data
    fitted = search(default=None, selector=recording()).fit(X, y)
    assert "offsets" not in recording.calls[0]
    assert recording.calls[0]["epsilon"] == pytest.approx(0.5 * 0.9)
    assert fitted.default_index_ is None and fitted.default_margin_ == 0.0
    assert fitted.privacy_report_["selection_share"] == default_policy.SHARE_WITHOUT_DEFAULT


def test_the_charge_is_the_total_with_and_without_a_default(binary_data, large_data):
    for X, y in (binary_data, large_data):
        plain = search(default=None, epsilon=4.0).fit(X, y)
        favoured = search(epsilon=4.0).fit(X, y)
        assert favoured.privacy_spent_ == plain.privacy_spent_ == pytest.approx((4.0, 0.0))
        assert favoured.accountant.total() == plain.accountant.total()


def test_small_data_declines_to_select_and_refits_the_default_with_everything(binary_data,
                                                                            recording, capsys):
    # 300 records: no share buys a selection worth what it takes from the refit.
    X, y = binary_data
    unfitted = search(selector=recording(), n_partitions="auto", verbose=1)
    forecast = unfitted.forecast(X)
    assert forecast.declined and "declines to select" in str(forecast)
    reasons = forecast.policy.reasons  # issue 39, item 4: the decline in numbers
    would = rf"It would select with {reasons.n_samples:,} records or epsilon={reasons.total:g}"
    with pytest.warns(SelectionDeclinedWarning,
                      match=rf"(?s)would find a lead of .* points over one rival.*{would}"):
        fitted = unfitted.fit(X, y)
    assert recording.calls == []  # no selection ran
    assert fitted.best_index_ == fitted.default_index_ == 2
    assert fitted.n_partitions_ is None and math.isnan(fitted.best_score_)
    assert fitted.selection_.composition == "declined"
    report = fitted.privacy_report_
    assert report["declined"] and report["selection_share"] == 0
    # The estimator as given gets the total but check_share, which buys the check of its
    # lead over a trivial model, as a selecting search's release (issue 39, item 4).
    assert [charge["release"] for charge in report["charges"]] == [
        "refit", "trivial_lead_ estimate"]
    assert report["refit_epsilon"] == pytest.approx(0.95)
    assert report["check_epsilon"] == pytest.approx(0.05)
    assert math.isfinite(fitted.trivial_lead_)
    assert fitted.best_estimator_.epsilon == pytest.approx(0.95)
    assert fitted.accountant.total()[0] == pytest.approx(1.0)
    assert "declines to select" in capsys.readouterr().out


def test_a_declined_search_still_warns_of_a_useless_release():
    # Issue 39, item 4: labels independent of 200 features, so no model beats the majority
    # class. The policy declines (a refit of 201 noisy coefficients cannot spare a share,
    # decided from public quantities), and the release is checked as a selected one is:
    # check_share buys trivial_lead_, whose noise std is sqrt(2) * 2 / (n * 0.05) = 0.0028
    # here. A model whose true lead is 0 or less escapes the warning with probability at most
    # exp(-(0.02 - 2 * 0.0028) * sqrt(2) / 0.0028) / 2 < 4e-4 (skdptune._trivial).
    rng = np.random.default_rng(0)
    X = rng.random((20_000, 200)) / np.sqrt(200)
    y = (rng.random(20_000) < 0.2).astype(int)
    searched = PrivateGridSearchCV(LogisticRegression(classes=[0, 1], data_norm=1.0),
                                   {"C": [0.1, 1.0]}, epsilon=1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        searched.fit(X, y)
    categories = {warning.category for warning in caught}
    assert searched.privacy_report_["declined"] and not searched.selected_
    assert SelectionDeclinedWarning in categories and UselessModelWarning in categories
    assert searched.privacy_spent_.epsilon == pytest.approx(1.0)


def test_large_data_selects_with_a_small_share(large_data, recording):
    X, y = large_data
    forecast = search(n_partitions="auto", epsilon=4.0).forecast(X)
    fitted = search(selector=recording(), n_partitions="auto", epsilon=4.0).fit(X, y)
    # The logistic family's evidence (its prior and its floor of 100 records a partition).
    policy = default_policy.choose(
        4.0, n_samples=len(X), n_candidates=4, score_share=0.1, validation_fraction=0.2,
        refit_noise=default_policy.refit_noise(logistic(C=1.0), len(X), 4),
        evidence=evidence_for(logistic(C=1.0)))
    assert not policy.declined and 0 < policy.share < 0.5
    assert fitted.privacy_report_["selection_share"] == policy.share == forecast.policy.share
    (call,) = recording.calls
    assert call["epsilon"] == pytest.approx(policy.share * 4.0 * 0.9)
    assert fitted.default_margin_ == pytest.approx(policy.margin)
    assert fitted.n_partitions_ == forecast.n_partitions


def test_with_selection_epsilon_the_margin_is_for_the_selectors_own_epsilon(binary_data,
                                                                            recording):
    # Issue 40, item 8: check_share (0.05) of selection_epsilon buys trivial_lead_, so the
    # selector gets 0.95 * 0.9 of it; the policy's margin and noise scale are for that
    # epsilon, not for the whole selection_epsilon's.
    X, y = binary_data
    fitted = search(epsilon=None, selection_epsilon=2.0, selector=recording()).fit(X, y)
    (call,) = recording.calls
    assert call["epsilon"] == pytest.approx(2.0 * 0.95 * 0.9)
    margin = _policy_margin(len(X), 1.0, total=2.0 * 0.95)
    np.testing.assert_allclose(call["offsets"], np.eye(4)[2] * margin)
    assert fitted.privacy_report_["tuning_policy"]["sigma"] == pytest.approx(
        2 / (10 * call["epsilon"]))


def test_a_fixed_share_never_declines(binary_data, recording):
    X, y = binary_data
    with warnings.catch_warnings():
        warnings.simplefilter("error", SelectionDeclinedWarning)
        fitted = search(selection_share=0.1, selector=recording()).fit(X, y)
    assert len(recording.calls) == 1 and fitted.privacy_report_["selection_share"] == 0.1


def test_a_large_margin_keeps_the_default_whatever_the_utilities(binary_data):
    # Without a default these seeds select C=1 or C=0.01, never C=10. A margin of 1
    # (utilities lie in [0, 1]) leaves each other candidate's coin at most
    # exp(-epsilon_s * 1 / (2 / k)) = exp(-6.75) at k = 30 and a share of 0.5: the default is
    # kept, each seed failing with probability below 3 * 0.0012.
    X, y = binary_data
    for seed in range(3):
        plain = search(default=None).set_params(random_state=seed, n_partitions=30).fit(X, y)
        favoured = search(default={"C": 10.0}, default_margin=1.0, selection_share=0.5).set_params(
            random_state=seed, n_partitions=30).fit(X, y)
        assert plain.best_index_ != 3
        assert favoured.best_index_ == favoured.default_index_ == 3


def test_the_verbose_lines_say_what_the_policy_chose_and_whether_the_default_was_kept(
        binary_data, capsys):
    X, y = binary_data
    fitted = search(selection_share=0.25, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    kept = "kept" if fitted.best_index_ == 2 else "moved off"
    assert "Default candidate 3/4 {'C': 1.0}, favoured by" in out
    assert f"({kept} the default, candidate 3, favoured by" in out


@pytest.mark.parametrize("params, match", [
    ({"default": {"C": 3.0}}, r"default=\{'C': 3.0\}: no candidate of param_grid has those "),
    ({"default": {"C": 1.0, "tol": 1e-4}}, "no candidate of param_grid"),
    ({"selector": "doubling"}, r"needs a one-shot selector .*selector='doubling'.*default=None"),
    ({"default": None, "default_margin": 0.1}, "default_margin=0.1 has no effect without"),
])
def test_bad_defaults_are_refused_before_the_data_and_the_charge(binary_data, params, match):
    X, y = binary_data
    unfitted = search(**params)
    with pytest.raises(ValueError, match=match):
        unfitted.fit(X, y)
    assert unfitted.accountant.total() == (0, 0)


@pytest.mark.parametrize("params", [{"default": 5}, {"default": "first"},
                                    {"default_margin": -0.1}, {"default_margin": 2.0}])
def test_invalid_types_and_ranges_are_named(binary_data, params):
    X, y = binary_data
    name = next(iter(params))
    with pytest.raises(ValueError, match=f"The '{name}' parameter of PrivateGridSearchCV"):
        search(**params).fit(X, y)


def test_report_noisy_max_gets_the_same_policy(binary_data):
    X, y = binary_data
    fitted = search(GaussianNB(bounds=(0, 1)), {"var_smoothing": [1e-9, 1e-3, 1e-1]},
                    selection_share=0.25, selector=ReportNoisyMax(), refit=False).fit(X, y)
    # Without a refit the selection gets all of epsilon: the margin at share 1.
    assert fitted.default_margin_ == pytest.approx(
        _policy_margin(len(X), 1.0, 3, estimator=GaussianNB()))


def test_bounds_of_arrays_match_by_value(binary_data, recording):
    # Grids over bounds hold tuples of arrays, which == cannot compare: matched by value.
    X, y = binary_data
    boxes = [(np.zeros(4), np.full(4, upper)) for upper in (0.5, 1.0)]
    fitted = search(GaussianNB(bounds=(np.zeros(4), np.ones(4))), {"bounds": boxes},
                    default={"bounds": (np.zeros(4), np.ones(4))}, selector=recording(),
                    refit=False).fit(X, y)
    assert fitted.default_index_ == 1
    fitted = search(GaussianNB(bounds=(np.zeros(4), np.full(4, 0.5))), {"bounds": boxes},
                    selector=recording(), refit=False).fit(X, y)
    assert fitted.default_index_ == 0


# --- Issue 40: what the search says is what happened ---------------------------------------

@pytest.mark.parametrize("estimator, grid, default", [
    (logistic(C=1.0), {"C": [1.0]}, "estimator"),  # the default is the grid's only candidate
    (logistic(C=1.0), {"C": [0.1]}, None),
    (logistic(C=1.0), {"C": [1, 1.0]}, "estimator"),  # one candidate once repeats are merged
])
def test_a_single_candidate_is_refit_with_the_whole_total_without_a_selection(
        binary_data, recording, capsys, estimator, grid, default):
    # Before: a grid of one candidate ran a selection over it, charged 2.5 % of epsilon for
    # it, released a best_score_ and an "expected gain", and its forecast spoke of 2
    # candidates.
    X, y = binary_data
    unfitted = search(estimator, grid, default=default, epsilon=4.0, selector=recording(),
                      n_partitions="auto", verbose=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the repeats' warning (tested below)
        warnings.simplefilter("error", SelectionDeclinedWarning)  # nothing was declined
        forecast = unfitted.forecast(X)
        fitted = unfitted.fit(X, y)
    assert forecast.n_candidates == 1 and forecast.n_fits == 0 and forecast.policy is None
    assert str(forecast).startswith("One candidate") and "nothing to select" in str(forecast)
    assert recording.calls == []  # no selection ran
    assert fitted.selected_ is False
    assert fitted.best_index_ == 0 and len(fitted.cv_results_["params"]) == 1
    assert math.isnan(fitted.best_score_) and fitted.n_partitions_ is None
    assert fitted.selection_.composition == "single candidate"
    report = fitted.privacy_report_
    assert report["single_candidate"] and not report["declined"]
    assert report["tuning_policy"] is None and report["selection_epsilon"] == 0
    assert [charge["release"] for charge in report["charges"]] == ["refit"]
    assert report["refit_epsilon"] == pytest.approx(4.0)
    assert fitted.best_estimator_.epsilon == pytest.approx(4.0)
    assert len(fitted.accountant.spent_budget) == 1
    assert fitted.accountant.total()[0] == pytest.approx(4.0)
    out = capsys.readouterr().out
    assert "nothing to select" in out and "expected net gain" not in out


def test_a_single_candidate_with_an_explicit_selection_epsilon_spends_none_of_it(
        binary_data, recording):
    X, y = binary_data
    fitted = search(logistic(C=1.0, epsilon=0.5), {"C": [1.0]}, epsilon=None,
                    selection_epsilon=0.3, selector=recording()).fit(X, y)
    assert recording.calls == [] and fitted.selected_ is False
    assert fitted.privacy_spent_.epsilon == pytest.approx(0.5)  # the refit, as declared


def test_repeated_candidates_are_fitted_once_and_named_in_one_warning(binary_data, recording):
    # Before: {'C': 1} and {'C': 1.0} were two candidates, fitted twice without a word, and
    # the selection could "move off the default" to its own twin.
    X, y = binary_data
    with pytest.warns(UserWarning, match="configure the same estimator") as caught:
        fitted = search(grid={"C": [1, 0.1, 1.0]}, selection_share=0.25,
                        selector=recording()).fit(X, y)
    repeats = [w for w in caught if "configure the same estimator" in str(w.message)]
    assert len(repeats) == 1 and repeats[0].filename == __file__
    assert "same estimator: {'C': 1} also as {'C': 1.0}. Each" in str(repeats[0].message)
    # The first in ParameterGrid order is kept, as written; the default points at it.
    assert fitted.cv_results_["params"] == [{"C": 1}, {"C": 0.1}]
    assert fitted.default_index_ == 0
    assert len(recording.calls[0]["utilities"]) == 2


def test_the_estimator_as_given_equal_to_a_grid_candidate_is_one_candidate(binary_data,
                                                                           recording):
    # A grid over a pipeline's step holds estimator objects, which == does not compare: the
    # estimator as given was added beside its equal, once its parameters were filled in.
    X, y = binary_data
    given = Pipeline([("clf", logistic(C=1.0))])
    grid = {"clf": [logistic(C=1.0), logistic(C=0.1)]}
    with pytest.warns(UserWarning, match=r"also as the estimator as given \(the default, "):
        fitted = search(given, grid, selection_share=0.25, selector=recording()).fit(X, y)
    assert len(fitted.cv_results_["params"]) == 2 and fitted.default_index_ == 0
    assert len(recording.calls[0]["utilities"]) == 2


def test_equal_effect_compares_estimators_and_tells_booleans_from_numbers():
    from skdptune._dp_fit import configuration_key

    def same(a, b):
        return configuration_key(a) == configuration_key(b)

    assert same(logistic(C=1), logistic(C=1.0)) and same(logistic(C=1), logistic(C=np.float64(1)))
    assert not same(logistic(C=1.0), logistic(C=0.1))
    assert not same(logistic(fit_intercept=True), logistic(fit_intercept=1))
    # Accountants are replaced for every fit: not part of the candidate.
    assert same(logistic(accountant=BudgetAccountant()), logistic(accountant=BudgetAccountant()))
    assert same(Pipeline([("clf", logistic())]), Pipeline([("clf", logistic())]))
    assert not same(Pipeline([("clf", logistic())]), Pipeline([("lr", logistic())]))
    box = (np.zeros(4), np.ones(4))
    assert same(GaussianNB(bounds=box), GaussianNB(bounds=(np.zeros(4), np.ones(4).tolist())))
    assert not same(GaussianNB(bounds=box), GaussianNB(bounds=(np.zeros(4), np.full(4, 2.0))))


def test_after_a_decline_the_attributes_say_that_nothing_was_selected(binary_data):
    # Before: best_params_ showed the estimator's own setting as if it had been selected,
    # and no attribute said otherwise.
    X, y = binary_data
    with pytest.warns(SelectionDeclinedWarning) as caught:
        declined = search(n_partitions="auto").fit(X, y)
    (warning,) = [w for w in caught if w.category is SelectionDeclinedWarning]
    # Item 5: it points at the public page, not at a private module.
    assert "docs/tune_or_release.rst" in str(warning.message)
    assert "_default_policy" not in str(warning.message) and warning.filename == __file__
    assert declined.selected_ is False
    assert declined.privacy_report_["declined"]
    assert not declined.privacy_report_["single_candidate"]
    assert declined.best_params_ == {"C": 1.0} and math.isnan(declined.best_score_)
    selected = search(selection_share=0.25).fit(X, y)
    assert selected.selected_ is True and not selected.privacy_report_["declined"]


def test_best_score_is_named_a_partition_score_wherever_it_is_shown(binary_data, capsys):
    X, y = binary_data
    fitted = search(selection_share=0.25, verbose=1).fit(X, y)
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "best_score_=" in line]
    assert "(a partition score: DP estimate of the mean score of fits on 1/10 of the " in line
    assert "not the released model's test score" in line
    report = fitted.privacy_report_
    (estimate,) = [c for c in report["charges"] if c["release"] == "best_score_ estimate"]
    for text in (estimate["mechanism"], report["score_mechanism"]):
        assert "partition score" in text and "not the released model's test score" in text


def test_a_default_the_gate_refuses_says_it_was_added_and_how_to_fix_it(binary_data):
    # Before: the gate's refusal named "param_grid candidate {'data_norm': None}", a
    # candidate the grid does not hold, and refused a grid whose every candidate declares
    # data_norm. The default is not completed from the grid (a guess the margin would favour).
    X, y = binary_data
    given = LogisticRegression(classes=[0, 1])  # data_norm=None: not releasable as given
    grid = {"data_norm": [1.0, 2.0]}
    unfitted = search(given, grid)
    with pytest.raises(ValueError) as refused:
        unfitted.fit(X, y)
    message = str(refused.value)
    for said in ("the default candidate {'data_norm': None}: default='estimator' added the "
                 "estimator as given", "Set data_norm on the estimator",
                 "default={'data_norm': 1.0}", "default=None",
                 "data_norm=None would be read from the private data"):
        assert said in message
    assert unfitted.accountant.total() == (0, 0)
    # Each fix works.
    for fixed in (search(given, grid, default=None),
                  search(given, grid, default={"data_norm": 2.0}),
                  search(LogisticRegression(classes=[0, 1], data_norm=1.0), grid)):
        assert fixed.fit(X, y).privacy_spent_.epsilon == pytest.approx(1.0)


def test_the_forecast_says_what_epsilon_the_refit_receives(binary_data):
    # Item 8: the baseline a user compares the search with is the estimator fitted alone with
    # what the refit receives out of the total, now public before the fit.
    X, y = binary_data
    unfitted = search(epsilon=4.0, selection_share=0.25)
    expected = 4.0 * 0.75 * (1 - 0.05)  # the selection's share, then the check's
    assert unfitted.forecast(X).refit_epsilon == pytest.approx(expected)
    fitted = unfitted.fit(X, y)
    assert fitted.privacy_report_["refit_epsilon"] == pytest.approx(expected)
    assert fitted.best_estimator_.epsilon == pytest.approx(expected)
    # Without a selection: declined, all but the check's share (issue 39); a single
    # candidate, all of the total.
    assert search(n_partitions="auto").forecast(X).refit_epsilon == pytest.approx(0.95)
    assert search(grid={"C": [1.0]}).forecast(X).refit_epsilon == 1.0
    # Spent as declared with selection_epsilon: no share of a total to state.
    assert search(epsilon=None, selection_epsilon=0.5).forecast(X).refit_epsilon is None
