"""Private linear models that diffprivlib's own do not cover, or do not calibrate correctly."""

import os
from numbers import Real

import numpy as np
from diffprivlib.mechanisms import Laplace
from diffprivlib.models import LinearRegression
from diffprivlib.models import LogisticRegression as DPLogisticRegression
from diffprivlib.utils import check_random_state
from scipy.optimize import minimize
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._clipping import clip_to_norm, validate_clippable
from .._diffprivlib import logistic_regression_path, validate_data
from .._sklearn_compat import Interval
from .._validation import declared_classes
from .base import accountant_of, declared_class_count, random_sources, start_fit
from .facts import ModelFacts

#: :class:`Ridge`'s default ``noise_alpha``. On three real tables (``benchmarks/ridge_penalty.py``:
#: 22,524 to 47,030 rows, 13 to 27 features, epsilon 0.36 to 4) the best ``noise_alpha`` was 0.7
#: to 4 (the best ``alpha`` in records 1e3 to 1e5); 1 and below went far below a constant
#: predictor at small epsilon, and 2 did not (R² at worst -8 points, on a table where no setting
#: reached +3 at that epsilon) while losing at most 21 points to the best setting. Chosen on
#: two of the tables and checked on the third; a safe untuned value, not an optimum.
NOISE_ALPHA = 2.0


def noise_scale(epsilon, bounds_X, fit_intercept=True, n_targets=1):
    r"""The spectral scale of the noise on ``X'X`` in :class:`Ridge`'s fit.

    :class:`Ridge` spends ``epsilon (1 - s)`` (``s = 1 / (d + 1)`` with ``fit_intercept``, else
    0) evenly on ``t + t d + d (d + 1) / 2`` Laplace releases (``t`` targets), so entry ``(i, j)``
    of ``X'X`` gets Laplace noise of scale ``b_ij = w_i w_j / e_local``, with ``w_i`` the
    reach of feature ``i`` (its declared width ``upper - lower`` when the data are centred,
    else ``max(|lower|, |upper|)``: the corner products span at most ``w_i w_j``, up to a
    factor 2 without centring). A symmetric matrix of such entries has its spectrum within
    about ``2 sqrt(max_i sum_j var_ij) = 2 sqrt(2) max(w) ||w|| / e_local`` (the semicircle
    radius; ``2 sqrt(2 d) / e_local`` for unit widths). A function of public constants only,
    and a unit, not a bound: the largest noise eigenvalue of one draw can exceed it.

    Parameters
    ----------
    epsilon : float
        The model's ``epsilon``.
    bounds_X : tuple of ndarray of shape (n_features,)
        The declared ``(lower, upper)`` per feature.
    fit_intercept : bool, default=True
    n_targets : int, default=1

    Returns
    -------
    float
    """
    lower, upper = (np.asarray(bound, dtype=float) for bound in bounds_X)
    d = len(lower)
    reach = upper - lower if fit_intercept else np.maximum(np.abs(lower), np.abs(upper))
    local_epsilon = epsilon * (1 - _centring_share(d, fit_intercept)) / _n_releases(d, n_targets)
    return float(2 * np.sqrt(2) * reach.max() * np.linalg.norm(reach) / local_epsilon)


def _centring_share(n_features, fit_intercept):
    """The share ``s`` of a fit's ``epsilon`` that buys the centring means: ``1 / (d + 1)``
    with an intercept (diffprivlib's choice), else 0."""
    return 1 / (n_features + 1) if fit_intercept else 0.0


def _n_releases(n_features, n_targets):
    """The monomial coefficients of the least-squares objective: ``t`` sums of ``y_k ** 2``,
    ``t d`` of ``x_j y_k``, ``d (d + 1) / 2`` of ``x_i x_j``."""
    return n_targets + n_targets * n_features + n_features * (n_features + 1) / 2


def _corner_range(a_low, a_high, b_low, b_high):
    """``max - min`` of ``a * b`` over the box: what one record moves a sum of ``a * b`` by
    (diffprivlib's ``get_max_sensitivity``, elementwise over arrays of bounds)."""
    # Running maxima and minima written into the products' own arrays: the same values as
    # np.max and np.min of the stacked corners (both exact), without temporaries (the
    # batched Ridge family asks for d (d - 1) / 2 ranges per partition).
    p1, p2 = np.multiply(a_low, b_low), np.multiply(a_low, b_high)
    p3, p4 = np.multiply(a_high, b_low), np.multiply(a_high, b_high)
    high = np.maximum(p1, p2)
    for other in (p3, p4):
        np.maximum(high, other, out=high)
    for other in (p2, p3, p4):
        np.minimum(p1, other, out=p1)
    return np.subtract(high, p1, out=high)


def _square_range(low, high):
    """``max(|low|, |high|) ** 2``, elementwise: at least what one record moves a sum of
    squares by (exactly, when the box contains 0)."""
    return np.maximum(np.abs(low), np.abs(high)) ** 2


def noisy_objective(X, y, bounds_X, bounds_y, epsilon, random_state):
    r"""The functional mechanism's releases (Zhang et al. 2012), calibrated to the boxes.

    diffprivlib 0.6.6's ``_construct_regression_obj`` with two of its calibrations corrected:
    the noise on each ``sum(x_j ** 2)`` uses ``max(|lower_j|, |upper_j|) ** 2`` (diffprivlib
    takes the lower bound twice: no noise at all when it is 0, IBM/differential-privacy-library
    #105), and ``epsilon`` is split over all ``t + t d + d (d + 1) / 2`` releases (diffprivlib
    divides by ``1 + t d + ...``, too few for ``t > 1`` targets).

    Privacy: every row of ``X`` and ``y`` must lie in the boxes (the caller clips). Under
    replace-one adjacency a sum of ``f(record)`` moves by at most the range of ``f`` over the
    box: ``max(|lower|, |upper|) ** 2`` for a square (at least its range), the corner range for
    a product. Each sum gets Laplace noise of that sensitivity over ``epsilon / (t + t d + d (d
    + 1) / 2)`` (the squares folded at 0, a post-processing); basic composition gives
    ``epsilon``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples, n_targets)
    bounds_X, bounds_y : tuple of ndarray
        ``(lower, upper)`` boxes holding every row of ``X`` and ``y``.
    epsilon : float
    random_state : numpy.random.RandomState

    Returns
    -------
    (c, b, Q) : tuple of ndarray
        Noisy ``sum(y ** 2)`` per target (shape ``(t,)``), ``X'y`` (``(d, t)``) and ``X'X``
        (``(d, d)``, symmetric).
    """
    return noisy_monomials(monomials(X, y), bounds_X, bounds_y, epsilon, random_state)


