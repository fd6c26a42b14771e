"""Batched partition fits of diffprivlib's LogisticRegression (batched.logistic_regression).

What is checked: which candidates take the batched path and which fall back; that the
perturbed objective is diffprivlib's (given diffprivlib's own noise vector, the emulation
lands on the optimum diffprivlib's L-BFGS converges to, and where diffprivlib stops at its
``tol`` the predictions still agree); that the noise vector has the law of diffprivlib's
``Vector`` mechanism (its norm, its direction, its extra ridge); that a partition's utility
depends on its own records and stream only (replace one record: only its partition moves);
that a partition whose real fit raises scores ``error_score``; and that the batched utilities
have the law of diffprivlib's own fits on the same partitions, binary and 3-class, in the
parameter regimes that partition scaling produces (``epsilon`` and ``C`` times
``k / (1 - validation_fraction)``, 12.5 for 10 partitions and the default 0.2). For
skdptune's ``LogisticRegression`` with declared classes: its optimum given its own noise, one
problem per declared class on partitions that lack some, its utilities' law, and the rare-class
pair of issue 34, item 8.

Statistical tests use alpha = 1e-3 per comparison; a test that makes several comparisons
states their count, and its false-failure rate is at most alpha times that count
(Bonferroni). Seeds are fixed, so a run is reproducible either way.
"""

import warnings

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.mechanisms import Vector
from diffprivlib.models import LogisticRegression
from scipy import stats
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Normalizer

from conftest import batched_groups, batched_values, count_paths
from skdptune import PrivateGridSearchCV, _evaluate as evaluate
from skdptune._batched import engine, logistic_regression
from skdptune.linear_model import LogisticRegression as CalibratedLogisticRegression
from skdptune._models.linear_model import logistic_features, logistic_unit_ball
from skdptune._utility import make_utility

ALPHA = 1e-3
RATIO = 12.5  # partition scaling with 10 partitions and validation_fraction=0.2


def _data(n, n_classes=2, n_features=4, seed=0, spread=1.0):
    """Gaussian classes around fixed centres (the same centres for every seed)."""
    centres = np.random.default_rng(1234).normal(size=(n_classes, n_features)) * spread
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    return centres[y] + rng.normal(size=(n, n_features)), y


def _splits(n, k, validation_fraction=0.3, seed=1):
    from skdptune._partition import partition_labels, split_indices
    return split_indices(*partition_labels(n, k, validation_fraction, seed), k)


def _values(candidates, X, y, splits, entropy=0, estimator=None, error_score="raise",
            n_jobs=1):
    """Per-partition utilities of the batched path, ``(n_candidates, n_partitions)``."""
    estimator = estimator if estimator is not None else LogisticRegression(data_norm=3.0)
    _, utility = make_utility(estimator, "accuracy", None)
    (family, ids, plans, data), = batched_groups(estimator, candidates, X, y, utility)
    assert family is logistic_regression and ids == list(range(len(candidates)))
    return batched_values(family, ids, plans, data, splits, utility, entropy, n_jobs, error_score=error_score)


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning on a stopped-short fit
        return estimator.fit(X, y)


# --- Which path ------------------------------------------------------------------------------


@pytest.fixture
def paths(monkeypatch):
    """Counts the (candidate, partition) fits that reach each path."""
    return count_paths(monkeypatch, logistic_regression)


def _search(estimator, grid):
    return PrivateGridSearchCV(estimator, grid, n_partitions=4, accountant=BudgetAccountant(),
                               random_state=0, refit=False, default=None)


@pytest.mark.parametrize("in_pipeline", [False, True])
def test_a_logistic_regression_grid_takes_the_batched_path(binary_data, paths, in_pipeline):
    X, y = binary_data
    estimator = LogisticRegression(data_norm=2.0)
    grid = {"C": [0.1, 1.0], "epsilon": [0.5, 2.0], "fit_intercept": [True, False]}
    if in_pipeline:
        estimator = Pipeline([("normalize", Normalizer()), ("lr", estimator)])
        grid = {f"lr__{name}": values for name, values in grid.items()}
    _search(estimator, grid).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 8 * 4}  # 8 candidates, 4 partitions


