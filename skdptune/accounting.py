"""Composition, calibration of the per-iteration budget, and the bridge to diffprivlib's accountant.

Everything that turns "what was released" into an ``(epsilon, delta)`` guarantee lives here, so a
reviewer can audit the library's privacy arithmetic in one file.

Unit of privacy: one record (a row of ``X`` with its ``y``). Adjacency: add-or-remove one record.
"""

import math
from functools import lru_cache

from diffprivlib.accountant import BudgetAccountant
from diffprivlib.utils import Budget
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


# ---------------------------------------------------------------------------------------------
# Repeat-and-select with a random number of trials (Liu & Talwar 2019; Papernot & Steinke 2022),
# used by skdptune.PrivateRandomizedSearchCV.
# ---------------------------------------------------------------------------------------------

# Relative bisection tolerance on the truncated negative binomial's parameter gamma.
_GAMMA_RTOL = 1e-12


def randomized_response_noise(epsilon):
    """Noise parameter of the 2-bucket randomized response that is exactly ``epsilon``-DP.

    dp-accounting's ``RandomizedResponseDpEvent(p, 2)`` keeps its input with probability
    ``1 - p/2`` and flips it with probability ``p/2``; the likelihood ratio
    ``(1 - p/2) / (p/2) = 2/p - 1`` equals ``exp(epsilon)`` for ``p = 2 / (1 + exp(epsilon))``.

    Parameters
    ----------
    epsilon : float
        Pure-DP epsilon, positive and finite.

    Returns
    -------
    p : float
        Noise parameter in ``(0, 1)``.
    """
    return 2.0 / (1.0 + math.exp(epsilon))


def truncated_negative_binomial_mean(gamma, shape):
    """Mean of Papernot & Steinke's truncated negative binomial ``D_{eta, gamma}``.

    ``P[K = k] = (1-gamma)^k / (gamma^-eta - 1) * prod_{l<k} (l + eta) / (l + 1)`` for
    ``k >= 1`` (Definition 1 of arXiv:2110.03620); ``eta = 0`` is the logarithmic law
    ``P[K = k] = (1-gamma)^k / (k log(1/gamma))`` and ``eta = 1`` the geometric law
    ``gamma (1-gamma)^(k-1)``. The mean is ``eta (1/gamma - 1) / (1 - gamma^eta)``, and
    ``(1/gamma - 1) / log(1/gamma)`` for ``eta = 0`` (the same parametrisation as
    dp-accounting's ``RepeatAndSelectDpEvent``).

    Parameters
    ----------
    gamma : float
        Parameter in ``(0, 1)``.
    shape : float
        ``eta >= 0``.

    Returns
    -------
    mean : float
    """
    if shape == 0:
        return (1.0 / gamma - 1.0) / -math.log(gamma)
    return shape * (1.0 / gamma - 1.0) / -math.expm1(shape * math.log(gamma))


@lru_cache(maxsize=64)
def truncated_negative_binomial_gamma(shape, mean):
    """The parameter ``gamma`` of the truncated negative binomial with the given mean.

    Returns (up to a relative ``1e-12``) the solution of
    ``truncated_negative_binomial_mean(gamma, shape) == mean``, from above: the returned
    ``gamma`` gives a mean at most ``mean``, and is at least dp-accounting's own conservative
    (from below) solution. Sampling the number of trials with it is therefore covered by
    dp-accounting's bound for ``RepeatAndSelectDpEvent(event, mean, shape)``, which grows as
    ``gamma`` falls (term ``-log(gamma)``) and as the mean rises (term ``log(mean)``).

    Parameters
    ----------
    shape : float
        ``eta >= 0``.
    mean : float
        Requested mean, ``> 1``.

    Returns
    -------
    gamma : float
        In ``(0, 1)``.
    """
    if shape == 1:
        return 1.0 / mean  # geometric: the mean is exactly 1 / gamma
    low, high = 0.0, 1.0  # the mean falls from infinity to 1 as gamma rises from 0 to 1
    while high - low > _GAMMA_RTOL * high:
        middle = (low + high) / 2
        if truncated_negative_binomial_mean(middle, shape) > mean:
            low = middle
        else:
            high = middle
    return high


