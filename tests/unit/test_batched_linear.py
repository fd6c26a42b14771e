"""Batched partition fits of diffprivlib's LinearRegression and skdptune's Ridge
(batched.linear_regression).

What is checked: which candidates take the batched path (the search's default bounded R² with
declared bounds) and which fall back; that the noisy statistics (offsets and
monomial coefficients) have the law of diffprivlib's ``_preprocess_data`` and
``_construct_regression_obj``; that the direct solve lands where diffprivlib's BFGS does; that
a partition's utility depends on its own records and stream only (replace one record: only
its partition moves); and that the batched utilities have the law of diffprivlib's own fits
scored by ``BoundedR2Scorer`` on the same partitions.

Statistical tests use alpha = 1e-3 per comparison; a test that makes several comparisons
states their count, and its false-failure rate is at most alpha times that count
(Bonferroni). Seeds are fixed, so a run is reproducible either way.
"""

import warnings

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import LinearRegression
from diffprivlib.models.linear_regression import _construct_regression_obj, _preprocess_data
from scipy import stats
from scipy.optimize import minimize

from conftest import batched_groups, batched_values, count_paths
from skdptune import PrivateGridSearchCV
from skdptune._batched import engine, linear_regression
from skdptune._models.linear_model import Ridge, noise_scale
from skdptune._utility import BoundedR2Scorer, BoundedSquaredErrorScorer, make_utility

ALPHA = 1e-3
BOUNDS_X, BOUNDS_Y = (-1.0, 2.0), (-3.0, 4.0)


def _data(n, n_features=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.2, 2.2, (n, n_features))  # a few values outside bounds_X
    y = X @ np.linspace(1.0, -0.5, n_features) + 0.5 + rng.normal(0, 0.5, n)
    return X, y


def _estimator(cls=LinearRegression, **params):
    return cls(bounds_X=BOUNDS_X, bounds_y=BOUNDS_Y, **params)


def _values(candidates, X, y, splits, entropy=0, estimator=None):
    """Per-partition utilities of the batched path, ``(n_candidates, n_partitions)``."""
    estimator = estimator if estimator is not None else _estimator()
    _, utility = make_utility(estimator, None, None)
    (family, ids, plans, data), = batched_groups(estimator, candidates, X, y, utility)
    assert family is linear_regression and ids == list(range(len(candidates)))
    return batched_values(family, ids, plans, data, splits, utility, entropy, 1, error_score=np.nan)


# --- Which path ------------------------------------------------------------------------------


@pytest.fixture
def paths(monkeypatch):
    return count_paths(monkeypatch, linear_regression)


def _search(estimator, grid, **params):
    return PrivateGridSearchCV(estimator, grid, n_partitions=4, accountant=BudgetAccountant(),
                               random_state=0, refit=False, **{"default": None, **params})


def test_a_linear_regression_grid_scored_by_default_takes_the_batched_path(paths):
    X, y = _data(400)
    grid = {"epsilon": [0.5, 5.0], "fit_intercept": [True, False]}
    _search(_estimator(), grid).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 4 * 4}


def test_a_ridge_grid_takes_the_batched_path(paths):
    X, y = _data(400)
    _search(_estimator(Ridge), {"alpha": [0.0, 10.0, 1e3], "noise_alpha": [0.0, 1.0]}).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 6 * 4}


def test_the_plan_carries_a_ridge_penalty_and_diffprivlibs_model_has_none():
    assert linear_regression.plan(_estimator(Ridge, alpha=5.0, noise_alpha=0.0), 3).alpha == 5.0
    # noise_alpha in units of the noise's scale at the plan's (the partition's) epsilon.
    scale = noise_scale(0.5, (np.full(3, BOUNDS_X[0]), np.full(3, BOUNDS_X[1])))
    ridge = _estimator(Ridge, alpha=5.0, noise_alpha=2.0, epsilon=0.5)
    assert linear_regression.plan(ridge, 3).alpha == pytest.approx(5.0 + 2.0 * scale)
    assert linear_regression.plan(_estimator(), 3).alpha == 0.0
    for name in ("alpha", "noise_alpha"):
        for value in (-1.0, float("inf"), True, None):
            assert linear_regression.plan(_estimator(Ridge, **{name: value}), 3) is None


def test_after_a_dp_scaler_in_a_pipeline_it_is_batched_too(paths):
    from diffprivlib.models import StandardScaler
    from sklearn.pipeline import Pipeline
    X, y = _data(400)
    estimator = Pipeline([("scale", StandardScaler(bounds=BOUNDS_X)),
                          ("lr", LinearRegression(bounds_X=(-5.0, 5.0), bounds_y=BOUNDS_Y))])
    _search(estimator, {"lr__epsilon": [0.5, 5.0]}).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 2 * 4}


