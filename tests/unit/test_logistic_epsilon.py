"""skdptune.linear_model.LogisticRegression on rows beyond data_norm (issue 39, item 3).

What is checked: predictions clip rows to ``data_norm`` as the fit does.
"""

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.validation import clip_to_norm
from scipy import stats
from sklearn.datasets import make_classification

from skdptune._linear_model import LogisticRegression


def _ladder_data():
    """2,500 training and 1,500 test rows, 5 features; a third of the rows are longer than
    ``data_norm = 1`` (clipped by the model)."""
    X, y = make_classification(n_samples=4000, n_features=5, n_informative=3, n_redundant=0,
                               flip_y=0.05, random_state=0)
    X = X / 3
    return X[:2500], y[:2500], X[2500:], y[2500:]


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
