"""``default=``: the untuned candidate the selection favours by a public margin."""

import math

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from skdptune.naive_bayes import GaussianNB
from skdptune.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from skdptune import PrivateGridSearchCV
from skdptune.selection import PermuteAndFlip, ReportNoisyMax

CLASSES = [0, 1]  # binary_data's labels, declared

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


def search(estimator=None, grid=GRID, **params):
    if estimator is None:
        estimator = LogisticRegression(classes=CLASSES, data_norm=2.0, C=1.0)
    return PrivateGridSearchCV(estimator, grid, epsilon=1.0, n_partitions=10,
                               accountant=BudgetAccountant(), random_state=0, **params)


@pytest.mark.parametrize("default, index", [
    ("estimator", 2), ({"C": 10.0}, 3), ({"C": 0.01}, 0), ({"C": 1}, 2),
])
def test_the_default_gets_the_auto_margin_before_the_selection(binary_data, recording,
                                                               default, index):
    X, y = binary_data
    fitted = search(default=default, selector=recording()).fit(X, y)
    (call,) = recording.calls
    # k = 10, the selector's epsilon is 0.25 * 0.9 (selection_share "auto" with a default,
    # score_share), m = 4.
    margin = 2 * (1 / 10) / 0.225 * math.log(4)
    np.testing.assert_allclose(call["offsets"], np.eye(4)[index] * margin)
    assert fitted.default_index_ == index
    assert fitted.default_margin_ == pytest.approx(margin)


def test_a_given_margin_and_pipeline_parameter_names(binary_data, recording):
    X, y = binary_data
    pipeline = Pipeline([("clf", LogisticRegression(classes=CLASSES, data_norm=2.0, C=0.1))])
    fitted = search(pipeline, {"clf__C": GRID["C"]}, default="estimator", default_margin=0.05,
                    selector=recording()).fit(X, y)
    np.testing.assert_allclose(recording.calls[0]["offsets"], [0, 0.05, 0, 0])
    assert fitted.default_index_ == 1


def test_a_list_of_grids_matches_the_default_by_its_keys(binary_data, recording):
    X, y = binary_data
    grid = [{"C": [0.1, 1.0]}, {"C": [1.0], "fit_intercept": [False]}]
    fitted = search(grid=grid, default={"C": 1.0, "fit_intercept": False},
                    selector=recording()).fit(X, y)
    assert fitted.default_index_ == 2


def test_without_a_default_nothing_changes(binary_data, recording):
    X, y = binary_data
    fitted = search(selector=recording()).fit(X, y)
    assert "offsets" not in recording.calls[0]
    assert fitted.default_index_ is None and fitted.default_margin_ == 0.0


def test_the_charge_is_the_same_with_and_without_a_default(binary_data):
    X, y = binary_data
    plain, favoured = search().fit(X, y), search(default="estimator").fit(X, y)
    assert favoured.privacy_spent_ == plain.privacy_spent_
    assert favoured.accountant.total() == plain.accountant.total()


def test_a_large_margin_keeps_the_default_whatever_the_utilities(binary_data):
    # Without a default these seeds select C=1 or C=0.01, never C=10. A margin of 1
    # (utilities lie in [0, 1]) leaves each other candidate's coin at most
    # exp(-epsilon_s * 1 / (2 / k)) = exp(-6.75) at k = 30: the default is kept, each seed
    # failing with probability below 3 * 0.0012.
    X, y = binary_data
    for seed in range(3):
        plain = search().set_params(random_state=seed, n_partitions=30).fit(X, y)
        favoured = search(default={"C": 10.0}, default_margin=1.0).set_params(
            random_state=seed, n_partitions=30).fit(X, y)
        assert plain.best_index_ != 3
        assert favoured.best_index_ == favoured.default_index_ == 3


def test_the_verbose_line_says_whether_the_default_was_kept(binary_data, capsys):
    X, y = binary_data
    fitted = search(default="estimator", verbose=1).fit(X, y)
    out = capsys.readouterr().out
    kept = "kept" if fitted.best_index_ == 2 else "moved off"
    assert f"({kept} the default, candidate 3, favoured by" in out


@pytest.mark.parametrize("params, match", [
    ({"default": {"C": 3.0}}, r"default=\{'C': 3.0\}: no candidate of param_grid has those "),
    ({"default": {"C": 1.0, "tol": 1e-4}}, "no candidate of param_grid"),
    ({"default": "estimator", "selector": "doubling"},
     r"needs a one-shot selector .*selector='doubling'"),
    ({"default_margin": 0.1}, "default_margin=0.1 has no effect without default"),
])
def test_bad_defaults_are_refused_before_the_data_and_the_charge(binary_data, params, match):
    X, y = binary_data
    unfitted = search(**params)
    with pytest.raises(ValueError, match=match):
        unfitted.fit(X, y)
    assert unfitted.accountant.total() == (0, 0)


def test_the_estimator_as_given_must_be_a_candidate(binary_data):
    X, y = binary_data
    with pytest.raises(ValueError, match="no candidate of param_grid has the estimator's own"):
        search(LogisticRegression(classes=CLASSES, data_norm=2.0, C=5.0),
               default="estimator").fit(X, y)


@pytest.mark.parametrize("params", [{"default": 5}, {"default": "first"},
                                    {"default_margin": -0.1}, {"default_margin": 2.0}])
def test_invalid_types_and_ranges_are_named(binary_data, params):
    X, y = binary_data
    name = next(iter(params))
    with pytest.raises(ValueError, match=f"The '{name}' parameter of PrivateGridSearchCV"):
        search(**params).fit(X, y)


def test_report_noisy_max_takes_its_own_lead(binary_data):
    X, y = binary_data
    fitted = search(GaussianNB(classes=CLASSES, bounds=(0, 1)),
                    {"var_smoothing": [1e-9, 1e-3, 1e-1]},
                    default={"var_smoothing": 1e-9}, selector=ReportNoisyMax()).fit(X, y)
    # The selector's epsilon: 0.25 * 0.9 (selection_share "auto" with a default, score_share).
    assert fitted.default_margin_ == pytest.approx(
        ReportNoisyMax().tail_lead(1 / 3, sensitivity=1 / 10, epsilon=0.225))


def test_bounds_of_arrays_match_by_value(binary_data, recording):
    # Grids over bounds hold tuples of arrays, which == cannot compare: matched by value.
    X, y = binary_data
    boxes = [(np.zeros(4), np.full(4, upper)) for upper in (0.5, 1.0)]
    fitted = search(GaussianNB(classes=CLASSES, bounds=(np.zeros(4), np.ones(4))),
                    {"bounds": boxes},
                    default={"bounds": (np.zeros(4), np.ones(4))}, selector=recording()).fit(X, y)
    assert fitted.default_index_ == 1
    fitted = search(GaussianNB(classes=CLASSES, bounds=(np.zeros(4), np.full(4, 0.5))),
                    {"bounds": boxes}, default="estimator", selector=recording()).fit(X, y)
    assert fitted.default_index_ == 0
