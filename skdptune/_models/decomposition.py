"""Private PCA whose components are drawn from the Bingham law its privacy proof assumes."""

import secrets
from numbers import Integral, Real

import numpy as np
import sklearn.decomposition._pca as sk_pca
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.mechanisms import Laplace
from diffprivlib.models import PCA as DPPCA
from diffprivlib.tools import mean
from scipy.linalg import null_space
from scipy.optimize import brentq
from sklearn.utils.extmath import svd_flip

from .._clipping import clip_to_norm, validate_clippable
from .._sklearn_compat import Interval
from .._validation import declared_box
from .base import accountant_of, random_sources, start_fit, undeclared_reason
from .facts import ModelFacts


def bingham(A, rng):
    r"""One draw from the Bingham law on the unit sphere: density proportional to
    ``exp(u' A u)`` (against the uniform measure).

    Kent, Ganeiber & Mardia's rejection sampler (2018): with ``L = lambda_max(A) I - A``
    (positive semi-definite, smallest eigenvalue 0) the density is ``exp(-u' L u)`` up to a
    constant. Proposals come from the angular central Gaussian law ``ACG(Omega)``, ``Omega =
    I + 2 L / b`` (``y ~ N(0, Omega^{-1})``, ``u = y / ||y||``), whose density is
    proportional to ``(u' Omega u)^{-d/2}``; ``b`` solves ``sum_i 1 / (b + 2 l_i) = 1``.
    Since ``exp(-t) (1 + 2 t / b)^{d/2} <= M = exp(-(d - b) / 2) (d / b)^{d/2}`` for ``t >= 0``,
    a proposal is accepted with probability ``exp(-u' L u) (u' Omega u)^{d/2} / M <= 1``.
    (diffprivlib 0.6.6's ``Bingham`` mechanism divides by ``(u' Omega u)^{d/2}`` there, and
    so samples another law.)

    Parameters
    ----------
    A : ndarray of shape (d, d)
        Symmetric.
    rng : secrets.SystemRandom or numpy.random.RandomState
        The source of the proposals and of the acceptance draws.

    Returns
    -------
    u : ndarray of shape (d,)
        A unit vector (its sign is as likely as the other).
    """
    d = len(A)
    if d == 1:
        return np.ones(1)
    eigenvalues, eigenvectors = np.linalg.eigh(A)
    L = eigenvalues.max() - eigenvalues  # the form's eigenvalues, in the same basis
    b = d if not np.any(L > 0) else brentq(lambda b: np.sum(1.0 / (b + 2.0 * L)) - 1.0, 1.0, d)
    omega = 1.0 + 2.0 * L / b
    log_m = -(d - b) / 2 + d / 2 * np.log(d / b)
    while True:
        y = _standard_normal(rng, d) / np.sqrt(omega)
        u = y / np.linalg.norm(y)
        log_accept = -np.sum(L * u ** 2) + d / 2 * np.log(np.sum(omega * u ** 2)) - log_m
        if np.log(_uniform(rng)) < log_accept:
            return eigenvectors @ u


def _standard_normal(rng, size):
    if isinstance(rng, secrets.SystemRandom):
        return np.array([rng.gauss(0.0, 1.0) for _ in range(size)])
    return rng.standard_normal(size)


def _uniform(rng):
    value = rng.random()
    return value if value > 0 else np.finfo(float).tiny


