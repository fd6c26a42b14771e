"""Composition, calibration of the per-iteration budget, and the bridge to diffprivlib's accountant.

Everything that turns "what was released" into an ``(epsilon, delta)`` guarantee lives here, so a
reviewer can audit the library's privacy arithmetic in one file. As dp-accounting separates a
``DpEvent`` (what happened) from the accountant (how it is counted), a search describes each
release as a :class:`Charge`, recorded in its :class:`Ledger` as it is charged, and the ledger
composes them into the total and the ``privacy_report_`` both searches share.

Unit of privacy: one record (a row of ``X`` with its ``y``). Adjacency: replace one record, the
number of records ``n`` being public (:data:`ADJACENCY`).
"""

import math
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant
from scipy.special import gammaln

#: Stated in every privacy report: what one "individual" is and which datasets are neighbours.
PRIVACY_UNIT = "one record (a row of X together with its label y)"
#: Replace-one, with the number of records public: ``n_partitions="auto"``, the checks of the
#: number of records and diffprivlib's own noise scales all use ``n``, so neighbouring datasets
#: must share it. Every mechanism of the library is private under this relation with the
#: epsilon it is charged (each argument bounds the change of one record at a fixed position).
ADJACENCY = ("replace one record: neighbouring datasets have the same number of records n, "
             "which is public, and differ in one record")
#: The comparison figure a privacy report states beside the charged one. Many libraries and
#: papers state epsilon for add-or-remove or zero-out neighbours; a record replaced by a null
#: record is the zero-out relation. It is derived mechanism by mechanism (each
#: :class:`Charge`'s ``zero_out``): not half of the charged figure in general (a partition
#: utility moves by up to 1/k under both relations), and for some mechanisms (a mean over
#: bounds that exclude 0) above it. Never charged: the library charges replace-one.
ZERO_OUT_ADJACENCY = ("zero out one record: neighbouring datasets have the same number of "
                      "records n, which is public, and one holds a null record, which "
                      "contributes nothing to any sum, count or fit, where the other holds a "
                      "record")


def guarantee(random_state):
    """What ``privacy_spent_`` guarantees, as privacy reports state it.

    Parameters
    ----------
    random_state : None, int or numpy.random.RandomState
        The search's ``random_state``.

    Returns
    -------
    statement : str
    """
    if random_state is None:
        return ("privacy_spent_ is an upper bound: the fit is (epsilon, delta)-DP, its noise "
                "drawn from secrets")
    return ("none: random_state is set, so the noise is predictable (tests and examples "
            "only); privacy_spent_ is what the same configuration spends with "
            "random_state=None")

# Bisection tolerance on eps0, relative to the basic-composition value epsilon / n_steps.
_CALIBRATION_RTOL = 1e-6

# Relative margin below the target delta when solving the exact composition (floating point).
_DELTA_SLACK = 1e-9


def composed_epsilon(epsilon_per_step, n_steps, delta):
    """Epsilon of ``n_steps`` adaptively composed pure ``epsilon_per_step``-DP mechanisms.

    Parameters
    ----------
    epsilon_per_step : float
        Pure-DP epsilon of each step (``delta = 0`` per step), positive and finite.
    n_steps : int
        Number of steps composed (a cap fixed before seeing data, not a realised count).
    delta : float
        Target delta of the composition, in ``[0, 1)``. ``0`` uses basic composition.

    Returns
    -------
    epsilon : float
        The smallest epsilon at which the composition is ``(epsilon, delta)``-DP (up to
        floating-point rounding), never more than basic composition.

    Notes
    -----
    ``delta == 0``: basic composition, ``n_steps * epsilon_per_step`` (tight for pure DP).

    ``delta > 0``: the exact optimal composition theorem of Kairouz, Oh & Viswanath (2015,
    "The composition theorem for differential privacy", Theorem 3.3). Write ``T = n_steps``,
    ``e0 = epsilon_per_step`` and ``q = e^e0 / (1 + e^e0)``. Why it is exact (KOV's proof):
    the pair of output laws of any pure ``e0``-DP mechanism on neighbouring datasets is a
    post-processing of the pair of randomized response (RR), ``(q, 1-q)`` against
    ``(1-q, q)``, so RR dominates every such mechanism; the ``T``-fold adaptive composition of
    such mechanisms is then dominated by the product of ``T`` RR pairs, and ``T`` RR steps
    attain it. So the composed privacy profile is exactly that of ``T`` independent RR steps,
    whose privacy loss is ``(T - 2l) e0`` when ``l`` of them flip
    (``l ~ Binomial(T, 1 - q)``)::

        delta_T(eps) = sum_l C(T, l) q^(T-l) (1-q)^l max(0, 1 - exp(eps - (T - 2l) e0)).

    At ``eps_i = (T - 2i) e0`` this is KOV's ``delta_i = sum_{l<i} C(T, l) (e^{(T-l) e0} -
    e^{(T-2i+l) e0}) / (1 + e^e0)^T``; between two such points the set of positive terms is
    fixed, ``delta_T`` is ``A - e^eps B``, and ``delta_T(eps) = delta`` is solved in closed
    form (:func:`_exact_composed_epsilon`), aiming a relative ``1e-9`` below ``delta`` so
    that floating-point rounding cannot make the answer too small. Everything is computed in
    log space, so large epsilons and thousands of steps neither overflow nor underflow. The
    result does not depend on the adjacency relation: it holds for whichever (symmetric)
    relation each step is ``e0``-DP under, here replace one record.
    """
    basic = n_steps * epsilon_per_step
    if delta == 0:
        return basic
    return min(basic, _exact_composed_epsilon(float(epsilon_per_step), int(n_steps),
                                              float(delta)))


