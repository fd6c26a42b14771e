"""skdptune.linear_model.Ridge: diffprivlib's LinearRegression with a public ridge penalty.

What is checked: every release is calibrated to the range of its monomial over the declared
boxes and the budget adds up to ``epsilon`` (where diffprivlib 0.6.6's LinearRegression gets
both wrong), rows are clipped; its coefficients are the minimiser of a public function of the
noisy releases (post-processing, the privacy argument);
``noise_scale`` is the scale of diffprivlib's noise on ``X'X`` and the penalty adds
``noise_alpha`` of it; it spends ``epsilon`` once; its parameters follow scikit-learn's
conventions; the refit gate admits it with declared bounds and points scikit-learn's ``Ridge``
to it; a search over ``alpha`` refits it and charges ``epsilon``.
"""

import pickle

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import minimize
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.mechanisms import Laplace, LaplaceFolded
from diffprivlib.tools import mean
from diffprivlib.utils import BudgetError
from sklearn.base import clone
from sklearn.linear_model import Ridge as SkRidge
from sklearn.utils._param_validation import InvalidParameterError

from skdptune import PrivateGridSearchCV
from skdptune.exceptions import GateError
from skdptune._models.linear_model import (NOISE_ALPHA, Ridge, laplace_releases, noise_scale,
                                           noisy_means, noisy_objective, objective,
                                           penalised_minimiser)

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


def _recording(log):
    """Stand-ins for ``noisy_means`` and ``laplace_releases`` that record every release (a
    call of ``noisy_means``, with the epsilon of all its columns; each value of the Laplace
    releases) with its epsilon and sensitivity, and release the value unchanged."""
    def noisy_means(means, n, bounds, epsilon, random_state):
        log.append(("mean", epsilon * len(means), None))
        return np.clip(means, *bounds)

    def laplace_releases(values, sensitivities, folded, epsilon, random_state):
        log.extend(("folded" if fold else "laplace", epsilon, float(sensitivity))
                   for sensitivity, fold in zip(sensitivities, folded))
        return values

    return {"noisy_means": noisy_means, "laplace_releases": laplace_releases}


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("targets", [1, 2])
def test_every_release_is_calibrated_and_the_budget_adds_up_to_epsilon(monkeypatch,
                                                                      fit_intercept, targets):
    # diffprivlib 0.6.6's LinearRegression calibrates each diagonal sum(x_j**2) to the lower
    # bound alone (0 here: no noise at all), spends epsilon / (d + 1) on X's means and again
    # on y's, and divides the objective's epsilon by 1 + t d + d (d + 1) / 2 releases for t
    # targets. Ridge must do none of this.
    from skdptune._models import linear_model

    log = []
    for name, stand_in in _recording(log).items():
        monkeypatch.setattr(linear_model, name, stand_in)
    X, y = _data(n_features=3)
    y = y if targets == 1 else np.c_[y, 2 - y]
    _ridge(epsilon=0.8, fit_intercept=fit_intercept, bounds_y=(-2.0, 4.0)).fit(X, y)
    d, t = 3, targets
    releases = t + t * d + d * (d + 1) // 2
    mechanisms = [entry for entry in log if entry[0] != "mean"]
    assert len(mechanisms) == releases
    centring = sum(epsilon for kind, epsilon, _ in log if kind == "mean")
    objective = sum(epsilon for _, epsilon, _ in mechanisms)
    assert centring == pytest.approx(0.8 / (d + 1) if fit_intercept else 0.0)
    assert centring + objective == pytest.approx(0.8)
    if not fit_intercept:  # the boxes are the declared ones: X in [0, 1], y in [-2, 4]
        folded = sorted(sensitivity for kind, _, sensitivity in mechanisms if kind == "folded")
        assert folded == [1.0] * d + [16.0] * t  # sum(x_j**2) and sum(y**2)
        laplace = sorted(sensitivity for kind, _, sensitivity in mechanisms if kind == "laplace")
        assert laplace == [1.0] * (d * (d - 1) // 2) + [6.0] * (t * d)  # x_i x_j and x_j y
    else:  # centred boxes contain 0: a square's range is max(|lower|, |upper|)**2 > 0
        assert all(sensitivity > 0 for kind, _, sensitivity in mechanisms)


def test_rows_outside_the_declared_bounds_are_clipped_with_or_without_an_intercept():
    X, y = _data(seed=3)
    wild_X, wild_y = X.copy(), y.copy()
    wild_X[:10] *= 50.0
    wild_y[:10] = 1e4
    for fit_intercept in (True, False):
        fits = [_ridge(epsilon=1.0, fit_intercept=fit_intercept, random_state=4).fit(*data)
                for data in ((wild_X, wild_y), (np.clip(wild_X, *BOUNDS_X),
                                                np.clip(wild_y, *BOUNDS_Y)))]
        np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)