def monomials(X, y):
    """The least-squares objective's monomial sums: ``sum(y ** 2)`` per target, ``X'y`` and
    ``X'X`` (summable over any split of the records)."""
    return np.einsum("ik,ik->k", y, y), X.T @ y, X.T @ X


def noisy_means(means, n, bounds, epsilon, random_state):
    """diffprivlib's ``tools.mean`` mechanism, column by column, from the true means of ``n``
    records clipped to ``bounds``: the centring means of :class:`Ridge`'s fit, in memory or
    reduced over chunks (``skdptune._distributed``).

    Each column: ``LaplaceTruncated(epsilon, sensitivity=(upper - lower) / n)`` on ``[lower,
    upper]``, as ``diffprivlib.tools.mean(values, axis=0, epsilon=epsilon * d)`` draws it for
    each of its ``d`` columns in turn: Laplace noise (:func:`laplace_releases`, the same
    draws in the same order) truncated to the bounds (``LaplaceTruncated``'s truncation: a
    clip). ``epsilon``-DP each under replace-one adjacency with ``n`` public: one record
    moves a mean of values in ``[lower, upper]`` by at most ``(upper - lower) / n``.
    """
    lower, upper = bounds
    means = np.asarray(means, dtype=float)
    noisy = laplace_releases(means, (upper - lower) / n, np.zeros(len(means), dtype=bool),
                             epsilon, random_state)
    return np.clip(noisy, lower, upper)


def noisy_monomials(sums, bounds_X, bounds_y, epsilon, random_state):
    """:func:`noisy_objective`'s releases from the monomial sums (:func:`monomials`) of
    records within the boxes: the one place its mechanisms run, whether the sums were
    computed in memory or reduced over chunks (``skdptune._distributed``).

    Parameters
    ----------
    sums : (ndarray, ndarray, ndarray)
        ``sum(y ** 2)`` (``(t,)``), ``X'y`` (``(d, t)``) and ``X'X`` (``(d, d)``).
    bounds_X, bounds_y, epsilon, random_state
        As for :func:`noisy_objective`.

    Returns
    -------
    (c, b, Q) : tuple of ndarray
        As :func:`noisy_objective`.
    """
    (x_low, x_high), (y_low, y_high) = bounds_X, bounds_y
    squares, cross, gram = sums
    n_features, n_targets = cross.shape
    local = epsilon / _n_releases(n_features, n_targets)
    # Every monomial in diffprivlib's order (sum(y_k ** 2) per target; x_j y_k, j outer;
    # X'X's upper triangle row by row, each diagonal entry first), with its sensitivity and
    # whether its mechanism is LaplaceFolded on [0, inf) (the squares) or Laplace.
    rows, columns = np.triu_indices(n_features)
    diagonal = rows == columns
    values = np.concatenate([squares, cross.ravel(), gram[rows, columns]])
    sensitivities = np.concatenate([
        _square_range(y_low, y_high),
        _corner_range(y_low[None, :], y_high[None, :], x_low[:, None],
                      x_high[:, None]).ravel(),
        np.where(diagonal, _square_range(x_low, x_high)[rows],
                 _corner_range(x_low[rows], x_high[rows], x_low[columns], x_high[columns])),
    ])
    folded = np.concatenate([np.ones(n_targets, bool), np.zeros(cross.size, bool), diagonal])
    noisy = laplace_releases(values, sensitivities, folded, local, random_state)
    c, b = noisy[:n_targets], noisy[n_targets:n_targets + cross.size]
    Q = np.zeros((n_features, n_features))
    Q[rows, columns] = Q[columns, rows] = noisy[n_targets + cross.size:]
    return c, b.reshape(n_features, n_targets), Q


def laplace_releases(values, sensitivities, folded, epsilon, random_state):
    """``values[i]`` through diffprivlib's ``Laplace`` (or, where ``folded[i]``,
    ``LaplaceFolded`` on ``[0, inf)``) of ``epsilon`` and ``sensitivities[i]``, one after the
    other, drawn at once.

    The same four uniforms per value in the same order from ``random_state`` (:func:`_uniforms`),
    the same sampler (``Laplace._laplace_sampler``) and scale (``sensitivity / epsilon``,
    ``delta = 0``), and the fold of ``LaplaceFolded`` on ``[0, inf)`` (a negative draw
    reflected at 0: its absolute value). A mechanism keeps no state between draws, so these
    are the releases of a fresh mechanism per value, tested so under a seed
    (``tests/unit/test_linear_model.py``); one mechanism is built to validate ``epsilon`` as
    diffprivlib does. Each value is one epsilon-DP release when its sensitivity bounds what
    one record moves it by (the caller's proof).
    """
    Laplace(epsilon=epsilon, sensitivity=float(np.max(sensitivities, initial=0.0)))
    u1, u2, u3, u4 = _uniforms(check_random_state(random_state, secure=True),
                               4 * len(values)).reshape(-1, 4).T
    noisy = values - sensitivities / epsilon * Laplace._laplace_sampler(u1, u2, u3, u4)
    return np.where(folded, np.abs(noisy), noisy)


def _uniforms(rng, count):
    """``count`` draws of ``rng.random()`` at once: a ``RandomState``'s vector is its scalar
    draws in order; for diffprivlib's secure generator (``secrets.SystemRandom``, what
    ``random_state=None`` gives) the same law read in one call to ``os.urandom``: its
    ``random()`` is 53 random bits over ``2 ** 53``, here the top 53 of 64 random bits."""
    if isinstance(rng, np.random.RandomState):
        return rng.random_sample(count)
    bits = np.frombuffer(os.urandom(8 * count), dtype=np.uint64) >> np.uint64(11)
    return bits * 2.0 ** -53