def repeat_and_select_epsilon(trial_epsilon, delta, mean, shape):
    """Epsilon of releasing the best of a random number ``K`` of pure ``trial_epsilon``-DP trials.

    Parameters
    ----------
    trial_epsilon : float
        Pure-DP epsilon of one trial (positive, finite), under the adjacency the guarantee is
        wanted for (the library's: add-or-remove one record).
    delta : float
        Target delta, in ``(0, 1)``.
    mean : float
        Mean of ``K`` (at least 1).
    shape : float
        Law of ``K``: ``math.inf`` for Poisson(``mean``) (``K = 0`` possible, releasing
        nothing), otherwise Papernot & Steinke's truncated negative binomial with ``eta =
        shape`` (``1`` geometric, ``0`` logarithmic; see
        :func:`truncated_negative_binomial_mean`).

    Returns
    -------
    epsilon : float
        An upper bound on the epsilon of the whole repeat-and-select at ``delta``.

    Notes
    -----
    Mechanism: Papernot & Steinke (2022, Theorems 2 and 6), as implemented by dp-accounting's
    RDP accountant for ``RepeatAndSelectDpEvent``: run the trial ``K`` times independently and
    release only the best output. Its input is the trial's RDP curve.

    Trial curve. A pure ``eps``-DP mechanism's output pair ``(M(D), M(D'))`` on neighbours is
    a post-processing of the 2-bucket randomized-response pair with the same ``eps`` (Kairouz,
    Oh & Viswanath 2015), so by data processing its Rényi divergence of every order, in both
    directions, is at most that pair's. dp-accounting's RDP accountant computes exactly this
    pair's divergence for ``RandomizedResponseDpEvent(p, 2)`` under ``NeighborRel.REPLACE_ONE``
    (the two inputs are different buckets). The relation argument only selects that formula:
    the theorem holds for any symmetric adjacency under which the trial is ``eps``-DP, so the
    result is a guarantee under add-or-remove adjacency when ``trial_epsilon`` is the trial's
    add-or-remove epsilon. No factor 2 is needed (that factor converts a mechanism's
    add-or-remove epsilon into its replace-one epsilon, which is not done here: the pair itself
    is bounded).

    Check: a geometric ``K`` (``shape=1``) of mean 10 and ``trial_epsilon=1`` gives about 3.01
    at ``delta=1e-6``, Liu & Talwar's (2019) pure ``3 * eps``.
    """
    return _repeat_and_select_epsilon(float(trial_epsilon), float(delta), float(mean),
                                      float(shape))


@lru_cache(maxsize=256)
def _repeat_and_select_epsilon(trial_epsilon, delta, mean, shape):
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    trial = dp_event.RandomizedResponseDpEvent(randomized_response_noise(trial_epsilon), 2)
    accountant = rdp_privacy_accountant.RdpAccountant(
        neighboring_relation=rdp_privacy_accountant.NeighborRel.REPLACE_ONE
    )
    accountant.compose(dp_event.RepeatAndSelectDpEvent(trial, mean, shape))
    return float(accountant.get_epsilon(delta))


def calibrate_trial_epsilon(epsilon, delta, mean, shape, subsample=None):
    """Largest per-trial epsilon whose whole random search costs at most ``epsilon``.

    For comparisons at equal total budget: ``PrivateRandomizedSearchCV(epsilon=...)`` takes
    the per-trial epsilon, and this inverts the total it reports (non-decreasing in the trial
    epsilon) by bisection, keeping the valid (lower) end, to a relative ``1e-12``.

    Parameters
    ----------
    epsilon : float
        Total epsilon, positive and finite.
    delta, mean, shape : float
        As for :func:`repeat_and_select_epsilon`.
    subsample : float or None, default=None
        As for ``PrivateRandomizedSearchCV``: the total is then
        :func:`subsampled_tuning_cost` with the final fit at the per-trial epsilon.

    Returns
    -------
    trial_epsilon : float
        With a total at most ``epsilon`` and within a relative ``1e-12`` of it.

    Raises
    ------
    ValueError
        If even a tiny trial epsilon costs more than ``epsilon`` (the ``log(mean)`` overhead
        of the random count alone exceeds it).
    """
    def total(trial_epsilon):
        tuning = (repeat_and_select_epsilon(trial_epsilon, delta, mean, shape), delta)
        if subsample is None:
            return tuning[0]
        return subsampled_tuning_cost(tuning, trial_epsilon, subsample)[0]

    low, high = epsilon * 1e-6, epsilon
    if total(low) > epsilon:
        raise ValueError(
            f"epsilon={epsilon} is too small for a random number of trials with mean={mean} "
            f"at delta={delta}: the count alone costs more. Use a larger epsilon or delta, or "
            "a smaller mean."
        )
    while high - low > 1e-12 * epsilon:
        middle = (low + high) / 2
        if total(middle) <= epsilon:
            low = middle
        else:
            high = middle
    return low


