"""skdptune.linear_model.LogisticRegression: diffprivlib's LogisticRegression fitted where its
calibration holds (rows in the unit ball, the intercept a penalised constant feature), the gate
entries that send diffprivlib's other configurations to it, and its batched partition fits.

What is checked: the model is exactly diffprivlib's fit on the mapped rows with the penalty of
skdptune's rule (same seed, same coefficients; its predictions on rows clipped as in the fit);
the gate refuses diffprivlib's class in a released fit (its classes_ come from the data),
naming its calibration's faults (an intercept, data_norm > 1) where it has them, and accepts
this class with declared classes; the batched plan is the inner fit's (diffprivlib's class
with the rule's ``C``), on the same mapped rows (same streams, same utilities); and the
batched utilities have the law of this class's own fits (KS test, alpha = 1e-3; seeds fixed,
so a run is reproducible either way).
"""

import warnings

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import LogisticRegression as DPLogisticRegression
from scipy import stats

from conftest import batched_groups, batched_values
from skdptune import PrivateGridSearchCV
from skdptune._batched import logistic_regression
from skdptune.exceptions import GateError
from skdptune._gate import check_release
from skdptune._models.linear_model import (NOISE_SHARE, LogisticRegression, logistic_features,
                                    logistic_unit_ball, objective_perturbation)
from skdptune._partition import partition_labels, split_indices
from skdptune._utility import make_utility

ALPHA = 1e-3