@pytest.mark.parametrize("scoring, path", [("r2", "batched"),
                                           ("neg_mean_squared_error", "per_fit")])
def test_other_scorings_fall_back(paths, scoring, path):
    # "r2" with bounds_y declared is the bounded R² (issue 33), which the family computes.
    X, y = _data(400)
    _search(_estimator(), {"epsilon": [0.5, 5.0]}, scoring=scoring,
            utility_range=(-10.0, 1.0)).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 0, path: 2 * 4}


def test_routing_needs_declared_bounds_and_the_default_score():
    _, default = make_utility(_estimator(), None, None)
    _, r2 = make_utility(_estimator(), "r2", (-1.0, 1.0))
    _, rescaled = make_utility(_estimator(), BoundedR2Scorer(), (-1.0, 1.0))
    _, squared_error = make_utility(_estimator(), BoundedSquaredErrorScorer(), None)
    candidates = [{}, {"bounds_X": None}, {"bounds_y": None}, {"epsilon": float("inf")},
                  {"bounds_y": (1.0, 1.0)}]
    assert engine.candidate_paths(_estimator(), candidates, default, 3) == (
        "batched", "per-fit", "per-fit", "per-fit", "per-fit")
    assert engine.candidate_paths(_estimator(), [{}], r2, 3) == ("batched",)  # bounded
    assert engine.candidate_paths(_estimator(), [{}], rescaled, 3) == ("batched",)
    assert engine.candidate_paths(_estimator(), [{}], squared_error, 3) == ("per-fit",)


def test_float_targets_reach_the_family_unencoded():
    X, y = _data(50)
    _, utility = make_utility(_estimator(), None, None)
    (_, _, _, data), = batched_groups(_estimator(), [{}], X, y, utility)
    np.testing.assert_array_equal(data.codes, y)


# --- The noisy statistics and the solver -----------------------------------------------------


def _statistics(plan, X, y, rng):
    """The family's noisy statistics of one partition, ``(X_offset, y_offset, c, b, Q)``."""
    stats = linear_regression.partition_statistics(plan, X, y, np.zeros(len(y), np.intp), 1,
                                                   [rng])
    return tuple(stat[0] for stat in stats)


def _solve(c, b, Q, alpha=0.0):
    """The family's solution on one partition."""
    return linear_regression.solve(np.array([c]), np.asarray(b)[None], np.asarray(Q)[None],
                                   alpha)[0]


def _diffprivlib_statistics(X, y, epsilon, fit_intercept, state):
    """What diffprivlib's fit computes before its solver, called as ``fit`` calls it."""
    d = X.shape[1]
    bounds_X = (np.full(d, BOUNDS_X[0]), np.full(d, BOUNDS_X[1]))
    bounds_y = (np.array([BOUNDS_Y[0]]), np.array([BOUNDS_Y[1]]))
    share = 1 / (d + 1) if fit_intercept else 0
    Xc, yc, X_offset, y_offset, _ = _preprocess_data(
        X, y, fit_intercept=fit_intercept, bounds_X=bounds_X, bounds_y=bounds_y,
        epsilon=epsilon * share, copy=True, random_state=state)
    shifted_X = (bounds_X[0] - X_offset, bounds_X[1] - X_offset)
    shifted_y = (bounds_y[0] - y_offset, bounds_y[1] - y_offset)
    _, (c, b, Q) = _construct_regression_obj(Xc, yc, shifted_X, shifted_y,
                                             epsilon=epsilon * (1 - share), alpha=0,
                                             random_state=state)
    return np.concatenate([np.atleast_1d(X_offset), np.atleast_1d(y_offset), c, b[:, 0],
                           Q[np.triu_indices(d)]])


def _our_statistics(X, y, epsilon, fit_intercept, rng):
    plan = linear_regression.plan(_estimator(epsilon=epsilon, fit_intercept=fit_intercept),
                                  X.shape[1])
    X_offset, y_offset, c, b, Q = _statistics(plan, X, y, rng)
    return np.concatenate([X_offset, [y_offset], [c], b, Q[np.triu_indices(X.shape[1])]])