@pytest.mark.parametrize("alpha, noise_alpha", [(10.0, 0.0), (1000.0, 0.0), (0.0, 0.01),
                                                (10.0, 0.01)])
def test_the_coefficients_are_the_penalised_minimiser_of_the_noisy_releases(alpha, noise_alpha):
    # Without an intercept the noisy releases are the monomial coefficients alone: the
    # coefficients must be (Q + alpha_ I)^-1 b, a public function of them, whatever the noise,
    # with alpha_ = alpha + noise_alpha * noise_scale (public constants).
    X, y = _data(seed=1)
    scale = noise_scale(0.5, (np.zeros(4), np.ones(4)), fit_intercept=False)
    for seed in range(20):
        model = _ridge(alpha=alpha, noise_alpha=noise_alpha, epsilon=0.5, fit_intercept=False,
                       random_state=seed)
        model.fit(X, y)
        assert model.noise_scale_ == scale
        assert model.alpha_ == alpha + noise_alpha * scale
        _, b, Q = model._obj_coefs
        penalised = Q + model.alpha_ * np.eye(4)
        if np.linalg.eigvalsh(penalised)[0] <= 0:
            continue  # unbounded below: BFGS's answer, as in diffprivlib
        expected = np.linalg.solve(penalised, b[:, 0])
        np.testing.assert_allclose(model.coef_, expected, rtol=1e-3,
                                   atol=1e-5 / np.linalg.eigvalsh(penalised)[0])


def test_a_penalty_tames_an_indefinite_noisy_objective():
    # At epsilon 0.05 on 500 records the noisy X'X is indefinite in most draws and
    # diffprivlib's coefficients run off; a penalty above the noise keeps them near the data's.
    X, y = _data(seed=2)
    def largest(**params):
        return [np.abs(_ridge(epsilon=0.05, random_state=s, **params).fit(X, y).coef_).max()
                for s in range(10)]

    free = largest(alpha=0.0, noise_alpha=0.0)
    assert np.median(free) > 10
    assert max(largest(alpha=1e5, noise_alpha=0.0)) < 2
    assert max(largest()) < 2  # the default: NOISE_ALPHA times the noise's scale


@pytest.mark.parametrize("n_features", [20, 40])
def test_noise_scale_is_the_scale_of_the_noise_on_the_gram_matrix(n_features):
    # Data in [0, 1] (every monomial's range 1): the largest eigenvalue of the noise that
    # noisy_objective adds to X'X, over 30 draws, against noise_scale at the same objective
    # epsilon (a Ridge with an intercept gives the objective epsilon * d / (d + 1)). The
    # semicircle law puts the mean ratio near 1 for large d (deterministic seeds).
    rng = np.random.default_rng(0)
    X = rng.random((500, n_features))
    y = X.sum(axis=1)
    bounds = (np.zeros(n_features), np.ones(n_features))
    largest = []
    for seed in range(30):
        _, _, Q = noisy_objective(X, y[:, None], bounds, (np.array([0.0]),
                                                          np.array([float(n_features)])),
                                  epsilon=1.0, random_state=np.random.RandomState(seed))
        largest.append(np.abs(np.linalg.eigvalsh(Q - X.T @ X)).max())
    scale = noise_scale((n_features + 1) / n_features, bounds, fit_intercept=True)
    assert 0.8 < np.mean(largest) / scale < 1.2
    # Its closed form for unit widths, and its 1 / epsilon law (the partition fits' rescaled
    # epsilon divides it by the ratio, as the rule for alpha divides alpha).
    d = n_features
    local = 1.0 / (1 + d + d * (d + 1) / 2)
    assert scale == pytest.approx(2 * np.sqrt(2 * d) / local)
    assert noise_scale(8.0, bounds) == pytest.approx(noise_scale(1.0, bounds) / 8)
    # Without an intercept the data are not centred: a feature's reach is max(|lower|, |upper|).
    assert noise_scale(1.0, (np.full(d, -2.0), np.ones(d)), fit_intercept=False) == (
        pytest.approx(4 * noise_scale(1.0, bounds, fit_intercept=False)))
    # Each more target adds d releases to the split of epsilon.
    assert noise_scale(1.0, bounds, n_targets=2) == pytest.approx(
        scale * (2 + 2 * d + d * (d + 1) / 2) / (1 + d + d * (d + 1) / 2) * (d + 1) / d)


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