def noisy_eigen(X, epsilon, data_norm, n_vectors, random_state):
    r"""The noisy eigenvalues and the Bingham eigenvectors of ``X' X`` (rows of norm at most
    ``data_norm``).

    The releases of diffprivlib's ``covariance_eig`` (Imtiaz & Sarwate's sequential
    construction), the vectors drawn from their intended law. With ``C = X' X /
    data_norm**2`` and ``s = epsilon / (n_vectors + 1)`` (``epsilon / n_vectors`` when
    ``n_vectors`` is the number of features: the last vector of a full basis is determined by
    the others, free):

    - the eigenvalues of ``C``, each with Laplace noise of scale ``2 / s``, clipped at 0: one
      record replaced changes ``C`` by ``x' x'^T - x x^T`` (rows scaled to norm at most 1),
      whose nuclear norm is at most 2, and by Lidskii's inequality the eigenvalues' L1
      sensitivity is at most that;
    - vector ``i`` from the Bingham density ``exp((s / 2) u' P C P' u)`` on the unit sphere of
      the complement ``P`` of the vectors already released (the exponential mechanism with
      utility ``u' P C P' u``, whose change under one replaced record, ``(u' P x')^2 - (u' P
      x)^2``, lies in ``[-1, 1]``: ``s``-DP). diffprivlib's exponent is ``(s / 4) u' C u``,
      twice as much noise as this replace-one calibration needs.

    Adaptive sequential composition gives ``epsilon``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Rows of L2 norm at most ``data_norm`` (the caller clips).
    epsilon : float
    data_norm : float
    n_vectors : int
        How many eigenvectors to release, at most ``n_features``.
    random_state : int, RandomState or None
        None: secure noise (:mod:`secrets`).

    Returns
    -------
    eigenvalues : ndarray of shape (n_features,)
        Noisy eigenvalues of ``X' X``, in decreasing order.
    vectors : ndarray of shape (n_vectors, n_features)
        Orthonormal rows.
    """
    n_features = X.shape[1]
    share = epsilon / (n_vectors + (n_vectors != n_features))
    # One generator for every draw (a seed given twice would give two copies of one stream).
    random_state = random_sources(random_state)[0]
    rng = secrets.SystemRandom() if random_state is None else random_state
    noise = Laplace(epsilon=share, sensitivity=2.0, random_state=random_state)
    C = X.T @ X / data_norm ** 2
    # The eigenvalues: L1 sensitivity 2, one share.
    eigenvalues = np.array([max(noise.randomise(float(value)), 0.0)
                            for value in np.linalg.eigvalsh(C)]) * data_norm ** 2
    vectors = []
    basis = np.eye(n_features)  # rows: the complement of the vectors released so far
    for _ in range(n_vectors):
        # Each vector: the exponential mechanism, utility sensitivity 1, one share; the
        # last of a full basis is post-processing of the others.
        u = bingham(share / 2 * basis @ C @ basis.T, rng) if len(basis) > 1 else np.ones(1)
        vectors.append(basis.T @ u)
        basis = null_space(np.array(vectors)).T
    return np.sort(eigenvalues)[::-1], np.array(vectors).reshape(n_vectors, n_features)


def private_releases(X, epsilon, data_norm, bounds, n_vectors, random_state):
    """What one fit of :class:`PCA` releases: the DP mean, the noisy eigenvalues and the
    eigenvectors (the class docstring gives the mechanisms and their shares).

    The batched engine's partition step for :class:`PCA` (``skdptune._batched.bingham_pca``)
    fits each partition with this function.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    epsilon : float
    data_norm : float
    bounds : tuple of ndarray of shape (n_features,), or None
        The declared box of the DP mean; None for centred data (no mean released).
    n_vectors : int
        How many eigenvectors to release.
    random_state : numpy.random.RandomState or None
        None: secure noise (:mod:`secrets`). One generator for every draw.

    Returns
    -------
    mean : ndarray of shape (n_features,)
        The DP mean (zeros for centred data).
    eigenvalues : ndarray of shape (n_features,)
    vectors : ndarray of shape (n_vectors, n_features)
    """
    if bounds is None:
        mean_, eigen_epsilon = np.zeros(X.shape[1]), epsilon
    else:
        # The mean: sensitivity (upper_j - lower_j) / n per feature, epsilon / 2 in all.
        mean_ = mean(X, epsilon=epsilon / 2, bounds=bounds, axis=0, random_state=random_state,
                     accountant=BudgetAccountant())
        eigen_epsilon = epsilon / 2
    # Each row: its own record and the released mean, clipped to data_norm.
    rows = clip_to_norm(X - mean_, data_norm)
    # The eigenvalues and vectors: eigen_epsilon (noisy_eigen's sensitivities).
    eigenvalues, vectors = noisy_eigen(rows, eigen_epsilon, data_norm, n_vectors, random_state)
    return mean_, eigenvalues, vectors