@pytest.mark.parametrize("params", [{"warm_start": True}], ids=["warm_start"])
def test_what_the_emulation_does_not_reproduce_falls_back(binary_data, paths, params):
    X, y = binary_data
    grid = {name: [value] for name, value in params.items()}
    _search(LogisticRegression(data_norm=2.0), {**grid, "C": [1.0, 2.0]}).fit(X, y)
    assert paths == {"per_fit": 2 * 4, "batched": 0}


@pytest.mark.parametrize("params", [{"max_iter": 20}, {"tol": 1e-2}], ids=["max_iter", "tol"])
def test_a_solver_stopped_short_takes_the_batched_path(binary_data, paths, params):
    # diffprivlib's L-BFGS-B may stop far from the optimum: every problem is then solved by
    # the batched emulation of that solver.
    X, y = binary_data
    grid = {name: [value] for name, value in params.items()}
    _search(LogisticRegression(data_norm=2.0), {**grid, "C": [1.0, 2.0]}).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 2 * 4}


@pytest.mark.parametrize("params", [
    {"data_norm": None}, {"epsilon": float("inf")}, {"C": -1.0}, {"max_iter": 0},
    {"tol": 0.0}, {"fit_intercept": "yes"},
])
def test_plan_refuses_parameters_it_does_not_reproduce(params):
    estimator = LogisticRegression(data_norm=2.0).set_params(**params)
    assert logistic_regression.plan(estimator, 4) is None
    assert logistic_regression.plan(LogisticRegression(data_norm=2.0), 4) is not None
    assert logistic_regression.plan(LogisticRegression(data_norm=2.0), 0) is None


# --- The objective and its noise -------------------------------------------------------------


class _Replay:
    """A partition's stream that hands the emulation diffprivlib's own draws for a fit with
    ``random_state=seed``: per one-vs-rest problem, ``Vector.randomise`` draws a ``(D, 4)``
    standard normal array and four ``Gamma(D / 4, scale)``; their row sums (halved) are the
    direction, and the four gammas, over their scale, a ``Gamma(D)`` variate."""

    def __init__(self, seed, n_problems, dimension, scale):
        state = np.random.RandomState(seed)
        self.normals, self.gammas = [], []
        for _ in range(n_problems):
            self.normals.append(state.standard_normal((dimension, 4)).sum(axis=1) / 2)
            self.gammas.append(state.gamma(dimension / 4, scale, 4).sum() / scale)

    def standard_normal(self, shape):
        return np.reshape(self.normals, shape)

    def gamma(self, shape, scale, size):
        return np.asarray(self.gammas)


