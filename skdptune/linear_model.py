"""Private linear models that diffprivlib's own do not cover."""

from numbers import Real

import numpy as np
from diffprivlib.models import LinearRegression
# diffprivlib's own validate_data: scikit-learn's function from 1.6, the method before.
from diffprivlib.models.linear_regression import _construct_regression_obj, validate_data
from diffprivlib.utils import check_random_state
from scipy.optimize import minimize

from ._sklearn_compat import Interval

#: :class:`Ridge`'s default ``noise_alpha``. On two real tables (``benchmarks/ridge_penalty.py``:
#: 43,152 and 22,524 rows, 27 and 13 features, epsilon 0.36 to 4) every ``noise_alpha`` of 2
#: or more gave a model within 1 R² point of a constant or better, and 2 lost at most 22
#: points to the best setting; 1.4 and below exploded at small epsilon. On a third table held
#: out from that choice (47,030 films, 16 features) 2 was within 2.1 R² points of the best
#: setting at every epsilon. A safe untuned value, not an optimum.
NOISE_ALPHA = 2.0


def noise_scale(epsilon, bounds_X, fit_intercept=True, n_targets=1):
    r"""The spectral scale of the noise on ``X'X`` in diffprivlib's ``LinearRegression``.

    diffprivlib spends ``epsilon (1 - s)`` (``s = 1 / (d + 1)`` with ``fit_intercept``, else
    0) evenly on ``1 + t d + d (d + 1) / 2`` Laplace releases (``t`` targets), so entry ``(i, j)``
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
    objective_share = d / (d + 1) if fit_intercept else 1.0
    local_epsilon = epsilon * objective_share / (1 + n_targets * d + d * (d + 1) / 2)
    return float(2 * np.sqrt(2) * reach.max() * np.linalg.norm(reach) / local_epsilon)


class Ridge(LinearRegression):
    r"""diffprivlib's ``LinearRegression`` with a ridge penalty: ``alpha * ||w||^2``.

    diffprivlib's ``LinearRegression`` (the functional mechanism, Zhang et al. 2012) perturbs
    the coefficients of the least-squares objective: the sums ``y'y``, ``X'y`` and ``X'X`` of
    the centred data. The noisy ``X'X`` need not be positive definite; the objective is then
    unbounded below and the solver returns coefficients far outside anything the data support
    (test R² of -10 and below on real tables at epsilon up to 100). This class minimises the
    same noisy objective plus ``alpha_ * ||w||^2``, where ``alpha_ = alpha + noise_alpha *
    noise_scale_``:

    - ``alpha`` is scikit-learn's :class:`~sklearn.linear_model.Ridge` penalty against the
      *sum* of squared errors, in units of records;
    - ``noise_alpha`` is in units of the noise itself: ``noise_scale_`` is the spectral scale
      of the noise diffprivlib adds to ``X'X``, a public function of ``epsilon``, the declared
      ``bounds_X`` and the number of features (:func:`noise_scale`). The noisy ``X'X`` is
      indefinite when its noise outweighs the data's smallest eigenvalue; a penalty of about
      ``noise_scale_`` makes the objective bounded whatever the data, and the best penalty
      moves with epsilon as the noise does. On two real tables (``benchmarks/ridge_penalty.py``)
      the best ``noise_alpha`` was 0.5 to 2 at 13 of 14 epsilons from 0.36 to 4 (8 at the
      14th, where no setting beat a constant by 3 points), while the best ``alpha`` moved from
      1e3 to 1e5: a grid in ``noise_alpha`` means nearly the same thing at every budget. A
      search's partition fits need nothing more: their ``epsilon`` is rescaled, and
      ``noise_scale_`` with it.

    Privacy: the same as diffprivlib's ``LinearRegression`` with the same ``epsilon``,
    ``bounds_X`` and ``bounds_y``, because the fit *is* that model's releases followed by
    post-processing. diffprivlib spends ``epsilon / (d + 1)`` on the noisy means that centre
    the data (``fit_intercept``; ``LaplaceTruncated``, sensitivity ``(upper - lower) / n``:
    replace-one adjacency with ``n`` public, as for diffprivlib's model) and the rest on the
    ``1 + d + d (d + 1) / 2`` noisy monomial coefficients (Laplace, sensitivities from the
    declared bounds); basic composition gives ``epsilon``. The penalty is a function of public
    constants (``alpha``, ``noise_alpha``, ``epsilon``, the declared ``bounds_X`` and the
    number of features; never of the data, nor of the noisy offsets) and the coefficients the
    minimiser of a public function of those noisy releases: no further privacy cost. The fit
    calls diffprivlib's own ``_preprocess_data`` and ``_construct_regression_obj`` (which
    takes ``alpha``; diffprivlib's ``fit`` passes 0) and records ``epsilon`` on the
    accountant, as diffprivlib's does. With ``alpha=0, noise_alpha=0`` it is diffprivlib's
    ``LinearRegression``, draw for draw.

    Parameters
    ----------
    alpha : float, default=1.0
        The penalty on ``||w||^2``, against the sum of squared errors over the training rows
        (scikit-learn's ``Ridge`` convention). Not applied to the intercept.
    noise_alpha : float, default=NOISE_ALPHA
        The penalty on ``||w||^2`` in units of :func:`noise_scale`, added to ``alpha``. 0
        leaves ``alpha`` alone (and ``alpha=0, noise_alpha=0`` is diffprivlib's model).
    epsilon, bounds_X, bounds_y, fit_intercept, copy_X, random_state, accountant
        As for diffprivlib's ``LinearRegression``.
    **unused_args
        As for diffprivlib's ``LinearRegression`` (warned about and ignored).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
    intercept_ : float or ndarray of shape (n_targets,)
    noise_scale_ : float
        :func:`noise_scale` of this fit (public: ``epsilon``, ``bounds_X``, ``n_features``).
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
        """Fit the penalised model: diffprivlib's ``LinearRegression.fit`` with ``alpha``.

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
        # diffprivlib 0.6.6's LinearRegression.fit, line for line, with alpha passed on.
        # Unlike diffprivlib's, it refuses missing bounds (no bounds read from the data).
        self._validate_params()
        if self.bounds_X is None or self.bounds_y is None:
            raise ValueError(
                f"Ridge needs declared bounds_X and bounds_y (got bounds_X={self.bounds_X!r}, "
                f"bounds_y={self.bounds_y!r}); bounds read from the data are not private")
        self.accountant.check(self.epsilon, 0)
        if sample_weight is not None:
            self._warn_unused_args("sample_weight")
        random_state = check_random_state(self.random_state)
        X, y = validate_data(self, X, y, accept_sparse=False, y_numeric=True,
                             multi_output=True)
        bounds_X = self._check_bounds(self.bounds_X, X.shape[1])
        bounds_y = self._check_bounds(self.bounds_y, y.shape[1] if y.ndim > 1 else 1)
        n_features = X.shape[1]
        n_targets = y.shape[1] if y.ndim > 1 else 1
        intercept_share = 1 / (n_features + 1) if self.fit_intercept else 0
        X, y, X_offset, y_offset, X_scale = self._preprocess_data(
            X, y, fit_intercept=self.fit_intercept, bounds_X=bounds_X, bounds_y=bounds_y,
            epsilon=self.epsilon * intercept_share, copy=self.copy_X,
            random_state=random_state)
        self.alpha_, self.noise_scale_ = self.total_alpha(bounds_X, n_targets)
        objectives, self._obj_coefs = _construct_regression_obj(
            X, y, (bounds_X[0] - X_offset, bounds_X[1] - X_offset),
            (bounds_y[0] - y_offset, bounds_y[1] - y_offset),
            epsilon=self.epsilon * (1 - intercept_share), alpha=self.alpha_,
            random_state=random_state)
        coef = np.zeros((n_features, n_targets))
        for i, objective in enumerate(objectives):
            coef[:, i] = minimize(objective, np.zeros(n_features), jac=True).x
        self.coef_ = np.ravel(coef.T) if y.ndim == 1 else coef.T
        self._set_intercept(X_offset, y_offset, X_scale)
        self.accountant.spend(self.epsilon, 0)
        return self