#: The other fix of an undeclared ``bounds``: no mean is released for centred data.
CENTRED = "centered=True for data centred by public knowledge"


def oriented(vectors):
    """``vectors`` (rows) with the signs scikit-learn's and diffprivlib's PCA give their
    components (``svd_flip`` from the vectors alone): post-processing."""
    return svd_flip(vectors.T, np.zeros_like(vectors))[0].T


class PCA(DPPCA):
    r"""diffprivlib's ``PCA``, its components drawn from the law its privacy proof assumes.

    diffprivlib 0.6.6's ``PCA`` releases a DP mean (unless ``centered``), the noisy
    eigenvalues of the centred data's ``X' X`` and its eigenvectors one by one from Bingham
    laws, but its Bingham sampler divides by ``(u' Omega u)^{d/2}`` where Kent, Ganeiber &
    Mardia's rejection step multiplies, so the components follow another law, which is not
    ``epsilon``-DP as recorded (the refit gate refuses it); with ``centered=False`` it also
    subtracts its mean from the caller's ``X`` in place. This class makes the same releases
    with the components from the intended law (``bingham``), calibrated to replace-one
    adjacency (``noisy_eigen``), and never changes the caller's ``X``.

    Privacy (replace-one adjacency with ``n`` public, as diffprivlib's models): ``epsilon``
    per fit, recorded on ``accountant``. With ``centered=False``, ``epsilon / 2`` buys the
    mean (``diffprivlib.tools.mean`` on the records clipped to the declared ``bounds``:
    ``LaplaceTruncated`` per feature, sensitivity ``(upper_j - lower_j) / n`` when one record
    is replaced, ``epsilon / (2 d)`` each), and the rest the eigen-decomposition of the rows
    centred by that mean and clipped to L2 norm ``data_norm`` (each row depends on its own
    record and the released mean only); with ``centered=True`` the eigen-decomposition gets
    all of ``epsilon``. ``noisy_eigen`` gives the sensitivities for a replaced record
    ``x -> x'`` (both rows of norm at most ``R = data_norm``): ``X' X`` changes by ``x' x'^T -
    x x^T``, whose nuclear norm is at most ``2 R**2``, which bounds the eigenvalues' L1
    change; and ``u' X' X u`` changes by ``(u' x')**2 - (u' x)**2``, anywhere in ``[-R**2,
    R**2]`` (an added record's change would be one-sided, ``[0, R**2]``: the exponential
    mechanism then needs half the noise, which is not the library's adjacency). The
    attributes are functions of those releases and of public shapes.

    Parameters
    ----------
    n_components : int, float, "mle" or None, default=None
        As for diffprivlib's ``PCA``: an int releases that many components (``epsilon``
        split over them and the eigenvalues); a fraction or ``"mle"`` releases every
        component and keeps as many as the noisy eigenvalues say.
    epsilon : float, default=1.0
        The privacy budget of one fit (pure epsilon-DP, replace-one adjacency of one record
        with ``n`` public).
    data_norm : float, default=None
        The declared bound on the L2 norm of a centred row; rows above it are scaled down to
        it. Required.
    centered : bool, default=False
        True when the data are centred already (by public knowledge): no mean is released.
    bounds : tuple, default=None
        ``(lower, upper)`` of the features, scalars or one value per feature, declared from
        public knowledge: the domain of the DP mean. Required with ``centered=False``.
    copy : bool, default=True
        Ignored: the caller's ``X`` is never changed.
    whiten : bool, default=False
        As for scikit-learn's ``PCA`` (the noisy explained variances divide the projections).
    random_state : int, RandomState or None, default=None
        None draws every noise from :mod:`secrets` (diffprivlib's mechanisms and the
        Bingham sampler): the only setting with a privacy guarantee. A seed makes fits
        reproducible, for tests and examples; its noise is predictable, so a seeded fit is
        not private.
    accountant : BudgetAccountant or None, default=None
        Where the fit records ``epsilon``; None uses diffprivlib's default accountant (looked
        up at fit time).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
    explained_variance_ : ndarray of shape (n_components,)
        Noisy eigenvalues of ``X' X`` divided by ``n_samples - 1``.
    explained_variance_ratio_ : ndarray of shape (n_components,)
    singular_values_ : ndarray of shape (n_components,)
    mean_ : ndarray of shape (n_features,)
        The DP mean (zeros with ``centered=True``).
    n_components_ : int
    noise_variance_ : float
    n_samples_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)
        When ``X`` has string column names.

    References
    ----------
    .. [1] Kent, Ganeiber and Mardia, "A new unified approach for the simulation of a wide
       class of directional distributions", J. Comput. Graph. Stat. 27(2), 2018.
    .. [2] Chaudhuri, Sarwate and Sinha, "A near-optimal algorithm for differentially-private
       principal components", JMLR 14, 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune.decomposition import PCA
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(0, 1, (20000, 3)) * [1.0, 0.1, 0.1]
    >>> pca = PCA(n_components=1, epsilon=1.0, data_norm=3.0, bounds=(-3, 3),
    ...           random_state=0).fit(X)
    >>> bool(abs(pca.components_[0, 0]) > 0.99)
    True
    """

    _parameter_constraints = {
        **DPPCA._parameter_constraints,
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "data_norm": [Interval(Real, 0, None, closed="neither"), None],
        "centered": ["boolean"],
        "bounds": [tuple, list, None],
        "accountant": [BudgetAccountant, None],
    }

    # Parameters stored as given (diffprivlib's __init__ resolves the accountant; scikit-
    # learn's stores solver parameters this class does not take).
    def __init__(self, n_components=None, *, epsilon=1.0, data_norm=None, centered=False,
                 bounds=None, copy=True, whiten=False, random_state=None, accountant=None):
        self.n_components = n_components
        self.epsilon = epsilon
        self.data_norm = data_norm
        self.centered = centered
        self.bounds = bounds
        self.copy = copy
        self.whiten = whiten
        self.random_state = random_state
        self.accountant = accountant

    def __sklearn_tags__(self):
        # scikit-learn's PCA reads its svd_solver here, which this class does not take.
        tags = super(sk_pca.PCA, self).__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.input_tags.sparse = False
        return tags

    def fit(self, X, y=None):
        """Fit privately (see the class docstring).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : PCA
        """
        start_fit(self, ("data_norm",) if self.centered else ("data_norm", "bounds"),
                  alternatives={"bounds": CENTRED})
        # A copy, whatever `copy` says: the caller's X is never changed.
        X = validate_clippable(self, X, dtype=[np.float64, np.float32], copy=True,
                               accept_sparse=False, ensure_2d=True)
        n_samples, n_features = X.shape
        n_components = self._resolved_components(n_samples, n_features)
        n_vectors = n_components if isinstance(n_components, Integral) else n_features
        # One generator for the mean and the eigen-decomposition (None: secure noise).
        random_state = random_sources(self.random_state)[0]
        self.mean_, eigenvalues, vectors = private_releases(
            X, self.epsilon, self.data_norm,
            None if self.centered else declared_box(self, n_features), n_vectors, random_state)
        self._set_components(eigenvalues, vectors, n_components, n_samples, n_features)
        # In X's dtype, as scikit-learn's PCA (its transform then preserves it).
        for name in ("mean_", "components_", "explained_variance_",
                     "explained_variance_ratio_", "singular_values_"):
            setattr(self, name, np.asarray(getattr(self, name), dtype=X.dtype))
        accountant_of(self).spend(self.epsilon, 0)
        return self

    def fit_transform(self, X, y=None):
        """Fit privately, then project ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
        """
        return self.fit(X).transform(X)

    def _resolved_components(self, n_samples, n_features):
        """``n_components`` checked against the public shape; None is every component."""
        if self.n_components is None:
            return min(n_samples, n_features)
        if isinstance(self.n_components, Integral) and not (
                1 <= self.n_components <= min(n_samples, n_features)):
            raise ValueError(f"n_components={self.n_components} must be between 1 and "
                             f"min(n_samples, n_features)={min(n_samples, n_features)}")
        if self.n_components == "mle" and n_samples < n_features:
            raise ValueError("n_components='mle' needs n_samples >= n_features")
        return self.n_components

    def _set_components(self, eigenvalues, vectors, n_components, n_samples, n_features):
        """The attributes, from the released eigenvalues and vectors (post-processing)."""
        vectors = oriented(vectors)
        explained_variance = eigenvalues / (n_samples - 1)
        total = explained_variance.sum()
        ratio = explained_variance / total if total > 0 else np.zeros_like(explained_variance)
        if n_components == "mle":
            n_components = int(sk_pca._infer_dimension(explained_variance, n_samples))
        elif not isinstance(n_components, Integral):  # a fraction of the variance
            n_components = int(np.searchsorted(np.cumsum(ratio), n_components) + 1)
        n_components = min(n_components, len(vectors))
        self.noise_variance_ = (float(explained_variance[n_components:].mean())
                                if n_components < min(n_features, n_samples) else 0.0)
        self.n_samples_ = n_samples
        self.components_ = vectors[:n_components]
        self.n_components_ = n_components
        self.explained_variance_ = explained_variance[:n_components]
        self.explained_variance_ratio_ = ratio[:n_components]
        self.singular_values_ = np.sqrt(eigenvalues[:n_components])