@pytest.mark.parametrize("n_classes, fit_intercept, epsilon, C, data_norm", [
    (2, True, 1.0 * RATIO, 1.0 * RATIO, 3.0),
    (2, False, 1.0, 1.0, 3.0),
    (3, True, 1.0 * RATIO, 1.0 * RATIO, 3.0),
    (3, True, 0.1 * RATIO, 4.0 * RATIO, 5.0),  # epsilon' <= 0: diffprivlib's extra ridge
    (2, True, 0.2, 0.5, 1.0),  # rows clipped to data_norm
])
def test_with_diffprivlibs_noise_the_optimum_is_diffprivlibs(n_classes, fit_intercept, epsilon,
                                                             C, data_norm):
    n_features = 5
    X, y = _data(120, n_classes, n_features, seed=n_classes)
    X_val, y_val = _data(2000, n_classes, n_features, seed=10 + n_classes)
    n_problems = 1 if n_classes == 2 else n_classes
    scale, _ = logistic_regression.noise_parameters(epsilon / n_problems, data_norm, C, len(y),
                                                    fit_intercept)
    problems = logistic_regression._Problems(y, np.zeros(len(y), int), 1, n_classes)
    for seed in range(10):
        def emulation(tol):
            candidate = logistic_regression.LogisticRegressionPlan(
                epsilon, data_norm, C, fit_intercept, tol, 100)
            stream = _Replay(seed, n_problems, n_features + fit_intercept, float(scale))
            w = logistic_regression.fit_partitions(candidate, X, y, np.zeros(len(y), int), 1,
                                                   n_classes, [stream])
            return w[:, 0], logistic_regression._predict(
                w, problems, X_val, np.zeros(len(y_val), int), fit_intercept)

        def diffprivlib_fit(tol, max_iter):
            return _fit(LogisticRegression(
                epsilon=epsilon, C=C, data_norm=data_norm, fit_intercept=fit_intercept,
                tol=tol, max_iter=max_iter, random_state=seed, accountant=BudgetAccountant()),
                X, y)

        # Solved to its optimum, diffprivlib's fit is the emulation's to L-BFGS's rounding:
        # the same objective, the same perturbation.
        w, ours = emulation(1e-9)
        tight = diffprivlib_fit(1e-9, 1000)
        theirs = np.hstack([tight.coef_, tight.intercept_[:, None]]) if fit_intercept \
            else tight.coef_
        np.testing.assert_allclose(w, theirs, atol=1e-5 * max(1.0, np.abs(theirs).max()))
        np.testing.assert_array_equal(tight.predict(X_val), ours)
        # With its defaults it stops once the gradient is below tol: where that matters the
        # emulation runs its solver, elsewhere the optimum's predictions are its own but for
        # rare rows near the boundary.
        _, ours = emulation(1e-4)
        default = diffprivlib_fit(1e-4, 100)
        assert np.all(default.n_iter_ < 100)
        assert np.mean(default.predict(X_val) == ours) >= 0.995


@pytest.mark.parametrize("n_classes, fit_intercept, epsilon, C, tol, max_iter", [
    (2, True, 1.0 * RATIO, 1.0 * RATIO, 1e-4, 5),
    (3, True, 1.0 * RATIO, 1.0 * RATIO, 1e-4, 8),
    (3, False, 0.1 * RATIO, 4.0 * RATIO, 1e-4, 3),  # epsilon' <= 0: the extra ridge
    (2, True, 1.0 * RATIO, 1.0 * RATIO, 1e-2, 100),
    (3, True, 5.0, 10.0, 1e-4, 10),  # huge noise: some problems without a minimum
])
def test_stopped_short_the_coefficients_are_diffprivlibs(n_classes, fit_intercept, epsilon, C,
                                                         tol, max_iter):
    # A small max_iter or a loose tol: diffprivlib's L-BFGS-B stops far from the optimum, and
    # every problem is solved by the emulation of that solver: its coefficients, to rounding.
    n_features, data_norm = 5, 3.0
    X, y = _data(90, n_classes, n_features, seed=n_classes)
    X_val, _ = _data(2000, n_classes, n_features, seed=10 + n_classes)
    n_problems = 1 if n_classes == 2 else n_classes
    scale, _ = logistic_regression.noise_parameters(epsilon / n_problems, data_norm, C, len(y),
                                                    fit_intercept)
    problems = logistic_regression._Problems(y, np.zeros(len(y), int), 1, n_classes)
    candidate = logistic_regression.LogisticRegressionPlan(epsilon, data_norm, C, fit_intercept,
                                                           tol, max_iter)
    stopped = 0
    for seed in range(10):
        stream = _Replay(seed, n_problems, n_features + fit_intercept, float(scale))
        w = logistic_regression.fit_partitions(candidate, X, y, np.zeros(len(y), int), 1,
                                               n_classes, [stream])
        theirs = _fit(LogisticRegression(
            epsilon=epsilon, C=C, data_norm=data_norm, fit_intercept=fit_intercept, tol=tol,
            max_iter=max_iter, random_state=seed, accountant=BudgetAccountant()), X, y)
        coefficients = np.hstack([theirs.coef_, theirs.intercept_[:, None]]) \
            if fit_intercept else theirs.coef_
        np.testing.assert_allclose(w[:, 0], coefficients,
                                   rtol=1e-6, atol=1e-6 * np.abs(coefficients).max())
        ours = logistic_regression._predict(w, problems, X_val, np.zeros(len(X_val), int),
                                            fit_intercept)
        np.testing.assert_array_equal(theirs.predict(X_val), ours)
        if max_iter < 100:
            stopped += np.any(theirs.n_iter_ >= max_iter)
        else:  # the loose tol: it stops before where tol=1e-4 would
            default = _fit(clone(theirs).set_params(tol=1e-4), X, y)
            stopped += np.all(theirs.n_iter_ < default.n_iter_)
    assert stopped >= 8  # most fits were cut short (by max_iter, or by the loose tol)


