"""The batched emulation of scipy's L-BFGS-B (``skdptune.batched.lbfgsb``).

It must reproduce ``scipy.optimize.fmin_l_bfgs_b`` per problem (the same iterates, the same
stopping point and iteration count, to rounding) on the perturbed logistic objectives that
diffprivlib's ``LogisticRegression`` minimises, and each problem's result must depend on its
own objective only.
"""

import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit

from skdptune.batched import lbfgsb, logistic_regression

FACTR, PGTOL = 64, 1e-4  # diffprivlib's factr, and its default tol


def _problem(rng):
    """A perturbed logistic objective of the kinds the family meets (diffprivlib's, with
    scikit-learn's loss): small n, up to 60 coefficients, dense or one-hot-like rows, weak to
    strong regularisation, small to huge noise, sometimes diffprivlib's extra ridge. None when
    it has no minimum (noise on the intercept beyond a class's count)."""
    n = int(rng.integers(10, 150))
    dimension = int(rng.choice([2, 8, 30, 60]))
    intercept = rng.random() < 0.8
    C, scale = 10 ** rng.uniform(-2, 3), 10 ** rng.uniform(-1, 2.5)
    delta = 10 ** rng.uniform(-3, 0) if rng.random() < 0.2 else 0.0
    if rng.random() < 0.3:
        X = (rng.random((n, dimension - intercept)) < 0.1).astype(float)  # one-hot-like
    else:
        X = rng.standard_normal((n, dimension - intercept)) * rng.uniform(0.2, 2)
    X /= np.maximum(np.linalg.norm(X, axis=1) / 2.0, 1.0)[:, None]
    if intercept:
        X = np.hstack([X, np.ones((n, 1))])
    y = (rng.random(n) < expit(X @ rng.standard_normal(dimension))).astype(float)
    ridge = np.full(dimension, 1.0 / (C * n))
    if intercept:
        ridge[-1] = 0.0
    b = rng.standard_normal(dimension)
    b *= scale / np.linalg.norm(b)
    if intercept and delta == 0 and (n - y.sum() + b[-1] <= 0 or b[-1] - y.sum() >= 0):
        return None

    def value_gradient(w):
        z = X @ w
        value = np.sum(np.logaddexp(0.0, z) - y * z) / n + 0.5 * np.sum(ridge * w * w)
        gradient = X.T @ (expit(z) - y) / n + ridge * w
        return value + b @ w / n + 0.5 * delta * w @ w, gradient + b / n + delta * w

    return value_gradient, dimension


def _problems(seed, count):
    rng = np.random.default_rng(seed)
    problems = []
    while len(problems) < count:
        problem = _problem(rng)
        if problem is not None:
            problems.append(problem)
    return problems


def _scipy(problem, maxiter, perturb=False):
    value_gradient, dimension = problem
    if perturb:  # the gradient moved by about 1e-15 of itself: scipy's own rounding noise
        def function(w):
            value, gradient = value_gradient(w)
            return value, gradient * (1 + 1e-15 * np.cos(np.arange(dimension)))
    else:
        function = value_gradient
    x, _, info = optimize.fmin_l_bfgs_b(function, np.zeros(dimension), factr=FACTR,
                                        pgtol=PGTOL, maxiter=maxiter)
    return x, info["nit"]


def _batched(problems, maxiter, m=10):
    """The emulation on problems of one dimension at a time (each evaluated by the same
    function as scipy's, so that only the solvers differ)."""
    x, nit = [None] * len(problems), np.zeros(len(problems), dtype=int)
    for dimension in {d for _, d in problems}:
        index = [i for i, (_, d) in enumerate(problems) if d == dimension]

        def fun(which, w, index=index):
            out = [problems[index[i]][0](wi) for i, wi in zip(which, w)]
            return np.array([v for v, _ in out]), np.array([g for _, g in out])

        result = lbfgsb.minimize(fun, np.zeros((len(index), dimension)), m=m, factr=FACTR,
                                 pgtol=PGTOL, maxiter=maxiter)
        for j, i in enumerate(index):
            x[i], nit[i] = result.x[j], result.nit[j]
    return x, nit


def _same(a, b, rtol=1e-6):
    return np.max(np.abs(a[0] - b[0])) <= rtol * max(np.max(np.abs(b[0])), 1e-12) \
        and a[1] == b[1]