def objective(c, b, Q, alpha):
    """``w -> (c - 2 b.w + w'Qw + alpha w'w, its gradient)``: diffprivlib's ``inner_obj``
    for one target (``c`` a number, ``b`` of shape ``(d,)``), with ``w'Qw`` as ``w.(Qw)``:
    one matrix-vector product serves the value and the gradient (diffprivlib forms ``w w'``;
    the same numbers to rounding)."""
    def value_and_gradient(omega):
        Q_omega = Q @ omega
        return (c - 2 * (b @ omega) + omega @ Q_omega + alpha * (omega @ omega),
                -2 * b + 2 * Q_omega + 2 * alpha * omega)

    return value_and_gradient


#: Largest condition number of ``Q + alpha I`` solved directly (:func:`penalised_minimiser`);
#: above it, or where it is not positive definite, scipy's BFGS, as diffprivlib calls it.
MAX_CONDITION = 1e8


def penalised_minimiser(c, b, Q, alpha):
    """The minimiser of ``c - 2 b.w + w'Qw + alpha w'w`` (:func:`objective`) for one target.

    ``(Q + alpha I)^-1 b`` where ``Q + alpha I`` is positive definite with condition number at
    most :data:`MAX_CONDITION`: the objective's unique minimiser, to which diffprivlib's call,
    ``scipy.optimize.minimize(objective, zeros, jac=True)`` (BFGS), converges to its
    tolerance. Elsewhere (the noise can make the quadratic indefinite, and the objective
    unbounded below) that same BFGS call, whose answer depends on its path. A public function
    of the noisy releases: post-processing. The batched partition fits follow the same rule
    (``skdptune._batched.linear_regression.solve``).
    """
    penalised = Q + alpha * np.eye(len(b))
    eigenvalues = np.linalg.eigvalsh(penalised)
    if eigenvalues[0] > 0 and eigenvalues[-1] <= MAX_CONDITION * eigenvalues[0]:
        return np.linalg.solve(penalised, b)
    with np.errstate(all="ignore"):
        return minimize(objective(c, b, Q, alpha), np.zeros(len(b)), jac=True).x


