"""Report-noisy-max with Laplace noise (Dwork & Roth 2014) as a one-shot selector."""

import math

import numpy as np
from diffprivlib.mechanisms import Laplace
from scipy.special import lambertw

from ._base import OneShotSelector


class ReportNoisyMax(OneShotSelector):
    """Add ``Lap(2 * Delta / epsilon)`` noise to every utility and select the largest.

    Report-noisy-max (Dwork & Roth, "The Algorithmic Foundations of Differential Privacy",
    2014, Section 3.3), with noise from diffprivlib's :class:`~diffprivlib.mechanisms.Laplace`.
    Ties go to the lowest index (they have probability 0). Only the selected index is
    released, never the noisy utilities. It spends the whole selection budget in one step.

    Notes
    -----
    Privacy: ``epsilon``-DP for neighbouring datasets (the library's: replace one record) whose
    utilities each move by at most ``Delta``, the
    ``sensitivity`` passed to :meth:`select`. Dwork & Roth's Claim 3.9 uses ``Lap(1 /
    epsilon)`` for monotone counting queries; the utilities here may move in different
    directions by up to ``Delta`` each, which needs scale ``b = 2 * Delta / epsilon``. Fix the
    other candidates' noise and let ``r*`` be the smallest noise with which candidate ``i``
    wins on one dataset; on the neighbouring dataset ``i`` gains at least ``-Delta`` and every
    rival at most ``+Delta``, so ``i`` still wins whenever its noise is at least
    ``r* + 2 * Delta``, and the Laplace tail over that shift loses a factor of at most
    ``exp(2 * Delta / b) = exp(epsilon)``. ``delta`` is not used: the reported delta is 0.

    Utility: with ``m`` candidates and best utility ``u*``, for every ``beta`` in ``(0, 1)``,
    with probability at least ``1 - beta``::

        u(selected) >= u* - 2 * (2 * Delta / epsilon) * ln(m / beta)

    Derivation: the selected candidate's noisy utility is at least the best one's, so
    ``u* - u(selected) <= Z_selected - Z_best <= 2 * max_j |Z_j|``; each ``|Z_j|`` exceeds
    ``t`` with probability ``exp(-t / b)``, so a union bound over the ``m`` candidates gives
    ``beta`` at ``t = b * ln(m / beta)``. The bound is twice the exponential mechanism's.

    Examples
    --------
    >>> from skdptune.selection import ReportNoisyMax
    >>> result = ReportNoisyMax().select(
    ...     [0.2, 0.9, 0.5], sensitivity=0.001, epsilon=10.0, delta=0.0, random_state=0)
    >>> result.index, result.composition
    (1, 'single')
    """

    def _choose(self, utilities, sensitivity, epsilon, rng):
        # Laplace scale = (2 * Delta) / epsilon: non-monotone utilities of sensitivity Delta.
        noise = Laplace(epsilon=epsilon, sensitivity=2 * sensitivity, random_state=rng)
        noisy = [noise.randomise(float(utility)) for utility in utilities]
        # np.argmax returns the lowest index among ties.
        return np.argmax(noisy)

    def tail_lead(self, probability, *, sensitivity, epsilon):
        """The lead ``c`` at which a trailing candidate is selected with ``probability``;
        see :meth:`OneShotSelector.tail_lead`.

        A candidate trailing the leader by ``c`` is selected only if its noise beats the
        leader's by ``c``. The difference of two ``Lap(b)`` variates (``b = 2 * Delta /
        epsilon``) exceeds ``c`` with probability ``(1 + x / 2) * exp(-x) / 2``, ``x = c /
        b``; this solves it for ``x`` (Lambert's ``W``, branch -1), and is 0 from
        ``probability = 1 / 2`` up (the chance of two equal utilities).
        """
        if probability >= 0.5:
            return 0.0
        # (1 + x/2) exp(-x) / 2 = p  <=>  y exp(-2y) = 2p / e^2 with y = 1 + x/2 >= 1.
        y = -lambertw(-4.0 * probability * math.exp(-2.0), -1).real / 2.0
        return 2.0 * (y - 1.0) * 2.0 * sensitivity / epsilon
