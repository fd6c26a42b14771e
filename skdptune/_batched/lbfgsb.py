"""scipy's L-BFGS-B without bounds, on many independent problems at once.

Reproduces ``scipy.optimize.fmin_l_bfgs_b(fun, x0, factr=factr, pgtol=pgtol, maxiter=maxiter)``
(scipy 1.17.1: ``scipy/optimize/src/lbfgsb.c`` driven by ``_minimize_lbfgsb``) on every
problem of a batch, each with its own state in arrays and its own stopping tests (masks): a
problem's iterates are a function of its own objective only, never of its company.

What scipy does without bounds, and what is done here:

- Start: ``f, g`` at ``x0`` (one evaluation); stop if ``max|g| <= pgtol``.
- Direction: with no correction pairs stored (the first iteration, after a restart, or while
  every update was skipped) the generalized Cauchy point is ``z = x - g``; otherwise the
  subspace minimisation over all (free) variables gives ``z = x - H g``, ``H`` the L-BFGS
  inverse Hessian of the stored pairs with ``H0 = I / theta`` (scipy forms it in compact
  form, here by the two-loop recursion: the same matrix, different rounding). In both,
  ``d = z - x`` (as scipy computes it).
- Line search (``lnsrlb`` and ``dcsrch``, Moré–Thuente with ``ftol=1e-3``, ``gtol=0.9``,
  ``xtol=0.1``, ``stpmin=0``, ``stpmax=1e10``): the first trial step is ``min(1 / ||d||,
  stpmax)`` on the very first iteration, 1 afterwards; a trial point is ``z`` when the step
  is 1, else ``stp * d + x``. A direction that is not a descent one (``g'd >= 0``), or a
  search that asks for more than ``maxls`` (20) evaluations, restores the iterate and its
  gradient; with no stored pairs the run ends there (scipy's ``ABNORMAL``), otherwise the
  memory is dropped and the iteration restarts. scipy's Python driver passes ``f`` by value,
  so after such a restore the value it hands back is the last one evaluated (not the one
  at the restored iterate): it is the reference of the next search and of the next
  relative-reduction test, and so here.
- After a step is accepted: the iteration count (``nit``) grows; the run stops when it
  reaches ``maxiter``, or when more than ``maxfun`` evaluations were made, then when
  ``max|g| <= pgtol``, then when ``(f_old - f) <= factr * eps * max(|f_old|, |f|, 1)``.
- Memory update (``matupd``): ``s = stp * d``, ``y = g - g_old``, ``s'y`` computed as
  ``stp * (g'd - g_old'd)``; skipped when ``s'y <= eps * (-stp * g_old'd)``; else the pair
  is stored (the oldest of ``m`` dropped) and ``theta = y'y / s'y``.

Not reproduced: scipy's restarts on a failed factorisation of its compact matrices
(``formt``/``formk``, singular only when the stored pairs are nearly dependent), and the
cache of scipy's ``ScalarFunction`` (a trial point equal to the last one evaluated is not
counted again by scipy: it only matters for ``maxfun``).
"""

import numpy as np

#: Machine epsilon (scipy's ``epsmach``).
EPS = np.finfo(float).eps

#: The line search's constants (scipy's ``lnsrlb``).
FTOL, GTOL, XTOL = 1e-3, 0.9, 0.1

#: The line search's largest step without bounds (scipy's ``stpmx``).
STPMAX = 1e10

_RUNNING, _CONVERGED, _LIMIT, _ABNORMAL = 0, 1, 2, 3


class Result:
    """What :func:`minimize` returns, per problem.

    Attributes
    ----------
    x : ndarray of shape (n_problems, dimension)
        The final iterates.
    nit : ndarray of shape (n_problems,)
        Iterations, as scipy's ``nit`` counts them.
    nfev : ndarray of shape (n_problems,)
        Function evaluations (the one at ``x0`` included).
    status : ndarray of shape (n_problems,)
        0 converged, 1 stopped by ``maxiter`` or ``maxfun``, 2 line search failed (scipy's
        ``warnflag``).
    """

    def __init__(self, x, nit, nfev, status):
        self.x, self.nit, self.nfev, self.status = x, nit, nfev, status


