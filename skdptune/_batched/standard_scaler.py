"""diffprivlib's ``StandardScaler`` as a partition step: every partition of a block at once.

A partition step is a DP transformer before a family's estimator. Each partition's pipeline
fits its own copy on the partition's training rows and applies it to that partition's training
and held-out rows; here every partition of a block is fitted and applied in one array program,
with noise from the partition's own stream whose law is that of diffprivlib's fit with the
candidate's (already partition-rescaled) parameters. Not a secure sampler: partition fits are
never released.

What diffprivlib 0.6.6's ``StandardScaler.fit`` (``_reset`` then ``partial_fit``) does, and
what is done here in its place:

- ``validate_data(dtype=float)``; ``bounds`` expanded per feature by ``check_bounds``; ``X``
  clipped to them (a copy: ``transform`` later sees the unclipped rows). Here: the same
  clip, per feature, of the partition's training rows only.
- ``epsilon_0 = epsilon / 2`` with ``with_std`` (the mean and the variance each get half),
  else ``epsilon``. With neither ``with_mean`` nor ``with_std`` nothing is estimated and the
  transform is the identity.
- Mean, ``diffprivlib.tools.nanmean(X, epsilon_0, axis=0, bounds)``: ``_wrap_axis`` divides
  ``epsilon_0`` over the ``d`` features; per feature, ``LaplaceTruncated(epsilon_0 / d,
  sensitivity=(upper - lower) / n, lower, upper)`` on the mean of the clipped column (``n``:
  the partition's training rows), i.e. Laplace noise of scale ``(upper - lower) / (n *
  epsilon_0 / d)`` then a clip to ``[lower, upper]``. Here: Laplace by inverse CDF, the same
  clip.
- Variance (``with_std``), ``nanvar`` likewise: per feature ``LaplaceBoundedDomain(epsilon_0 /
  d, sensitivity=((upper - lower) / n) ** 2 * (n - 1), lower=0, upper=(upper - lower) ** 2 /
  4)`` on ``np.var`` of the clipped column (about its exact mean, not the noisy one). That
  mechanism clamps the value into its domain and rejection-samples Laplace noise until the
  result lies in it: here, Laplace noise conditioned on the domain, by inverse CDF. Its scale
  solves an equation homogeneous in ``(upper - lower) ** 2``: ``(upper - lower) ** 2`` times
  the solution for sensitivity ``(n - 1) / n ** 2`` and domain ``[0, 1 / 4]``, computed by
  diffprivlib's own ``_find_scale`` once per ``(epsilon_0 / d, n)`` and cached (a function of
  public parameters and the partition's own row count). ``n == 1`` has sensitivity 0: the
  variance is exactly 0, as diffprivlib's scale 0 gives.
- ``_incremental_mean_and_var`` from an empty state: ``mean_ = (0 + m * n) / n`` and
  ``var_ = (v * n) / n`` (the same float operations); ``scale_ = sqrt(var_)`` with values
  below ``10 * eps`` set to 1 (scikit-learn's ``_handle_zeros_in_scale``).
- ``transform`` (scikit-learn's): ``(X - mean_) / scale_`` on unclipped rows, each part as
  ``with_mean`` / ``with_std`` say.

``random_state`` is not reproduced (the partition's stream replaces it), as for the batched
families. Every quantity of a partition is a function of its own training rows, the public
parameters and its own stream.
"""

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from diffprivlib.mechanisms import LaplaceBoundedDomain

from .common import checked_params, declared_bounds, laplace, laplace_within


@dataclass(frozen=True)
class StandardScalerPlan:
    """What a partition fit of one scaler needs: public parameters only.

    Attributes
    ----------
    epsilon : float
        The step's (partition-scaled) ``epsilon``.
    lower, upper : ndarray of shape (n_features,)
        The declared bounds, per feature, as diffprivlib's ``check_bounds`` expands them.
    with_mean, with_std : bool
    """

    epsilon: float
    lower: np.ndarray
    upper: np.ndarray
    with_mean: bool
    with_std: bool

    @property
    def n_features_out(self):
        """Columns of the step's output: those of its input."""
        return len(self.lower)


def plan(step, n_features):
    """The :class:`StandardScalerPlan` of a configured scaler, or None (the per-fit path).

    Decided from the parameters and the number of input columns only. Missing, non-finite or
    zero-width bounds, a non-finite or non-positive epsilon and parameters scikit-learn rejects
    fall back to the per-fit path, which gives them a real fit's behaviour.

    Parameters
    ----------
    step : diffprivlib.models.StandardScaler
        The step, its parameters set.
    n_features : int
        Columns of the step's input.

    Returns
    -------
    plan : StandardScalerPlan or None
    """
    params = checked_params(step)
    if params is None or params["bounds"] is None or n_features < 1:
        return None
    declared = declared_bounds(params["bounds"], n_features)
    if declared is None or not np.all(declared[1] > declared[0]):
        return None
    lower, upper = declared
    return StandardScalerPlan(float(params["epsilon"]), lower, upper, bool(params["with_mean"]),
                              bool(params["with_std"]))


