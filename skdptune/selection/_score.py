"""A DP estimate of the selected candidate's utility, for ``best_score_``."""

import math

from diffprivlib.mechanisms import Laplace
from diffprivlib.utils import check_random_state

from ._base import check_selection_inputs


def estimate_utility(utilities, index, *, sensitivity, epsilon, random_state=None):
    """Laplace estimate of ``utilities[index]``, clipped to ``[0, 1]``.

    Parameters
    ----------
    utilities : array-like of shape (n_candidates,)
        Utilities in ``[0, 1]``.
    index : int
        The candidate to estimate, chosen before (a DP output, or public).
    sensitivity : float
        Largest change of any utility when one record is replaced (the library's
        adjacency).
    epsilon : float
        Budget of the estimate.
    random_state : None, int or numpy.random.RandomState, default=None
        None draws from :mod:`secrets`; a seed gives no guarantee.

    Returns
    -------
    estimate : float
        In ``[0, 1]``.

    Notes
    -----
    Privacy: the Laplace mechanism, ``Lap(sensitivity / epsilon)`` on one utility of
    sensitivity ``sensitivity``: ``epsilon``-DP. ``index`` comes from a DP selection, so the
    two compose sequentially (basic composition); the clip is post-processing.
    """
    utilities = check_selection_inputs(utilities, sensitivity, epsilon, 0.0)
    rng = check_random_state(random_state, secure=True)
    noise = Laplace(epsilon=epsilon, sensitivity=sensitivity, random_state=rng)
    return min(max(noise.randomise(float(utilities[index])), 0.0), 1.0)


def estimate_std(sensitivity, epsilon):
    """Standard deviation of the noise :func:`estimate_utility` adds, before its clip.

    ``Lap(b)`` with ``b = sensitivity / epsilon`` has standard deviation ``sqrt(2) * b``. It
    is a function of public quantities only (the sensitivity ``1 / n_partitions`` and the
    estimate's budget), so releasing it costs nothing. The clip to ``[0, 1]`` can only
    shrink the error.

    Parameters
    ----------
    sensitivity : float
        Sensitivity of the estimated utility.
    epsilon : float
        Budget of the estimate.

    Returns
    -------
    std : float
        In ``[0, 1]`` utility units.

    Examples
    --------
    >>> from skdptune.selection._score import estimate_std
    >>> round(estimate_std(sensitivity=0.01, epsilon=0.1), 4)
    0.1414
    """
    return math.sqrt(2.0) * sensitivity / epsilon