@pytest.mark.parametrize("n_classes, n, epsilon, C", [(2, 62, 5.0, 10.0), (3, 90, 7.0, 2.0)])
def test_without_an_optimum_the_predictions_are_diffprivlibs(n_classes, n, epsilon, C):
    # Noise on the intercept beyond a class's count: the objective decreases without bound
    # along the intercept, and diffprivlib's L-BFGS ends with a huge intercept (a score of
    # constant sign). The emulation detects it from the partition's counts and its own noise:
    # an infinite intercept, or, where several such problems race in one partition,
    # diffprivlib's solver. The other problems of this regime (huge noise, weak
    # regularisation) have flat optima that diffprivlib stops short of where the intercept
    # saturates: its solver again (MAX_REACH). Either way, diffprivlib's predictions.
    n_features, data_norm = 4, 3.0
    X, y = _data(n, n_classes, n_features, seed=3)
    X_val, y_val = _data(500, n_classes, n_features, seed=4)
    candidate = logistic_regression.LogisticRegressionPlan(epsilon, data_norm, C, True)
    n_problems = 1 if n_classes == 2 else n_classes
    scale, _ = logistic_regression.noise_parameters(epsilon / n_problems, data_norm, C,
                                                    len(y), True)
    problems = logistic_regression._Problems(y, np.zeros(len(y), int), 1, n_classes)
    ran_off = 0
    for seed in range(30):
        stream = _Replay(seed, n_problems, n_features + 1, float(scale))
        w = logistic_regression.fit_partitions(candidate, X, y, np.zeros(len(y), int), 1,
                                               n_classes, [stream])
        ours = logistic_regression._predict(w, problems, X_val, np.zeros(len(y_val), int),
                                            True)
        theirs = _fit(LogisticRegression(epsilon=epsilon, C=C, data_norm=data_norm,
                                         random_state=seed, accountant=BudgetAccountant()),
                      X, y)
        ran_off += np.any(np.abs(theirs.intercept_) > 1e6)
        np.testing.assert_array_equal(theirs.predict(X_val), ours)
    assert 5 <= ran_off <= 25  # both kinds of fits were met