def _exact_composed_epsilon(epsilon_per_step, n_steps, delta):
    """Smallest ``eps >= 0`` with ``delta_T(eps) <= delta``; see :func:`composed_epsilon`.

    With ``T`` steps, ``e0`` per step and ``a_l = C(T, l) q^(T-l) (1-q)^l`` (the chance of
    ``l`` flips), KOV's ``delta_i`` at ``eps_i = (T - 2i) e0`` satisfies
    ``delta_{i+1} - delta_i = (1 - e^{-2 e0}) B_{i+1}`` with
    ``B_{i+1} = sum_{l<=i} a_l e^{-2 (i-l) e0}``: sums of positive terms only, so every
    ``delta_i`` is computed without cancellation, in log space, in ``O(T)``. On
    ``[eps_{i+1}, eps_i]`` the flips ``l <= i`` give the positive terms of ``delta_T``, and
    ``delta_T(eps_i + x) = delta_i + (1 - e^x) B_{i+1}`` for ``x`` in ``[-2 e0, 0]``.
    """
    e0, half = epsilon_per_step, n_steps // 2
    flips = np.arange(half + 1)  # l = 0..floor(T/2): the terms that matter for eps >= 0
    # log a_l, with log q = -log(1 + e^-e0) and log(1 - q) = log q - e0 (no overflow).
    log_q = -math.log1p(math.exp(-e0))
    log_a = (math.lgamma(n_steps + 1) - gammaln(flips + 1) - gammaln(n_steps - flips + 1)
             + n_steps * log_q - flips * e0)
    # log B_{i+1} = log sum_{l<=i} a_l e^{2 l e0} - 2 i e0, for i = 0..floor(T/2).
    log_b = np.logaddexp.accumulate(log_a + 2 * e0 * flips) - 2 * e0 * flips
    # log delta_i for i = 0..floor(T/2): delta_0 = 0, then cumulative sums of the increments.
    log_increments = math.log(-math.expm1(-2 * e0)) + log_b[:-1]
    log_deltas = np.concatenate(([-np.inf], np.logaddexp.accumulate(log_increments)))
    # Aim a relative _DELTA_SLACK below delta: the sums above carry rounding errors of about
    # T * 1e-16 relative, and the answer must stay an upper bound.
    target = delta * (1 - _DELTA_SLACK)
    # delta_i rises with i while eps_i falls: the largest i with delta_i <= target.
    i = int(np.searchsorted(log_deltas, math.log(target), side="right")) - 1
    excess = target - math.exp(log_deltas[i])
    ratio = math.exp(math.log(excess) - log_b[i]) if excess > 0 else 0.0
    # ratio >= 1 - e^{-e0} only past eps = 0 (T odd, delta above the total variation).
    x = math.log1p(-ratio) if ratio < 1 else -math.inf
    return max(0.0, (n_steps - 2 * i) * e0 + x)


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
        such that ``composed_epsilon(epsilon_per_step, n_steps, delta) <= epsilon``: the exact
        optimal composition of Kairouz, Oh & Viswanath (2015, Theorem 3.3), so no larger
        per-step epsilon is ``(epsilon, delta)``-DP for every choice of pure-DP steps.
        Within a relative ``1e-6`` of ``epsilon / n_steps`` of the largest such value.

    Notes
    -----
    Bisection on :func:`composed_epsilon`, which is non-decreasing in the per-step epsilon.
    Cached per argument tuple; an uncached call takes about 0.5 ms for 45 steps, 0.7 ms for
    201 and 5 ms for 3,000 (2 shared cores). The discretised privacy loss distributions of
    dp-accounting that this replaces took 0.1 to 1.3 s and gave less: at ``epsilon=0.1,
    delta=1e-9`` and 201 steps, ``eps0`` is 0.0014186 instead of 0.0013000, 9.1 % more per
    step (2.85 times basic composition); at ``epsilon=1, delta=1e-6`` and 45 steps, 0.3 %
    more. ``tests/unit/test_accounting.py`` checks those figures and counts the
    compositions a calibration evaluates; the times were measured once and are not tested
    (a timing depends on the machine and its load).
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


