"""diffprivlib models whose calibration falls short under replace-one adjacency are charged what
they really spend (skdptune._models.tree.tree_charge, naive_bayes.gaussian_nb_charge): the
search reserves and reports the factor times the epsilon they record, and a total budget is
split so that what they really spend adds up to it.

The statistical test uses a false-failure rate of at most 1e-3 (two one-sided Clopper-Pearson
bounds of 5e-4 each); its seed is fixed, so a run is reproducible either way.
"""

import math

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import DecisionTreeClassifier as DPDecisionTreeClassifier
from diffprivlib.models import StandardScaler
from skdptune.naive_bayes import GaussianNB
from scipy import stats
from sklearn.pipeline import make_pipeline

from skdptune import PrivateGridSearchCV, PrivateRandomizedSearchCV
from skdptune.ensemble import RandomForestClassifier
from skdptune._gate import split_budget
from skdptune._models.naive_bayes import gaussian_nb_charge
from skdptune._models.tree import tree_charge
from skdptune.tree import DecisionTreeClassifier

CLASSES = [0, 1]  # the labels of the data, declared

ALPHA = 1e-3


def _predicts_one(tree_class, n_ones, n_fits, rng):
    """How many of ``n_fits`` trees (epsilon 1) on 11 equal rows, ``n_ones`` labelled 1,
    label the rows' leaf 1."""
    X = np.full((11, 1), 0.5)
    y = np.r_[np.ones(n_ones), np.zeros(11 - n_ones)].astype(int)
    return sum(
        int(tree_class(epsilon=1.0, bounds=([0.0], [1.0]), classes=[0, 1], random_state=rng,
                       accountant=BudgetAccountant())
            .fit(X, y).predict(X[:1])[0])
        for _ in range(n_fits))


@pytest.mark.parametrize("tree_class", [DPDecisionTreeClassifier, DecisionTreeClassifier],
                         ids=["diffprivlib", "skdptune"])
def test_a_tree_spends_more_than_epsilon_when_one_label_is_replaced(tree_class):
    # Replacing one record's label (6 ones to 5): the leaf's label distribution moves by more
    # than exp(epsilon) = 2.72 (theory: 2 exp(1) - 1 = 4.4), within exp(2 epsilon) = 7.39.
    # skdptune's tree fits diffprivlib's law, so it is charged the same factor.
    rng, n = np.random.RandomState(0), 700
    high = stats.binomtest(_predicts_one(tree_class, 6, n, rng), n).proportion_ci(1 - ALPHA)
    low = stats.binomtest(_predicts_one(tree_class, 5, n, rng), n).proportion_ci(1 - ALPHA)
    assert high.low / low.high > math.exp(1.0)
    assert tree_charge(tree_class()) == 2.0


@pytest.mark.parametrize("bounds, factor", [
    ((0.0, 1.0), 2.0),  # M / w = 1
    ((-1.0, 1.0), 5 / 3),  # M / w = 1/2, its least
    ((4.0, 8.0), 8 / 3),  # bounds excluding 0: M / w = 2
    (([0.0, -1.0], [1.0, 1.0]), (4 + 2 * 0.75) / 3),  # the mean over features
])
def test_gaussian_nb_charge_follows_the_declared_bounds(bounds, factor):
    assert gaussian_nb_charge(GaussianNB(classes=CLASSES, bounds=bounds)) == pytest.approx(factor)


def _data():
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, (300, 2))
    return X, (X[:, 0] > 0.5).astype(int)


@pytest.mark.parametrize("estimator, factor", [
    (GaussianNB(classes=CLASSES, bounds=(0.0, 1.0)), 2.0),
    (DecisionTreeClassifier(bounds=(0.0, 1.0), classes=[0, 1]), 2.0),
    (RandomForestClassifier(bounds=(0.0, 1.0), classes=[0, 1], n_estimators=3), 2.0),
])
def test_a_model_s_own_epsilon_is_charged_times_its_factor(estimator, factor):
    X, y = _data()
    search = PrivateGridSearchCV(estimator.set_params(epsilon=0.5), {"random_state": [None]},
                                 selection_epsilon=1.0, n_partitions=5, random_state=0,
                                 accountant=BudgetAccountant()).fit(X, y)
    assert search.best_estimator_.epsilon == 0.5  # the model as written
    assert search.privacy_report_["refit_epsilon"] == pytest.approx(0.5 * factor)
    # One candidate: nothing to select, so nothing charged for a selection.
    assert search.privacy_spent_[0] == pytest.approx(0.5 * factor)


@pytest.mark.parametrize("search_class", [PrivateGridSearchCV, PrivateRandomizedSearchCV])
def test_a_total_budget_is_split_by_what_each_step_really_spends(search_class):
    X, y = _data()
    pipeline = make_pipeline(StandardScaler(bounds=(0.0, 1.0), epsilon=1.0),
                             GaussianNB(classes=CLASSES, bounds=(-5.0, 5.0), epsilon=1.0))
    share = split_budget(pipeline, 3.0)
    # Proportions kept (1 : 1), and really spent: 1 * s + (5/3) * s = 3.
    assert share["standardscaler__epsilon"] == share["gaussiannb__epsilon"] == pytest.approx(
        3.0 / (1 + 5 / 3))
    grid = {"gaussiannb__var_smoothing": [1e-9, 1e-3]}
    accountant = BudgetAccountant()
    search = search_class(pipeline, grid, epsilon=3.0, random_state=0,
                          accountant=accountant).fit(X, y)
    assert search.privacy_spent_[0] == pytest.approx(3.0)
    assert accountant.total()[0] == pytest.approx(3.0)


def test_the_grid_search_computes_each_candidates_charge_once(monkeypatch):
    # Each DP step's charge (its budget times its entry's factor) is computed once per
    # candidate and fit: the gate's figure, from which the total's split is then scaled. Before:
    # once by the gate and again by split_budget.
    from skdptune import _gate as gate

    X, y = _data()
    pipeline = make_pipeline(StandardScaler(bounds=(0.0, 1.0), epsilon=1.0),
                             GaussianNB(classes=CLASSES, bounds=(-5.0, 5.0), epsilon=1.0))
    computed, factor = [], gate.Rule.factor

    def counting(rule, step):
        computed.append(type(step).__name__)
        return factor(rule, step)

    monkeypatch.setattr(gate.Rule, "factor", counting)
    search = PrivateGridSearchCV(pipeline, {"gaussiannb__var_smoothing": [1e-9, 1e-3]},
                                 epsilon=3.0, random_state=0,
                                 accountant=BudgetAccountant()).fit(X, y)
    assert sorted(computed) == ["GaussianNB", "GaussianNB", "StandardScaler", "StandardScaler"]
    assert search.privacy_spent_[0] == pytest.approx(3.0)