def centring_declared(step):
    """Why a released ``PCA(centered=False)`` without declared ``bounds`` is refused, or None:
    it releases a DP mean of the features, whose domain would be read from the data."""
    if step.centered or step.bounds is not None:
        return None
    return "centered=False releases a DP mean of the features: " + undeclared_reason(
        "bounds", alternative=CENTRED)


def pca_noise_dimension(step, width):
    """The tuning policy's ``D`` for PCA: the quantities :func:`private_releases` perturbs,
    ``width`` noisy eigenvalues, ``width`` coordinates per released eigenvector (``n_components``
    of them when it is an int, else every one: a variance fraction or ``"mle"`` is taken at
    its public upper bound) and, unless ``centered``, ``width`` noisy means.

    The policy's refit-noise constant was measured on classifiers and regressors
    (``skdptune._default_policy.REFIT_NOISE_CONSTANT``), not on a PCA last in a pipeline: this
    count puts such a default on the same footing, unmeasured.
    """
    n_vectors = step.n_components if isinstance(step.n_components, Integral) else width
    return width * (1 + min(n_vectors, width)) + (0 if step.centered else width)


#: What a released fit keeps, each with why its mechanism covers it (besides the public
#: shape).
RELEASES = {
    "mean_": "the DP mean (diffprivlib.tools.mean, LaplaceTruncated), zeros when centered",
    "components_": "the Bingham (exponential-mechanism) draws",
    "explained_variance_": "noisy eigenvalues (Laplace) over n - 1: post-processing",
    "explained_variance_ratio_": "the same noisy eigenvalues, normalised",
    "singular_values_": "square roots of the noisy eigenvalues",
    "noise_variance_": "the mean of the noisy eigenvalues not kept",
    "n_components_": "n_components, or read from the noisy eigenvalues (post-processing)",
    "n_samples_": "the number of records n (public under replace-one adjacency)",
}

#: The facts of :class:`PCA` (the refit gate's row reads them). No charge: the mean's, the
#: eigenvalues' and the eigenvectors' sensitivities are those of a replaced record
#: (:class:`PCA`, ``noisy_eigen``), so a fit spends the ``epsilon`` it records. No zero-out
#: factor is derived.
FACTS = ModelFacts(
    why="diffprivlib's PCA releases with the components from the Bingham law, calibrated to "
        "replace-one adjacency (skdptune.decomposition.PCA): pure epsilon-DP given data_norm "
        "(and bounds unless centered); spends `epsilon` once per fit",
    declared=("data_norm",),
    charge=None,
    zero_out=None,
    releases=RELEASES,
    noise_dimension=pca_noise_dimension,
    condition=centring_declared,
)