class Ridge(LinearRegression):
    r"""diffprivlib's ``LinearRegression``, correctly calibrated, with a ridge penalty.

    diffprivlib's ``LinearRegression`` (the functional mechanism, Zhang et al. 2012) perturbs
    the coefficients of the least-squares objective: the sums ``y'y``, ``X'y`` and ``X'X`` of
    the centred data. In diffprivlib 0.6.6 it is not ``epsilon``-DP (the refit gate refuses
    it): the noise on the diagonal of ``X'X`` is calibrated to the lower bound alone (none at
    all when it is 0), and the means that centre the data spend their share of ``epsilon``
    twice. This class makes the same releases with those calibrations corrected
    (``noisy_objective``). The noisy ``X'X`` need not be positive definite; the objective
    is then unbounded below and the solver returns coefficients far outside anything the data
    support (test R² of -10 and below on real tables at epsilon up to 100). This class
    minimises the noisy objective plus ``alpha_ * ||w||^2``, where ``alpha_ = alpha +
    noise_alpha * noise_scale_``:

    - ``alpha`` is scikit-learn's :class:`~sklearn.linear_model.Ridge` penalty against the
      *sum* of squared errors, in units of records;
    - ``noise_alpha`` is in units of the noise itself: ``noise_scale_`` is the spectral scale
      of the noise added to ``X'X``, a public function of ``epsilon``, the declared
      ``bounds_X`` and the number of features (``noise_scale``). The noisy ``X'X`` is
      indefinite when its noise outweighs the data's smallest eigenvalue; a penalty of about
      ``noise_scale_`` makes the objective bounded whatever the data, and the best penalty
      moves with epsilon as the noise does. On three real tables
      (``benchmarks/ridge_penalty.py``) the best ``noise_alpha`` was 0.7 to 4 at 21 epsilons
      from 0.36 to 4, while the best ``alpha`` moved from 1e3 to 1e5: a grid in
      ``noise_alpha`` means nearly the same thing at every budget. A search's partition fits
      need nothing more: their ``epsilon`` is rescaled, and ``noise_scale_`` with it.

    Privacy (replace-one adjacency with ``n`` public, as diffprivlib's models): ``epsilon`` per
    fit, given declared ``bounds_X`` and ``bounds_y``, to which every record is clipped. With
    ``fit_intercept``, ``epsilon / (d + 1)`` buys the ``d + t`` noisy means that centre the
    data (``noisy_means``, ``diffprivlib.tools.mean``'s mechanism: ``LaplaceTruncated``,
    sensitivity ``(upper - lower) / n``; an equal share each), and the rest the ``t + t d + d
    (d + 1) / 2`` noisy monomial coefficients on the boxes shifted by those means
    (``noisy_objective``: Laplace, sensitivities the ranges of the monomials over the boxes);
    basic composition gives ``epsilon``. The penalty is a function of public constants
    (``alpha``, ``noise_alpha``, ``epsilon``, the declared ``bounds_X``, the numbers of
    features and targets; never of the data, nor of the noisy offsets) and the coefficients the
    minimiser of a public function of the noisy releases: no further privacy cost. ``epsilon``
    is recorded on the accountant, as diffprivlib's models do.

    Parameters
    ----------
    alpha : float, default=1.0
        The penalty on ``||w||^2``, against the sum of squared errors over the training rows
        (scikit-learn's ``Ridge`` convention). Not applied to the intercept.
    noise_alpha : float, default=NOISE_ALPHA
        The penalty on ``||w||^2`` in units of ``noise_scale``, added to ``alpha``. 0
        leaves ``alpha`` alone (``alpha=0, noise_alpha=0``: no penalty, diffprivlib's model
        correctly calibrated).
    epsilon, bounds_X, bounds_y, fit_intercept, copy_X, random_state, accountant
        As for diffprivlib's ``LinearRegression``.
    **unused_args
        As for diffprivlib's ``LinearRegression`` (warned about and ignored).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
    intercept_ : float or ndarray of shape (n_targets,)
    noise_scale_ : float
        ``noise_scale`` of this fit (public: ``epsilon``, ``bounds_X``, ``n_features``).
    alpha_ : float
        The penalty the fit used: ``alpha + noise_alpha * noise_scale_``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune.linear_model import Ridge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((20000, 3))
    >>> y = X @ [1.0, 2.0, 0.0] + rng.normal(0, 0.1, 20000)
    >>> model = Ridge(epsilon=1.0, bounds_X=(0, 1), bounds_y=(-1, 4),
    ...               random_state=0).fit(X, y)
    >>> bool(model.score(X, y) > 0.8)
    True
    """

    _parameter_constraints = {
        **LinearRegression._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left")],
        "noise_alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, alpha=1.0, noise_alpha=NOISE_ALPHA, epsilon=1.0, bounds_X=None,
                 bounds_y=None, fit_intercept=True, copy_X=True, random_state=None,
                 accountant=None, **unused_args):
        super().__init__(epsilon=epsilon, bounds_X=bounds_X, bounds_y=bounds_y,
                         fit_intercept=fit_intercept, copy_X=copy_X, random_state=random_state,
                         accountant=accountant, **unused_args)
        self.alpha = alpha
        self.noise_alpha = noise_alpha

    def total_alpha(self, bounds_X, n_targets=1):
        """``(alpha + noise_alpha * noise_scale, noise_scale)`` for these expanded bounds.

        Parameters
        ----------
        bounds_X : tuple of ndarray of shape (n_features,)
            The declared ``(lower, upper)`` per feature.
        n_targets : int, default=1

        Returns
        -------
        alpha : float
        noise_scale : float
        """
        scale = noise_scale(self.epsilon, bounds_X, self.fit_intercept, n_targets)
        return self.alpha + self.noise_alpha * scale, scale

    def fit(self, X, y, sample_weight=None):
        """Fit the penalised model on the noisy objective (see the class's privacy note).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : ignored
            As in diffprivlib (warned about).

        Returns
        -------
        self : Ridge
        """
        # Privacy (one fit; replace-one adjacency, n public, as diffprivlib's models): every
        # record is clipped to the declared boxes. With an intercept, epsilon * s
        # (s = 1 / (d + 1)) buys the d + t noisy means that centre the data, epsilon * s /
        # (d + t) each (noisy_means, diffprivlib.tools.mean's mechanism: LaplaceTruncated,
        # sensitivity (upper - lower) / n), and epsilon * (1 - s) the objective's releases on
        # the boxes shifted by those means (noisy_objective); basic composition gives epsilon.
        # diffprivlib 0.6.6's own fit gives epsilon * s to X's means and again to y's (epsilon
        # (1 + s) in all) and does not clip without an intercept. The penalty is public; the
        # minimiser is post-processing.
        random_state = self._start_fit(sample_weight)
        X, y = validate_clippable(self, X, y, accept_sparse=False, y_numeric=True,
                                  multi_output=True)
        targets = y.reshape(len(y), -1)
        n_features, n_targets = X.shape[1], targets.shape[1]
        bounds_X = self._check_bounds(self.bounds_X, n_features)
        bounds_y = self._check_bounds(self.bounds_y, n_targets)
        X, targets = np.clip(X, *bounds_X), np.clip(targets, *bounds_y)
        share = _centring_share(n_features, self.fit_intercept)
        if self.fit_intercept:
            per_mean = self.epsilon * share / (n_features + n_targets)
            X_offset, y_offset = (noisy_means(values.mean(axis=0), len(values), bounds,
                                              per_mean, random_state)
                                  for values, bounds in ((X, bounds_X), (targets, bounds_y)))
        else:
            X_offset, y_offset = np.zeros(n_features), np.zeros(n_targets)
        return self.release(monomials(X - X_offset, targets - y_offset), X_offset, y_offset,
                            (bounds_X, bounds_y), y.ndim, random_state)

    def _start_fit(self, sample_weight=None):
        """The shared prologue (:func:`~skdptune._models.base.start_fit`: ``bounds_X`` and
        ``bounds_y`` declared) and the noise generator
        (:func:`~skdptune._models.base.random_sources`): what every fit does before it reads
        the data."""
        start_fit(self, ("bounds_X", "bounds_y"), sample_weight)
        return random_sources(self.random_state)[0]

    def release(self, sums, X_offset, y_offset, bounds, y_ndim, random_state):
        """The objective's releases and the penalised fit, from the centred monomial sums.

        The one place the objective's mechanisms run, whether the sums were computed in
        memory (:meth:`fit`) or reduced over chunks (``skdptune._distributed``): the same
        mechanisms in the same order, so the same law and the same charge.

        Parameters
        ----------
        sums : (ndarray, ndarray, ndarray)
            :func:`monomials` of the clipped records centred by the noisy offsets.
        X_offset, y_offset : ndarray of shape (n_features,) and (n_targets,)
            The noisy centring means (zeros without an intercept).
        bounds : (tuple, tuple)
            The expanded ``bounds_X`` and ``bounds_y``.
        y_ndim : int
            1 for a single target given as a vector.
        random_state : numpy.random.RandomState or None

        Returns
        -------
        self : Ridge

        Notes
        -----
        Privacy: the objective's releases spend ``epsilon (1 - s)`` on the boxes shifted by
        the offsets (:func:`noisy_objective`); the caller spent ``epsilon s`` on the offsets
        (see :meth:`fit`). Basic composition: ``epsilon``, recorded here.
        """
        bounds_X, bounds_y = bounds
        n_features, n_targets = len(X_offset), len(y_offset)
        share = _centring_share(n_features, self.fit_intercept)
        self.alpha_, self.noise_scale_ = self.total_alpha(bounds_X, n_targets)
        c, b, Q = self._obj_coefs = noisy_monomials(
            sums, (bounds_X[0] - X_offset, bounds_X[1] - X_offset),
            (bounds_y[0] - y_offset, bounds_y[1] - y_offset), self.epsilon * (1 - share),
            random_state)
        coef = np.column_stack([penalised_minimiser(c[k], b[:, k], Q, self.alpha_)
                                for k in range(n_targets)])
        self.coef_ = np.ravel(coef.T) if y_ndim == 1 else coef.T
        self._set_intercept(X_offset, y_offset[0] if y_ndim == 1 else y_offset,
                            np.ones(n_features))
        accountant_of(self).spend(self.epsilon, 0)
        return self


