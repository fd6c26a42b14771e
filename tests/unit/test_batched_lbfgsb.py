"""The batched emulation of scipy's L-BFGS-B (``skdptune._batched.lbfgsb``).

It must reproduce ``scipy.optimize.fmin_l_bfgs_b`` per problem (the same iterates, the same
stopping point and iteration count, to rounding) on the perturbed logistic objectives that
diffprivlib's ``LogisticRegression`` minimises, and each problem's result must depend on its
own objective only. Nothing here is compared bit for bit: where rounding, which differs
between machines, can move a result, it is not compared (see "Rounding" below), and every
comparison is re-run with the gradient perturbed at the rounding level.
"""

import zlib

import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit

from skdptune._batched import lbfgsb, logistic_regression

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


def _scipy(problem, maxiter):
    value_gradient, dimension = problem
    x, _, info = optimize.fmin_l_bfgs_b(value_gradient, np.zeros(dimension), factr=FACTR,
                                        pgtol=PGTOL, maxiter=maxiter)
    return x, info["nit"]


def _batched(problems, maxiter, m=10):
    """The emulation on problems of one dimension at a time (each evaluated by the same
    function as scipy's, so that only the solvers differ); also the problems whose iteration
    restarted (a failed line search with pairs stored)."""
    x, nit = [None] * len(problems), np.zeros(len(problems), dtype=int)
    restarted, real = set(), lbfgsb._fail
    for dimension in sorted({d for _, d in problems}):
        index = [i for i, (_, d) in enumerate(problems) if d == dimension]

        def fun(which, w, index=index):
            out = [problems[index[i]][0](wi) for i, wi in zip(which, w)]
            return np.array([v for v, _ in out]), np.array([g for _, g in out])

        def spy(state, which, index=index):
            restart = real(state, which)
            restarted.update(index[i] for i in restart)
            return restart

        lbfgsb._fail = spy
        try:
            result = lbfgsb.minimize(fun, np.zeros((len(index), dimension)), m=m,
                                     factr=FACTR, pgtol=PGTOL, maxiter=maxiter)
        finally:
            lbfgsb._fail = real
        for j, i in enumerate(index):
            x[i], nit[i] = result.x[j], result.nit[j]
    return x, nit, restarted


def _same(a, b, rtol=1e-6):
    return np.max(np.abs(a[0] - b[0])) <= rtol * max(np.max(np.abs(b[0])), 1e-12) \
        and a[1] == b[1]


# --- Rounding. --------------------------------------------------------------------------
#
# scipy computes the L-BFGS direction in compact form, the emulation by the two-loop
# recursion: the same matrix in another order, so the two round differently, and another CPU
# (other SIMD paths in numpy, another BLAS kernel) rounds each of them differently again. On
# most problems that changes the result by about the rounding; on a few, ill-conditioned or
# with a line search on the edge of a test, rounding decides a branch and the results part
# (issue 33: 26 iterations against scipy's 63 on another CPU, where this file had asserted
# agreement on every problem). No result is therefore compared where rounding can move it:
# a problem counts as *settled* when scipy's own result stays within a thousandth of the
# comparison's tolerance while its gradient moves by PROBE = 1e-12 of itself (a thousand
# times the rounding level) in each of two directions, and the emulation must agree with
# scipy on the settled problems; each test also requires most of its problems settled, so
# that it keeps its teeth. The probes can miss a test on the edge, which only some roundings
# flip, so a test allows MISSED_BY_PROBES disagreements: with the emulation's gradient moved
# by 1e-15 of itself in 20 ways (20 simulated machines), no settled L-BFGS-B problem of this
# file disagreed; in 40 ways, one line search of 133 disagreed in 18 of them (first step
# 1e-3), none elsewhere. A wrong emulation disagrees on most problems. ROUNDING_PLANS re-run
# every comparison with the gradient moved by 1e-15 of itself (another machine's rounding):
# for the emulation alone, and for both solvers; the assertions must still hold.

#: Relative size of the gradient perturbation that stands for another machine's rounding.
ROUNDING = 1e-15
#: Relative size of the gradient perturbation that probes whether rounding can move a result.
PROBE = 1e-12
#: How the comparisons are re-run: None (as computed here), the emulation's gradient
#: perturbed at the rounding level, or the gradient both solvers see perturbed.
ROUNDING_PLANS = [None, "emulation", "both"]
#: Settled problems (line searches) a comparison allows to disagree: rounding flips the
#: probes missed (see above).
MISSED_BY_PROBES = {"lbfgsb": 1, "dcsrch": 2}


