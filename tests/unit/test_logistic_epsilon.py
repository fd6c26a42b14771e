"""skdptune.linear_model.LogisticRegression at large epsilon (issue 39, item 3).

What is checked: at a huge epsilon the fit is scikit-learn's on the same clipped rows, within
a bound derived from the noise and the solver's tolerance; predictions clip rows as the fit
does.
"""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.validation import clip_to_norm
from scipy import stats
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression as SklearnLogisticRegression

from skdptune._linear_model import (LogisticRegression, logistic_features, logistic_unit_ball,
                                    objective_perturbation)


def _ladder_data():
    """2,500 training and 1,500 test rows, 5 features; a third of the rows are longer than
    ``data_norm = 1`` (clipped by the model)."""
    X, y = make_classification(n_samples=4000, n_features=5, n_informative=3, n_redundant=0,
                               flip_y=0.05, random_state=0)
    X = X / 3
    return X[:2500], y[:2500], X[2500:], y[2500:]


@pytest.mark.parametrize("data_norm, C, fit_intercept", [(1.0, 0.25, True), (0.5, 10.0, True),
                                                          (2.0, 1.0, False)])
def test_at_a_huge_epsilon_the_fit_is_sklearns_on_the_same_clipped_rows(data_norm, C,
                                                                        fit_intercept):
    X_train, y_train, X_test, _ = _ladder_data()
    epsilon = 1e6
    model = LogisticRegression(epsilon=epsilon, C=C, data_norm=data_norm, classes=[0, 1],
                               fit_intercept=fit_intercept, random_state=0,
                               accountant=BudgetAccountant()).fit(X_train, y_train)
    # The same objective without the noise: the mapped rows (clipped, the intercept's 1, over
    # `scale`), their intercept a penalised coefficient, C * scale**2.
    scale, inner_norm = logistic_unit_ball(data_norm, fit_intercept)
    Z = logistic_features(X_train, data_norm, fit_intercept, clip=True)
    reference = SklearnLogisticRegression(C=C * scale ** 2, fit_intercept=False, tol=1e-12,
                                          max_iter=100_000).fit(Z, y_train).coef_[0]
    ours = np.r_[model.coef_[0], model.intercept_[:1] if fit_intercept else []] * scale
    # On the sum of losses the objective is (1 / C')-strongly convex (C' = C * scale**2), so
    # its minimiser moves by at most C' times the gradient it is off by: the noise vector
    # (||b|| ~ Gamma(D, 2 / epsilon'), below 40 * 2 / epsilon' but with probability 1e-11)
    # and the solver's residual (each entry of the mean gradient below tol: n sqrt(D) tol on
    # the sum).
    n, dimension = Z.shape
    epsilon_p, _ = objective_perturbation(epsilon, inner_norm, C * scale ** 2)
    bound = C * scale ** 2 * (40 * 2 * inner_norm / epsilon_p
                              + n * np.sqrt(dimension) * model.tol)
    assert np.linalg.norm(ours - reference) <= bound
    # Rows whose margin exceeds that bound (rows in the unit ball) are predicted alike.
    Z_test = logistic_features(X_test, data_norm, fit_intercept, clip=True)
    margin = Z_test @ reference
    sure = np.abs(margin) > bound
    assert sure.mean() > 0.9  # not vacuous
    np.testing.assert_array_equal(model.predict(X_test)[sure], (margin > 0)[sure])


def test_predictions_clip_rows_as_the_fit_does():
    X_train, y_train, X_test, _ = _ladder_data()
    model = LogisticRegression(epsilon=5.0, C=1.0, data_norm=0.5, classes=[0, 1],
                               random_state=0, accountant=BudgetAccountant()).fit(X_train,
                                                                                  y_train)
    clipped = clip_to_norm(X_test, 0.5)
    long = np.linalg.norm(X_test, axis=1) > 0.5
    assert long.mean() > 0.5  # most rows are clipped
    expected = clipped @ model.coef_[0] + model.intercept_[0]
    np.testing.assert_allclose(model.decision_function(X_test), expected, rtol=1e-12,
                               atol=1e-12)
    # A long row scores as its clipped self however long it is (without clipping the
    # coefficients' part would grow 7 times and swamp the intercept).
    np.testing.assert_allclose(model.decision_function(X_test[long] * 7), expected[long],
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(model.predict(X_test), model.predict(clipped))
    np.testing.assert_allclose(model.predict_proba(X_test)[:, 1], stats.logistic.cdf(expected),
                               rtol=1e-10)