@pytest.mark.parametrize("epsilon, C, data_norm, n, fit_intercept", [
    (2.0, 1.0, 1.0, 50, True),       # epsilon' > 0
    (1.25, 12.5, 3.0, 80, True),     # epsilon' <= 0: epsilon / 2 and the extra ridge
    (40.0, 0.3, 2.0, 200, False),
])
def test_noise_vector_has_the_vector_mechanisms_law(epsilon, C, data_norm, n, fit_intercept):
    dimension, draws = 6 + fit_intercept, 4000
    norm = np.sqrt(data_norm ** 2 + 1) if fit_intercept else data_norm
    mechanism = Vector(epsilon=epsilon, function_sensitivity=0.25, data_sensitivity=norm,
                       dimension=dimension, alpha=1.0 / C, n=n,
                       random_state=np.random.RandomState(0))

    def zero_loss(w):
        return 0.0, np.zeros(dimension)

    theirs = []
    for _ in range(draws):
        perturbed = mechanism.randomise(zero_loss)
        # The gradient at 0 is b / n; at e_0 it gains delta * e_0.
        theirs.append(perturbed(np.zeros(dimension))[1] * n)
    unit = np.eye(dimension)[0]
    delta_theirs = perturbed(unit)[1][0] - theirs[-1][0] / n
    theirs = np.array(theirs)

    scale, delta = logistic_regression.noise_parameters(epsilon, data_norm, C, n, fit_intercept)
    assert delta == pytest.approx(delta_theirs, rel=1e-9, abs=1e-15)
    normals, gammas = logistic_regression.noise_draws(np.random.default_rng(1), draws,
                                                      dimension)
    ours = logistic_regression.noise_vectors(normals, gammas, np.full(draws, scale))
    # Two comparisons (the norm; the direction, as its cosine with a fixed axis, whose law
    # characterises a rotation-invariant direction): false-failure rate 2e-3.
    assert stats.ks_2samp(np.linalg.norm(ours, axis=1),
                          np.linalg.norm(theirs, axis=1)).pvalue > ALPHA
    cosine = lambda v: v[:, 0] / np.linalg.norm(v, axis=1)  # noqa: E731
    assert stats.ks_2samp(cosine(ours), cosine(theirs)).pvalue > ALPHA


# --- Privacy: each partition its own ---------------------------------------------------------


def _coefficients(candidate, X, y, splits, entropy=0):
    """The batched path's coefficients on every partition (the engine's streams)."""
    task = engine._block_task(splits, np.arange(len(splits)), y)
    train, codes, part = task.train
    rngs = [np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(p, 0)))
            for p in range(len(splits))]
    plan = logistic_regression.plan(LogisticRegression(data_norm=3.0, **candidate), X.shape[1])
    return logistic_regression.fit_partitions(plan, X[train], codes, part, len(splits),
                                              y.max() + 1, rngs)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_replacing_one_record_moves_only_its_partition(n_classes):
    X, y = _data(1200, n_classes=n_classes, n_features=4)
    splits = _splits(len(y), 12)
    candidates = [{"epsilon": 5.0, "C": 10.0}, {"epsilon": 50.0, "C": 1.0,
                                                "fit_intercept": False}]
    before = _values(candidates, X, y, splits)
    coefficients = [_coefficients(candidate, X, y, splits) for candidate in candidates]
    # A training record of each partition in turn, moved far (clipped to data_norm) and
    # relabelled: no other partition's coefficients or utilities move (no stopping rule,
    # padding or step length shared across partitions); its own coefficients do (but where
    # the first candidate's huge noise leaves its intercept at an infinity either way).
    moved = np.zeros(len(candidates), dtype=int)
    for p in range(12):
        row, rest = splits[p][0][0], np.arange(12) != p
        X2, y2 = X.copy(), y.copy()
        X2[row], y2[row] = 5.0 - 2 * X2[row], (y2[row] + 1) % n_classes
        np.testing.assert_array_equal(_values(candidates, X2, y2, splits)[:, rest],
                                      before[:, rest])
        for j, candidate in enumerate(candidates):
            after = _coefficients(candidate, X2, y2, splits)
            np.testing.assert_array_equal(after[:, rest], coefficients[j][:, rest])
            moved[j] += not np.array_equal(after[:, p], coefficients[j][:, p])
    assert moved[0] >= 8 and moved[1] == 12


def test_partitions_do_not_depend_on_how_they_are_cut_into_tasks(monkeypatch):
    X, y = _data(900, n_classes=3, n_features=3)
    splits = _splits(len(y), 9)
    candidates = [{"epsilon": 5.0}, {"epsilon": 50.0, "C": 20.0}]
    whole = _values(candidates, X, y, splits)
    monkeypatch.setattr(engine, "BLOCK_CELLS", 200)  # about one partition per block
    np.testing.assert_array_equal(_values(candidates, X, y, splits), whole)
    assert not np.array_equal(_values(candidates, X, y, splits, entropy=1), whole)


@pytest.mark.parametrize("candidate", [{"epsilon": 20.0, "C": 5.0},
                                       {"epsilon": 20.0, "C": 5.0, "max_iter": 20}])
