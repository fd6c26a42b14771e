"""diffprivlib's ``PCA`` as a partition step: every partition's own fit, inside the task.

A partition step is a DP transformer before a family's estimator (see
:mod:`skdptune._batched`). Each partition's pipeline fits its own copy on the partition's
training rows and applies it to that partition's training and held-out rows; here each
partition's fit is emulated with noise from the partition's own stream whose law is that of
diffprivlib's fit with the step's (already partition-rescaled) parameters, so that the family
after it is batched. Not a secure sampler: partition fits are never released.

What diffprivlib 0.6.6's ``PCA.fit`` (``_fit``, then its own ``_fit_full``: the solver is
always ``"full"``) does (``n`` training rows, ``d`` features, ``k = n_components``), and what
is done here in its place:

- ``validate_data`` (float ``X``); ``n_components`` None (``min(n, d)``, a width that depends
  on the partition's rows), a float or ``"mle"`` (a width chosen from the noisy spectrum), or
  above ``d``: the per-fit path (:func:`plan` returns None), as for ``whiten=True`` or a
  missing ``data_norm``.
- Only ``centered=True`` is emulated; without it the step takes the per-fit path. The reason
  is diffprivlib's ``fit_transform`` (what a pipeline calls): ``_fit_full`` subtracts the
  noisy mean from its input in place (``X -= mean_``; scikit-learn 1.7's ``validate_data``
  does not copy a float array), then ``transform(X)`` subtracts it again, so the training rows
  come out shifted by ``-mean_ @ components_.T`` when the step's input is a float array and
  not otherwise (a DataFrame or integer input is copied): the law then depends on the input's
  type. With ``centered=True``, ``mean_`` is zeros and both coincide.
- Mean: zeros (``centered``). Each row scaled down to norm ``data_norm`` (``_clip_to_norm``);
  ``covariance_eig(X, epsilon, norm=data_norm, dims=k)``: the noisy eigenvalues
  (``LaplaceBoundedDomain`` on ``[0, inf)``) only feed ``explained_variance_``, which the
  transform without ``whiten`` does not read, so they are not drawn; the eigenvectors one at a
  time by the ``Bingham`` mechanism (``epsilon' / (k + (k != d))`` each, sensitivity 1) on the
  covariance ``X'X / data_norm**2`` projected on the orthogonal complement (scipy's
  ``null_space``) of the vectors drawn so far, the last one of ``k = d`` taken without noise.
  Here: the same steps, and the ``Bingham`` sampler's own algorithm (its bisection for the
  envelope constant, its Gaussian proposal and acceptance test), drawn from the partition's
  stream: the accepted vector has the mechanism's law. Composition (diffprivlib's): basic
  composition over the vectors (and the eigenvalues' share, spent but unused here).
- ``svd_flip`` of the vectors (scikit-learn's, the same call), ``components_`` their first
  ``k`` as rows; ``transform`` (scikit-learn's): ``X @ components_.T - mean_ @
  components_.T`` on unclipped rows.

``random_state`` is not reproduced (the partition's stream replaces it). Every quantity of a
partition is a function of its own training rows, the public parameters and its own stream.
"""

from dataclasses import dataclass
from functools import partial
from numbers import Integral

import numpy as np
from scipy.linalg import null_space
from sklearn.utils.extmath import svd_flip

from .common import checked_params, fit_pca_partitions, transform_pca_partitions


@dataclass(frozen=True)
class PCAPlan:
    """What a partition fit of one PCA step needs: public parameters only.

    Attributes
    ----------
    epsilon : float
        The step's (partition-scaled) ``epsilon``.
    n_components : int
    data_norm : float
    n_features : int
        Columns of the step's input.
    """

    epsilon: float
    n_components: int
    data_norm: float
    n_features: int

    @property
    def n_features_out(self):
        """Columns of the step's output: ``n_components``."""
        return self.n_components


def plan(step, n_features):
    """The :class:`PCAPlan` of a configured diffprivlib ``PCA``, or None (the per-fit path).

    Parameters
    ----------
    step : diffprivlib.models.PCA
        The step, its parameters set.
    n_features : int
        Columns of the step's input.

    Returns
    -------
    plan : PCAPlan or None
        None unless ``n_components`` is an integer in ``[1, n_features]``, ``epsilon`` and
        ``data_norm`` are positive and finite, ``whiten`` is False and ``centered`` is True
        (see the module docstring).
    """
    params = checked_params(step, ("epsilon", "data_norm"))
    if params is None:
        return None
    n_components, epsilon = params["n_components"], params["epsilon"]
    data_norm, centered = params["data_norm"], params["centered"]
    if (isinstance(n_components, bool) or not isinstance(n_components, Integral)
            or not 1 <= n_components <= n_features):
        return None
    if params.get("whiten") is not False or centered is not True:
        return None
    return PCAPlan(float(epsilon), int(n_components), float(data_norm), int(n_features))


