"""The exponential mechanism (McSherry & Talwar 2007) as a one-shot selector."""

import math

from diffprivlib.mechanisms import Exponential

from ._base import OneShotSelector


class ExponentialMechanism(OneShotSelector):
    """Exponential mechanism: select each candidate with probability growing with its utility.

    Candidate ``r`` is selected with probability proportional to
    ``exp(epsilon * u_r / (2 * Delta))``: the exponential mechanism of McSherry & Talwar
    ("Mechanism Design via Differential Privacy", FOCS 2007), sampled with diffprivlib's
    :class:`~diffprivlib.mechanisms.Exponential` (``monotonic=False``). It spends the whole
    selection budget in one step and releases only the selected index.

    Notes
    -----
    Privacy: ``epsilon``-DP for neighbouring datasets (the library's: replace one record) whose
    utilities each move by at most ``Delta``, the
    ``sensitivity`` passed to :meth:`select`. Changing a record moves every ``u_r``
    by at most ``Delta``, possibly in different directions (the utilities are not monotone),
    so each weight ``exp(epsilon * u_r / (2 * Delta))`` and the normaliser each change by a
    factor of at most ``exp(epsilon / 2)``, and every output probability by at most
    ``exp(epsilon)`` (Dwork & Roth 2014, Theorem 3.10). That is why the exponent carries
    ``2 * Delta`` (diffprivlib's ``monotonic=False``); monotone utilities would allow
    ``Delta``, which these are not. ``delta`` is not used: the reported delta is 0.

    Utility: with ``m`` candidates and best utility ``u*``, for every ``beta`` in ``(0, 1)``,
    with probability at least ``1 - beta``::

        u(selected) >= u* - (2 * Delta / epsilon) * ln(m / beta)

    Derivation (Dwork & Roth, Theorem 3.11): the normaliser is at least
    ``exp(epsilon * u* / (2 * Delta))``, so a candidate with ``u_r < u* - c`` is selected with
    probability below ``exp(-epsilon * c / (2 * Delta))``; a union bound over at most ``m``
    such candidates gives ``m * exp(-epsilon * c / (2 * Delta))``, which equals ``beta`` at
    ``c = (2 * Delta / epsilon) * ln(m / beta)``.

    Examples
    --------
    >>> from skdptune.selection import ExponentialMechanism
    >>> result = ExponentialMechanism().select(
    ...     [0.2, 0.9, 0.5], sensitivity=0.001, epsilon=10.0, delta=0.0, random_state=0)
    >>> result.index, result.composition
    (1, 'single')
    """

    def _choose(self, utilities, sensitivity, epsilon, rng):
        # Non-monotone utilities of sensitivity Delta: weights exp(eps * u / (2 * Delta)).
        mechanism = Exponential(
            epsilon=epsilon, sensitivity=sensitivity, utility=utilities.tolist(),
            monotonic=False, random_state=rng,
        )
        return mechanism.randomise()

    def tail_lead(self, probability, *, sensitivity, epsilon):
        """``(2 * Delta / epsilon) * ln(1 / probability)``; see
        :meth:`OneShotSelector.tail_lead`.

        A candidate trailing another by ``lead`` is selected only if its weight relative to the leader's is at most ``exp(-epsilon * lead / (2 * Delta))``.
        """
        return 2 * sensitivity / epsilon * math.log(1.0 / probability)
