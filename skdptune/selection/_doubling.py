"""Propose-test with doubling step (Ding & Wu, Algorithm 1).

Each iteration is one AboveThreshold run (Dwork & Roth 2014, Algorithm 1, one positive answer):
propose a threshold ``u + step * granularity`` perturbed by ``Lap(2 * sensitivity / eps0)``,
then walk the candidates in grid order, each perturbed by fresh ``Lap(4 * sensitivity / eps0)``,
and stop at the first that clears it. With queries of sensitivity ``sensitivity`` that need not
be monotone (one record moves every candidate's utility, in any direction), one such run is
``eps0``-DP. The step doubles after a success and halves after a failure; the loop stops when the
step reaches 0, when ``u >= 1``, or after ``max_iter`` iterations.

The cap ``max_iter`` is fixed before seeing data and the guarantee composes ``max_iter`` runs:
the realised number of iterations is a DP output (post-processing), never the charged count.
"""

import math
from numbers import Integral, Real

from diffprivlib.mechanisms import Laplace
from diffprivlib.utils import check_random_state

from .._sklearn_compat import Interval, StrOptions
from .._accounting import calibrate_epsilon_per_step
from ._base import BaseSelector, Iteration, SelectionResult, check_selection_inputs

# Allowance for floating-point error when counting granularity levels in [floor, 1].
_LEVEL_TOLERANCE = 1e-9


def worst_case_iterations(granularity, floor):
    """Deterministic bound on the iterations that the ``u >= 1`` stop implies.

    ``u`` starts at ``floor`` and rises by at least ``granularity`` with every success, so at
    most ``n = ceil((1 - floor) / granularity)`` successes happen; between two successes the
    step can only halve, and a run of failures ends at step 0. The seed paper's bound is
    ``2 * n + 1``.
    """
    return 2 * _n_levels(granularity, floor) + 1


def auto_max_iter(granularity, floor):
    """The cap used by ``max_iter="auto"``: ``min(worst case, 5 * ceil(log2(n)) + 10)``.

    ``n = ceil((1 - floor) / granularity)`` is the number of granularity levels above the
    floor. The seed paper's Figure 4 shows the realised iterations stay between 1 and 5 times
    ``log2((u* - u0) / g)``; ``log2(n)`` is the largest that ratio's denominator can be, and
    the constant 10 covers small grids and the high-noise overshoot (about 7 iterations at
    ``k * eps0`` near 1).

    Simulation behind the choice (``python benchmarks/doubling_iterations.py``: 2,000 runs per
    setting, 100 candidates with utilities uniform on [0, best] and one at best, granularity
    0.01, floor 0, no cap; 45 s on 2 cores): over ``k * eps0`` in {1, 10, 100, 1000} and best in
    {0.3, 0.6, 0.9} the mean was 7.0 to 20.3 iterations, the 99.9th percentile 9 to 29 and the
    largest single run 31, against an auto cap of 45. The worst case at these settings is 201,
    so the cap gives each iteration about 4.5 times the budget, and in the simulation never
    truncated a run.
    """
    n_levels = _n_levels(granularity, floor)
    return min(2 * n_levels + 1, 5 * math.ceil(math.log2(max(n_levels, 2))) + 10)


#: Share of each iteration's eps0 given to the threshold noise, by ``noise_split``.
#: Ding & Wu: half. Lyu, Su & Li: eps1 / eps2 = 1 / (2c)^(2/3) with c = 1 positive answer.
NOISE_SPLITS = {"ding_wu": 0.5, "lyu_su_li": 1.0 / (1.0 + 2.0 ** (2.0 / 3.0))}


def _permutation(rng, n):
    """A uniformly random order of ``n`` candidates from ``rng`` (numpy or SystemRandom)."""
    if hasattr(rng, "permutation"):
        return rng.permutation(n)
    return rng.sample(range(n), n)


def _n_levels(granularity, floor):
    return max(1, math.ceil((1 - floor) / granularity - _LEVEL_TOLERANCE))


