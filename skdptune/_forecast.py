"""What a private selection can resolve, from public quantities only (no data).

A selection adds noise of a scale set by ``sensitivity / epsilon = 1 / (n_partitions *
epsilon)``; whether it picks the best candidate depends on how far that candidate leads the
others. :func:`forecast_selection` answers, before any data are touched: *how large a lead, in
utility units (``[0, 1]``, e.g. accuracy), does the best candidate need to be selected with
probability* ``confidence``? Two scenarios bracket real grids:

- ``pairwise_gap``: the best leads one rival by the gap, and the other candidates are far
  below (they matter little): the finest distinction the selection makes reliably.
- ``uniform_gap``: the best leads every other candidate by the gap, all of them tied: the
  pessimistic case of a grid whose other candidates are all near-misses.

One-shot selectors have closed forms or a one-dimensional integral. The doubling selector is
simulated (a vectorised copy of its loop, checked against the selector itself in the tests),
with the best candidate's utility at 0.8 and its position in the grid drawn at random.
"""

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np
from scipy import integrate, optimize

from .selection import (
    SELECTORS,
    ExponentialMechanism,
    PermuteAndFlip,
    ProposeTestDoubling,
    ReportNoisyMax,
    _as_selector,
)
from .selection._doubling import NOISE_SPLITS, _n_levels
from ._accounting import calibrate_epsilon_per_step

#: A pairwise gap above this (a quarter of the utility range) means the noise swamps any
#: plausible difference between candidates: the search warns at fit.
SWAMPED_GAP = 0.25

#: The lead ``n_partitions_needed`` refers to: five points of accuracy, a clear winner.
CLEAR_LEAD = 0.05

#: The largest ``n_partitions`` the forecast looks at for ``n_partitions_needed``.
MAX_PARTITIONS = 10 ** 7

# Where the doubling simulation puts the best candidate's utility, and how many runs.
_DOUBLING_BEST = 0.8
_DOUBLING_RUNS = 4000