@pytest.mark.parametrize("epsilon, fit_intercept", [(2.0, True), (20.0, False)])
def test_noisy_statistics_have_diffprivlibs_law(epsilon, fit_intercept):
    # Every statistic (2 features: 2 + 1 offsets, c, 2 of b, 3 of Q) compared by KS: 9
    # comparisons, false-failure rate 9e-3 per case (the offsets are constant zeros without
    # fit_intercept, compared exactly).
    X, y = _data(60, n_features=2, seed=3)
    state, rng = np.random.RandomState(7), np.random.default_rng(7)
    theirs = np.array([_diffprivlib_statistics(X, y, epsilon, fit_intercept, state)
                       for _ in range(1500)])
    ours = np.array([_our_statistics(X, y, epsilon, fit_intercept, rng) for _ in range(1500)])
    for column in range(ours.shape[1]):
        if np.ptp(theirs[:, column]) == 0:
            np.testing.assert_array_equal(ours[:, column], theirs[:, column])
        else:
            assert stats.ks_2samp(ours[:, column], theirs[:, column]).pvalue > ALPHA, column


def test_without_noise_the_statistics_are_the_clipped_centred_sums():
    # A wrong clip, centring or pairing of monomials fails this at any noise level.
    X, y = _data(40, n_features=3, seed=4)
    y[:2] = 10.0, -10.0  # outside bounds_y: clipped, as X's values outside bounds_X are
    plan = linear_regression.plan(_estimator(epsilon=1e12), 3)
    X_offset, y_offset, _, b, Q = _statistics(
        plan, X, y, np.random.default_rng(0))
    Xc, yc = np.clip(X, *BOUNDS_X), np.clip(y, *BOUNDS_Y)
    np.testing.assert_allclose(X_offset, Xc.mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(y_offset, yc.mean(), atol=1e-6)
    Xc, yc = Xc - X_offset, yc - y_offset
    np.testing.assert_allclose(b, Xc.T @ yc, atol=1e-4)
    np.testing.assert_allclose(Q, Xc.T @ Xc, atol=1e-4)


def test_the_direct_solve_lands_where_diffprivlibs_bfgs_does():
    X, y = _data(80, n_features=3, seed=5)
    plan = linear_regression.plan(_estimator(epsilon=5.0), 3)
    rng, direct = np.random.default_rng(1), 0
    for _ in range(200):
        _, _, c, b, Q = _statistics(plan, X, y, rng)
        eigenvalues = np.linalg.eigvalsh(Q)
        if not (eigenvalues[0] > 0
                and eigenvalues[-1] <= linear_regression.MAX_CONDITION * eigenvalues[0]):
            continue
        direct += 1

        def objective(omega):
            return (c - 2 * b @ omega + omega @ Q @ omega, -2 * b + 2 * Q @ omega)

        bfgs = minimize(objective, np.zeros(3), jac=True).x
        np.testing.assert_allclose(_solve(c, b, Q), bfgs,
                                   atol=1e-5 * np.sqrt(3) / eigenvalues[0] + 1e-9)
    assert direct >= 50


def test_on_diffprivlibs_own_noisy_objective_the_solution_is_diffprivlibs():
    # diffprivlib's noisy coefficients and objective, seeded: where its quadratic is not
    # positive definite (small epsilon makes that common) the solution is its BFGS result (to
    # 1e-9: the objective computes w'Qw as w.(Qw), diffprivlib with w w', so the two paths
    # differ by rounding); elsewhere the direct solve agrees with it to BFGS's tolerance.
    X, y = _data(40, n_features=3, seed=6)
    Xc, yc = np.clip(X, *BOUNDS_X), np.clip(y, *BOUNDS_Y)
    bounds_X = (np.full(3, BOUNDS_X[0]), np.full(3, BOUNDS_X[1]))
    bounds_y = (np.array([BOUNDS_Y[0]]), np.array([BOUNDS_Y[1]]))
    indefinite = 0
    for seed in range(60):
        objectives, (c, b, Q) = _construct_regression_obj(
            Xc, yc, bounds_X, bounds_y, epsilon=0.5, alpha=0, random_state=seed)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            theirs = minimize(objectives[0], np.zeros(3), jac=True).x
            ours = _solve(c[0], b[:, 0], Q)
        eigenvalues = np.linalg.eigvalsh(Q)
        if eigenvalues[0] <= 0:
            indefinite += 1
            np.testing.assert_allclose(ours, theirs, rtol=1e-9)
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-3,
                                       atol=1e-5 * np.sqrt(3) / eigenvalues[0])
    assert indefinite >= 5