def add_costs(*costs):
    """Basic (sequential) composition of ``(epsilon, delta)`` pairs: both add up.

    Valid for any mechanisms run one after the other on the same data, adaptively.
    """
    return (math.fsum(c[0] for c in costs), math.fsum(c[1] for c in costs))


def at_least(reserved, reported):
    """The cost to charge: what a mechanism reports, never less than what was reserved for it.

    A selector that reports less than its a-priori cost (or a refit measured below its
    reservation) is still charged the reservation: the reservation is what the fit was
    checked against before the data, and charging less could depend on the data.

    Parameters
    ----------
    reserved, reported : (float, float)

    Returns
    -------
    cost : (float, float)
        The elementwise maximum.
    """
    return (max(reserved[0], reported[0]), max(reserved[1], reported[1]))


def selector_reservation(selector, epsilon, delta):
    """What a selector handed ``(epsilon, delta)`` may spend, from its parameters alone.

    Reserved before the data and the least it is charged (:func:`at_least`). A selector
    declares it as ``privacy_cost`` (a pure-DP selector reserves no delta); one without the
    method is charged what it was handed.

    Returns
    -------
    cost : (float, float)
    """
    if hasattr(selector, "privacy_cost"):
        return tuple(map(float, selector.privacy_cost(epsilon, delta)))
    return (float(epsilon), float(delta))


def refit_reservation(declared_costs):
    """The refit's a-priori reservation: the largest cost a candidate declares.

    Which candidate is refit depends on the data, so its own cost would reveal it: the refit is
    charged the elementwise maximum over the grid (at least what it measured, :func:`at_least`).

    Parameters
    ----------
    declared_costs : list of (float, float)
        One per candidate; empty when the search does not refit.

    Returns
    -------
    cost : (float, float)
    """
    if not declared_costs:
        return (0.0, 0.0)
    return (max(c[0] for c in declared_costs), max(c[1] for c in declared_costs))


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


#: What each bound of :func:`repeat_and_select_bounds` is, as privacy reports state it.
REPEAT_AND_SELECT_BOUNDS = {
    "rdp": "dp-accounting RdpAccountant: RepeatAndSelectDpEvent of a 2-bucket "
           "RandomizedResponseDpEvent (Papernot & Steinke 2022, Theorem 2, or Theorem 6 with "
           "delta_hat from the trial's Renyi curve), converted to (epsilon, delta)",
    "poisson_exact_profile": "Papernot & Steinke 2022, Theorem 6 (Poisson count), with the exact "
                             "(eps_hat, delta_hat) profile of a pure trial_epsilon-DP trial "
                             "(randomized response), converted to (epsilon, delta)",
    "pure": "Papernot & Steinke 2022, Corollary 3 (truncated negative binomial count): "
            "(2 + shape) * trial_epsilon, pure DP; 3 * trial_epsilon for the geometric law "
            "(Liu & Talwar 2019)",
}

# Renyi orders for the Poisson bound: dp-accounting's defaults (1.25 to 1024) and 200 orders
# spaced geometrically up to 1e8 (as the order grows the bound tends to the pure
# trial_epsilon + mean * tanh(trial_epsilon / 2)). The order where delta_hat vanishes is added
# per call: there the bound is often smallest.
_POISSON_ORDERS = np.unique(np.concatenate([
    np.asarray(rdp_privacy_accountant.DEFAULT_RDP_ORDERS, dtype=float),
    np.geomspace(1.01, 1e8, 200),
]))