#: The least share of a :class:`LogisticRegression` problem's ``epsilon`` that its noise vector
#: gets (``epsilon' >= NOISE_SHARE * epsilon``, :func:`objective_perturbation`); the rest pays
#: for the penalty's term, raised where ``C`` would leave less. A larger share is less noise
#: and more penalty: near 1 the fit tends to the noisy loss gradient at 0, a crude
#: classifier. Measured (``benchmarks/lr_epsilon_ladder.py --shares``: 13 pairs of a setting
#: and an epsilon where some share raises the penalty, on UCI Adult and a generated table
#: with correlated features): 0.9 scored within 1.1 points of the best of 0.5, 0.75, 0.9
#: and 0.97 at each, 0.97 within 1.7, 0.75 within 3.5, 0.5 within 6.4. A public constant,
#: not tuned per data set.
NOISE_SHARE = 0.9


def objective_perturbation(epsilon, norm, C, share=None):
    r"""``epsilon'`` and the extra ridge of objective perturbation for one logistic problem.

    The mechanism (Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2, in diffprivlib's
    parametrisation): rows of L2 norm at most ``R = norm`` (diffprivlib's
    ``data_sensitivity``), the logistic loss ``l(z)`` with ``|l'| <= 1`` and ``0 <= l'' <= c
    = 1/4`` (``function_sensitivity``), a penalty ``a ||w||^2 / 2`` against the *sum* of the
    ``n`` losses (``a = 1 / C``, the paper's ``n Lambda``). It releases the minimiser ``w`` of
    ``sum_i l(y_i w.x_i) / n + a ||w||^2 / (2 n) + b.w / n``, ``b`` of density proportional
    to ``exp(-epsilon' ||b|| / (2 R))`` (``||b|| ~ Gamma(D, 2 R / epsilon')``, a uniform
    direction).

    Privacy (the paper's theorem for Algorithm 2; replace-one adjacency, ``n`` public):
    ``b`` is the function ``-(sum_i l'(.) y_i x_i + a w)`` of ``w`` and the data, so the
    density of ``w`` is that of ``b`` times the Jacobian ``|det(d b / d w)|``. Replacing one
    record moves ``b`` by two loss gradients, ``||b - b'|| <= 2 R``: a density ratio of at
    most ``exp(epsilon')``. It changes the Hessian ``sum_i l'' x_i x_i' + a I`` (at least
    ``a I``) by a matrix of rank 2 whose eigenvalues lie in ``[-c R^2, c R^2]``: a
    determinant ratio of at most ``(1 + c R^2 / a)^2``; diffprivlib uses ``c R`` (``>= c
    R^2`` for ``R <= 1``, the case :class:`LogisticRegression` fits). The privacy loss is at
    most ``epsilon' + J(a)``, ``J(a) = 2 log(1 + c R / a)``: ``epsilon`` exactly when
    ``epsilon' = epsilon - J(a)``.

    The rule picks ``a`` and so ``epsilon'``. With ``share`` (skdptune's rule): where ``J(1 /
    C) <= (1 - share) epsilon``, ``a = 1 / C`` and ``epsilon' = epsilon - J(1 / C) >= share *
    epsilon``; elsewhere ``a`` is raised to ``a* = c R / expm1((1 - share) epsilon / 2)``,
    the penalty with ``J(a*) = (1 - share) epsilon``, and ``epsilon' = share * epsilon``.
    Either way ``epsilon' + J(a) = epsilon``: the problem is ``epsilon``-DP, no more and no
    less than diffprivlib's, and ``epsilon' >= share * epsilon``. ``a*`` is a function of
    ``epsilon``, ``R`` and ``share`` only (public; not of the data, nor of ``n``), so the
    released minimiser is Algorithm 2's with the penalty ``a`` (the paper's ``Lambda +
    Delta``). ``share=None`` is diffprivlib 0.6.6's rule (``Vector.randomise``), which keeps
    ``epsilon' = epsilon - J(1 / C)`` however small once positive and switches to ``a*``
    with ``share = 1/2`` only where it is not: ``epsilon'`` falls from ``epsilon / 2`` to 0
    as ``epsilon`` rises through ``J(1 / C)``, and the noise's scale ``2 R / epsilon'``
    diverges there.

    Parameters
    ----------
    epsilon : float or ndarray
        The problem's epsilon.
    norm : float
        ``R``, the bound on a row's L2 norm as the mechanism sees it (the intercept's 1
        included).
    C : float or ndarray
        Inverse penalty on the sum of losses, as the mechanism sees it.
    share : float in (0, 1) or None, default=None
        The least share of ``epsilon`` that ``epsilon'`` gets (:data:`NOISE_SHARE` for
        :class:`LogisticRegression`); None: diffprivlib's rule.

    Returns
    -------
    epsilon_p : float or ndarray
        ``epsilon'``.
    extra : float or ndarray
        ``a - 1 / C``, the extra ridge times ``n`` (diffprivlib's ``delta * n``): 0 where
        ``1 / C`` is kept.
    """
    epsilon = np.asarray(epsilon, dtype=float)
    epsilon_p = epsilon - 2 * np.log1p(0.25 * norm * C)
    if share is None:
        short, share = epsilon_p <= 0, 0.5
    else:
        short = epsilon_p < share * epsilon
    # Both branches are computed: the unused one may overflow (a huge epsilon) or divide by 0.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        extra = np.where(short, 0.25 * norm / np.expm1((1 - share) * epsilon / 2) - 1.0 / C,
                         0.0)
    return np.where(short, share * epsilon, epsilon_p), extra


def logistic_unit_ball(data_norm, fit_intercept):
    """How :class:`LogisticRegression` maps a clipped row into diffprivlib's calibrated case.

    A row clipped to L2 norm ``data_norm`` (with a constant 1 appended when ``fit_intercept``)
    has norm at most ``sqrt(data_norm**2 + fit_intercept)``; divided by ``scale``, the larger
    of that and 1, it has norm at most ``inner_norm <= 1``.

    Parameters
    ----------
    data_norm : float
    fit_intercept : bool

    Returns
    -------
    scale : float
    inner_norm : float
    """
    norm = float(np.sqrt(data_norm ** 2 + int(fit_intercept)))
    scale = max(norm, 1.0)
    return scale, norm / scale