def minimize(fun, x0, *, m=10, factr=1e7, pgtol=1e-5, maxiter=15000, maxfun=15000, maxls=20):
    """scipy's ``fmin_l_bfgs_b`` without bounds on every problem of a batch.

    Parameters
    ----------
    fun : callable
        ``fun(which, x)`` with ``which`` an int array of problem indices and ``x`` of shape
        ``(len(which), dimension)``: the values (``(len(which),)``) and gradients (the shape
        of ``x``) of those problems at those points. A problem's result must not depend on
        which others are evaluated with it.
    x0 : ndarray of shape (n_problems, dimension)
    m, factr, maxfun, maxls
        As for ``scipy.optimize.fmin_l_bfgs_b``, the same for every problem.
    pgtol, maxiter : float and int, or ndarray of shape (n_problems,)
        As for ``scipy.optimize.fmin_l_bfgs_b``: one for all problems, or each problem's own.

    Returns
    -------
    result : Result
    """
    x = np.array(x0, dtype=float)
    n_problems, dimension = x.shape
    tol = factr * EPS
    pgtol = np.broadcast_to(np.asarray(pgtol, dtype=float), (n_problems,))
    maxiter = np.broadcast_to(np.asarray(maxiter), (n_problems,))
    state = _State(n_problems, dimension, m)
    everyone = np.arange(n_problems)
    state.f, state.g = _evaluate(fun, everyone, x)
    state.nfev[:] = 1
    state.x = x
    start = everyone[~(_max_abs(state.g) <= pgtol)]  # NaN: scipy goes on, and so here
    state.status[everyone] = _CONVERGED
    state.status[start] = _RUNNING
    _start_iterations(state, start)
    while True:
        which = np.flatnonzero(state.status == _RUNNING)
        if not len(which):
            break
        f, g = _evaluate(fun, which, state.x[which])
        state.f[which], state.g[which] = f, g
        state.nfev[which] += 1
        gd = _dot(g, state.d[which])
        state.gd[which] = gd
        accept = _dcsrch(state, which, f, gd)
        # Another trial of the same search, unless it would be one too many.
        more = which[~accept]
        state.ifun[more] += 1
        state.iback[more] = state.ifun[more] - 1
        failed = more[state.iback[more] >= maxls]
        more = more[state.iback[more] < maxls]
        _trial_points(state, more)
        _start_iterations(state, _fail(state, failed))
        # A new iterate: scipy's driver counts it and checks its limits, then the tests.
        new = which[accept]
        state.iter[new] += 1
        state.nit[new] += 1
        limited = (state.nit[new] >= maxiter[new]) | (state.nfev[new] > maxfun)
        state.status[new[limited]] = _LIMIT
        new = new[~limited]
        f_new, f_old = state.f[new], state.fold[new]
        converged = (_max_abs(state.g[new]) <= pgtol[new]) | (
            f_old - f_new <= tol * np.maximum(np.maximum(np.abs(f_old), np.abs(f_new)), 1.0))
        state.status[new[converged]] = _CONVERGED
        new = new[~converged]
        _update_memory(state, new)
        _start_iterations(state, new)
    status = np.select([state.status == _CONVERGED, state.status == _LIMIT], [0, 1], 2)
    return Result(state.x, state.nit, state.nfev, status)


class _State:
    """Every problem's L-BFGS-B state (scipy's ``isave``/``dsave``), one array per field."""

    def __init__(self, n_problems, dimension, m):
        shape, vectors = (n_problems,), (n_problems, dimension)
        self.m = m
        self.x = np.zeros(vectors)
        self.f, self.g = np.zeros(shape), np.zeros(vectors)
        self.status = np.zeros(shape, dtype=np.int8)
        self.nit, self.nfev, self.iter = (np.zeros(shape, dtype=np.intp) for _ in range(3))
        # Memory: pairs in chronological order, the newest at col - 1.
        self.S, self.Y = np.zeros((n_problems, m, dimension)), np.zeros((n_problems, m, dimension))
        self.sy = np.ones((n_problems, m))
        self.col = np.zeros(shape, dtype=np.intp)
        self.theta = np.ones(shape)
        # The current search (lnsrlb): direction, its z, the saved iterate and gradient.
        self.d, self.z = np.zeros(vectors), np.zeros(vectors)
        self.t, self.r = np.zeros(vectors), np.zeros(vectors)
        self.fold, self.stp, self.gd, self.gdold = (np.zeros(shape) for _ in range(4))
        self.ifun, self.iback = np.zeros(shape, dtype=np.intp), np.zeros(shape, dtype=np.intp)
        # dcsrch's state.
        self.brackt = np.zeros(shape, dtype=bool)
        self.stage = np.ones(shape, dtype=np.intp)
        (self.ginit, self.gtest, self.gx, self.gy, self.finit, self.fx, self.fy, self.stx,
         self.sty, self.stmin, self.stmax, self.width, self.width1) = (
            np.zeros(shape) for _ in range(13))