def repeat_and_select_bounds(trial_epsilon, delta, mean, shape):
    """Every upper bound the library proves for the best of ``K`` pure-DP trials, by name.

    Parameters
    ----------
    trial_epsilon, delta, mean, shape : float
        As for :func:`repeat_and_select_epsilon`.

    Returns
    -------
    bounds : dict of str to float
        Keys from :data:`REPEAT_AND_SELECT_BOUNDS`, each an epsilon at which the
        repeat-and-select is ``(epsilon, delta)``-DP: ``"rdp"`` always, plus
        ``"poisson_exact_profile"`` for a Poisson count or ``"pure"`` for a truncated negative
        binomial one. :func:`repeat_and_select_epsilon` is their minimum.
    """
    shape = math.inf if shape is None else float(shape)  # None: Poisson, as math.inf
    return dict(_repeat_and_select_bounds(float(trial_epsilon), float(delta), float(mean),
                                          shape))


def repeat_and_select_epsilon(trial_epsilon, delta, mean, shape):
    """Epsilon of releasing the best of a random number ``K`` of pure ``trial_epsilon``-DP trials.

    Parameters
    ----------
    trial_epsilon : float
        Pure-DP epsilon of one trial (positive, finite), under the adjacency the guarantee is
        wanted for (the library's: replace one record, :data:`ADJACENCY`).
    delta : float
        Target delta, in ``(0, 1)``.
    mean : float
        Mean of ``K`` (at least 1).
    shape : float or None
        Law of ``K``: ``math.inf`` (or None) for Poisson(``mean``) (``K = 0`` possible,
        releasing nothing), otherwise Papernot & Steinke's truncated negative binomial with
        ``eta = shape`` (``1`` geometric, ``0`` logarithmic; see
        :func:`truncated_negative_binomial_mean`).

    Returns
    -------
    epsilon : float
        An upper bound on the epsilon of the whole repeat-and-select at ``delta``: the smallest
        of :func:`repeat_and_select_bounds`, each valid on its own.

    Notes
    -----
    Mechanism: run the trial ``K`` times independently and release only the best output (the
    outputs are totally ordered by their noisy scores), as in Papernot & Steinke (2022,
    "Hyperparameter Tuning with Renyi Differential Privacy", arXiv:2110.03620; theorem
    numbers of its v2).

    Trial curve. A pure ``eps``-DP mechanism's output pair ``(M(D), M(D'))`` on neighbours is
    a post-processing of the 2-bucket randomized-response (RR) pair with the same ``eps``
    (Kairouz, Oh & Viswanath 2015), so by data processing its Rényi divergence of every order
    and its hockey-stick divergence at every ``eps_hat``, in both directions, are at most that
    pair's. The bounds below take the trial's curves from that pair. The theorems hold for any
    symmetric adjacency under which the trial is ``eps``-DP, so the result is a guarantee under
    the library's replace-one adjacency when ``trial_epsilon`` is the trial's replace-one
    epsilon (no conversion between relations is made: the pair itself is bounded).

    The bounds, all taken (the minimum is reported):

    - ``"rdp"``: dp-accounting's RDP accountant for ``RepeatAndSelectDpEvent`` around
      ``RandomizedResponseDpEvent(p, 2)`` under ``NeighborRel.REPLACE_ONE`` (whose formula is
      exactly the RR pair's Rényi divergence). It applies Theorem 2 (truncated negative
      binomial) or Theorem 6 (Poisson), then converts Rényi DP to ``(epsilon, delta)``
      (Canonne, Kamath & Steinke 2020, Proposition 12).
    - ``"poisson_exact_profile"`` (Poisson only): Theorem 6. If the trial is
      ``(lambda, eps_lambda)``-RDP and ``(eps_hat, delta_hat)``-DP with
      ``e^eps_hat <= 1 + 1/(lambda - 1)``, the best of ``K ~ Poisson(mean)`` trials is
      ``(lambda, eps_lambda + mean * delta_hat + log(mean) / (lambda - 1))``-RDP.
      dp-accounting takes ``delta_hat`` from the trial's Rényi curve (a lossy conversion);
      here it is the RR pair's exact ``delta_hat = max(0, e^eps - e^eps_hat) / (1 + e^eps)``
      at ``eps_hat = log(1 + 1/(lambda - 1))``. Converted to ``(epsilon, delta)`` with the same
      conversion, minimised over the orders of ``_POISSON_ORDERS``. So it is never above
      ``"rdp"`` (smaller ``delta_hat`` at every order, more orders). At ``trial_epsilon=1,
      mean=10, delta=1e-6``: 5.621 (5.626 on dp-accounting's default orders), where ``"rdp"``
      gives 6.079.
    - ``"pure"`` (truncated negative binomial only): Corollary 3, the limit of Theorem 2 as
      both orders grow (a pure ``eps``-DP trial is ``(lambda, eps)``-RDP at every order):
      ``(2 + eta) * eps``-DP for every ``eta = shape >= 0`` and every ``gamma``, so it holds at
      every ``delta``. For the geometric law it is Liu & Talwar's (2019) ``3 * eps``, below
      ``"rdp"``'s 3.01 at ``trial_epsilon=1, mean=10, delta=1e-6``; ``"rdp"`` is smaller for
      small means and large epsilons (2.33 at ``mean=2``).
    """
    return min(repeat_and_select_bounds(trial_epsilon, delta, mean, shape).values())