def subsampled_tuning_cost(tuning_cost, final_epsilon, subsample):
    """``(epsilon, delta)`` of tuning on a Poisson subsample and a final fit on the rest.

    Each record joins the tuning subsample ``D1`` independently with probability
    ``subsample = q`` and the rest ``D2`` otherwise. The tuning is ``(eps_T, delta_T)``-DP on
    ``D1``; the final fit on ``D2``, with hyperparameters taken from the tuning's output, is
    pure ``eps_F``-DP for every choice of them. The output is the tuning's output and the final
    model. Adjacency: add-or-remove one record ``r``.

    Parameters
    ----------
    tuning_cost : (float, float)
        ``(eps_T, delta_T)`` of the tuning on the subsample.
    final_epsilon : float
        Pure ``eps_F`` of the final fit.
    subsample : float
        ``q`` in ``(0, 1)``.

    Returns
    -------
    epsilon, delta : float
        ``epsilon = log(q e^eps_T + (1-q) e^eps_F)`` and
        ``delta = max(q delta_T, q e^-eps_T delta_T / (q e^-eps_T + (1-q) e^-eps_F))``,
        both at most ``max(eps_T, eps_F)`` and ``delta_T``.

    Notes
    -----
    Proof. Fix the other records' labels and write ``M0`` for the output law on ``D``, ``M1``
    for ``D + r`` with ``r`` in ``D1`` (probability ``q``) and ``M2`` with ``r`` in ``D2``. In
    ``M1`` the final fit sees the same ``D2`` and depends on ``r`` only through the tuning's
    output: post-processing, so ``M1(S) <= e^eps_T M0(S) + delta_T`` and
    ``M0(S) <= e^eps_T M1(S) + delta_T`` for every event ``S``. In ``M2`` the tuning's output
    has the same law and the final fit is ``eps_F``-DP given it (adaptive composition with a
    free first step): ``M2(S) <= e^eps_F M0(S)`` and ``M0(S) <= e^eps_F M2(S)``. The law on
    ``D + r`` is ``q M1 + (1-q) M2``. Adding the first inequalities with weights ``q, 1-q``
    gives ``(D + r)(S) <= (q e^eps_T + (1-q) e^eps_F) M0(S) + q delta_T``. From the second
    ones, ``M1(S) >= e^-eps_T (M0(S) - delta_T)`` and ``M2(S) >= e^-eps_F M0(S)``, so with
    ``c = q e^-eps_T + (1-q) e^-eps_F``, ``M0(S) <= (1/c) (D + r)(S) + q e^-eps_T delta_T /
    c``, and ``-log c <= log(q e^eps_T + (1-q) e^eps_F)`` (Jensen). Both inequalities are
    linear in the laws, so they survive averaging over the other records' labels. The
    record's own label must stay secret (it is never released). No further amplification is
    claimed: a record outside ``D1`` is still used, by the final fit.

    As ``q -> 1`` the bound tends to the tuning's ``(eps_T, delta_T)``; as ``q -> 0`` to the
    final fit's ``(eps_F, 0)``.
    """
    tuning_epsilon, tuning_delta = tuning_cost
    q = subsample
    # log(q e^a + (1-q) e^b), computed without overflow.
    top = max(tuning_epsilon, final_epsilon)
    epsilon = top + math.log(
        q * math.exp(tuning_epsilon - top) + (1 - q) * math.exp(final_epsilon - top)
    )
    bottom = min(tuning_epsilon, final_epsilon)
    c_scaled = q * math.exp(bottom - tuning_epsilon) + (1 - q) * math.exp(bottom - final_epsilon)
    delta_down = q * math.exp(bottom - tuning_epsilon) * tuning_delta / c_scaled
    return float(epsilon), float(max(q * tuning_delta, delta_down))


class PicklableBudget(Budget):
    """diffprivlib's :class:`~diffprivlib.utils.Budget` that survives :mod:`pickle`.

    diffprivlib 0.6.6's ``Budget`` is a tuple whose ``__new__`` takes ``(epsilon, delta)``,
    but pickle rebuilds tuples from one argument, so ``pickle.loads(pickle.dumps(Budget(1,
    0)))`` raises ``TypeError``. A fitted search stores its ``privacy_spent_`` as this
    subclass (still a ``Budget``) so the search can be pickled.
    """

    def __getnewargs__(self):
        return tuple(self)