@pytest.mark.parametrize("maxiter, seed", [(5, 0), (20, 1), (100, 2), (100, 3)])
def test_batched_lbfgsb_is_scipys_per_problem(maxiter, seed):
    # The same final point (to 1e-6 relative) and iteration count as scipy, problem by
    # problem, except on problems where scipy itself moves by more than 1e-9 of its result
    # when its gradient moves by 1e-15 of itself (rounding amplified a millionfold: our
    # direction is the same matrix as scipy's, computed in another order); those are rare.
    problems = _problems(seed, 90)
    xs, nits = _batched(problems, maxiter)
    differ, stopped = 0, 0
    for problem, x, nit in zip(problems, xs, nits):
        theirs = _scipy(problem, maxiter)
        stopped += theirs[1] == maxiter
        if not _same((x, nit), theirs):
            differ += 1
            assert not _same(_scipy(problem, maxiter, perturb=True), theirs, rtol=1e-9)
    assert differ <= 4  # of 90
    assert stopped >= {5: 60, 20: 5, 100: 1}[maxiter]  # problems cut short by maxiter


@pytest.mark.parametrize("change", ["gtol", "memory", "first_step"])
def test_the_reproduction_fails_with_other_constants(monkeypatch, change):
    # The reproduction above is sensitive to scipy's constants: the line search's gtol, the
    # memory size, the first iteration's step 1 / ||d|| (its ftol and xtol rarely matter on
    # these objectives, whose steps of 1 are mostly accepted: the next test checks them).
    m = 10
    if change == "gtol":
        monkeypatch.setattr(lbfgsb, "GTOL", 0.5)
    elif change == "memory":
        m = 5
    else:
        monkeypatch.setattr(lbfgsb, "STPMAX", 1e-1)
    problems = _problems(4, 40)
    xs, nits = _batched(problems, 100, m=m)
    differ = sum(not _same((x, nit), _scipy(problem, 100))
                 for problem, x, nit in zip(problems, xs, nits))
    assert differ >= 4


def test_restarts_and_failed_searches_are_scipys(monkeypatch):
    # Gradients that are not quite the objective's (a quadratic's gradient turned by a random
    # near-identity matrix): directions that do not descend and line searches that fail,
    # which restart scipy's iteration with its memory dropped (its driver keeping the last
    # value evaluated, not the restored one). The same iterates and counts as scipy's.
    real, restarted = lbfgsb._fail, []

    def spy(state, which):
        restart = real(state, which)
        restarted.append(len(restart))
        return restart

    monkeypatch.setattr(lbfgsb, "_fail", spy)
    rng = np.random.default_rng(1)
    problems = []
    for _ in range(200):
        dimension = int(rng.integers(2, 10))
        c = rng.normal(0, 3, dimension)
        A = rng.normal(size=(dimension, dimension))
        H = A @ A.T + 0.1 * np.eye(dimension)
        R = np.eye(dimension) + rng.normal(0, 0.1, (dimension, dimension))

        def value_gradient(w, c=c, H=H, R=R):
            return 0.5 * (w - c) @ H @ (w - c), R @ (H @ (w - c))

        problems.append((value_gradient, dimension))
    xs, nits = _batched(problems, 100)
    assert sum(restarted) >= 20
    for problem, x, nit in zip(problems, xs, nits):
        assert _same((x, nit), _scipy(problem, 100))