@dataclass(frozen=True)
class Forecast:
    """What a selection can resolve; every field is computed without data.

    Attributes
    ----------
    selector : str
        The selector's name.
    n_candidates, n_partitions : int
    epsilon, delta : float
        The selector's budget (without the share spent on ``best_score_``).
    confidence : float
        Probability of selecting the best candidate that the gaps refer to.
    pairwise_gap : float
        Lead over a single close rival needed to be selected with probability ``confidence``
        (``inf`` when no lead in ``[0, 1]`` suffices).
    uniform_gap : float
        Lead over every other candidate (all tied) needed for the same.
    max_confidence : float
        Probability of selecting the best when it leads one rival by the whole utility range
        (1): the most this selection can achieve. Below ``confidence``, the gaps are ``inf``.
    n_partitions_needed : int or None
        The ``n_partitions`` this selector needs at this epsilon to resolve a lead of
        :data:`CLEAR_LEAD` (computed on first access; see the property).
    selector_object : selector or None
        The selector forecast (None when unknown: no ``n_partitions_needed``).
    n_fits : int or None
        The search's cost: partition fits, ``n_partitions`` times the number of candidates
        (None from :func:`forecast_selection`, which knows no search).
    paths : tuple of str or None
        Per candidate, in grid order: ``"batched"`` (all partitions fitted by an array program,
        ``skdptune/_batched/``) or ``"per-fit"`` (one estimator fit per partition), decided
        from the parameters as the evaluate stage decides
        (``skdptune._batched.engine.candidate_paths``). None from :func:`forecast_selection`.
    policy : skdptune._default_policy.Policy or None
        The search's tuning policy (the selection's share, the default's margin, the expected
        gain), None without a default or with a single candidate. When it declines, there
        is no selection: the gaps are ``inf`` and ``n_fits`` 0; so with a single candidate
        (``n_candidates`` 1), where there is nothing to select.
    refit_epsilon : float or None
        The epsilon the released model's refit receives out of the search's total (after
        the selection's share and the ``trivial_lead_`` check): what to compare with the
        estimator fitted alone on the whole total. None from :func:`forecast_selection`,
        and when the refit spends what its estimator declares (``selection_epsilon``) or
        there is no refit.
    """

    selector: str
    n_candidates: int
    n_partitions: int
    epsilon: float
    delta: float
    confidence: float
    pairwise_gap: float
    uniform_gap: float
    max_confidence: float = math.nan
    n_fits: object = None
    paths: object = None
    policy: object = None
    refit_epsilon: object = None
    # The selector object, for n_partitions_needed (computed on demand: a bisection).
    selector_object: object = field(default=None, repr=False, compare=False)

    @cached_property
    def n_partitions_needed(self):
        """The smallest ``n_partitions`` at which, with the same selector and epsilon, the
        best is selected with probability ``confidence`` when it leads one rival by
        :data:`CLEAR_LEAD`; found by bisection (the probability grows with
        ``n_partitions``). None above ``MAX_PARTITIONS``, or without the selector. It
        says which regime the selector needs, not that the data afford that many
        partitions."""
        if self.selector_object is None:
            return None
        return _partitions_needed(self.selector_object, self.epsilon, self.delta,
                                  self.confidence)

    @property
    def swamped(self):
        """Whether the noise swamps any plausible gap (``pairwise_gap > SWAMPED_GAP``)."""
        return self.pairwise_gap > SWAMPED_GAP

    @property
    def batched_candidates(self):
        """Indices of the candidates on the batched path (empty without ``paths``)."""
        return tuple(i for i, path in enumerate(self.paths or ()) if path == "batched")

    @property
    def per_fit_candidates(self):
        """Indices of the candidates on the per-fit path (empty without ``paths``)."""
        return tuple(i for i, path in enumerate(self.paths or ()) if path == "per-fit")

    @property
    def n_batched_fits(self):
        """Partition fits on the batched path."""
        return len(self.batched_candidates) * self.n_partitions

    @property
    def n_per_fit_fits(self):
        """Partition fits on the per-fit path."""
        return len(self.per_fit_candidates) * self.n_partitions

    @property
    def declined(self):
        """Whether the search will decline to select (its policy gives the selection no
        share): it refits the default with the whole budget."""
        return self.policy is not None and self.policy.declined

    @property
    def single_candidate(self):
        """Whether there is one candidate: nothing to select, the search refits it with the
        whole budget."""
        return self.n_candidates == 1

    def __str__(self):
        if self.single_candidate:
            return ("One candidate (duplicates merged, the default included): there is "
                    "nothing to select, so the search spends nothing on a selection, runs no "
                    "partition fits and refits that candidate with the whole budget.")
        if self.declined:
            return ("The search declines to select: at no share of epsilon does the selection "
                    "resolve a lead worth what it takes from the refit, so it refits the "
                    "default with the whole budget (the tuning policy of `default`). More "
                    "records, a larger epsilon or a smaller grid would let it select.")
        head = (f"{self.selector} over {self.n_candidates} candidates, k={self.n_partitions}, "
                f"epsilon={self.epsilon:g}: ")
        if math.isinf(self.pairwise_gap):
            text = (f"{head}cannot select the best with probability {self.confidence:.0%} "
                    f"at any lead: at most {self.max_confidence:.0%}, when it leads by the "
                    "whole utility range [0, 1].")
        else:
            text = (f"{head}selects the best with probability {self.confidence:.0%} when it "
                    f"leads one close rival by {self.pairwise_gap:.3g}, or every other "
                    f"candidate by {self.uniform_gap:.3g} (utility units, [0, 1]).")
        if self.policy is not None:
            text += (f" The default is favoured by {self.policy.margin:.3g}; the selection "
                     f"gets {self.policy.share:.3g} of epsilon (expected net gain "
                     f"{100 * self.policy.expected_gain:+.2f} points after the refit's loss "
                     f"of {100 * self.policy.refit_loss:.2f}).")
        if self.n_partitions_needed is None:
            text += f" No k up to {MAX_PARTITIONS:,} resolves a lead of {CLEAR_LEAD:g}."
        elif self.n_partitions_needed > self.n_partitions:
            text += (f" A lead of {CLEAR_LEAD:g} needs k >= {self.n_partitions_needed:,} at "
                     "this epsilon.")
        if self.n_fits is None or self.paths is None:
            return text
        return (f"{text} Cost: {self.n_fits} partition fits: "
                f"{self.n_batched_fits} batched ({_count(self.batched_candidates)}), "
                f"{self.n_per_fit_fits} per-fit ({_count(self.per_fit_candidates)}).")