@pytest.mark.parametrize("name", ["alpha", "noise_alpha"])
@pytest.mark.parametrize("value", [-1.0, "1", None])
def test_a_bad_penalty_is_refused_naming_it(name, value):
    accountant = BudgetAccountant()
    with pytest.raises(InvalidParameterError, match=f"'{name}'"):
        _ridge(accountant=accountant, **{name: value}).fit(*_data())
    assert accountant.spent_budget == []


def test_scikit_learn_conventions():
    model = _ridge(alpha=3.0, epsilon=0.5)
    assert model.get_params()["alpha"] == 3.0
    assert model.get_params()["noise_alpha"] == NOISE_ALPHA
    assert clone(model).set_params(alpha=7.0, noise_alpha=0.5).noise_alpha == 0.5
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


def _noisy_objective_fresh_mechanisms(X, y, bounds_X, bounds_y, epsilon, random_state):
    """The functional mechanism as written before its mechanisms were shared: a fresh
    diffprivlib mechanism per monomial, each sensitivity computed on its own."""
    (x_low, x_high), (y_low, y_high) = bounds_X, bounds_y
    d, t = X.shape[1], y.shape[1]
    local = epsilon / (t + t * d + d * (d + 1) / 2)

    def noisy(value, sensitivity, square):
        if square:
            return LaplaceFolded(epsilon=local, sensitivity=sensitivity, lower=0,
                                 upper=float("inf"), random_state=random_state).randomise(value)
        return Laplace(epsilon=local, sensitivity=sensitivity,
                       random_state=random_state).randomise(value)

    def corner(a_low, a_high, b_low, b_high):
        corners = [a_low * b_low, a_low * b_high, a_high * b_low, a_high * b_high]
        return max(corners) - min(corners)

    c = np.array([noisy(y[:, k] @ y[:, k], max(abs(y_low[k]), abs(y_high[k])) ** 2, True)
                  for k in range(t)])
    b = np.array([[noisy(X[:, j] @ y[:, k], corner(y_low[k], y_high[k], x_low[j], x_high[j]),
                         False) for k in range(t)] for j in range(d)])
    Q = np.zeros((d, d))
    for i in range(d):
        Q[i, i] = noisy(X[:, i] @ X[:, i], max(abs(x_low[i]), abs(x_high[i])) ** 2, True)
        for j in range(i + 1, d):
            Q[i, j] = Q[j, i] = noisy(X[:, i] @ X[:, j],
                                      corner(x_low[i], x_high[i], x_low[j], x_high[j]), False)
    return c, b, Q


def test_the_centring_means_are_diffprivlibs_tools_mean_draw_for_draw():
    # noisy_means draws diffprivlib.tools.mean's mechanisms (LaplaceTruncated per column,
    # sensitivity (upper - lower) / n) at once: under a seed, the same releases, to rounding,
    # as tools.mean with epsilon * d split over the d columns; some of them truncated.
    rng = np.random.default_rng(5)
    values = np.clip(rng.normal(0.5, 0.4, (40, 6)), 0.0, 1.0)
    bounds = (np.zeros(6), np.r_[1.0, 1.0, 1.0, 2.0, 2.0, 4.0])
    ours = noisy_means(values.mean(axis=0), 40, bounds, 0.05, np.random.RandomState(11))
    theirs = mean(values, axis=0, bounds=bounds, epsilon=0.05 * 6,
                  random_state=np.random.RandomState(11), accountant=BudgetAccountant())
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    assert np.any(ours == bounds[0]) or np.any(ours == bounds[1])  # the clip is exercised
    other = noisy_means(values.mean(axis=0), 40, bounds, 0.05, np.random.RandomState(12))
    assert not np.allclose(other, ours)