class ProposeTestDoubling(BaseSelector):
    """Propose-test with doubling step: a sequence of AboveThreshold tests.

    Algorithm 1 of Ding & Wu ("Revisiting Hyperparameter Tuning with Differential Privacy"):
    starting from ``u = floor`` and ``step = 1``, each iteration proposes
    ``u_hat = u + step * granularity + Lap(2 * sensitivity / eps0)`` and walks the candidates in
    order with fresh ``Lap(4 * sensitivity / eps0)`` noise; the first candidate whose noisy
    utility reaches ``u_hat`` is recorded, ``u`` rises by ``step * granularity`` and the step
    doubles; if none passes, the step halves (integer division). The loop stops when the step
    is 0, when ``u >= 1`` or after ``max_iter`` iterations.

    Parameters
    ----------
    granularity : float, default=0.01
        ``g``: the smallest raise of the threshold, in utility units (``(0, 1]``). Smaller
        values find the best candidate more precisely and allow more iterations.
    floor : float, default=0.0
        ``u0``: the starting threshold, in ``[0, 1)``. A public lower bound on the best
        utility (e.g. the accuracy of a constant classifier) saves iterations.
    max_iter : int or "auto", default="auto"
        Cap on the iterations, fixed before seeing data; the privacy guarantee composes this
        many iterations whatever the realised count. ``"auto"`` uses ``auto_max_iter``.
        An integer may not exceed the worst case ``2 * ceil((1 - floor) / granularity) + 1``.
    order : {"grid", "random"}, default="grid"
        The order in which each iteration walks the candidates. ``"grid"`` is Algorithm 1's
        (the grid's order, so under much noise the start of the grid is favoured);
        ``"random"`` draws a fresh uniformly random order for every iteration, independently
        of the data, which removes that bias and leaves the guarantee unchanged.
    noise_split : {"ding_wu", "lyu_su_li"}, default="ding_wu"
        How each iteration's ``eps0`` is split between the threshold and the queries.
        ``"ding_wu"`` (Algorithm 1): half each, threshold ``Lap(2 * Delta / eps0)`` and queries
        ``Lap(4 * Delta / eps0)``. ``"lyu_su_li"``: the split ``eps1 : eps2 = 1 : 2^(2/3)``
        that Lyu, Su & Li ("Understanding the Sparse Vector Technique for Differential
        Privacy", VLDB 2017, Section 4.2) show minimises the variance of the comparison for one
        positive answer: threshold ``Lap(Delta / eps1)``, queries ``Lap(2 * Delta / eps2)``,
        ``eps1 + eps2 = eps0``; the same ``eps0``-DP guarantee with less noise.

    Notes
    -----
    Privacy: each iteration is an AboveThreshold run (one positive answer) with threshold noise
    ``Lap(Delta / eps1)`` and query noise ``Lap(2 * Delta / eps2)``, ``eps1 + eps2 = eps0``;
    for queries of sensitivity ``Delta`` it is ``eps0``-DP whether or not they are monotone
    (Lyu, Su & Li 2017, Theorem 2; with ``eps1 = eps2 = eps0 / 2`` it is Dwork & Roth's
    Theorem 3.23 as Ding & Wu use it). The order of the walk is public (the grid's, or drawn
    independently of the data). The ``max_iter`` runs compose adaptively:
    ``eps0 = epsilon / max_iter`` when ``delta == 0`` (basic composition,
    ``composition="basic"``), else the largest ``eps0`` whose exact optimal composition
    (Kairouz, Oh & Viswanath 2015, Theorem 3.3) is ``(epsilon, delta)``-DP
    (``composition="optimal"``); see ``skdptune._accounting.composed_epsilon``.

    Behaviour: with little noise (``k * eps0 >= 100``, ``k`` the number of partitions) the loop
    reaches the best candidate within ``1`` to ``5`` times ``log2((u* - floor) / granularity)``
    iterations (the paper's Figure 4). With much noise (``k * eps0`` near 1) the noisy tests pass
    too easily, the doubling overshoots and ``u >= 1`` stops the loop after about 7 iterations,
    so the selection is close to the first candidates that pass by chance. Because the
    candidates are walked in grid order and the first to pass wins, that chance favours the
    start of the grid: with 24 exchangeable candidates and ``k * eps0`` from 0.2 to 3.5,
    40% to 53% of runs picked the first one (``benchmarks/paper_figures.py``). Put the
    candidates believed best first, or shuffle the grid, when ``k * eps0`` is small.

    Examples
    --------
    >>> from skdptune.selection import ProposeTestDoubling
    >>> result = ProposeTestDoubling().select(
    ...     [0.2, 0.9, 0.5], sensitivity=0.001, epsilon=10.0, delta=0.0, random_state=0)
    >>> result.index
    1
    """

    _parameter_constraints = {
        "granularity": [Interval(Real, 0, 1, closed="right")],
        "floor": [Interval(Real, 0, 1, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "order": [StrOptions({"grid", "random"})],
        "noise_split": [StrOptions(set(NOISE_SPLITS))],
    }

    def __init__(self, granularity=0.01, floor=0.0, max_iter="auto", order="grid",
                 noise_split="ding_wu"):
        self.granularity = granularity
        self.floor = floor
        self.max_iter = max_iter
        self.order = order
        self.noise_split = noise_split

    def validate_parameters(self):
        """Check the parameters, including ``max_iter`` against the worst case."""
        self.resolved_max_iter()

    def resolved_max_iter(self):
        """The iteration cap this selector composes (validated; ``"auto"`` resolved).

        Returns
        -------
        max_iter : int
        """
        self._validate_params()
        worst_case = worst_case_iterations(self.granularity, self.floor)
        if self.max_iter == "auto":
            return auto_max_iter(self.granularity, self.floor)
        if self.max_iter > worst_case:
            raise ValueError(
                f"max_iter={self.max_iter} exceeds the worst case {worst_case} = "
                "2 * ceil((1 - floor) / granularity) + 1 that the u >= 1 stop implies; use "
                f"an integer in [1, {worst_case}] or 'auto'."
            )
        return self.max_iter

    def privacy_cost(self, epsilon, delta):
        """``(epsilon, delta)``, or ``(epsilon, 0.0)`` when the loop is pure DP.

        The ``max_iter`` iterations are pure ``eps0``-DP; when the calibration gives basic
        composition's ``eps0 = epsilon / max_iter`` (``delta == 0``, one iteration, or no gain
        from delta) the loop is pure ``epsilon``-DP and spends no delta.
        """
        max_iter = self.resolved_max_iter()
        eps0 = calibrate_epsilon_per_step(float(epsilon), float(delta), max_iter)
        pure = delta == 0 or max_iter == 1 or eps0 == float(epsilon) / max_iter
        return float(epsilon), (0.0 if pure else float(delta))

    def select(self, utilities, *, sensitivity, epsilon, delta, random_state=None):
        """Run the doubling loop on ``utilities``; see :meth:`BaseSelector.select`.

        Returns
        -------
        SelectionResult
            ``index`` is the last candidate that passed (None if none did), ``score`` the final
            ``u`` (``floor + granularity * sum of the successful steps``), ``trace`` one
            :class:`Iteration` per iteration run.
        """
        utilities = check_selection_inputs(utilities, sensitivity, epsilon, delta)
        max_iter = self.resolved_max_iter()
        eps0 = calibrate_epsilon_per_step(float(epsilon), float(delta), max_iter)
        rng = check_random_state(random_state, secure=True)
        # AboveThreshold with one positive answer (Lyu, Su & Li, Algorithm 1 with c = 1):
        # threshold Lap(Delta / eps1), queries Lap(2 * Delta / eps2), eps1 + eps2 = eps0; each
        # iteration below is one eps0-DP run.
        threshold_share = NOISE_SPLITS[self.noise_split]
        threshold_noise = Laplace(epsilon=threshold_share * eps0, sensitivity=sensitivity,
                                  random_state=rng)
        query_noise = Laplace(epsilon=(1 - threshold_share) * eps0,
                              sensitivity=2 * sensitivity, random_state=rng)

        n_levels = _n_levels(self.granularity, self.floor)
        level, step, index, trace = 0, 1, None, []
        # u = floor + level * granularity; level counts granularity units exactly (integers).
        while step > 0 and level < n_levels and len(trace) < max_iter:
            proposed = self.floor + (level + step) * self.granularity
            noisy_threshold = threshold_noise.randomise(proposed)
            passed = None
            # The walk's order is public: the grid's, or drawn independently of the data.
            order = (_permutation(rng, len(utilities)) if self.order == "random"
                     else range(len(utilities)))
            for candidate in order:
                if query_noise.randomise(float(utilities[candidate])) >= noisy_threshold:
                    passed = int(candidate)
                    break
            trace.append(Iteration(step=step, passed=passed))
            if passed is None:
                step //= 2
            else:
                index, level, step = passed, level + step, step * 2

        # Basic composition when it is what the calibration gave (delta = 0, one iteration, or
        # no gain from delta): then the loop is pure epsilon-DP and releases delta 0.
        _, spent_delta = self.privacy_cost(epsilon, delta)
        pure = spent_delta == 0
        return SelectionResult(
            index=index,
            score=self.floor + level * self.granularity,
            trace=tuple(trace),
            n_iterations=len(trace),
            max_iter=max_iter,
            epsilon_per_iteration=eps0,
            epsilon=float(epsilon),
            delta=spent_delta,
            # "optimal": Kairouz, Oh & Viswanath's exact composition of max_iter eps0-DP runs.
            composition="basic" if pure else "optimal",
        )