def paths_line(paths, n_partitions):
    """The line ``fit`` prints with ``verbose >= 1`` before the partition fits: how many run
    on each path (public: counts decided from the parameters).

    Parameters
    ----------
    paths : sequence of str
        ``"batched"`` or ``"per-fit"`` per candidate.
    n_partitions : int

    Returns
    -------
    line : str
    """
    n_batched = sum(path == "batched" for path in paths)
    n_per_fit = len(paths) - n_batched
    return (f"Paths: {n_batched * n_partitions} partition fits batched "
            f"({_count(range(n_batched))}, one array program per block of partitions), "
            f"{n_per_fit * n_partitions} per-fit ({_count(range(n_per_fit))}, one estimator "
            "fit each)")


def _count(items):
    n = len(items)
    return f"{n} candidate" + ("" if n == 1 else "s")


def forecast_selection(n_candidates, *, n_partitions, epsilon, delta=0.0,
                       selector="exponential", confidence=0.9):
    """Forecast what a selection can resolve, before any data are touched.

    Parameters
    ----------
    n_candidates : int
        Size of the grid, at least 2.
    n_partitions : int
        ``k``: the utilities' sensitivity is ``1 / k``.
    epsilon : float
        The selector's epsilon (a search with ``score_share`` gives it ``(1 - score_share)``
        of its selection budget).
    delta : float, default=0.0
        The selector's delta (the doubling selector composes its iterations with it).
    selector : str or selector instance, default="exponential"
        A name of :data:`skdptune.selection.SELECTORS` or an instance of one of them.
    confidence : float, default=0.9
        Probability of selecting the best candidate, in ``(0, 1)``.

    Returns
    -------
    Forecast

    Examples
    --------
    >>> from skdptune.forecast import forecast_selection
    >>> f = forecast_selection(20, n_partitions=100, epsilon=0.5)
    >>> round(f.pairwise_gap, 3)
    0.088
    """
    selector = _as_selector(selector)
    if int(n_candidates) < 2:
        raise ValueError(f"n_candidates={n_candidates} must be at least 2 to forecast a choice.")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence={confidence} must lie in (0, 1).")
    probability = _probability_of_best(selector, float(epsilon), float(delta), int(n_partitions))
    gaps = [_gap(probability, m, confidence) for m in (2, int(n_candidates))]
    return Forecast(
        selector=type(selector).__name__, n_candidates=int(n_candidates),
        n_partitions=int(n_partitions), epsilon=float(epsilon), delta=float(delta),
        confidence=float(confidence), pairwise_gap=gaps[0], uniform_gap=gaps[1],
        max_confidence=probability(1.0, 2), selector_object=selector,
    )


def _partitions_needed(selector, epsilon, delta, confidence):
    """Smallest ``n_partitions`` whose pairwise probability at :data:`CLEAR_LEAD` reaches
    ``confidence`` (bisection), or None up to ``MAX_PARTITIONS``."""
    def resolves(k):
        return _probability_of_best(selector, epsilon, delta, k)(CLEAR_LEAD, 2) >= confidence

    if not resolves(MAX_PARTITIONS):
        return None
    low, high = 1, MAX_PARTITIONS  # resolves(high); low is below the least k (2)
    while high - low > 1:
        middle = (low + high) // 2
        if middle >= 2 and resolves(middle):
            high = middle
        else:
            low = middle
    return high


def _gap(probability, n_candidates, confidence):
    """Smallest lead in ``[0, 1]`` with ``probability(lead, m) >= confidence``, or inf."""
    if probability(1.0, n_candidates) < confidence:
        return math.inf
    if probability(0.0, n_candidates) >= confidence:
        return 0.0
    return optimize.brentq(lambda g: probability(g, n_candidates) - confidence, 0.0, 1.0,
                           xtol=1e-4)