def test_the_fit_solves_directly_where_bfgs_would_converge_and_calls_bfgs_elsewhere():
    # penalised_minimiser: (Q + alpha I)^-1 b where that is positive definite and well
    # conditioned, which diffprivlib's BFGS call reaches to its tolerance (gradient 1e-5);
    # elsewhere the BFGS call itself. Noisy objectives of a small epsilon give both kinds.
    X, y = _data(60, n_features=3, seed=2)
    bounds = (np.zeros(3), np.ones(3))
    kinds = set()
    for seed in range(40):
        c, b, Q = noisy_objective(X, y[:, None], bounds, (np.array([-2.0]), np.array([4.0])),
                                  0.3, np.random.RandomState(seed))
        ours = penalised_minimiser(c[0], b[:, 0], Q, 2.0)
        with np.errstate(all="ignore"):
            bfgs = minimize(objective(c[0], b[:, 0], Q, 2.0), np.zeros(3), jac=True).x
        eigenvalues = np.linalg.eigvalsh(Q + 2.0 * np.eye(3))
        if eigenvalues[0] > 0:
            kinds.add("direct")
            np.testing.assert_allclose(ours, bfgs, rtol=1e-4, atol=1e-4 / eigenvalues[0])
        else:
            kinds.add("bfgs")
            np.testing.assert_allclose(ours, bfgs, rtol=1e-12)
    assert kinds == {"direct", "bfgs"}


def test_without_a_seed_the_releases_have_diffprivlibs_laws():
    # random_state=None reads os.urandom at once instead of SystemRandom draw by draw: the
    # laws must be diffprivlib's Laplace (b = sensitivity / epsilon = 2) and, folded, its
    # absolute value. Kolmogorov-Smirnov on 20,000 releases each, two tests at 1e-4: the
    # false-failure rate is below 2e-4.
    n = 20_000
    values, sensitivities = np.zeros(n), np.full(n, 1.0)
    plain = laplace_releases(values, sensitivities, np.zeros(n, bool), 0.5, None)
    folded = laplace_releases(values, sensitivities, np.ones(n, bool), 0.5, None)
    assert stats.kstest(plain, stats.laplace(scale=2.0).cdf).pvalue > 1e-4
    assert stats.kstest(folded, stats.expon(scale=2.0).cdf).pvalue > 1e-4
    # A scale 25 % off fails the same test on these draws (the CDFs differ by 0.04).
    assert stats.kstest(plain, stats.laplace(scale=2.5).cdf).pvalue < 1e-4


def test_shared_mechanisms_release_what_a_fresh_mechanism_per_monomial_releases():
    # Repeated sensitivities (one-hot columns in [0, 1]) beside distinct ones, two targets:
    # the same seeded draws in the same order give the same releases (to rounding), so
    # sharing one mechanism per sensitivity changes no released model.
    rng = np.random.default_rng(3)
    X = np.hstack([rng.uniform(-3, 3, (200, 2)), rng.integers(0, 2, (200, 4)).astype(float)])
    y = np.column_stack([X.sum(axis=1), rng.uniform(-1, 2, 200)])
    bounds_X = (np.r_[-3.0, -2.0, np.zeros(4)], np.r_[3.0, 4.0, np.ones(4)])
    bounds_y = (np.array([-6.0, -1.0]), np.array([10.0, 2.0]))
    shared = noisy_objective(X, y, bounds_X, bounds_y, 2.0, np.random.RandomState(7))
    fresh = _noisy_objective_fresh_mechanisms(X, y, bounds_X, bounds_y, 2.0,
                                              np.random.RandomState(7))
    for ours, reference in zip(shared, fresh):
        np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=1e-12)
    # A different seed gives different releases: the comparison is not vacuous.
    other = noisy_objective(X, y, bounds_X, bounds_y, 2.0, np.random.RandomState(8))
    assert not np.allclose(other[2], shared[2])