def _logistic_objective(seed, n_parts=12, n_rows=40, dimension=7):
    """A block's padded objective (logistic_regression._Objective) with its problems."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(10, n_rows, n_parts)
    mask = (np.arange(n_rows)[None] < sizes[:, None]).astype(float)
    X = rng.standard_normal((n_parts, n_rows, dimension)) * mask[..., None]
    X[..., -1] = mask
    targets = (rng.random((1, n_parts, n_rows)) < 0.4) * mask[None]
    n = sizes.astype(float)
    ridge = 1.0 / (10.0 ** rng.uniform(-1, 2, (1, n_parts)) * n)
    noise = rng.standard_normal((1, n_parts, dimension)) * 2.0
    return logistic_regression._Objective(X, mask, targets, n, ridge, np.zeros((1, n_parts)),
                                          noise, True)


def _solve(objective, parts, maxiter=30):
    slots = np.zeros(len(parts), dtype=int)

    def fun(which, w):
        return objective.value_gradient((slots[which], parts[which]), w)

    return lbfgsb.minimize(fun, np.zeros((len(parts), objective.X.shape[-1])), factr=FACTR,
                           pgtol=PGTOL, maxiter=maxiter)


def test_a_problem_is_solved_alike_alone_or_in_company():
    # The problems share arrays and rounds, never a test: each problem's iterates, to the
    # bit, whatever else is solved beside it (and however many of those stop before it).
    objective = _logistic_objective(5)
    n_parts = objective.X.shape[0]
    together = _solve(objective, np.arange(n_parts))
    assert len(set(together.nit)) > 3  # they stop at different iterations
    for p in range(n_parts):
        alone = _solve(objective, np.array([p]))
        np.testing.assert_array_equal(alone.x[0], together.x[p])
        assert alone.nit[0] == together.nit[p]
    reordered = _solve(objective, np.arange(n_parts)[::-1])
    np.testing.assert_array_equal(reordered.x[::-1], together.x)


def test_changing_one_problem_changes_only_its_result():
    objective = _logistic_objective(6)
    n_parts = objective.X.shape[0]
    before = _solve(objective, np.arange(n_parts)).x
    objective.noise[0, 3] *= 1.5
    objective.targets[0, 3, 0] = 1.0 - objective.targets[0, 3, 0]
    after = _solve(objective, np.arange(n_parts)).x
    rest = np.arange(n_parts) != 3
    np.testing.assert_array_equal(after[rest], before[rest])
    assert not np.allclose(after[3], before[3])


def test_the_logistic_objectives_gradient_is_its_values():
    # value_gradient: the values of _Objective.value, and their derivative.
    objective = _logistic_objective(7)
    parts = np.arange(objective.X.shape[0])
    slots = np.zeros(len(parts), dtype=int)
    w = np.random.default_rng(8).standard_normal((len(parts), objective.X.shape[-1]))
    value, gradient = objective.value_gradient((slots, parts), w)
    np.testing.assert_allclose(value, objective.value((slots, parts), w), rtol=1e-13)
    step = 1e-6
    for j in range(w.shape[1]):
        e = np.zeros_like(w)
        e[:, j] = step
        numeric = (objective.value((slots, parts), w + e)
                   - objective.value((slots, parts), w - e)) / (2 * step)
        np.testing.assert_allclose(gradient[:, j], numeric, rtol=1e-5, atol=1e-8)


def _phi(rng):
    """A 1-D function along a descent direction (value and slope), with its minimum near or
    far from the first step, steep or flat: line searches of one to many trials."""
    a, b, c = 10 ** rng.uniform(-3, 3), 10 ** rng.uniform(-2, 2), rng.uniform(0.5, 20)
    kind = rng.integers(3)
    if kind == 0:  # a quartic
        return lambda t: (a * (t - c) ** 4 - a * c ** 4 - b * t, 4 * a * (t - c) ** 3 - b)
    if kind == 1:  # a wall
        return lambda t: (np.exp(a * (t - c)) - b * t, a * np.exp(a * (t - c)) - b)
    return lambda t: (np.sin(c * t) - b * t + a * t * t, c * np.cos(c * t) - b + 2 * a * t)


@pytest.mark.parametrize("first_step", [1.0, 1e-3, 50.0])
def test_the_line_search_is_scipys_dcsrch(first_step):
    # Every trial step of the batched dcsrch, on many searches at once, is the one of scipy's
    # own translation of the same MINPACK-2 routine (scipy.optimize._dcsrch) with lnsrlb's
    # constants; the searches end at the same step.
    from scipy.optimize._dcsrch import DCSRCH

    rng = np.random.default_rng(9)
    phis = [_phi(rng) for _ in range(200)]
    phis = [phi for phi in phis if phi(0.0)[1] < 0]
    theirs = []
    for phi in phis:
        steps = []

        def value(t, phi=phi, steps=steps):
            steps.append(t)
            return phi(t)[0]

        # lnsrlb's constants: ftol, gtol, xtol, stpmin, stpmax.
        search = DCSRCH(value, lambda t, phi=phi: phi(t)[1], 1e-3, 0.9, 0.1, 0.0, 1e10)
        with np.errstate(all="ignore"):
            stp, *_ = search(first_step, phi0=phi(0.0)[0], derphi0=phi(0.0)[1], maxiter=30)
        finite = stp is not None and all(np.isfinite(phi(t)[0]) for t in steps)
        theirs.append(steps if finite else None)
    phis = [phi for phi, steps in zip(phis, theirs) if steps is not None]  # no overflow
    theirs = [steps for steps in theirs if steps is not None]
    state = lbfgsb._State(len(phis), 1, 1)
    which = np.arange(len(phis))
    start = np.array([phi(0.0) for phi in phis])
    lbfgsb._dcsrch_start(state, which, start[:, 0], start[:, 1], np.full(len(phis), first_step))
    ours = [[] for _ in phis]
    for _ in range(30):
        if not len(which):
            break
        for i in which:
            ours[i].append(state.stp[i])
        with np.errstate(all="ignore"):
            at = np.array([phis[i](state.stp[i]) for i in which])
        which = which[~lbfgsb._dcsrch(state, which, at[:, 0], at[:, 1])]
    lengths = [len(steps) for steps in theirs]
    assert max(lengths) >= 6 and np.mean(lengths) > 2  # long searches were met
    for mine, steps in zip(ours, theirs):
        np.testing.assert_allclose(mine, steps, rtol=1e-12)