def _noise_spread(plan, X, y, draws=4000, seed=0):
    """Standard deviations, over draws, of a plan's noisy X offsets and X'X diagonal."""
    rng = np.random.default_rng(seed)
    stats = [_statistics(plan, X, y, rng) for _ in range(draws)]
    offsets = np.array([stat[0] for stat in stats])
    diagonals = np.array([np.diag(stat[4]) for stat in stats])
    return offsets.std(axis=0), diagonals.std(axis=0)


def test_ridge_plans_have_ridges_calibration_and_diffprivlibs_keep_diffprivlibs():
    # Partition fits emulate the refit's law: a Ridge candidate's diagonal of X'X gets noise of
    # sensitivity max(|lower|, |upper|)**2 (diffprivlib's model: lower**2, here 0, so none),
    # and each of its d + 1 centring means epsilon * s / (d + 1) (diffprivlib's: X's means
    # epsilon * s / d each, y's epsilon * s). Laplace(b) has standard deviation sqrt(2) b;
    # 4,000 draws put the sample's within 5 % (a false-failure rate far below 1e-6).
    rng = np.random.default_rng(1)
    d, n = 3, 400
    X, y = rng.uniform(0.3, 0.7, (n, d)), rng.uniform(0.0, 1.0, n)
    box = (np.zeros(d), np.ones(d))
    ridge = linear_regression.plan(Ridge(bounds_X=box, bounds_y=(0.0, 1.0), epsilon=2.0,
                                         fit_intercept=False, noise_alpha=0.0, alpha=0.0), d)
    theirs = linear_regression.plan(LinearRegression(bounds_X=box, bounds_y=(0.0, 1.0),
                                                     epsilon=2.0, fit_intercept=False), d)
    assert ridge.calibrated and not theirs.calibrated
    local = 2.0 / (1 + d + d * (d + 1) / 2)
    _, diagonal = _noise_spread(ridge, X, y)
    np.testing.assert_allclose(diagonal, np.sqrt(2) / local, rtol=0.05)
    _, diagonal = _noise_spread(theirs, X, y)
    np.testing.assert_allclose(diagonal, 0.0, atol=1e-6)  # rounding only
    # Centring: with an intercept.
    share = 2.0 / (d + 1)
    for cls, per_mean in ((Ridge, share / (d + 1)), (LinearRegression, share / d)):
        extra = {"noise_alpha": 0.0, "alpha": 0.0} if cls is Ridge else {}
        plan = linear_regression.plan(cls(bounds_X=box, bounds_y=(0.0, 1.0), epsilon=2.0,
                                          **extra), d)
        offsets, _ = _noise_spread(plan, X, y)
        np.testing.assert_allclose(offsets, np.sqrt(2) / n / per_mean, rtol=0.05)


@pytest.mark.parametrize("alpha", [3.0, 30.0])
def test_with_a_penalty_the_solution_is_that_of_diffprivlibs_penalised_objective(alpha):
    # diffprivlib's _construct_regression_obj takes alpha (its LinearRegression passes 0;
    # skdptune's Ridge passes its own): the same comparison as above on that objective.
    X, y = _data(40, n_features=3, seed=6)
    Xc, yc = np.clip(X, *BOUNDS_X), np.clip(y, *BOUNDS_Y)
    bounds_X = (np.full(3, BOUNDS_X[0]), np.full(3, BOUNDS_X[1]))
    bounds_y = (np.array([BOUNDS_Y[0]]), np.array([BOUNDS_Y[1]]))
    indefinite = direct = 0
    for seed in range(60):
        objectives, (c, b, Q) = _construct_regression_obj(
            Xc, yc, bounds_X, bounds_y, epsilon=0.5, alpha=alpha, random_state=seed)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            theirs = minimize(objectives[0], np.zeros(3), jac=True).x
            ours = _solve(c[0], b[:, 0], Q, alpha)
        eigenvalues = np.linalg.eigvalsh(Q + alpha * np.eye(3))
        if eigenvalues[0] <= 0:
            indefinite += 1
            np.testing.assert_allclose(ours, theirs, rtol=1e-9)
        else:
            direct += 1
            np.testing.assert_allclose(ours, theirs, rtol=1e-3,
                                       atol=1e-5 * np.sqrt(3) / eigenvalues[0])
    assert indefinite >= 3 and direct >= 3


# --- Privacy: a partition's values are its own -----------------------------------------------


def _splits(n, k, validation_fraction=0.3, seed=1):
    from skdptune._partition import partition_labels, split_indices
    return split_indices(*partition_labels(n, k, validation_fraction, seed), k)