def _data(n, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    centres = np.random.default_rng(99).uniform(0, 1, (n_classes, 3))
    return np.clip(centres[y] + rng.normal(0, 0.3, (n, 3)), 0, 1), y


def _rule_C(epsilon, data_norm, fit_intercept, C, n_problems):
    """The ``C`` of the inner fit: ``C * scale**2``, or less where skdptune's rule raises the
    penalty to keep ``epsilon' >= NOISE_SHARE * epsilon`` per problem."""
    scale, inner_norm = logistic_unit_ball(data_norm, fit_intercept)
    _, extra = objective_perturbation(epsilon / n_problems, inner_norm, C * scale ** 2,
                                      NOISE_SHARE)
    return 1.0 / (1.0 / (C * scale ** 2) + float(extra))


@pytest.mark.parametrize("epsilon", [2.0, 60.0])  # the penalty raised; C kept
@pytest.mark.parametrize("n_classes, data_norm, fit_intercept", [
    (2, 2.0, True), (3, 2.0, True), (2, 3.0, False), (2, 0.5, False), (2, 0.5, True)])
def test_the_model_is_diffprivlibs_fit_on_rows_in_the_unit_ball(n_classes, data_norm,
                                                                fit_intercept, epsilon):
    X, y = _data(400, n_classes)
    X[0] *= 10  # a row beyond data_norm: clipped by both
    ours = LogisticRegression(epsilon=epsilon, data_norm=data_norm,
                              classes=list(range(n_classes)), C=0.7,
                              fit_intercept=fit_intercept, random_state=3,
                              accountant=BudgetAccountant()).fit(X, y)
    scale, inner_norm = logistic_unit_ball(data_norm, fit_intercept)
    assert inner_norm <= 1.0
    C = _rule_C(epsilon, data_norm, fit_intercept, 0.7, 1 if n_classes == 2 else n_classes)
    # Both of the rule's regimes are met: C kept at epsilon 60, raised at 2 with an
    # intercept (2 log(1 + C (data_norm**2 + 1) / 4) > 0.1 * 2).
    if epsilon == 60.0 or fit_intercept:
        assert (C < 0.7 * scale ** 2 * (1 - 1e-9)) == (epsilon == 2.0)
    inner = DPLogisticRegression(epsilon=epsilon, data_norm=inner_norm, C=C,
                                 fit_intercept=False, tol=ours.tol, max_iter=ours.max_iter,
                                 random_state=3, accountant=BudgetAccountant())
    inner.fit(logistic_features(X, data_norm, fit_intercept, clip=True), y)
    Z = logistic_features(X, data_norm, fit_intercept, clip=True)
    np.testing.assert_allclose(ours.decision_function(X), inner.decision_function(Z),
                               rtol=1e-10, atol=1e-12)
    assert ours.coef_.shape == (1 if n_classes == 2 else n_classes, 3)
    np.testing.assert_array_equal(ours.predict(X), inner.predict(Z))


def test_one_fit_records_epsilon_and_warm_start_is_refused():
    X, y = _data(200)
    accountant = BudgetAccountant()
    LogisticRegression(epsilon=0.7, data_norm=2.0, classes=[0, 1], accountant=accountant).fit(X, y)
    assert accountant.total()[0] == pytest.approx(0.7)
    with pytest.raises(ValueError, match="warm_start=True is not supported"):
        LogisticRegression(data_norm=2.0, classes=[0, 1], warm_start=True).fit(X, y)


@pytest.mark.parametrize("params, fault", [
    ({"fit_intercept": True, "data_norm": 1.0}, "; its intercept is not penalised"),
    ({"fit_intercept": True, "data_norm": 0.5}, "; its intercept is not penalised"),
    ({"fit_intercept": False, "data_norm": 2.0}, "; with data_norm=2.0 > 1"),
    ({"fit_intercept": False, "data_norm": 1.0}, r"\. Use"),
    ({"fit_intercept": False, "data_norm": 0.3}, r"\. Use"),
])
def test_the_gate_refuses_diffprivlibs_model_and_names_its_calibrations_faults(params, fault):
    # Before (issue 34, item 8): released where its calibration holds (no intercept,
    # data_norm <= 1); its classes_ come from the data, so never now.
    with pytest.raises(GateError, match=f"takes classes_ from the data.*\\){fault}.*"
                                        "skdptune.linear_model.LogisticRegression"):
        check_release(DPLogisticRegression(**params))
    assert check_release(LogisticRegression(classes=[0, 1], **params)) == (1.0, 0.0)


def test_a_refused_release_charges_nothing_and_selection_alone_runs(binary_data):
    X, y = binary_data
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(DPLogisticRegression(data_norm=2.0), {"C": [0.1, 1.0]},
                                 epsilon=1.0, accountant=accountant)
    with pytest.raises(GateError, match="intercept is not penalised"):
        search.fit(X, y)
    assert accountant.spent_budget == []
    search.set_params(refit=False, random_state=0).fit(X, y)
    assert search.best_params_["C"] in (0.1, 1.0)


def _values(estimator, candidates, X, y, splits, entropy):
    _, utility = make_utility(estimator, "accuracy", None)
    (family, ids, plans, data), = batched_groups(estimator, candidates, X, y, utility)
    assert family is logistic_regression
    return batched_values(family, ids, plans, data, splits, utility, entropy, 1)


def test_the_batched_plan_is_the_inner_fit_on_the_mapped_rows():
    X, y = _data(600, 3)
    splits = split_indices(*partition_labels(len(X), 5, 0.3, 1), 5)
    # The penalty raised (two, one and three problems), and C kept.
    candidates = [{"C": 0.5, "epsilon": 3.0}, {"C": 4.0, "epsilon": 1.0},
                  {"C": 0.5, "epsilon": 90.0}]
    ours = _values(LogisticRegression(data_norm=2.0), candidates, X, y, splits, entropy=7)
    scale, inner_norm = logistic_unit_ball(2.0, True)
    # Its problems: three classes, but the partitions with two present fit one; the rule's
    # C for each count. Every partition here holds all three.
    assert all(len(np.unique(y[train])) == 3 for train, _ in splits)
    inner = _values(DPLogisticRegression(data_norm=inner_norm, fit_intercept=False),
                    [{"C": _rule_C(c["epsilon"], 2.0, True, c["C"], 3),
                      "epsilon": c["epsilon"]} for c in candidates],
                    logistic_features(X, 2.0, True, clip=True), y, splits, entropy=7)
    np.testing.assert_array_equal(ours, inner)


def test_partition_utilities_have_the_law_of_its_own_fits():
    X, y = _data(480, 2, seed=5)
    split = (np.arange(80), np.arange(80, 480))
    candidate = {"epsilon": 3.0, "C": 2.0}
    ours = _values(LogisticRegression(data_norm=2.0), [candidate], X, y, [split] * 200,
                   entropy=5)[0]
    state = np.random.RandomState(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = [LogisticRegression(data_norm=2.0, random_state=state,
                                     accountant=BudgetAccountant(), **candidate)
                  .fit(X[split[0]], y[split[0]]).score(X[split[1]], y[split[1]])
                  for _ in range(200)]
    assert stats.ks_2samp(ours, theirs).pvalue > ALPHA, (ours.mean(), np.mean(theirs))