def transform_partitions(plan, block, rngs):
    """Each partition's rows through its own scaler, fitted on its own training rows (the
    partition step contract,
    :meth:`~skdptune._batched.contract.PartitionStep.transform_partitions`)."""
    mean, scale = fit_partitions(plan, block.X_train, block.part_train, block.n_parts, rngs)
    return (_apply(plan, mean, scale, block.X_train, block.part_train),
            _apply(plan, mean, scale, block.X_val, block.part_val))


def fit_partitions(plan, X_train, part_train, n_parts, rngs):
    """The emulated ``mean_`` and ``scale_`` of every partition's fit.

    Parameters
    ----------
    plan : StandardScalerPlan
    X_train, part_train, n_parts, rngs
        A block's training rows, their partitions and its partition count, and the step's
        streams, as :func:`transform_partitions` receives them.

    Returns
    -------
    mean, scale : ndarray of shape (n_parts, n_features)
        diffprivlib's ``mean_`` and ``scale_`` (``scale_`` is 1 without ``with_std``, as
        ``transform`` then leaves the columns unscaled); placeholders (0 and 1) for a
        partition without training rows.
    """
    n_features = len(plan.lower)
    # Each partition's uniforms from its own stream, in a fixed layout: a mean and a variance
    # per feature (drawn whatever the options, so the layout never changes).
    uniforms = np.stack([rng.random(2 * n_features) for rng in rngs]).reshape(
        n_parts, 2, n_features)
    counts = np.bincount(part_train, minlength=n_parts).astype(float)
    fitted = counts > 0
    n = np.where(fitted, counts, 1.0)[:, None]
    lower, upper = plan.lower, plan.upper
    width = upper - lower
    clipped = np.clip(X_train, lower, upper)
    sums = _sum_by_partition(clipped, part_train, n_parts)
    exact_mean = sums / n
    epsilon = (plan.epsilon / 2 if plan.with_std else plan.epsilon) / n_features

    # Mean: LaplaceTruncated(epsilon, sensitivity=width / n), clipped to the bounds.
    noisy_mean = np.clip(exact_mean + width / (n * epsilon) * laplace(uniforms[:, 0]),
                         lower, upper)
    mean = (noisy_mean * n) / n  # diffprivlib's (0 + m * n) / (0 + n)

    if plan.with_std:
        # Variance: np.var of the clipped column (about its exact mean), then
        # LaplaceBoundedDomain(epsilon, sensitivity=(width / n) ** 2 * (n - 1),
        # domain [0, width ** 2 / 4]).
        deviations = (clipped - exact_mean[part_train]) ** 2
        variance = _sum_by_partition(deviations, part_train, n_parts) / n
        domain = width ** 2 / 4
        value = np.clip(variance, 0.0, domain)
        unit = np.array([_unit_scale(epsilon, int(c)) for c in counts])[:, None]
        noise_scale = width ** 2 * unit
        safe = np.where(noise_scale > 0, noise_scale, 1.0)
        noise = safe * laplace_within(uniforms[:, 1], -value / safe, (domain - value) / safe)
        noisy_var = np.clip(value + np.where(noise_scale > 0, noise, 0.0), 0.0, domain)
        var = (noisy_var * n) / n  # diffprivlib's nanvar * n / n
        scale = np.sqrt(var)
        scale[scale < 10 * np.finfo(scale.dtype).eps] = 1.0  # _handle_zeros_in_scale
    else:
        scale = np.ones((n_parts, n_features))
    mean[~fitted], scale[~fitted] = 0.0, 1.0
    return mean, scale


def _apply(plan, mean, scale, X, part):
    """scikit-learn's ``StandardScaler.transform`` of each row with its partition's scaler."""
    X = np.array(X, dtype=np.float64)
    if plan.with_mean:
        X -= mean[part]
    if plan.with_std:
        X /= scale[part]
    return X


def _sum_by_partition(values, part, n_parts):
    """Column sums of ``values`` per partition, ``(n_parts, n_columns)``: each row is added to
    its own partition's sums only."""
    return np.stack([np.bincount(part, weights=column, minlength=n_parts)
                     for column in values.T], axis=1) if values.shape[1] else np.zeros(
        (n_parts, 0))


@lru_cache(maxsize=4096)
def _unit_scale(epsilon, n):
    """The bounded-domain Laplace scale of ``nanvar`` for bounds of width 1 and ``n`` rows."""
    if n <= 1:
        return 0.0  # sensitivity 0: diffprivlib's solver returns 0 (no noise)
    # diffprivlib's own solver, so the scale is the one its mechanism uses (to rounding).
    return LaplaceBoundedDomain(epsilon=epsilon, delta=0.0, sensitivity=(n - 1) / n ** 2,
                                lower=0.0, upper=0.25)._find_scale()
