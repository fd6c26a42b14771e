"""skdptune.linear_model.Ridge: diffprivlib's LinearRegression with a public ridge penalty.

What is checked: with ``alpha=0`` it is diffprivlib's model draw for draw (so the glue that
passes ``alpha`` on is diffprivlib's fit); with ``alpha > 0`` its coefficients are the
minimiser of a public function of diffprivlib's noisy releases (post-processing, the privacy
argument); it spends ``epsilon`` once; its parameters follow scikit-learn's conventions; the
refit gate admits it with declared bounds and points scikit-learn's ``Ridge`` to it; a search
over ``alpha`` refits it and charges ``epsilon``.
"""

import pickle

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import LinearRegression
from diffprivlib.utils import BudgetError
from sklearn.base import clone
from sklearn.linear_model import Ridge as SkRidge
from sklearn.utils._param_validation import InvalidParameterError

from skdptune import PrivateGridSearchCV
from skdptune.exceptions import GateError
from skdptune.linear_model import Ridge

BOUNDS_X, BOUNDS_Y = (0.0, 1.0), (-2.0, 4.0)


def _data(n=500, n_features=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, n_features))
    y = X @ np.linspace(1.0, -1.0, n_features) + 1.0 + rng.normal(0, 0.1, n)
    return X, y


def _ridge(**params):
    params = {"bounds_X": BOUNDS_X, "bounds_y": BOUNDS_Y, "accountant": BudgetAccountant(),
              **params}
    return Ridge(**params)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("targets", [1, 2])
def test_without_a_penalty_it_is_diffprivlibs_fit_draw_for_draw(fit_intercept, targets):
    X, y = _data()
    y = y if targets == 1 else np.c_[y, 2 - y]
    params = dict(epsilon=2.0, bounds_X=BOUNDS_X, bounds_y=BOUNDS_Y, random_state=3,
                  fit_intercept=fit_intercept)
    theirs = LinearRegression(accountant=BudgetAccountant(), **params).fit(X, y)
    ours = Ridge(alpha=0.0, accountant=BudgetAccountant(), **params).fit(X, y)
    np.testing.assert_array_equal(ours.coef_, theirs.coef_)
    np.testing.assert_array_equal(ours.intercept_, theirs.intercept_)


@pytest.mark.parametrize("alpha", [10.0, 1000.0])
def test_the_coefficients_are_the_penalised_minimiser_of_the_noisy_releases(alpha):
    # Without an intercept the noisy releases are the monomial coefficients alone: the
    # coefficients must be (Q + alpha I)^-1 b, a public function of them, whatever the noise.
    X, y = _data(seed=1)
    for seed in range(20):
        model = _ridge(alpha=alpha, epsilon=0.5, fit_intercept=False, random_state=seed)
        model.fit(X, y)
        _, b, Q = model._obj_coefs
        penalised = Q + alpha * np.eye(4)
        if np.linalg.eigvalsh(penalised)[0] <= 0:
            continue  # unbounded below: BFGS's answer, as in diffprivlib
        expected = np.linalg.solve(penalised, b[:, 0])
        np.testing.assert_allclose(model.coef_, expected, rtol=1e-3,
                                   atol=1e-5 / np.linalg.eigvalsh(penalised)[0])


def test_a_penalty_tames_an_indefinite_noisy_objective():
    # At epsilon 0.05 on 500 records the noisy X'X is indefinite in most draws and
    # diffprivlib's coefficients run off; a penalty above the noise keeps them near the data's.
    X, y = _data(seed=2)
    free = [np.abs(_ridge(alpha=0.0, epsilon=0.05, random_state=s).fit(X, y).coef_).max()
            for s in range(10)]
    tamed = [np.abs(_ridge(alpha=1e5, epsilon=0.05, random_state=s).fit(X, y).coef_).max()
             for s in range(10)]
    assert np.median(free) > 10 and max(tamed) < 2


def test_it_spends_epsilon_once_and_checks_before_fitting():
    X, y = _data()
    accountant = BudgetAccountant()
    _ridge(alpha=5.0, epsilon=0.7, accountant=accountant).fit(X, y)
    assert accountant.spent_budget == [(0.7, 0)]
    with pytest.raises(BudgetError):
        _ridge(alpha=5.0, epsilon=2.0, accountant=BudgetAccountant(epsilon=1.0)).fit(X, y)


@pytest.mark.parametrize("missing", ["bounds_X", "bounds_y"])
def test_missing_bounds_are_refused_not_read_from_the_data(missing):
    X, y = _data()
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match=f"{missing}=None"):
        _ridge(accountant=accountant, **{missing: None}).fit(X, y)
    assert accountant.spent_budget == []


@pytest.mark.parametrize("alpha", [-1.0, "1", None])
def test_a_bad_alpha_is_refused_naming_it(alpha):
    with pytest.raises(InvalidParameterError, match="'alpha'"):
        _ridge(alpha=alpha).fit(*_data())


def test_scikit_learn_conventions():
    model = _ridge(alpha=3.0, epsilon=0.5)
    assert model.get_params()["alpha"] == 3.0
    assert clone(model).set_params(alpha=7.0).alpha == 7.0
    fitted = model.fit(*_data())
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.coef_, fitted.coef_)
    assert fitted.bounds_X == BOUNDS_X  # stored unchanged (diffprivlib overwrites its own)


def test_a_search_over_alpha_refits_it_and_charges_epsilon():
    X, y = _data(2000)
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(_ridge(epsilon=1.0), {"alpha": [1.0, 100.0, 1e4]},
                                 epsilon=2.0, n_partitions=8, accountant=accountant,
                                 random_state=0).fit(X, y)
    assert isinstance(search.best_estimator_, Ridge)
    assert search.best_estimator_.alpha in (1.0, 100.0, 1e4)
    assert search.privacy_spent_[0] == pytest.approx(2.0)
    assert accountant.total()[0] == pytest.approx(2.0)


def test_the_gate_needs_declared_bounds_and_points_scikit_learns_ridge_here():
    X, y = _data()
    with pytest.raises(GateError, match="bounds_y"):
        PrivateGridSearchCV(_ridge(bounds_y=None), {"alpha": [1.0]}, epsilon=1.0,
                            accountant=BudgetAccountant()).fit(X, y)
    with pytest.raises(GateError, match=r"skdptune\.linear_model\.Ridge"):
        PrivateGridSearchCV(SkRidge(), {"alpha": [1.0]}, epsilon=1.0, scoring="r2",
                            utility_range=(-1.0, 1.0), accountant=BudgetAccountant()).fit(X, y)