def _noise(point, level, seed):
    """A relative perturbation ``1 + level * u`` of a gradient at ``point``, ``u`` uniform in
    ``[-1, 1]`` per coordinate and a function of the point's bits and ``seed``: as another
    machine's rounding, the same input always gives the same output."""
    bits = zlib.crc32(np.ascontiguousarray(point, dtype=float).tobytes(), seed)
    # A multiplicative hash of (bits, coordinate), in [0, 2**32): cheaper than a generator.
    mixed = (np.uint64(bits) ^ (np.arange(np.size(point), dtype=np.uint64)
                                * np.uint64(0x9E3779B1))) * np.uint64(0x85EBCA6B)
    u = (mixed % np.uint64(2 ** 32)).astype(float) / 2.0 ** 31 - 1.0
    return 1.0 + level * u.reshape(np.shape(point))


def _perturbed(problem, level, seed):
    """``problem`` with its gradient perturbed by :func:`_noise`."""
    value_gradient, dimension = problem

    def perturbed(w):
        value, gradient = value_gradient(w)
        return value, gradient * _noise(w, level, seed)

    return perturbed, dimension


def _as_seen(problems, plan, seed=0):
    """The problems as (the emulation, scipy) see them under a rounding plan."""
    if plan is None:
        return problems, problems
    moved = [_perturbed(problem, ROUNDING, seed) for problem in problems]
    return moved, (moved if plan == "both" else problems)


def _settled(problem, maxiter, reference):
    """Whether scipy's result on ``problem`` (``reference``) stays put, to 1e-9 relative and
    the same iteration count, when the gradient moves by ``PROBE`` of itself."""
    return all(_same(_scipy(_perturbed(problem, PROBE, seed), maxiter), reference, rtol=1e-9)
               for seed in (1, 2))


def _references(problems, maxiter, plan, cache_key):
    """scipy's result on each problem as it sees them under ``plan``, and whether it is
    settled; computed once per ``cache_key`` for the plans in which scipy sees the problems
    as they are (None and "emulation")."""
    if plan != "both" and cache_key in _REFERENCES:
        return _REFERENCES[cache_key]
    references = [_scipy(problem, maxiter) for problem in problems]
    settled = [_settled(problem, maxiter, reference)
               for problem, reference in zip(problems, references)]
    if plan != "both":
        _REFERENCES[cache_key] = references, settled
    return references, settled


_REFERENCES = {}


@pytest.mark.parametrize("plan", ROUNDING_PLANS)
@pytest.mark.parametrize("maxiter, seed", [(5, 0), (20, 1), (100, 2), (100, 3)])
def test_batched_lbfgsb_is_scipys_per_problem(maxiter, seed, plan):
    # The same final point (to 1e-6 relative) and iteration count as scipy on every settled
    # problem (see "Rounding"): 84 to 90 of each 90 here (the others at maxiter >= 20, among
    # them the few that maxiter=100 cuts short).
    ours, theirs = _as_seen(_problems(seed, 90), plan)
    xs, nits, _ = _batched(ours, maxiter)
    references, is_settled = _references(theirs, maxiter, plan, ("logistic", seed, maxiter))
    settled, stopped, disagree = 0, 0, []
    for i, (x, nit, reference) in enumerate(zip(xs, nits, references)):
        if not is_settled[i]:
            continue
        settled += 1
        stopped += reference[1] == maxiter
        if not _same((x, nit), reference):
            disagree.append((i, nit, reference[1]))
    assert len(disagree) <= MISSED_BY_PROBES["lbfgsb"], disagree
    assert settled >= 80  # of 90
    assert stopped >= {5: 60, 20: 8, 100: 0}[maxiter]  # problems cut short by maxiter