def logistic_features(X, data_norm, fit_intercept, clip):
    """The rows :class:`LogisticRegression`'s inner fit sees: ``X`` (clipped to ``data_norm``
    when ``clip``, as a fit does; a prediction reads rows as they are), a constant 1 appended
    when ``fit_intercept``, all divided by :func:`logistic_unit_ball`'s ``scale``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    data_norm : float
    fit_intercept : bool
    clip : bool

    Returns
    -------
    Z : ndarray of shape (n_samples, n_features + fit_intercept)
    """
    X = clip_to_norm(np.asarray(X, dtype=float), data_norm) if clip else np.asarray(X, float)
    if fit_intercept:
        X = np.hstack([X, np.ones((len(X), 1))])
    return X / logistic_unit_ball(data_norm, fit_intercept)[0]


class LogisticRegression(DPLogisticRegression):
    r"""diffprivlib's ``LogisticRegression``, correctly calibrated, its noise never starved.

    diffprivlib's model is objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011,
    Algorithm 2): it minimises the mean logistic loss plus ``||w||^2 / (2 C n)`` plus
    ``b . w / n``, with ``b`` of density proportional to ``exp(-epsilon' ||b|| / (2 R))`` for
    rows clipped to norm ``R``, and ``epsilon' = epsilon - 2 log(1 + c / alpha)`` (``alpha =
    1 / C``; :func:`objective_perturbation`). The proof needs ``c`` to bound the loss's
    curvature times a row's squared norm, ``R**2 / 4``, and a penalty on every coefficient.
    diffprivlib 0.6.6 uses ``c = R / 4``, too small when ``R > 1`` (with an intercept ``R =
    sqrt(data_norm**2 + 1) > 1`` always), and leaves the intercept unpenalised, which no
    ``epsilon`` covers: the privacy loss is unbounded where the fitted intercept is large.
    The refit gate refuses those configurations of diffprivlib's class.

    This class fits diffprivlib's model in the case its calibration covers: rows clipped to
    ``data_norm``, a constant 1 appended when ``fit_intercept`` (the intercept becomes a
    penalised coefficient), all divided by ``scale = max(1, sqrt(data_norm**2 +
    fit_intercept))`` (``logistic_features``), so every row lies in the unit ball; then
    diffprivlib's ``LogisticRegression(fit_intercept=False, data_norm=inner_norm <= 1, C=C *
    scale**2)``, where ``c R <= c`` bounds ``c R**2``. The rescaled ``C`` keeps the penalty
    on ``coef_`` what ``C`` says; the intercept gets the same penalty, ``intercept_**2 / (2 C
    n)``. ``coef_`` and ``intercept_`` are mapped back to the rows as given (divided by
    ``scale``).

    diffprivlib keeps ``epsilon' = epsilon - 2 log(1 + c C)`` however small once positive,
    so its noise diverges as ``epsilon`` rises through ``2 log(1 + c C)``, and its accuracy
    collapses there (UCI Adult, ``benchmarks/lr_epsilon_ladder.py``: at ``C = 1``,
    ``data_norm = sqrt(13)``, 81.9 % test accuracy at ``epsilon`` 2.92, 71.0 % at 3.10). This
    class penalises each problem with the larger of ``1 / C`` and the penalty that leaves
    ``epsilon' = NOISE_SHARE * epsilon`` (:func:`objective_perturbation` with
    ``share=NOISE_SHARE``; diffprivlib's ``C`` replaced by ``1 / (1 / C + extra)``, which
    diffprivlib's mechanism then fits with ``epsilon' >= NOISE_SHARE * epsilon > 0``, no
    extra ridge of its own): the same mechanism, privacy loss ``epsilon' + 2 log(1 + c /
    alpha) = epsilon`` exactly, and a noise scale ``2 R / epsilon'`` at most ``2 R /
    (NOISE_SHARE * epsilon)`` (Adult, same setting: 83.0 % at both epsilons, and no fall
    along the ladder from 0.1 to 10^4).

    Rows longer than ``data_norm`` are scaled down to it in ``predict``,
    ``decision_function``, ``predict_proba`` and ``score`` as in ``fit``: the intercept was
    fitted against clipped rows, and on rows many times longer the coefficients' part of the
    score would swamp it (Adult at ``C = 10``, ``data_norm = 0.5``, ``epsilon = 10^4``: 38 %
    test accuracy on the rows as given, 84 % clipped); without an intercept only the score's
    magnitude changes. ``coef_`` and ``intercept_`` apply to clipped rows.

    Privacy: the inner fit's, ``epsilon``-DP for each of its one-vs-rest problems with
    ``epsilon / K`` (``K`` problems, sequential composition): ``epsilon`` in all, recorded on
    ``accountant``. Like diffprivlib's proof, it assumes the exact minimiser: the solver
    (diffprivlib's L-BFGS-B) stops once the gradient's largest entry is below ``tol``. Its
    defaults here, ``tol=1e-6`` and ``max_iter=1000``, are tighter than diffprivlib's
    (``1e-4`` and 100): on Adult in seven settings (``lr_epsilon_ladder.py --solver``)
    ``1e-4`` left 0.06 % to 1 % of the test predictions unlike the optimum's, ``1e-6`` none,
    for 1.4 to 10 times the CPU time.

    The class labels are public only when they are declared (``classes``): then ``classes_``
    is ``classes`` and ``K`` (one problem for two classes, else one per class) is the same
    on neighbouring datasets, whichever labels occur in the data, a class held by no record
    included (its problem has only negative labels). Without them, ``classes_`` is read from
    the data (a class held by one record shows in the model: no finite epsilon covers it),
    with a ``PrivacyLeakWarning``; the refit gate requires them for a released fit.

    Parameters
    ----------
    epsilon : float, default=1.0
    data_norm : float, default=None
        The declared bound on a row's L2 norm (rows above it are scaled down to it).
    classes : array-like or None, default=None
        The class labels, declared from public knowledge (every label of ``y`` must be one);
        None reads them from the data, which is not private.
    tol : float, default=1e-6
        The solver stops once the largest entry of the objective's gradient is below it.
    C : float, default=1.0
        Inverse regularisation strength, as in scikit-learn (the intercept's too); at small
        ``epsilon`` the fit may penalise more (see above).
    fit_intercept : bool, default=True
    max_iter : int, default=1000
    verbose : int, default=0
    warm_start : bool, default=False
        Must be False: a warm start is not supported.
    n_jobs : int, default=None
    random_state : int, RandomState or None, default=None
    accountant : BudgetAccountant, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes or 1, n_features)
    intercept_ : ndarray of shape (n_classes or 1,)

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune.linear_model import LogisticRegression
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-1, 1, (2000, 2)) / 2
    >>> y = (X[:, 0] > 0).astype(int)
    >>> model = LogisticRegression(epsilon=50.0, data_norm=1.0, classes=[0, 1], C=100.0,
    ...                            random_state=0)
    >>> model.fit(X, y).score(X, y) > 0.9
    True
    """

    _parameter_constraints = {
        **DPLogisticRegression._parameter_constraints,
        "classes": ["array-like", None],
    }

    def __init__(self, *, epsilon=1.0, data_norm=None, classes=None, tol=1e-6, C=1.0,
                 fit_intercept=True, max_iter=1000, verbose=0, warm_start=False, n_jobs=None,
                 random_state=None, accountant=None, **unused_args):
        super().__init__(epsilon=epsilon, data_norm=data_norm, tol=tol, C=C,
                         fit_intercept=fit_intercept, max_iter=max_iter, verbose=verbose,
                         warm_start=warm_start, n_jobs=n_jobs, random_state=random_state,
                         accountant=accountant, **unused_args)
        self.classes = classes

    def fit(self, X, y, sample_weight=None):
        """Fit on ``(X, y)`` as described in the class docstring.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels, each one of ``classes`` when they are declared.
        sample_weight : ignored
            As in diffprivlib.

        Returns
        -------
        self
        """
        random_state = self._start_fit(sample_weight)
        X, y = validate_clippable(self, X, y, dtype=np.float64, order="C")
        check_classification_targets(y)
        self.classes_ = declared_classes(self.classes, y, type(self).__name__)
        positives, epsilon, scale, inner_norm, C_fit = self._problems()
        Z = logistic_features(X, self.data_norm, self.fit_intercept, clip=True)
        coefficients = np.vstack([
            # diffprivlib's objective perturbation on rows in the unit ball (its calibrated
            # case, see the class docstring), epsilon / K per problem.
            logistic_regression_path(
                Z, y, epsilon=epsilon, data_norm=inner_norm,
                pos_class=positive, Cs=[C_fit], fit_intercept=False,
                max_iter=self.max_iter, tol=self.tol, verbose=self.verbose,
                random_state=random_state, check_input=False)[0]
            for positive in positives])
        return self._release(coefficients, X.shape[1], scale)

    def _start_fit(self, sample_weight=None):
        """The shared prologue (:func:`~skdptune._models.base.start_fit`: ``data_norm``
        declared; ``classes`` may be read with a warning, and the refit gate refuses that)
        after refusing a warm start, and the noise generator
        (:func:`~skdptune._models.base.random_sources`): what every fit does before it reads
        the data."""
        if self.warm_start:
            raise ValueError(f"warm_start={self.warm_start!r} is not supported by "
                             "skdptune.linear_model.LogisticRegression; use warm_start=False")
        start_fit(self, ("data_norm",), sample_weight)
        return random_sources(self.random_state)[0]

    def _problems(self):
        """The one-vs-rest problems and their public calibration, from ``classes_``.

        Shared by :meth:`fit` and the fit on dask input (``skdptune._distributed``), which
        solve the same problems with the same mechanism.

        Returns
        -------
        positives : ndarray
            Each problem's positive class: the second of two classes, else every class.
        epsilon : float
            Each problem's epsilon, ``epsilon / K`` (one record is in every problem:
            sequential composition gives ``epsilon``; ``K`` is public when the classes are
            declared).
        scale, inner_norm : float
            :func:`logistic_unit_ball`.
        C_fit : float
            diffprivlib's ``C``: the penalty that leaves the noise at least ``NOISE_SHARE *
            epsilon`` (public: ``epsilon``, ``C``, ``data_norm``, ``fit_intercept``, ``K``).
            With it diffprivlib's ``Vector`` takes ``epsilon' = epsilon - 2 log(1 +
            inner_norm * C_fit / 4) >= NOISE_SHARE * epsilon > 0`` and adds no ridge of its
            own: ``objective_perturbation(share=NOISE_SHARE)``, ``epsilon``-DP exactly.
        """
        positives = self.classes_[1:] if len(self.classes_) == 2 else self.classes_
        epsilon = self.epsilon / len(positives)
        scale, inner_norm = logistic_unit_ball(self.data_norm, self.fit_intercept)
        C_inner = self.C * scale ** 2
        _, extra = objective_perturbation(epsilon, inner_norm, C_inner, NOISE_SHARE)
        return positives, epsilon, scale, inner_norm, 1.0 / (1.0 / C_inner + float(extra))

    def _release(self, coefficients, n_features, scale):
        """Set ``coef_`` and ``intercept_`` from the problems' minimisers (one row each, on the
        unit-ball rows) and record ``epsilon``."""
        # Not the solver's n_iter_: it depends on the data and the noise in a way the
        # minimiser does not, and the proof covers the minimiser only.
        self.coef_ = coefficients[:, :n_features] / scale
        self.intercept_ = (coefficients[:, n_features] / scale if self.fit_intercept
                           else np.zeros(len(coefficients)))
        accountant_of(self).spend(self.epsilon, 0)
        return self

    def decision_function(self, X):
        """Scores of ``X``'s rows, each scaled down to ``data_norm`` first, as in ``fit``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return super().decision_function(clip_to_norm(X, self.data_norm))


def logistic_zero_out(step):
    """What objective perturbation (diffprivlib's ``LogisticRegression`` where its calibration
    holds, skdptune's) spends per unit of its recorded ``epsilon`` under zero-out adjacency:
    1/2.

    Chaudhuri, Monteleoni & Sarwate's proof (Algorithm 2) bounds two ratios at the released
    minimiser ``w``. The noise vector's density, ``exp(-epsilon' ||b|| / 2)`` for rows in the
    unit ball: ``b`` differs on neighbouring datasets by the gradients of the loss terms that
    differ, at most 1 each: two terms when a record is replaced (``epsilon'``), one when it
    is zeroed out (``epsilon' / 2``). The Jacobian's determinant ratio, ``det(A + E) /
    det(A)`` with ``E`` the change of the loss's Hessian: rank 2 and ``<= (1 + c / (n
    Lambda))**2`` replaced, rank 1 and ``<= 1 + c / (n Lambda)`` zeroed out, half the
    ``epsilon - epsilon'`` the mechanism budgets for it (also in diffprivlib's extra-ridge
    regime, where ``epsilon' = epsilon / 2`` and the ridge holds the term to ``epsilon /
    2``). Each one-vs-rest problem spends half its share; sequential composition: half.

    Parameters
    ----------
    step : LogisticRegression or diffprivlib.models.LogisticRegression
        Not read: the factor is the same for every configuration.

    Returns
    -------
    factor : float
    """
    return 0.5


def logistic_noise_dimension(step, width):
    """The tuning policy's ``D`` for objective perturbation: ``(width + fit_intercept) * K``,
    the noise vector's coordinates (the coefficients and the intercept) per one-vs-rest
    problem, each of scale about ``1 / (n * epsilon)``; ``K`` is 1 for two declared classes
    (or none declared), else one per declared class (:meth:`LogisticRegression.fit`).

    Parameters
    ----------
    step : LogisticRegression or diffprivlib.models.LogisticRegression
    width : int
        The columns of its input.

    Returns
    -------
    dimension : int
    """
    n_classes = declared_class_count(step)
    n_problems = 1 if n_classes <= 2 else n_classes
    return (width + int(step.fit_intercept)) * n_problems


def ridge_zero_out(step):
    """An upper bound on what :class:`Ridge` spends per unit of its ``epsilon`` under zero-out
    adjacency: ``max(1, max_j M_j / w_j)`` with an intercept (over the features and the
    target), ``max(1, max |corner| / corner range)`` over the products without one.

    Every release is Laplace on a sum of ``f(record)`` calibrated to ``f``'s range over a box
    (:func:`noisy_objective`); a null record changes the sum by ``|f(record)|``, at most ``max
    |f|`` over the box. With an intercept, the centring means (``LaplaceTruncated``,
    sensitivity ``(upper - lower) / n``) move by ``|x_j| / n <= M_j / n``: factor ``M_j /
    w_j``; the objective's boxes are shifted by those means, which lie inside the bounds, so
    each box holds 0 and ``max |f|`` is at most the range: factor at most 1. Without one,
    squares are calibrated to ``max |f|`` itself (factor 1), products to their corner range.
    The epsilon is a weighted mean of the releases' factors, at most their maximum.

    Parameters
    ----------
    step : Ridge
        With declared ``bounds_X`` and ``bounds_y``.

    Returns
    -------
    factor : float
    """
    lower_x, upper_x = (np.atleast_1d(np.asarray(bound, dtype=float)) for bound in step.bounds_X)
    lower_y, upper_y = (np.atleast_1d(np.asarray(bound, dtype=float)) for bound in step.bounds_y)
    if step.fit_intercept:
        lower, upper = np.concatenate([lower_x, lower_y]), np.concatenate([upper_x, upper_y])
        width = upper - lower
        reach = np.maximum(np.abs(lower), np.abs(upper))
        ratios = np.divide(reach, width, out=np.ones_like(width), where=width > 0)
        return float(max(1.0, ratios.max()))
    lower, upper = np.concatenate([lower_x, lower_y]), np.concatenate([upper_x, upper_y])
    corners = np.stack([np.multiply.outer(a, b) for a in (lower, upper) for b in (lower, upper)])
    largest = np.abs(corners).max(axis=0)
    spread = corners.max(axis=0) - corners.min(axis=0)
    ratios = np.divide(largest, spread, out=np.ones_like(spread), where=spread > 0)
    return float(max(1.0, ratios.max()))


def ridge_noise_dimension(step, width):
    """The tuning policy's ``D`` for the functional mechanism: the monomial coefficients of
    one target's least-squares objective, ``d (d + 1) / 2 + d + 1`` for ``d = width``
    (:func:`noisy_objective`), each of noise scale about ``1 / (n * epsilon)`` up to the
    bounds; the centring means are neglected beside them.

    Parameters
    ----------
    step : Ridge or diffprivlib.models.LinearRegression
    width : int
        The columns of its input.

    Returns
    -------
    dimension : int
    """
    return width * (width + 1) // 2 + width + 1


#: What a released :class:`LogisticRegression` keeps, each with why its mechanism covers it
#: (besides the public shape).
LOGISTIC_RELEASES = {
    "classes_": "the declared classes",
    "coef_": "the minimiser of the perturbed objective: post-processing of the noise vector",
    "intercept_": "the same minimiser's intercept coordinate",
}

#: What a released :class:`Ridge` keeps, each with why its mechanism covers it (besides the
#: public shape).
RIDGE_RELEASES = {
    "coef_": "the minimiser of the penalised noisy objective: post-processing",
    "intercept_": "noisy centring means and coef_: post-processing",
    "_obj_coefs": "the noisy monomial sums themselves (Laplace releases)",
    "noise_scale_": "a function of epsilon, the declared bounds and the width: public",
    "alpha_": "alpha + noise_alpha * noise_scale_: public",
}

#: The facts of :class:`LogisticRegression` (the refit gate's row reads them).
LOGISTIC_FACTS = ModelFacts(
    why="diffprivlib's LogisticRegression on rows mapped into the unit ball, its intercept "
        "penalised, over declared classes: pure epsilon-DP given data_norm and classes; "
        "spends `epsilon` once per fit",
    declared=("data_norm", "classes"),
    charge=None,
    zero_out=logistic_zero_out,
    releases=LOGISTIC_RELEASES,
    noise_dimension=logistic_noise_dimension,
)

#: The facts of :class:`Ridge` (the refit gate's row reads them).
RIDGE_FACTS = ModelFacts(
    why="diffprivlib's LinearRegression releases correctly calibrated (skdptune."
        "linear_model.noisy_objective), then a public penalty (post-processing): pure "
        "epsilon-DP given declared bounds; spends `epsilon` once per fit",
    declared=("bounds_X", "bounds_y"),
    charge=None,
    zero_out=ridge_zero_out,
    releases=RIDGE_RELEASES,
    noise_dimension=ridge_noise_dimension,
)