def test_a_problem_is_solved_alike_whatever_is_solved_beside_it(monkeypatch, candidate):
    # The problems Newton (or the batched L-BFGS-B, every problem with max_iter=20) steps
    # together shrink as others converge (a function of the other partitions' rows): a
    # problem's result must not depend on that company, to the bit.
    X, y = _data(1500, n_classes=3, n_features=6)
    splits = _splits(len(y), 15)
    together = _coefficients(candidate, X, y, splits)
    monkeypatch.setattr(logistic_regression, "NEWTON_BYTES", 1)  # one problem at a time
    monkeypatch.setattr(logistic_regression, "LBFGSB_BYTES", 1)
    np.testing.assert_array_equal(_coefficients(candidate, X, y, splits), together)


def test_a_partition_whose_fit_raises_scores_error_score():
    X, y = _data(600, n_classes=3, n_features=3)
    splits = _splits(len(y), 6)
    # Partition 2's training rows all of one class, partition 4's of two: diffprivlib raises
    # on the first, fits a binary model on the second.
    y = y.copy()
    y[splits[2][0]] = 1
    y[splits[4][0]] = np.where(y[splits[4][0]] == 0, 2, y[splits[4][0]])
    values = _values([{"epsilon": 5.0}], X, y, splits, error_score=0.123)[0]
    assert values[2] == 0.123
    assert np.all(values[[0, 1, 3, 4, 5]] != 0.123)
    # Under "raise" the candidate is rerun on the per-fit path, which raises the real fit's error.
    estimator = LogisticRegression(data_norm=3.0)
    _, utility = make_utility(estimator, "accuracy", None)
    with pytest.raises(Exception) as raised:
        evaluate.partition_utilities(estimator, [{"epsilon": 5.0}], X, y, splits, {}, utility,
                                     "raise", random_state=0)
    assert "class" in str(raised.value) or "withheld" in str(raised.value)
    # The per-fit path agrees on which partitions fail.
    estimator = LogisticRegression(data_norm=3.0, epsilon=5.0)
    for p, (train, _) in enumerate(splits):
        if p == 2:
            with pytest.raises(ValueError):
                _fit(estimator, X[train], y[train])
        else:
            assert len(_fit(estimator, X[train], y[train]).classes_) == (2 if p == 4 else 3)


# --- The law of the utilities ----------------------------------------------------------------


def _compare_utilities(n_classes, n_train, epsilon, C, repetitions, seed, n_features=4):
    """KS p-value of the batched utilities against diffprivlib's own fits, the same partition
    fitted ``repetitions`` times by each."""
    X, y = _data(n_train + 400, n_classes, n_features, seed=seed, spread=0.8)
    split = (np.arange(n_train), np.arange(n_train, n_train + 400))
    data_norm = 3.0
    candidate = {"epsilon": epsilon * RATIO, "C": C * RATIO}
    ours = _values([candidate], X, y, [split] * repetitions, entropy=seed,
                   estimator=LogisticRegression(data_norm=data_norm))[0]
    state = np.random.RandomState(seed)  # seeded, so that the test is reproducible
    theirs = np.array([
        _fit(LogisticRegression(data_norm=data_norm, random_state=state,
                                accountant=BudgetAccountant(), **candidate),
             X[split[0]], y[split[0]]).score(X[split[1]], y[split[1]])
        for _ in range(repetitions)
    ])
    return stats.ks_2samp(ours, theirs).pvalue, ours.mean(), theirs.mean()


@pytest.mark.parametrize("n_classes, epsilon", [(2, 0.2), (3, 1.0)])
def test_partition_utilities_have_diffprivlibs_law(n_classes, epsilon):
    p_value, ours, theirs = _compare_utilities(n_classes, 80, epsilon, 1.0, 200, seed=5)
    assert p_value > ALPHA, (ours, theirs)


