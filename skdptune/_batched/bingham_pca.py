"""skdptune's ``PCA`` (the corrected Bingham sampler) as a partition step: every partition's
own fit, inside the task.

A partition step is a DP transformer before a family's estimator (see
:mod:`skdptune._batched`). Each partition's pipeline fits its own copy on the partition's
training rows and applies it to that partition's training and held-out rows; here each
partition is fitted by the model module's own function,
:func:`skdptune.decomposition.private_releases` (the DP mean with half of ``epsilon`` unless
``centered``, the rows centred by it and clipped to ``data_norm``, then
:func:`~skdptune.decomposition.noisy_eigen` with the Bingham sampler
:func:`~skdptune.decomposition.bingham`), with the step's (already partition-rescaled)
parameters and a generator seeded from the partition's own stream (not a secure sampler:
partition fits are never released). The partitions are fitted one after the other (the
Bingham sampler is a rejection sampler, one vector at a time) and projected together, so that
the family after the step is batched. What :meth:`skdptune.decomposition.PCA.fit` and
``transform`` do (``n`` training rows, ``d`` features, ``k = n_components``), and what is done
here in its place:

- ``_validate_params``; ``data_norm`` and, with ``centered=False``, ``bounds`` required
  (``declared_box``): the same checks in :func:`plan`, which sends anything else to the per-fit
  path. ``n_components`` None (``min(n, d)``, a width that depends on the partition's rows), a
  fraction or ``"mle"`` (a width chosen from the noisy spectrum), or above ``d``, and
  ``whiten=True`` (the projections divided by the noisy variances): the per-fit path.
- ``k > n`` raises ``ValueError``: that partition's rows come out NaN, which the engine scores
  :data:`~skdptune._batched.contract.FIT_FAILED` (``error_score``, as on the per-fit path).
- ``private_releases(X, epsilon, data_norm, bounds or None, k, random_state)``: the same call;
  ``random_state`` a ``RandomState`` seeded from the partition's stream (one generator for
  every draw of the fit, as ``fit`` passes one). The noisy eigenvalues are drawn (they are part
  of the law of the draws that follow) but only feed ``explained_variance_``, which the
  transform without ``whiten`` does not read.
- ``components_``: ``oriented(vectors)[:k]`` (``svd_flip``, as ``_set_components``);
  ``transform`` (scikit-learn's): ``X @ components_.T - mean_ @ components_.T`` on unclipped
  rows (:func:`~skdptune._batched.common.project`).

Every quantity of a partition is a function of its own training rows, the public parameters
and its own stream.
"""

from dataclasses import dataclass
from functools import partial
from numbers import Integral
from typing import Optional

import numpy as np

from .._models.decomposition import oriented, private_releases
from .._validation import declared_box
from .common import checked_params, fit_pca_partitions, transform_pca_partitions


@dataclass(frozen=True)
class BinghamPCAPlan:
    """What a partition fit of one PCA step needs: public parameters only.

    Attributes
    ----------
    epsilon : float
        The step's (partition-scaled) ``epsilon``.
    n_components : int
    data_norm : float
    n_features : int
        Columns of the step's input.
    bounds : tuple of ndarray of shape (n_features,), or None
        The declared box of the DP mean; None with ``centered=True``.
    """

    epsilon: float
    n_components: int
    data_norm: float
    n_features: int
    bounds: Optional[tuple]

    @property
    def n_features_out(self):
        """Columns of the step's output: ``n_components``."""
        return self.n_components


def plan(step, n_features):
    """The :class:`BinghamPCAPlan` of a configured :class:`skdptune.decomposition.PCA`, or None
    (the per-fit path).

    Parameters
    ----------
    step : skdptune.decomposition.PCA
        The step, its parameters set.
    n_features : int
        Columns of the step's input.

    Returns
    -------
    plan : BinghamPCAPlan or None
        None unless ``n_components`` is an integer in ``[1, n_features]``, ``epsilon`` and
        ``data_norm`` are positive and finite, ``whiten`` is False and, with
        ``centered=False``, ``bounds`` are declared and finite for ``n_features`` columns.
    """
    params = checked_params(step, ("epsilon", "data_norm"))
    if params is None:
        return None
    n_components = params["n_components"]
    if (isinstance(n_components, bool) or not isinstance(n_components, Integral)
            or not 1 <= n_components <= n_features or params["whiten"]):
        return None
    bounds = None
    if not params["centered"]:
        if params["bounds"] is None:
            return None
        try:
            bounds = tuple(np.asarray(bound, dtype=float)
                           for bound in declared_box(step, n_features))
        except Exception:  # noqa: BLE001 - whatever the real fit would make of them
            return None
    return BinghamPCAPlan(float(params["epsilon"]), int(n_components),
                          float(params["data_norm"]), int(n_features), bounds)


def transform_partitions(plan, block, rngs):
    """Each partition's rows through its own PCA, fitted on its own training rows (the
    partition step contract,
    :meth:`~skdptune._batched.contract.PartitionStep.transform_partitions`); NaN rows for a
    partition whose fit raises (fewer training rows than ``n_components``)."""
    return transform_pca_partitions(*fit_partitions(plan, block.X_train, block.part_train,
                                                    block.n_parts, rngs), block)


def fit_partitions(plan, X_train, part_train, n_parts, rngs):
    """The emulated ``mean_`` and ``components_`` of every partition's fit, and where the fit
    raises (fewer training rows than ``n_components``): ``plan`` (a :class:`BinghamPCAPlan`)
    and the rest as :func:`~skdptune._batched.common.fit_pca_partitions` takes and returns
    them."""
    return fit_pca_partitions(partial(_fit_one, plan), plan.n_features, plan.n_components,
                              X_train, part_train, n_parts, rngs)


def _fit_one(plan, X, rng):
    """One partition's ``mean_`` and ``components_`` (None where ``fit`` raises), with a
    generator seeded from its stream for every draw of the fit."""
    if len(X) < plan.n_components:
        return None
    state = np.random.RandomState(rng.integers(0, 2 ** 32, size=4, dtype=np.uint32))
    mean, _, vectors = private_releases(X, plan.epsilon, plan.data_norm, plan.bounds,
                                        plan.n_components, state)
    return mean, oriented(vectors)[:plan.n_components]