@lru_cache(maxsize=256)
def _repeat_and_select_bounds(trial_epsilon, delta, mean, shape):
    bounds = {"rdp": _rdp_repeat_and_select_epsilon(trial_epsilon, delta, mean, shape)}
    if math.isinf(shape):
        bounds["poisson_exact_profile"] = _poisson_exact_profile_epsilon(trial_epsilon, delta,
                                                                         mean)
    else:
        bounds["pure"] = (2 + shape) * trial_epsilon  # Corollary 3
    return tuple(bounds.items())


def _rdp_repeat_and_select_epsilon(trial_epsilon, delta, mean, shape):
    trial = dp_event.RandomizedResponseDpEvent(randomized_response_noise(trial_epsilon), 2)
    accountant = rdp_privacy_accountant.RdpAccountant(
        neighboring_relation=rdp_privacy_accountant.NeighborRel.REPLACE_ONE
    )
    accountant.compose(dp_event.RepeatAndSelectDpEvent(trial, mean, shape))
    return float(accountant.get_epsilon(delta))


def _poisson_exact_profile_epsilon(trial_epsilon, delta, mean):
    """Theorem 6 of Papernot & Steinke with the exact RR profile; see
    :func:`repeat_and_select_epsilon`."""
    eps = trial_epsilon
    # The order at which eps_hat = eps, so delta_hat = 0 (usable above dp-accounting's 1.01).
    orders = np.append(_POISSON_ORDERS, 1 + 1 / math.expm1(eps))
    # Rényi divergence of order lambda of the RR pair (q, 1-q) || (1-q, q), q = e^eps/(1+e^eps):
    # log(q^l (1-q)^(1-l) + (1-q)^l q^(1-l)) / (l-1), rearranged to avoid overflow.
    trial_rdp = eps + (np.log1p(np.exp(-(2 * orders - 1) * eps))
                       - math.log1p(math.exp(-eps))) / (orders - 1)
    # Theorem 6's largest eps_hat, and the RR pair's exact hockey-stick divergence there:
    # (e^eps - e^eps_hat) / (1 + e^eps), written with e^-eps (no overflow); 0 if eps_hat >= eps.
    eps_hat = np.log1p(1 / (orders - 1))
    delta_hat = np.maximum(0.0, -np.expm1(eps_hat - eps)) / (1 + math.exp(-eps))
    rdp = trial_rdp + mean * delta_hat + math.log(mean) / (orders - 1)
    return float(rdp_privacy_accountant.compute_epsilon(orders, rdp, delta)[0])