def test_partitions_taken_a_few_at_a_time_score_as_taken_all_at_once(monkeypatch):
    # partition_scores computes the statistics and solves of CHUNK_CELLS / d**2 partitions at
    # a time: one partition at a time must give every partition's utility unchanged (each is
    # a function of its own rows and stream), Ridge and diffprivlib's model, with and without
    # an intercept, some partitions going to BFGS (small epsilon).
    X, y = _data(600)
    splits = _splits(len(y), 12)
    candidates = [{"epsilon": 2.0}, {"epsilon": 50.0}, {"epsilon": 50.0, "fit_intercept": False}]
    for estimator in (_estimator(), _estimator(Ridge)):
        whole = _values(candidates, X, y, splits, estimator=estimator)
        monkeypatch.setattr(linear_regression, "CHUNK_CELLS", 1)
        one_by_one = _values(candidates, X, y, splits, estimator=estimator)
        monkeypatch.undo()
        np.testing.assert_array_equal(one_by_one, whole)
        assert np.isfinite(whole).all() and len(np.unique(whole)) > 12, whole


def test_replacing_one_record_moves_only_its_partition():
    X, y = _data(600)
    splits = _splits(len(y), 10)
    # Little noise, so that a moved record moves its partition's utility (a noisy fit can
    # leave it clipped at 0 either way).
    candidates = [{"epsilon": 50.0}, {"epsilon": 50.0, "fit_intercept": False}]
    before = _values(candidates, X, y, splits)
    moved = np.zeros(len(candidates), dtype=int)
    for p in range(10):
        row, rest = splits[p][0][0], np.arange(10) != p
        X2, y2 = X.copy(), y.copy()
        X2[row], y2[row] = 2.0 - X2[row], 4.0 - y2[row]
        after = _values(candidates, X2, y2, splits)
        np.testing.assert_array_equal(after[:, rest], before[:, rest])
        moved += after[:, p] != before[:, p]
    assert np.all(moved == 10)


# --- The law of the utilities ----------------------------------------------------------------


def _compare_utilities(n_train, epsilon, fit_intercept, repetitions, seed, n_features=3,
                       cls=LinearRegression, **extra):
    """KS p-value of the batched utilities against diffprivlib's own fits (or skdptune's
    ``Ridge``'s, which call diffprivlib's mechanisms) scored by ``BoundedR2Scorer``,
    the same partition fitted ``repetitions`` times by each."""
    X, y = _data(n_train + 200, n_features, seed=seed)
    split = (np.arange(n_train), np.arange(n_train, n_train + 200))
    candidate = {"epsilon": epsilon, "fit_intercept": fit_intercept, **extra}
    ours = _values([candidate], X, y, [split] * repetitions, entropy=seed,
                   estimator=_estimator(cls))[0]
    state = np.random.RandomState(seed)
    scorer = BoundedR2Scorer()
    theirs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repetitions):
            model = _estimator(cls, random_state=state, accountant=BudgetAccountant(),
                               **candidate)
            theirs.append(scorer(model.fit(X[split[0]], y[split[0]]), X[split[1]], y[split[1]]))
    _, utility = make_utility(_estimator(cls), None, None)  # the search's map of R² to [0, 1]
    theirs = utility.to_utility(np.array(theirs))
    return stats.ks_2samp(ours, theirs).pvalue, np.mean(ours), np.mean(theirs)


@pytest.mark.parametrize("epsilon, fit_intercept", [(12.5, True), (2.0, False)])
def test_partition_utilities_have_diffprivlibs_law(epsilon, fit_intercept):
    p_value, ours, theirs = _compare_utilities(60, epsilon, fit_intercept, 300, seed=5)
    assert p_value > ALPHA, (ours, theirs)


def test_ridge_partition_utilities_have_its_law():
    # A penalty that matters at this size and noise (about 30 in records, from alpha and from
    # noise_alpha of the noise's scale): the utilities' mean moves with it.
    p_value, ours, theirs = _compare_utilities(60, 2.0, True, 300, seed=8, cls=Ridge,
                                               alpha=15.0, noise_alpha=0.05)
    assert p_value > ALPHA, (ours, theirs)


@pytest.mark.slow_audit
@pytest.mark.parametrize("n_train, epsilon, fit_intercept, n_features", [
    (30, 1.0, True, 2), (60, 12.5, True, 3), (200, 50.0, True, 5), (100, 5.0, False, 3),
    (400, 125.0, False, 1),
])
def test_partition_utilities_have_diffprivlibs_law_audit(n_train, epsilon, fit_intercept,
                                                          n_features):
    p_value, ours, theirs = _compare_utilities(n_train, epsilon, fit_intercept, 1500, n_train,
                                               n_features)
    assert p_value > ALPHA, (ours, theirs)