def _evaluate(fun, which, x):
    with np.errstate(all="ignore"):
        f, g = fun(which, x)
    return np.asarray(f, dtype=float), np.asarray(g, dtype=float)


def _dot(a, b):
    """Each problem's inner product of ``a`` and ``b`` (the last axis): one pass, no
    temporary (the solver's bookkeeping is many of these on small vectors)."""
    return np.einsum("...d,...d->...", a, b)


def _max_abs(g):
    """scipy's ``projgr`` without bounds: ``max|g_i|``, NaN if any is NaN."""
    return np.max(np.abs(g), axis=-1)


def _start_iterations(state, which):
    """The top of scipy's iteration loop: a direction, then the line search's first trial
    (or, on a direction that does not descend, a restart or the end)."""
    while len(which):
        with np.errstate(all="ignore"):
            _direction(state, which)
            x, g, d = state.x[which], state.g[which], state.d[which]
            dnorm = np.sqrt(_dot(d, d))
            first = state.iter[which] == 0
            stp = np.where(first, np.minimum(1.0 / dnorm, STPMAX), 1.0)
        state.t[which], state.r[which] = x, g
        state.fold[which] = state.f[which]
        state.ifun[which] = 0
        state.iback[which] = 0
        gd = _dot(g, d)
        state.gd[which] = state.gdold[which] = gd
        ascent = gd >= 0
        ok = which[~ascent]
        stp = stp[~ascent]
        _dcsrch_start(state, ok, state.f[ok], gd[~ascent], stp)
        state.ifun[ok] = 1
        state.iback[ok] = 0
        _trial_points(state, ok)
        # Not a descent direction (scipy's info -4): a restart, or the end without pairs.
        which = _fail(state, which[ascent])


def _fail(state, which):
    """A failed search: the iterate and gradient restored; no pairs stored: the end
    (scipy's ``ABNORMAL``); otherwise the memory dropped. Returns the problems to restart."""
    state.x[which], state.g[which] = state.t[which], state.r[which]
    ends = state.col[which] == 0
    state.status[which[ends]] = _ABNORMAL
    state.iter[which[ends]] += 1
    restart = which[~ends]
    state.col[restart] = 0
    state.theta[restart] = 1.0
    return restart


def _trial_points(state, which):
    """lnsrlb's trial point: ``z`` at a unit step, else ``stp * d + t``."""
    stp = state.stp[which]
    unit = stp == 1.0
    state.x[which] = np.where(unit[:, None], state.z[which],
                              stp[:, None] * state.d[which] + state.t[which])


def _direction(state, which):
    """``d = z - x`` with ``z = x - g`` (no pairs: the Cauchy point with ``theta = 1``) or
    ``z = x - H g`` (the two-loop recursion over each problem's own pairs)."""
    x, g = state.x[which], state.g[which]
    col, theta = state.col[which], state.theta[which]
    S, Y, sy = state.S[which], state.Y[which], state.sy[which]
    q = g.copy()
    alpha = np.zeros((len(which), state.m))
    # A pair beyond a problem's count adds exactly nothing to it (where every problem has
    # the pair, the same arithmetic without the mask).
    for j in range(state.m - 1, -1, -1):
        valid = j < col
        if not valid.any():
            continue
        alpha[:, j] = _dot(S[:, j], q) / sy[:, j]
        if valid.all():
            q -= alpha[:, j, None] * Y[:, j]
        else:
            alpha[:, j] = np.where(valid, alpha[:, j], 0.0)
            q -= np.where(valid[:, None], alpha[:, j, None] * Y[:, j], 0.0)
    q /= theta[:, None]
    for j in range(state.m):
        valid = j < col
        if not valid.any():
            continue
        step = S[:, j] * (alpha[:, j] - _dot(Y[:, j], q) / sy[:, j])[:, None]
        q += step if valid.all() else np.where(valid[:, None], step, 0.0)
    z = x - q  # with no pairs, q = g / 1
    state.z[which] = z
    state.d[which] = z - x


def _update_memory(state, which):
    """scipy's update after an accepted step (``matupd``), or its skip rule."""
    stp, gd, gdold = state.stp[which], state.gd[which], state.gdold[which]
    y = state.g[which] - state.r[which]
    rr = _dot(y, y)
    unit = stp == 1.0
    dr = np.where(unit, gd - gdold, (gd - gdold) * stp)
    ddum = np.where(unit, -gdold, -gdold * stp)
    s = np.where(unit[:, None], state.d[which], state.d[which] * stp[:, None])
    keep = ~(dr <= EPS * ddum)
    which, s, y, rr, dr = which[keep], s[keep], y[keep], rr[keep], dr[keep]
    full = state.col[which] == state.m
    shift = which[full]
    state.S[shift, :-1] = state.S[shift, 1:]
    state.Y[shift, :-1] = state.Y[shift, 1:]
    state.sy[shift, :-1] = state.sy[shift, 1:]
    position = np.where(full, state.m - 1, state.col[which])
    state.S[which, position], state.Y[which, position] = s, y
    state.sy[which, position] = dr
    state.col[which] = np.minimum(state.col[which] + 1, state.m)
    with np.errstate(all="ignore"):
        state.theta[which] = rr / dr