@pytest.mark.slow_audit
@pytest.mark.parametrize("n_classes, n_train, epsilon, C", [
    (2, 50, 0.05, 1.0), (2, 62, 0.4, 0.8), (2, 80, 1.0, 0.1), (2, 300, 5.0, 10.0),
    (3, 80, 0.2, 1.0), (3, 500, 2.0, 1.0), (4, 200, 10.0, 0.1),
])
def test_partition_utilities_have_diffprivlibs_law_audit(n_classes, n_train, epsilon, C):
    p_value, ours, theirs = _compare_utilities(n_classes, n_train, epsilon, C, 1500, n_train)
    assert p_value > ALPHA, (ours, theirs)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_problems_sent_to_diffprivlibs_solver_before_newton_end_as_after(monkeypatch, n_classes):
    # certainly_flat skips Newton where the reach rule would reject its optimum anyway: the
    # coefficients are the same to the bit as with Newton run on every problem first. A rare
    # indicator column (a one-hot category) makes some partitions' problems flat.
    X, y = _data(1200, n_classes=n_classes, n_features=4)
    X = np.hstack([X, (np.arange(len(y)) % 97 == 0)[:, None].astype(float)])
    splits = _splits(len(y), 12)
    real = logistic_regression.certainly_flat
    for candidate in ({"epsilon": 5.0, "C": 10.0}, {"epsilon": 50.0, "C": 1.0},
                      {"epsilon": 80.0, "C": 1e4}):
        flagged = []

        def spy(objective, plan):
            flagged.append(real(objective, plan))
            return flagged[-1]

        monkeypatch.setattr(logistic_regression, "certainly_flat", spy)
        screened = _coefficients(candidate, X, y, splits)
        monkeypatch.setattr(logistic_regression, "certainly_flat",
                            lambda objective, plan: np.zeros(objective.noise.shape[:2], bool))
        np.testing.assert_array_equal(_coefficients(candidate, X, y, splits), screened)
        if candidate["C"] == 1e4:
            assert flagged[-1].any()  # the shortcut was taken
        if candidate["C"] == 1.0:
            assert not flagged[-1].all()  # and not everywhere


# --- skdptune's LogisticRegression: the problems of every declared class ----------------------


def _declared(classes, **params):
    return CalibratedLogisticRegression(data_norm=2.0, classes=list(classes), **params)


def _declared_plan(estimator, y, n_features):
    return logistic_regression.bind_labels(logistic_regression.plan(estimator, n_features),
                                           np.unique(y))


@pytest.mark.parametrize("epsilon, C", [(4.0, 3.0), (400.0, 0.1)], ids=["raised", "kept"])
@pytest.mark.parametrize("classes, labels", [
    ((0, 1), (0, 1)), ((0, 1, 2), (0, 1)), ((1, 4, 7, 9), (1, 9)), ((0, 1, 2), (0, 1, 2))],
    ids=["two", "absent_last", "absent_middle", "all_present"])
def test_with_its_own_noise_the_declared_optimum_is_its_fit(classes, labels, epsilon, C):
    # skdptune's fit draws each problem's noise vector as diffprivlib's Vector does, in the
    # order of the declared classes: handed the same draws, the emulation lands on the fit's
    # optimum (its rule's penalty and epsilon'), with one problem per declared class (one for
    # two), present or not, and predicts as the fit does (rows clipped to data_norm).
    n_features = 3
    X, codes = _data(150, len(labels), n_features, seed=2)
    X_val, codes_val = _data(1000, len(labels), n_features, seed=12)
    y, y_val = np.array(labels)[codes], np.array(labels)[codes_val]
    estimator = _declared(classes, epsilon=epsilon, C=C)
    plan = _declared_plan(estimator, y, n_features)
    n_problems = 1 if len(classes) == 2 else len(classes)
    # The fit's noise scale under its rule (the penalty raised, or C kept).
    scale, delta = logistic_regression.noise_parameters(plan.epsilon / n_problems,
                                                        plan.data_norm, plan.C, len(y), False,
                                                        plan.noise_share)
    assert (delta > 0) == (epsilon == 4.0)
    unit, _ = logistic_unit_ball(2.0, True)
    Z = logistic_features(X, 2.0, True, clip=True)
    problems = logistic_regression._Problems(plan.code_map[codes], np.zeros(len(y), int), 1,
                                             len(classes), declared=True)
    for seed in range(4):
        stream = _Replay(seed, n_problems, n_features + 1, float(scale))
        w = logistic_regression.fit_partitions(plan, Z, codes, np.zeros(len(y), int), 1,
                                               len(labels), [stream])
        fitted = _declared(classes, epsilon=epsilon, C=C, tol=1e-9, max_iter=1000,
                           random_state=seed, accountant=BudgetAccountant()).fit(X, y)
        theirs = np.hstack([fitted.coef_, fitted.intercept_[:, None]]) * unit
        np.testing.assert_allclose(w[:, 0], theirs, atol=1e-5 * max(1.0, np.abs(theirs).max()))
        ours = logistic_regression._predict(
            w, problems, logistic_features(X_val, 2.0, True, clip=True),
            np.zeros(len(y_val), int), False)
        np.testing.assert_array_equal(plan.classes[ours], fitted.predict(X_val))