@pytest.mark.parametrize("change", ["gtol", "memory", "first_step"])
def test_the_reproduction_fails_with_other_constants(monkeypatch, change):
    # The reproduction above is sensitive to scipy's constants: the line search's gtol, the
    # memory size, the first iteration's step 1 / ||d|| (its ftol and xtol rarely matter on
    # these objectives, whose steps of 1 are mostly accepted: the next test checks them).
    # 20 to 40 of the 40 problems differ (rounding moves 0 to 3 of them).
    m = 10
    if change == "gtol":
        monkeypatch.setattr(lbfgsb, "GTOL", 0.5)
    elif change == "memory":
        m = 5
    else:
        monkeypatch.setattr(lbfgsb, "STPMAX", 1e-1)
    problems = _problems(4, 40)
    xs, nits, _ = _batched(problems, 100, m=m)
    differ = sum(not _same((x, nit), _scipy(problem, 100))
                 for problem, x, nit in zip(problems, xs, nits))
    assert differ >= 10


def _restarting_problems():
    """Gradients that are not quite the objective's (a quadratic's gradient turned by a random
    near-identity matrix): directions that do not descend and line searches that fail."""
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
    return problems


@pytest.mark.parametrize("plan", [None, "emulation"])  # "both" passes too: left out for time
def test_restarts_and_failed_searches_are_scipys(plan):
    # Failed line searches restart scipy's iteration with its memory dropped (its driver
    # keeping the last value evaluated, not the restored one). The same iterates and counts
    # as scipy's on the settled problems, among them 15 of the 35 that restarted. These
    # problems are chaotic: 24 of the 200 are not settled (on one,
    # scipy alone goes from 64 iterations to 25 when its gradient moves by 1e-13 of itself).
    ours, theirs = _as_seen(_restarting_problems(), plan)
    xs, nits, restarted = _batched(ours, 100)
    references, is_settled = _references(theirs, 100, plan, ("restarting",))
    settled, disagree = [], []
    for i, (x, nit, reference) in enumerate(zip(xs, nits, references)):
        if is_settled[i]:
            settled.append(i)
            if not _same((x, nit), reference):
                disagree.append((i, nit, reference[1]))
    assert len(disagree) <= MISSED_BY_PROBES["lbfgsb"], disagree
    assert len(settled) >= 160
    assert len(restarted.intersection(settled)) >= 10


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


def _solve(objective, parts, maxiter=30, rounding_seed=None):
    """The problems ``parts`` of ``objective`` solved together; with ``rounding_seed``, their
    gradients perturbed at the rounding level (:func:`_noise`), as another machine would."""
    slots = np.zeros(len(parts), dtype=int)

    def fun(which, w):
        value, gradient = objective.value_gradient((slots[which], parts[which]), w)
        if rounding_seed is not None:
            gradient = gradient * np.array([_noise(row, ROUNDING, rounding_seed) for row in w])
        return value, gradient

    return lbfgsb.minimize(fun, np.zeros((len(parts), objective.X.shape[-1])), factr=FACTR,
                           pgtol=PGTOL, maxiter=maxiter)


def _close(a, b, rtol=1e-9):
    """Equal to rounding, row by row: the largest difference within ``rtol`` of the row."""
    scale = np.maximum(np.max(np.abs(b), axis=-1, keepdims=True), 1e-12)
    return np.all(np.abs(a - b) <= rtol * scale)


@pytest.mark.parametrize("rounding", [False, True])
def test_a_problem_is_solved_alike_alone_or_in_company(rounding):
    # The problems share arrays and rounds, never a test: each problem's iterates, to
    # rounding (1e-9 relative; a perturbation of the gradient at the rounding level moves
    # these results by at most 3e-13), and its iteration count, whatever else is solved
    # beside it (and however many of those stop before it). A shared test would change the
    # counts; shared arithmetic, the points by far more than rounding. With ``rounding``, the
    # two solves see gradients perturbed differently at the rounding level (two machines).
    seeds = (0, 1) if rounding else (None, None)
    objective = _logistic_objective(5)
    n_parts = objective.X.shape[0]
    together = _solve(objective, np.arange(n_parts), rounding_seed=seeds[0])
    assert len(set(together.nit)) > 3  # they stop at different iterations
    for p in range(n_parts):
        alone = _solve(objective, np.array([p]), rounding_seed=seeds[1])
        assert _close(alone.x[0], together.x[p])
        assert alone.nit[0] == together.nit[p]
    reordered = _solve(objective, np.arange(n_parts)[::-1], rounding_seed=seeds[1])
    assert _close(reordered.x[::-1], together.x)
    np.testing.assert_array_equal(reordered.nit[::-1], together.nit)