def _dcsrch_start(state, which, f, g, stp):
    """dcsrch's start for the problems ``which`` (``f``, ``g`` the value and slope at step
    0, ``stp`` the first trial step)."""
    state.stp[which] = stp
    state.brackt[which] = False
    state.stage[which] = 1
    state.finit[which] = state.fx[which] = state.fy[which] = f
    state.ginit[which] = state.gx[which] = state.gy[which] = g
    state.gtest[which] = FTOL * g
    state.width[which] = STPMAX - 0.0
    state.width1[which] = state.width[which] / 0.5
    state.stx[which] = state.sty[which] = state.stmin[which] = 0.0
    state.stmax[which] = stp + 4.0 * stp


def _dcsrch(state, which, f, g):
    """One step of Moré–Thuente's ``dcsrch`` (scipy's C translation) for the problems
    ``which`` after an evaluation (``f``, ``g`` the value and slope along ``d``): True where
    the step is accepted (convergence or a warning); elsewhere the next trial step is set."""
    stp = state.stp[which]
    stpmin, stpmax = 0.0, STPMAX
    brackt, stage = state.brackt[which], state.stage[which]
    ginit, gtest, finit = state.ginit[which], state.gtest[which], state.finit[which]
    gx, gy, fx, fy = state.gx[which], state.gy[which], state.fx[which], state.fy[which]
    stx, sty = state.stx[which], state.sty[which]
    stmin, stmax = state.stmin[which], state.stmax[which]
    width, width1 = state.width[which], state.width1[which]
    with np.errstate(all="ignore"):
        ftest = finit + stp * gtest
        stage = np.where((stage == 1) & (f <= ftest) & (g >= 0.0), 2, stage)
        accept = ((brackt & ((stp <= stmin) | (stp >= stmax)))
                  | (brackt & ((stmax - stmin) <= XTOL * stmax))
                  | ((stp == stpmax) & (f <= ftest) & (g <= gtest))
                  | ((stp == stpmin) & ((f > ftest) | (g >= gtest)))
                  | ((f <= ftest) & (np.abs(g) <= GTOL * (-ginit))))
        # The modified function (f - stp * gtest) in stage 1 when the value did not rise.
        modified = (stage == 1) & (f <= fx) & (f > ftest)
        fm = np.where(modified, f - stp * gtest, f)
        fxm = np.where(modified, fx - stx * gtest, fx)
        fym = np.where(modified, fy - sty * gtest, fy)
        gm = np.where(modified, g - gtest, g)
        gxm = np.where(modified, gx - gtest, gx)
        gym = np.where(modified, gy - gtest, gy)
        stx, fxm, gxm, sty, fym, gym, stp, brackt = _dcstep(
            stx, fxm, gxm, sty, fym, gym, stp, fm, gm, brackt, stmin, stmax)
        fx = np.where(modified, fxm + stx * gtest, fxm)
        fy = np.where(modified, fym + sty * gtest, fym)
        gx = np.where(modified, gxm + gtest, gxm)
        gy = np.where(modified, gym + gtest, gym)
        wide = brackt & (np.abs(sty - stx) >= 0.66 * width1)
        stp = np.where(wide, stx + 0.5 * (sty - stx), stp)
        width1 = np.where(brackt, width, width1)
        width = np.where(brackt, np.abs(sty - stx), width)
        stmin_new = np.where(brackt, np.minimum(stx, sty), stp + 1.1 * (stp - stx))
        stmax = np.where(brackt, np.maximum(stx, sty), stp + 4.0 * (stp - stx))
        stmin = stmin_new
        stp = np.minimum(np.maximum(stp, stpmin), stpmax)
        back = (brackt & ((stp <= stmin) | (stp >= stmax))) | (
            brackt & (stmax - stmin <= XTOL * stmax))
        stp = np.where(back, stx, stp)
    go = ~accept  # an accepted step keeps its state (scipy saves it unchanged)
    sel = which[go]
    state.stp[sel] = stp[go]
    state.brackt[sel], state.stage[sel] = brackt[go], stage[go]
    state.gx[sel], state.gy[sel], state.fx[sel], state.fy[sel] = gx[go], gy[go], fx[go], fy[go]
    state.stx[sel], state.sty[sel] = stx[go], sty[go]
    state.stmin[sel], state.stmax[sel] = stmin[go], stmax[go]
    state.width[sel], state.width1[sel] = width[go], width1[go]
    return accept