def calibrate_trial_epsilon(epsilon, delta, mean, shape, subsample=None):
    """Largest per-trial epsilon whose whole random search costs at most ``epsilon``.

    For comparisons at equal total budget: ``PrivateRandomizedSearchCV(epsilon=...)`` takes
    the per-trial epsilon, and this inverts the total it reports (the minimum of
    :func:`repeat_and_select_bounds`, non-decreasing in the trial epsilon up to the order grid
    of the Poisson bound) by bisection, keeping the valid (lower) end, to a relative
    ``1e-12``.

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
        If even a trial epsilon of ``epsilon * 1e-6`` costs more than ``epsilon``: only for
        extreme means or shapes, since every bound tends to 0 with the trial epsilon (e.g.
        ``(2 + shape) * trial_epsilon`` for the truncated negative binomial).
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
            f"and shape={shape} at delta={delta}: even a trial epsilon of epsilon * 1e-6 costs "
            "more. Use a larger epsilon or delta, or a smaller mean or shape."
        )
    while high - low > 1e-12 * epsilon:
        middle = (low + high) / 2
        if total(middle) <= epsilon:
            low = middle
        else:
            high = middle
    return low


#: Relative distance below a named total within which :func:`named_epsilon` reports the
#: named figure: far above what :func:`calibrate_trial_epsilon` leaves (its bisection stops
#: at ``1e-12 * epsilon`` of the trial epsilon, which the bounds multiply by at most a few
#: tens: 3.5e-12 at the randomized search's defaults before).
NAMED_EPSILON_RTOL = 1e-9


def named_epsilon(named, composed):
    """The epsilon to report for a search calibrated to a named total.

    Parameters
    ----------
    named : float
        The total the user named (``epsilon=``).
    composed : float
        The upper bound the composition gives for the calibrated search.

    Returns
    -------
    epsilon : float
        ``named`` when ``composed`` lies within :data:`NAMED_EPSILON_RTOL` below it (or at
        it), else ``composed``: never below the composed bound.

    Notes
    -----
    Proof that ``named`` is then an upper bound too: the search is ``(composed,
    delta)``-DP, so for neighbours ``D, D'`` and every set ``S`` of outputs, ``P(M(D) in S)
    <= exp(composed) P(M(D') in S) + delta <= exp(named) P(M(D') in S) + delta``, since
    ``composed <= named``: it is ``(named, delta)``-DP. Reporting the figure the user named
    (``1.0``, not ``0.9999999999964891``) loses at most a relative ``1e-9`` of it.
    """
    if named * (1 - NAMED_EPSILON_RTOL) <= composed <= named:
        return named
    return composed


def subsampled_tuning_cost(tuning_cost, final_epsilon, subsample):
    """``(epsilon, delta)`` of tuning on a Poisson subsample and a final fit on the rest.

    Each record joins the tuning subsample ``D1`` independently with probability
    ``subsample = q`` and the rest ``D2`` otherwise. The tuning is ``(eps_T, delta_T)``-DP on
    ``D1``; the final fit on ``D2``, with hyperparameters taken from the tuning's output, is
    pure ``eps_F``-DP for every choice of them. The output is the tuning's output and the final
    model. Adjacency: replace one record (:data:`ADJACENCY`).

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
        ``epsilon = max(eps_T, eps_F)`` and ``delta = q * delta_T``.

    Notes
    -----
    Proof. Neighbours ``D`` and ``D'`` differ in the record at one position ``i``, whose
    subsample label is drawn by position, so it is the same on both. Fix the other records'
    labels. With probability ``q`` record ``i`` is in ``D1``: the final fit sees the same
    ``D2`` and depends on ``i`` only through the tuning's output (post-processing), so
    ``P_D(S | i in D1) <= e^eps_T P_D'(S | i in D1) + delta_T``. Otherwise the tuning's
    output has the same law and the final fit is ``eps_F``-DP given it (adaptive composition
    with a free first step): ``P_D(S | i in D2) <= e^eps_F P_D'(S | i in D2)``. Weighting by
    ``q`` and ``1 - q`` gives ``P_D(S) <= e^max(eps_T, eps_F) P_D'(S) + q delta_T``, and the
    same with ``D`` and ``D'`` swapped; the inequalities are linear in the laws, so they
    survive averaging over the other labels.

    Koskela & Kulkarni's smaller bound ``log(q e^eps_T + (1-q) e^eps_F)`` is proved for
    add-or-remove adjacency, where the dataset without the record is a common reference for
    both placements of the added record. Under replace-one adjacency there is no such
    reference (the two placements are compared on different datasets), and it does not hold:
    ``tests/unit/test_accounting.py`` exhibits mechanisms that violate it. The library's
    diffprivlib fits are private under replace-one adjacency only, so the maximum is what is
    proved: the subsample lowers delta, not epsilon.
    """
    tuning_epsilon, tuning_delta = tuning_cost
    return float(max(tuning_epsilon, final_epsilon)), float(subsample * tuning_delta)


class PrivacySpent(NamedTuple):
    """What a fitted search spent in all, as ``privacy_spent_``: ``(epsilon, delta)``.

    A named pair: ``spent.epsilon`` and ``spent.delta`` read it, and as a tuple it unpacks as
    ``epsilon, delta = spent``, indexes as ``spent[0]``, compares equal to ``(epsilon,
    delta)`` and can be charged as ``accountant.spend(*spent)``.

    Attributes
    ----------
    epsilon : float
        The total epsilon charged (replace-one adjacency, :data:`ADJACENCY`).
    delta : float
        The total delta charged.
    """

    epsilon: float
    delta: float

    def __repr__(self):
        # As diffprivlib's Budget prints (accountant.total()): the two print alike.
        return f"(epsilon={self.epsilon!r}, delta={self.delta!r})"


# ---------------------------------------------------------------------------------------------
# Charge records and the privacy report: one schema for both searches.
# ---------------------------------------------------------------------------------------------

#: Which records a :class:`Charge`'s release reads: all of them, the Poisson subsample of
#: ``PrivateRandomizedSearchCV(subsample=q)``'s tuning, or the records outside it.
ALL_RECORDS, SUBSAMPLE, REMAINDER = "all records", "the Poisson subsample", "the rest"


@dataclass(frozen=True)
class Charge:
    """What one release of a search costs, and why (a record, as dp-accounting's ``DpEvent``).

    Attributes
    ----------
    release : str
        What was released: ``"selection"``, ``"best_score_ estimate"``, ``"refit"``,
        ``"best of K trials"``, ``"final fit"``.
    epsilon, delta : float
        Its privacy cost.
    mechanism : str
        The mechanism and its sensitivity.
    composition : str
        How ``(epsilon, delta)`` follows from the mechanism's steps (the theorem used).
    entry : str
        The accountant entry it is charged in: the releases of one entry are charged together,
        at once, composed by ``compose_charges``; the entries add up.
    records : str, default=ALL_RECORDS
        Which records it reads: :data:`ALL_RECORDS`, :data:`SUBSAMPLE` or :data:`REMAINDER`.
    zero_out_epsilon : float or None, default=None
        The release's epsilon under :data:`ZERO_OUT_ADJACENCY` (its delta is ``delta``:
        every zero-out figure here is derived from the same mechanism's sensitivity, the
        delta unchanged), stated beside the charged figure for comparison; None: not derived.
    zero_out : str, default="not derived"
        The derivation of ``zero_out_epsilon``: the sensitivity of the release when a record
        is replaced by a null one.
    """

    release: str
    epsilon: float
    delta: float
    mechanism: str
    composition: str
    entry: str
    records: str = ALL_RECORDS
    zero_out_epsilon: object = None
    zero_out: str = "not derived"

    @property
    def cost(self):
        """``(epsilon, delta)``."""
        return (self.epsilon, self.delta)


def _subsample_statement(subsample):
    return (f"Poisson subsample (rate {subsample:g}), replace-one adjacency: "
            "max(tuning_epsilon, final_epsilon), delta q * tuning_delta "
            "(skdptune._accounting.subsampled_tuning_cost)")


def compose_charges(charges, subsample=None):
    """The cost of each accountant entry and the total of a search's charges.

    Parameters
    ----------
    charges : list of Charge
        Every release of one fit, in the order they are charged.
    subsample : float or None, default=None
        The Poisson rate ``q`` of the records a :data:`SUBSAMPLE` charge reads.

    Returns
    -------
    entries : dict of str to (float, float)
        ``(epsilon, delta)`` of each entry, in order. The releases of an entry that read the
        same records compose sequentially (basic composition: epsilons and deltas add); a
        tuning on the Poisson subsample and a fit on the rest compose by
        :func:`subsampled_tuning_cost`.
    total : (float, float)
        Basic composition of the entries: the accountant's own sum.
    composition : str
        How the total follows from the charges, as privacy reports state it.
    """
    entries = {}
    for charge in charges:
        entries.setdefault(charge.entry, []).append(charge)
    costs, subsampled = {}, False
    for entry, records in entries.items():
        on = {part: [c.cost for c in records if c.records == part]
              for part in (ALL_RECORDS, SUBSAMPLE, REMAINDER)}
        if on[SUBSAMPLE] or on[REMAINDER]:
            if subsample is None or on[ALL_RECORDS] or not on[SUBSAMPLE]:
                raise ValueError(f"entry {entry!r} mixes records that no rule composes.")
            final = add_costs(*on[REMAINDER]) if on[REMAINDER] else (0.0, 0.0)
            if final[1] != 0:
                raise ValueError("a fit on the rest must be pure DP (delta 0).")
            costs[entry] = subsampled_tuning_cost(add_costs(*on[SUBSAMPLE]), final[0], subsample)
            subsampled = True
        elif len(records) == 1:
            costs[entry] = records[0].cost  # no arithmetic: exactly what was charged
        else:
            costs[entry] = add_costs(*on[ALL_RECORDS])
    total = next(iter(costs.values())) if len(costs) == 1 else add_costs(*costs.values())
    if subsampled:
        composition = _subsample_statement(subsample)
    elif len(charges) == 1:
        composition = f"one charge: the {charges[0].release} (its composition above)"
    else:
        composition = (f"basic composition of {' and '.join(costs)} "
                       "(epsilons and deltas add)")
    return costs, total, composition


class Ledger:
    """The charges of one fit, recorded as they are spent: the only source of its report.

    As dp-accounting's accountant records each ``DpEvent`` it composes, a search records each
    release as a :class:`Charge` at the moment it charges the user's accountant
    (:meth:`spend`); ``privacy_report_``, ``privacy_spent_`` and the plots read these records
    (:meth:`report`), never a charge computed again.

    Parameters
    ----------
    accountant : object with ``spend(epsilon, delta)``
        The user's accountant.
    on_refusal : callable
        Called, without arguments, when the accountant refuses a charge, before the error
        propagates: the search withdraws every fitted attribute.
    subsample : float or None, default=None
        The Poisson rate ``q`` of the records a :data:`SUBSAMPLE` charge reads.

    Attributes
    ----------
    charges : list of Charge
        Every release recorded, in the order charged.
    """

    def __init__(self, accountant, on_refusal, subsample=None):
        self.charges = []
        self._accountant, self._on_refusal, self._subsample = accountant, on_refusal, subsample

    def spend(self, *charges):
        """Charge the releases of one accountant entry at once, then record them.

        The accountant is charged their composition (``compose_charges``: basic
        composition on the same records, the subsample's rule otherwise), as one entry.
        """
        (cost,) = compose_charges(charges, self._subsample)[0].values()
        try:
            self._accountant.spend(*cost)
        except BaseException:
            self._on_refusal()
            raise
        self.charges.extend(charges)

    def note(self, charge):
        """Record a release that spends nothing (no accountant entry): ``charge`` is zero."""
        self.charges.append(charge)

    def charged(self, release):
        """The :class:`Charge` recorded for ``release``, or None."""
        return next((charge for charge in self.charges if charge.release == release), None)

    def cost(self, entry):
        """What the accountant entry ``entry`` was charged (``compose_charges``), or
        ``(0.0, 0.0)`` when it was not."""
        charges = [charge for charge in self.charges if charge.entry == entry]
        return compose_charges(charges, self._subsample)[0][entry] if charges else (0.0, 0.0)

    def report(self, random_state, details):
        """``privacy_report_``, with one schema for both searches, read from the records.

        Parameters
        ----------
        random_state : None, int or numpy.random.RandomState
            The search's ``random_state`` (see :func:`guarantee`).
        details : dict
            The search's own figures, kept as flat keys of the report (e.g. ``max_iter`` or
            ``tuning_bounds``).

        Returns
        -------
        report : dict
            ``unit``, ``adjacency``, ``guarantee``, ``charges`` (one dict per :class:`Charge`),
            ``entries`` (the cost of each accountant entry), ``total_epsilon``,
            ``total_delta``, ``total_composition``, and the keys of ``details``.
        """
        entries, total, composition = compose_charges(self.charges, self._subsample)
        zero_out = zero_out_total(self.charges, self._subsample)
        return {
            "unit": PRIVACY_UNIT,
            "adjacency": ADJACENCY,
            "guarantee": guarantee(random_state),
            "charges": [asdict(charge) for charge in self.charges],
            "entries": entries,
            **details,
            "total_epsilon": total[0],
            "total_delta": total[1],
            "total_composition": composition,
            "zero_out_adjacency": ZERO_OUT_ADJACENCY,
            "zero_out_epsilon": None if zero_out is None else zero_out[0],
            "zero_out_delta": None if zero_out is None else zero_out[1],
        }


def zero_out_total(charges, subsample=None):
    """The total under :data:`ZERO_OUT_ADJACENCY`, for comparison, or None.

    Each charge's ``zero_out_epsilon`` (with its delta), composed by the same rules as the
    charged figure (``compose_charges``: basic composition, and the subsample's maximum,
    whose proof holds for any relation between datasets that keeps each record's position).
    None when a charge has no derivation: a figure is stated only where every release has one.

    Parameters
    ----------
    charges : list of Charge
    subsample : float or None, default=None

    Returns
    -------
    (epsilon, delta) or None
    """
    if any(charge.zero_out_epsilon is None for charge in charges):
        return None
    _, total, _ = compose_charges(
        [replace(charge, epsilon=float(charge.zero_out_epsilon)) for charge in charges],
        subsample)
    return total