@pytest.mark.parametrize("rounding", [False, True])
def test_changing_one_problem_changes_only_its_result(rounding):
    seeds = (0, 1) if rounding else (None, None)
    objective = _logistic_objective(6)
    n_parts = objective.X.shape[0]
    before = _solve(objective, np.arange(n_parts), rounding_seed=seeds[0]).x
    objective.noise[0, 3] *= 1.5
    objective.targets[0, 3, 0] = 1.0 - objective.targets[0, 3, 0]
    after = _solve(objective, np.arange(n_parts), rounding_seed=seeds[1]).x
    rest = np.arange(n_parts) != 3
    assert _close(after[rest], before[rest])
    assert not _close(after[3], before[3], rtol=1e-3)


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


def _scipys_dcsrch_steps(phi, first_step):
    """Every trial step of scipy's own translation of MINPACK-2's dcsrch
    (scipy.optimize._dcsrch) with lnsrlb's constants, or None when a value overflows."""
    from scipy.optimize._dcsrch import DCSRCH

    steps = []

    def value(t):
        steps.append(t)
        return phi(t)[0]

    # lnsrlb's constants: ftol, gtol, xtol, stpmin, stpmax.
    search = DCSRCH(value, lambda t: phi(t)[1], 1e-3, 0.9, 0.1, 0.0, 1e10)
    with np.errstate(all="ignore"):
        stp, *_ = search(first_step, phi0=phi(0.0)[0], derphi0=phi(0.0)[1], maxiter=30)
    finite = stp is not None and all(np.isfinite(phi(t)[0]) for t in steps)
    return steps if finite else None


def _perturbed_phi(phi, level, seed):
    """``phi`` with its slope perturbed by :func:`_noise` at the trial step."""

    def perturbed(t):
        value, slope = phi(t)
        return value, slope * float(_noise(np.float64(t), level, seed))

    return perturbed


def _same_steps(a, b, rtol=1e-9):
    return len(a) == len(b) and np.allclose(a, b, rtol=rtol, atol=0)


@pytest.mark.parametrize("plan", ROUNDING_PLANS)
@pytest.mark.parametrize("first_step", [1.0, 1e-3, 50.0])
def test_the_line_search_is_scipys_dcsrch(first_step, plan):
    # Every trial step of the batched dcsrch, on many searches at once, is the one of scipy's
    # own translation of the same MINPACK-2 routine, to 1e-9 relative, and the searches end
    # after the same trials, on every settled search (scipy's steps stay within 1e-12
    # relative when the slope moves by PROBE of itself: 88 % to 99 % of them here; a cubic
    # step from nearly equal slopes amplifies rounding, and a test on the edge can flip),
    # but for MISSED_BY_PROBES of them.
    rng = np.random.default_rng(9)
    phis = [_phi(rng) for _ in range(200)]
    phis = [phi for phi in phis if phi(0.0)[1] < 0]
    theirs, settled = [], []
    for phi in phis:
        seen = phi if plan != "both" else _perturbed_phi(phi, ROUNDING, 0)
        steps = _scipys_dcsrch_steps(seen, first_step)
        theirs.append(steps)
        settled.append(steps is not None and all(
            _same_steps(_scipys_dcsrch_steps(_perturbed_phi(seen, PROBE, seed), first_step),
                        steps, rtol=1e-12) for seed in (1, 2)))
    phis = [phi for phi, steps in zip(phis, theirs) if steps is not None]  # no overflow
    settled = [s for s, steps in zip(settled, theirs) if steps is not None]
    theirs = [steps for steps in theirs if steps is not None]
    if plan is not None:
        phis = [_perturbed_phi(phi, ROUNDING, 0) for phi in phis]
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
    lengths = [len(steps) for steps, kept in zip(theirs, settled) if kept]
    assert len(lengths) >= 0.8 * len(theirs)
    assert max(lengths) >= 6 and np.mean(lengths) > 2  # long searches were met
    disagree = [(mine, steps) for mine, steps, kept in zip(ours, theirs, settled)
                if kept and not _same_steps(mine, steps)]
    assert len(disagree) <= MISSED_BY_PROBES["dcsrch"], disagree