def transform_partitions(plan, block, rngs):
    """Each partition's rows through its own PCA, fitted on its own training rows (the
    partition step contract,
    :meth:`~skdptune._batched.contract.PartitionStep.transform_partitions`)."""
    return transform_pca_partitions(*fit_partitions(plan, block.X_train, block.part_train,
                                                    block.n_parts, rngs), block)


def fit_partitions(plan, X_train, part_train, n_parts, rngs):
    """The emulated ``mean_`` and ``components_`` of every partition's fit.

    Parameters
    ----------
    plan : PCAPlan
    X_train, part_train, n_parts, rngs
        A block's training rows, their partitions and its partition count, and the step's
        streams, as :func:`transform_partitions` receives them.

    Returns
    -------
    mean : ndarray of shape (n_parts, n_features)
        Zeros (``centered``).
    components : ndarray of shape (n_parts, n_components, n_features)
        Placeholders (zeros, and the first unit vectors) for a partition without training
        rows.
    failed : ndarray of shape (n_parts,), bool
        All False: diffprivlib's fit raises on no partition that has training rows.
    """
    return fit_pca_partitions(partial(_fit_one, plan), plan.n_features, plan.n_components,
                              X_train, part_train, n_parts, rngs)


def _fit_one(plan, X, rng):
    """One partition's ``mean_`` and ``components_``, drawn from its own stream."""
    d = X.shape[1]
    mean, epsilon = np.zeros(d), plan.epsilon  # centered: no mean, all of epsilon
    centred = X - mean
    norms = np.linalg.norm(centred, axis=1) / plan.data_norm
    norms[norms < 1] = 1
    centred = centred / norms[:, None]
    cov = centred.T.dot(centred) / (plan.data_norm ** 2)
    dims = min(plan.n_components, d)
    epsilon_i = epsilon / (dims + (dims != d))
    cov_i, proj_i, theta = cov, np.eye(d), np.zeros((0, d))
    for _ in range(dims):
        u_i = bingham(cov_i, epsilon_i, rng) if cov_i.size > 1 else np.ones((1,))
        theta = np.vstack((theta, proj_i.T.dot(u_i)))
        if cov_i.size > 1:
            proj_i = null_space(theta).T
            cov_i = proj_i.dot(cov).dot(proj_i.T)
    u_mtx, _ = svd_flip(theta.T, np.zeros_like(theta.T).T)
    return mean, u_mtx.T[:plan.n_components]


def bingham(value, epsilon, rng, sensitivity=1.0):
    """A draw of diffprivlib's ``Bingham(epsilon, sensitivity).randomise(value)``.

    The mechanism's own algorithm (the eigenvalues of the translated matrix, the bisection for
    the envelope constant ``b``, the Gaussian proposal summed over four draws and the
    acceptance test), drawn from ``rng``: the accepted unit vector has its law.

    Parameters
    ----------
    value : ndarray of shape (m, m)
        A symmetric matrix, ``m >= 2``.
    epsilon : float
    rng : numpy.random.Generator
    sensitivity : float, default=1.0

    Returns
    -------
    vector : ndarray of shape (m,)
    """
    eigvals = np.linalg.eigvalsh(value)
    dims = value.shape[0]
    value_translated = epsilon * (eigvals.max() * np.eye(dims) - value) / 4 / sensitivity
    translated_eigvals = np.linalg.eigvalsh(value_translated)
    left, right, mid = 1, dims, (1 + dims) / 2
    old_interval_size = (right - left) * 2
    while right - left < old_interval_size:
        old_interval_size = right - left
        mid = (right + left) / 2
        f_mid = np.array([1 / (mid + 2 * eig) for eig in translated_eigvals]).sum()
        if f_mid <= 1:
            right = mid
        if f_mid >= 1:
            left = mid
    b_const = mid
    omega = np.eye(dims) + 2 * value_translated / b_const
    omega_inv = np.linalg.inv(omega)
    norm_const = np.exp(-(dims - b_const) / 2) * ((dims / b_const) ** (dims / 2))
    while True:
        rnd_vec = rng.multivariate_normal(np.zeros(dims), omega_inv / 4, size=4).sum(axis=0)
        unit_vec = rnd_vec / np.linalg.norm(rnd_vec)
        prob = (np.exp(-unit_vec.dot(value_translated).dot(unit_vec)) / norm_const
                / ((unit_vec.dot(omega).dot(unit_vec)) ** (dims / 2)))
        if rng.random() <= prob:
            return unit_vec
