"""Permute-and-flip (McKenna & Sheldon 2020) as a one-shot selector."""

import math

from diffprivlib.mechanisms import PermuteAndFlip as _PermuteAndFlipMechanism

from ._base import OneShotSelector


class PermuteAndFlip(OneShotSelector):
    """Permute-and-flip: visit the candidates in random order, stop at each with a coin flip.

    The candidates are visited in uniformly random order, and candidate ``r`` stops the walk
    with probability ``exp(epsilon * (u_r - u*) / (2 * Delta))``, ``u*`` the best utility: the
    permute-and-flip mechanism of McKenna & Sheldon ("Permute-and-Flip: A new mechanism for
    differentially private selection", NeurIPS 2020), sampled with diffprivlib's
    :class:`~diffprivlib.mechanisms.PermuteAndFlip` (``monotonic=False``). The best candidate
    stops the walk with probability 1, so a candidate is always selected. It spends the whole
    selection budget in one step and releases only the selected index.

    Notes
    -----
    Privacy: ``epsilon``-DP for neighbouring datasets (the library's: replace one record) whose
    utilities each move by at most ``Delta``, the
    ``sensitivity`` passed to :meth:`select` and utilities that may move in different
    directions by up to ``Delta`` each (McKenna & Sheldon, Theorem 1, with the ``2 * Delta``
    of non-monotone utilities; diffprivlib's ``monotonic=False``). ``delta`` is not used: the
    reported delta is 0.

    Utility: with ``m`` candidates and best utility ``u*``, for every ``beta`` in ``(0, 1)``,
    with probability at least ``1 - beta``::

        u(selected) >= u* - (2 * Delta / epsilon) * ln(m / beta)

    Derivation: a candidate is selected only if its own coin comes up heads, so a candidate
    with ``u_r < u* - c`` is selected with probability below
    ``exp(-epsilon * c / (2 * Delta))``; a union bound over at most ``m`` such candidates
    gives ``beta`` at ``c = (2 * Delta / epsilon) * ln(m / beta)``, the exponential
    mechanism's bound. Its expected regret is never larger than the exponential mechanism's
    (McKenna & Sheldon, Theorem 2).

    Examples
    --------
    >>> from skdptune.selection import PermuteAndFlip
    >>> result = PermuteAndFlip().select(
    ...     [0.2, 0.9, 0.5], sensitivity=0.001, epsilon=10.0, delta=0.0, random_state=0)
    >>> result.index, result.composition
    (1, 'single')
    """

    def _choose(self, utilities, sensitivity, epsilon, rng):
        # Non-monotone utilities of sensitivity Delta: coins exp(eps * (u - u*) / (2 * Delta)).
        mechanism = _PermuteAndFlipMechanism(
            epsilon=epsilon, sensitivity=sensitivity, utility=utilities.tolist(),
            monotonic=False, random_state=rng,
        )
        return mechanism.randomise()

    def tail_lead(self, probability, *, sensitivity, epsilon):
        """``(2 * Delta / epsilon) * ln(1 / probability)``; see
        :meth:`OneShotSelector.tail_lead`.

        A candidate trailing another by ``lead`` is selected only if its coin comes up with probability at most ``exp(-epsilon * lead / (2 * Delta))``.
        """
        return 2 * sensitivity / epsilon * math.log(1.0 / probability)
