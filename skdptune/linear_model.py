"""Private linear models that diffprivlib's own do not cover."""

from numbers import Real

import numpy as np
from diffprivlib.models import LinearRegression
# diffprivlib's own validate_data: scikit-learn's function from 1.6, the method before.
from diffprivlib.models.linear_regression import _construct_regression_obj, validate_data
from diffprivlib.utils import check_random_state
from scipy.optimize import minimize

from ._sklearn_compat import Interval


class Ridge(LinearRegression):
    r"""diffprivlib's ``LinearRegression`` with a ridge penalty: ``alpha * ||w||^2``.

    diffprivlib's ``LinearRegression`` (the functional mechanism, Zhang et al. 2012) perturbs
    the coefficients of the least-squares objective: the sums ``y'y``, ``X'y`` and ``X'X`` of
    the centred data. The noisy ``X'X`` need not be positive definite; the objective is then
    unbounded below and the solver returns coefficients far outside anything the data support
    (test R² of -10 and below on real tables at epsilon up to 100). This class minimises the
    same noisy objective plus ``alpha * ||w||^2``, as scikit-learn's
    :class:`~sklearn.linear_model.Ridge` adds it to the *sum* of squared errors: ``alpha`` is
    in units of records, so a penalty that tames the noise on ``n`` records is about ``n``
    times the size of the noise's smallest eigenvalue per record.

    Privacy: the same as diffprivlib's ``LinearRegression`` with the same ``epsilon``,
    ``bounds_X`` and ``bounds_y``, because the fit *is* that model's releases followed by
    post-processing. diffprivlib spends ``epsilon / (d + 1)`` on the noisy means that centre
    the data (``fit_intercept``; ``LaplaceTruncated``, sensitivity ``(upper - lower) / n``:
    replace-one adjacency with ``n`` public, as for diffprivlib's model) and the rest on the
    ``1 + d + d (d + 1) / 2`` noisy monomial coefficients (Laplace, sensitivities from the
    declared bounds); basic composition gives ``epsilon``. The penalty is a public constant
    and the coefficients the minimiser of a public function of those noisy releases: no
    further privacy cost. The fit calls diffprivlib's own ``_preprocess_data`` and
    ``_construct_regression_obj`` (which takes ``alpha``; diffprivlib's ``fit`` passes 0) and
    records ``epsilon`` on the accountant, as diffprivlib's does. With ``alpha=0`` it is
    diffprivlib's ``LinearRegression``, draw for draw.

    Parameters
    ----------
    alpha : float, default=1.0
        The penalty on ``||w||^2``, against the sum of squared errors over the training rows
        (scikit-learn's ``Ridge`` convention). Not applied to the intercept.
    epsilon, bounds_X, bounds_y, fit_intercept, copy_X, random_state, accountant
        As for diffprivlib's ``LinearRegression``.
    **unused_args
        As for diffprivlib's ``LinearRegression`` (warned about and ignored).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
    intercept_ : float or ndarray of shape (n_targets,)

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune.linear_model import Ridge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((20000, 3))
    >>> y = X @ [1.0, 2.0, 0.0] + rng.normal(0, 0.1, 20000)
    >>> model = Ridge(alpha=100.0, epsilon=1.0, bounds_X=(0, 1), bounds_y=(-1, 4),
    ...               random_state=0).fit(X, y)
    >>> bool(model.score(X, y) > 0.8)
    True
    """

    _parameter_constraints = {
        **LinearRegression._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, alpha=1.0, epsilon=1.0, bounds_X=None, bounds_y=None,
                 fit_intercept=True, copy_X=True, random_state=None, accountant=None,
                 **unused_args):
        super().__init__(epsilon=epsilon, bounds_X=bounds_X, bounds_y=bounds_y,
                         fit_intercept=fit_intercept, copy_X=copy_X, random_state=random_state,
                         accountant=accountant, **unused_args)
        self.alpha = alpha

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
        objectives, self._obj_coefs = _construct_regression_obj(
            X, y, (bounds_X[0] - X_offset, bounds_X[1] - X_offset),
            (bounds_y[0] - y_offset, bounds_y[1] - y_offset),
            epsilon=self.epsilon * (1 - intercept_share), alpha=self.alpha,
            random_state=random_state)
        coef = np.zeros((n_features, n_targets))
        for i, objective in enumerate(objectives):
            coef[:, i] = minimize(objective, np.zeros(n_features), jac=True).x
        self.coef_ = np.ravel(coef.T) if y.ndim == 1 else coef.T
        self._set_intercept(X_offset, y_offset, X_scale)
        self.accountant.spend(self.epsilon, 0)
        return self