def _probability_of_best(selector, epsilon, delta, n_partitions):
    """``probability(gap, m)``: the chance of selecting the best of ``m`` candidates."""
    sensitivity = 1.0 / n_partitions
    # exp(epsilon * u / (2 * Delta)): the non-monotone exponential weights of EM and PF.
    rate = epsilon / (2 * sensitivity)
    if type(selector) is ExponentialMechanism:
        return lambda gap, m: 1.0 / (1.0 + (m - 1) * math.exp(-rate * gap))
    if type(selector) is PermuteAndFlip:
        # A random order; the best stops the walk surely, every rival with probability p:
        # P(best) = sum_j (1/m) (1 - p)^j = (1 - (1 - p)^m) / (m p).
        def permute_and_flip(gap, m):
            p = math.exp(-rate * gap)
            if p == 0:
                return 1.0
            # 1 - (1 - p)^m without cancellation for tiny p.
            return -math.expm1(m * math.log1p(-p)) / (m * p) if p < 1 else 1.0 / m
        return permute_and_flip
    if type(selector) is ReportNoisyMax:
        scale = 2 * sensitivity / epsilon

        def report_noisy_max(gap, m):
            # P(every rival's noise < the best's noise + gap), Laplace noise of scale b.
            def integrand(z):
                rival = 1 - 0.5 * math.exp(-(z + gap) / scale) if z + gap >= 0 else (
                    0.5 * math.exp((z + gap) / scale))
                return 0.5 / scale * math.exp(-abs(z) / scale) * rival ** (m - 1)
            # Beyond 40 scales the Laplace density is below e^-40: negligible.
            value, _ = integrate.quad(integrand, -40 * scale, 40 * scale,
                                      points=[0.0, -gap], limit=200)
            return min(value, 1.0)
        return report_noisy_max
    if type(selector) is ProposeTestDoubling:
        params = tuple(sorted(selector.get_params().items()))
        return lambda gap, m: _doubling_probability(params, epsilon, delta, n_partitions,
                                                    round(gap, 6), m)
    raise TypeError(
        f"No forecast for selector {selector!r}: forecasts cover the selectors of "
        f"skdptune.selection.SELECTORS ({sorted(SELECTORS)})."
    )


@lru_cache(maxsize=4096)
def _doubling_probability(params, epsilon, delta, n_partitions, gap, n_candidates):
    """Share of simulated doubling runs that select the best (a vectorised copy of the loop
    of :class:`~skdptune.selection.ProposeTestDoubling`, with common random numbers: seed 0)."""
    selector = ProposeTestDoubling(**dict(params))
    max_iter = selector.resolved_max_iter()
    eps0 = calibrate_epsilon_per_step(epsilon, delta, max_iter)
    share = NOISE_SPLITS[selector.noise_split]
    sensitivity = 1.0 / n_partitions
    threshold_scale = sensitivity / (share * eps0)
    query_scale = 2 * sensitivity / ((1 - share) * eps0)
    rng = np.random.RandomState(0)
    runs = _DOUBLING_RUNS
    utilities = np.full((runs, n_candidates), _DOUBLING_BEST - gap)
    best = rng.randint(n_candidates, size=runs)
    utilities[np.arange(runs), best] = _DOUBLING_BEST
    n_levels = _n_levels(selector.granularity, selector.floor)
    level = np.zeros(runs, dtype=int)
    step = np.ones(runs, dtype=int)
    index = np.full(runs, -1)
    rows = np.arange(runs)
    for _ in range(max_iter):
        active = (step > 0) & (level < n_levels)
        if not active.any():
            break
        threshold = (selector.floor + (level + step) * selector.granularity
                     + rng.laplace(0.0, threshold_scale, runs))
        order = (np.argsort(rng.random_sample((runs, n_candidates)), axis=1)
                 if selector.order == "random" else np.tile(np.arange(n_candidates), (runs, 1)))
        noisy = utilities[rows[:, None], order] + rng.laplace(0.0, query_scale,
                                                             (runs, n_candidates))
        passes = noisy >= threshold[:, None]
        passed = passes.any(axis=1) & active
        first = order[rows, np.argmax(passes, axis=1)]
        index = np.where(passed, first, index)
        level = np.where(passed, level + step, level)
        step = np.where(active, np.where(passed, step * 2, step // 2), step)
    return float(np.mean(index == best))
