"""skdptune._base: the life cycle both searches share (issue 16): validate and plan (a frozen
Plan), check the budget, the search's strategy, release."""

from dataclasses import FrozenInstanceError

import pytest
from diffprivlib.accountant import BudgetAccountant
from skdptune.naive_bayes import GaussianNB
from diffprivlib.utils import BudgetError

from skdptune import PrivateGridSearchCV, PrivateRandomizedSearchCV
from skdptune._base import BasePrivateSearch, Plan
from skdptune._models.naive_bayes import gaussian_nb_charge

CLASSES = [0, 1]  # binary_data's labels, declared

BOUNDS = (0.0, 1.0)  # binary_data lies in [0, 1]^4 (tests/conftest.py)
# A fit of GaussianNB is charged this many times the epsilon it records (2 for BOUNDS).
GNB_CHARGE = gaussian_nb_charge(GaussianNB(classes=CLASSES, bounds=BOUNDS))


def grid(accountant):
    return PrivateGridSearchCV(GaussianNB(classes=CLASSES, bounds=BOUNDS),
                               {"var_smoothing": [1e-9, 1e-3]},
                               selection_epsilon=1.0, n_partitions=5, accountant=accountant,
                               random_state=0)


def randomized(accountant):
    # Each trial's fit is charged GNB_CHARGE * epsilon: exactly trial_epsilon=1.0.
    return PrivateRandomizedSearchCV(GaussianNB(classes=CLASSES, bounds=BOUNDS,
                                                epsilon=1.0 / GNB_CHARGE),
                                     {"var_smoothing": [1e-9]},
                                     trial_epsilon=1.0, n_iter=2.0, distribution="geometric",
                                     accountant=accountant, random_state=0)


class RecordingAccountant(BudgetAccountant):
    """Records the search's checks and charges (diffprivlib's spend checks first, itself)."""

    def __init__(self, calls, **kwargs):
        super().__init__(**kwargs)
        self.calls, self.spending = calls, False

    def check(self, epsilon, delta):
        if not self.spending:
            self.calls.append("check")
        return super().check(epsilon, delta)

    def spend(self, epsilon, delta):
        self.calls.append("charge")
        self.spending = True
        try:
            return super().spend(epsilon, delta)
        finally:
            self.spending = False


def _record(monkeypatch, cls, name, calls):
    original = getattr(cls, name)

    def recorded(self, *args):
        result = original(self, *args)
        calls.append((name, result))
        return result

    monkeypatch.setattr(cls, name, recorded)


@pytest.mark.parametrize("make", [grid, randomized])
def test_fit_runs_the_one_life_cycle_of_the_base_class(binary_data, make, monkeypatch):
    X, y = binary_data
    calls = []
    search = make(RecordingAccountant(calls))
    for name in ("_plan", "_run_search", "_release"):
        _record(monkeypatch, type(search), name, calls)
    search.fit(X, y)
    steps = [call if isinstance(call, str) else call[0] for call in calls]
    # Plan, check, the strategy (which charges as its protocol says: the grid its selection,
    # then its refit; the randomized search one entry), then release.
    charges = ["charge", "charge"] if make is grid else ["charge"]
    assert steps == ["_plan", "check"] + charges + ["_run_search", "_release"]
    plan = calls[0][1]
    assert isinstance(plan, Plan) and type(plan) is not Plan
    with pytest.raises(FrozenInstanceError):
        plan.a_priori_cost = (0.0, 0.0)
    # The strategy's report is what is released.
    assert search.privacy_report_ is calls[-2][1]
    assert tuple(search.privacy_spent_) == (search.privacy_report_["total_epsilon"],
                                            search.privacy_report_["total_delta"])
    assert search.fit.__doc__ != BasePrivateSearch._fit.__doc__  # each search's own docs


@pytest.mark.parametrize("make", [grid, randomized])
def test_the_budget_is_checked_before_the_strategy_runs(binary_data, make, monkeypatch):
    X, y = binary_data
    calls = []
    search = make(RecordingAccountant(calls, epsilon=0.5))
    _record(monkeypatch, type(search), "_run_search", calls)
    with pytest.raises(BudgetError):
        search.fit(X, y)
    assert calls == ["check"]  # no strategy, no charge
    assert not [name for name in vars(search) if name.endswith("_")]


@pytest.mark.parametrize("make, explicit", [(grid, "selection_epsilon"),
                                            (randomized, "trial_epsilon")])
def test_both_budgets_are_refused_in_one_wording_before_the_data(make, explicit, binary_data):
    # epsilon (the total) or the search's explicit budget, not both; refused before the
    # accountant is asked.
    calls = []
    search = make(RecordingAccountant(calls)).set_params(epsilon=2.0)
    message = (rf"^epsilon=2.0 and {explicit}=1.0 were both given; give epsilon \(.+\) or "
               rf"{explicit} \(.+\), not both\.$")
    with pytest.raises(ValueError, match=message):
        search.fit(*binary_data)
    assert calls == []


@pytest.mark.parametrize("make", [grid, randomized])
def test_released_attributes_are_stored_alike(make, binary_data):
    # Both searches release through BasePrivateSearch._store_released: the same attributes,
    # cv_results_ with the params and their masked arrays, nothing per trial or partition.
    X, y = binary_data
    search = make(BudgetAccountant()).fit(X, y)
    assert search.best_params_ == search.cv_results_["params"][search.best_index_]
    assert list(search.cv_results_["param_var_smoothing"]) == [
        params["var_smoothing"] for params in search.cv_results_["params"]]
    assert search.scorer_ is not None
    assert 0.0 <= search.best_score_ <= 1.0 and search.best_score_std_ > 0.0