def test_declared_classes_take_the_batched_path_and_no_partition_fails(paths):
    # Three classes declared, two in the data: every partition fits three problems.
    X, y = _data(400, n_classes=2, n_features=3)
    search = _search(_declared([0, 1, 2]), {"C": [0.5, 2.0]}).set_params(error_score="raise")
    search.fit(X, y)
    assert paths == {"per_fit": 0, "batched": 2 * 4}


@pytest.mark.parametrize("params", [{"classes": [0]}, {"classes": [[0, 1], [2, 3]]},
                                    {"classes": list(range(20))}])
def test_declared_classes_the_emulation_does_not_take_fall_back(params):
    estimator = CalibratedLogisticRegression(data_norm=2.0, **params)
    assert logistic_regression.plan(estimator, 3) is None
    plan = logistic_regression.plan(_declared([0, 1]), 3)
    assert logistic_regression.bind_labels(plan, np.array([0, 2])) is None  # 2 not declared


def test_declared_partition_utilities_have_the_law_of_its_own_fits():
    # A partition whose training rows lack declared class 2: one KS comparison against
    # skdptune's own fits of it (seeded, so that the test is reproducible).
    X, y = _data(480, n_classes=3, n_features=3, seed=5, spread=0.8)
    y[:80][y[:80] == 2] = 0
    split = (np.arange(80), np.arange(80, 480))
    candidate = {"epsilon": 3.0 * RATIO, "C": 1.0 * RATIO}
    ours = _values([candidate], X, y, [split] * 200, entropy=5,
                   estimator=_declared([0, 1, 2]))[0]
    state = np.random.RandomState(5)
    theirs = [_fit(_declared([0, 1, 2], random_state=state, accountant=BudgetAccountant(),
                             **candidate), X[split[0]], y[split[0]])
              .score(X[split[1]], y[split[1]]) for _ in range(200)]
    assert stats.ks_2samp(ours, theirs).pvalue > ALPHA, (ours.mean(), np.mean(theirs))


def test_the_record_of_a_rare_class_moves_only_its_partition():
    # The neighbouring pair of issue 34, item 8, on the batched path: one record has the rare
    # declared class 2 on one dataset and class 0 on the other (the labels of y, and the codes
    # the engine gives them, differ). No other partition's utility moves.
    X, y = _data(600, n_classes=2, n_features=3)
    splits = _splits(len(y), 6)
    candidates = [{"epsilon": 5.0}, {"epsilon": 50.0, "C": 10.0}]
    before = _values(candidates, X, y, splits, estimator=_declared([0, 1, 2]))
    for p in range(6):
        y2 = y.copy()
        y2[splits[p][0][0]] = 2
        after = _values(candidates, X, y2, splits, estimator=_declared([0, 1, 2]))
        np.testing.assert_array_equal(after[:, np.arange(6) != p],
                                      before[:, np.arange(6) != p])