def _dcstep(stx, fx, dx, sty, fy, dy, stp, fp, dp, brackt, stpmin, stpmax):
    """Moré–Thuente's safeguarded step (scipy's ``dcstep``), every case computed and the
    problem's own one selected."""
    sgnd = dp * (dx / np.abs(dx))
    case1 = fp > fx
    case2 = ~case1 & (sgnd < 0.0)
    case3 = ~case1 & ~case2 & (np.abs(dp) < np.abs(dx))
    # Case 1: a higher function value: the minimum is bracketed.
    theta = 3.0 * (fx - fp) / (stp - stx) + dx + dp
    s = np.maximum(np.abs(theta), np.maximum(np.abs(dx), np.abs(dp)))
    gamma = s * np.sqrt((theta / s) ** 2 - (dx / s) * (dp / s))
    gamma1 = np.where(stp < stx, -gamma, gamma)
    p = (gamma1 - dx) + theta
    q = ((gamma1 - dx) + gamma1) + dp
    stpc = stx + p / q * (stp - stx)
    stpq = stx + ((dx / ((fx - fp) / (stp - stx) + dx)) / 2.0) * (stp - stx)
    stpf1 = np.where(np.abs(stpc - stx) < np.abs(stpq - stx), stpc,
                     stpc + (stpq - stpc) / 2.0)
    # Case 2: derivatives of opposite sign: bracketed.
    gamma2 = np.where(stp > stx, -gamma, gamma)
    p = (gamma2 - dp) + theta
    q = ((gamma2 - dp) + gamma2) + dx
    stpc = stp + p / q * (stx - stp)
    stpq = stp + (dp / (dp - dx)) * (stx - stp)
    stpf2 = np.where(np.abs(stpc - stp) > np.abs(stpq - stp), stpc, stpq)
    # Case 3: the derivative's magnitude decreases.
    gamma = s * np.sqrt(np.maximum(0.0, (theta / s) ** 2 - (dx / s) * (dp / s)))
    gamma3 = np.where(stp > stx, -gamma, gamma)
    p = (gamma3 - dp) + theta
    q = (gamma3 + (dx - dp)) + gamma3
    r = p / q
    stpc = np.where((r < 0.0) & (gamma3 != 0.0), stp + r * (stx - stp),
                    np.where(stp > stx, stpmax, stpmin))
    stpq = stp + (dp / (dp - dx)) * (stx - stp)
    bracketed = np.where(np.abs(stpc - stp) < np.abs(stpq - stp), stpc, stpq)
    bracketed = np.where(stp > stx, np.minimum(stp + 0.66 * (sty - stp), bracketed),
                         np.maximum(stp + 0.66 * (sty - stp), bracketed))
    free = np.where(np.abs(stpc - stp) > np.abs(stpq - stp), stpc, stpq)
    free = np.maximum(stpmin, np.minimum(stpmax, free))
    stpf3 = np.where(brackt, bracketed, free)
    # Case 4: the derivative's magnitude does not decrease.
    theta = 3.0 * (fp - fy) / (sty - stp) + dy + dp
    s = np.maximum(np.abs(theta), np.maximum(np.abs(dy), np.abs(dp)))
    gamma = s * np.sqrt((theta / s) ** 2 - (dy / s) * (dp / s))
    gamma = np.where(stp > sty, -gamma, gamma)
    p = (gamma - dp) + theta
    q = ((gamma - dp) + gamma) + dy
    stpc = stp + p / q * (sty - stp)
    stpf4 = np.where(brackt, stpc, np.where(stp > stx, stpmax, stpmin))
    stpf = np.select([case1, case2, case3], [stpf1, stpf2, stpf3], stpf4)
    brackt = brackt | case1 | case2
    # The new interval.
    sty_new = np.where(case1, stp, np.where(sgnd < 0.0, stx, sty))
    fy_new = np.where(case1, fp, np.where(sgnd < 0.0, fx, fy))
    dy_new = np.where(case1, dp, np.where(sgnd < 0.0, dx, dy))
    stx_new = np.where(case1, stx, stp)
    fx_new = np.where(case1, fx, fp)
    dx_new = np.where(case1, dx, dp)
    return stx_new, fx_new, dx_new, sty_new, fy_new, dy_new, stpf, brackt
