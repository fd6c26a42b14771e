"""Composition, calibration of the per-iteration budget, and the bridge to diffprivlib's accountant.

Everything that turns "what was released" into an ``(epsilon, delta)`` guarantee lives here, so a
reviewer can audit the library's privacy arithmetic in one file.

Unit of privacy: one record (a row of ``X`` with its ``y``). Adjacency: add-or-remove one record.
"""

import math
from functools import lru_cache

from diffprivlib.accountant import BudgetAccountant
from dp_accounting.pld import common, privacy_loss_distribution

#: Stated in every privacy report: what one "individual" is and which datasets are neighbours.
PRIVACY_UNIT = "one record (a row of X together with its label y)"
ADJACENCY = "add-or-remove one record"

# Bisection tolerance on eps0, relative to the basic-composition value epsilon / n_steps.
_CALIBRATION_RTOL = 1e-6


def composed_epsilon(epsilon_per_step, n_steps, delta):
    """Epsilon of ``n_steps`` adaptively composed pure ``epsilon_per_step``-DP mechanisms.

    Parameters
    ----------
    epsilon_per_step : float
        Pure-DP epsilon of each step (``delta = 0`` per step).
    n_steps : int
        Number of steps composed (a cap fixed before seeing data, not a realised count).
    delta : float
        Target delta of the composition. ``0`` uses basic composition.

    Returns
    -------
    epsilon : float
        An upper bound on the composed epsilon at ``delta``.

    Notes
    -----
    ``delta == 0``: basic composition, ``n_steps * epsilon_per_step`` (tight for pure DP).
    ``delta > 0``: dp-accounting's privacy loss distribution (PLD) of a pure-DP mechanism,
    self-composed ``n_steps`` times. The PLD is discretised pessimistically, so the value is an
    upper bound. Basic composition is also valid at any ``delta``, so the minimum of the two is
    returned.
    """
    basic = n_steps * epsilon_per_step
    if delta == 0:
        return basic
    return min(basic, _pld_epsilon(float(epsilon_per_step), int(n_steps), float(delta)))


@lru_cache(maxsize=256)
def _pld_epsilon(epsilon_per_step, n_steps, delta):
    pld = privacy_loss_distribution.from_privacy_parameters(
        common.DifferentialPrivacyParameters(epsilon_per_step, 0.0)
    ).self_compose(n_steps)
    return pld.get_epsilon_for_delta(delta)


@lru_cache(maxsize=256)
def calibrate_epsilon_per_step(epsilon, delta, n_steps):
    """Largest per-step epsilon whose ``n_steps``-fold composition is ``(epsilon, delta)``-DP.

    Parameters
    ----------
    epsilon : float
        Total epsilon the composition may spend; positive and finite.
    delta : float
        Total delta, in ``[0, 1)``. ``0`` gives basic composition: ``epsilon / n_steps``.
    n_steps : int
        Number of pure-DP steps composed; at least 1.

    Returns
    -------
    epsilon_per_step : float
        Never below ``epsilon / n_steps`` (basic composition is valid for every delta) and
        such that ``composed_epsilon(epsilon_per_step, n_steps, delta) <= epsilon``.
    """
    basic = epsilon / n_steps
    if delta == 0 or n_steps == 1:
        return basic
    # composed_epsilon is non-decreasing in the per-step epsilon: bisect for the largest
    # per-step value whose composition fits, keeping the lower (always valid) end.
    low, high = basic, epsilon
    if composed_epsilon(high, n_steps, delta) <= epsilon:
        return high
    while high - low > _CALIBRATION_RTOL * basic:
        middle = (low + high) / 2
        if composed_epsilon(middle, n_steps, delta) <= epsilon:
            low = middle
        else:
            high = middle
    return low


def resolve_accountant(accountant):
    """The accountant to charge: ``accountant`` itself, or diffprivlib's default when None."""
    return BudgetAccountant.load_default(accountant)


def add_costs(*costs):
    """Basic (sequential) composition of ``(epsilon, delta)`` pairs: both add up.

    Valid for any mechanisms run one after the other on the same data, adaptively.
    """
    return (math.fsum(c[0] for c in costs), math.fsum(c[1] for c in costs))
