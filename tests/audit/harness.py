"""A statistical privacy audit: a lower confidence bound on epsilon from observed outputs.

A mechanism ``M`` is ``(epsilon, delta)``-DP when, for neighbouring inputs ``D`` and ``D'`` and
every set of outputs ``E``, ``P(M(D) in E) <= exp(epsilon) * P(M(D') in E) + delta`` (and the
same with ``D`` and ``D'`` swapped). Running ``M`` many times on ``D`` and on ``D'`` and counting
how often ``E`` happens gives exact (Clopper-Pearson) confidence bounds on both probabilities,
so

    epsilon >= ln((p_lower(E | D) - delta) / p_upper(E | D'))

holds with the stated confidence (``delta`` is the claimed delta: an ``(epsilon, delta)``
claim allows every event an excess probability ``delta`` on either side, so it is subtracted
from the lower bound of the larger probability). The audit reports the largest such bound
over the events and both directions. It can only ever show that a mechanism is *less*
private than claimed (a lower bound above the claim is a proof, up to ``alpha``, of a
privacy bug); a bound below the claim proves nothing about privacy, which is why every audit
in this package also shows that it flags a deliberately mis-calibrated copy of the same
mechanism.

False failures: every bound uses one-sided Clopper-Pearson intervals at level
``alpha / (4 * n_events)`` (four one-sided bounds per event: lower and upper, on ``D`` and on
``D'``; Bonferroni). If the mechanism is ``(epsilon, delta)``-DP, the reported lower bound
exceeds ``epsilon`` only if one of those bounds is wrong, which happens with probability at
most ``alpha``; :data:`ALPHA` is ``1e-3``. Events must therefore be fixed before the counted
runs: either a priori or from a separate pilot sample (:func:`choose_events`).
"""

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from skdptune.selection import BaseSelector

#: Probability that an audit of a mechanism that keeps its claim reports a violation.
ALPHA = 1e-3


@dataclass(frozen=True)
class AuditResult:
    """What an audit found.

    Attributes
    ----------
    epsilon_lower_bound : float
        ``-inf`` when no event was observed often enough to bound anything.
    event : frozenset or None
        The outputs of the event that gave the bound.
    direction : str
        ``"D vs D'"`` when ``P(E | D)`` is the larger probability, else ``"D' vs D"``.
    n_runs : int
        Runs per input (counted runs; pilot runs excluded).
    alpha : float
        Family-wise error rate of all the confidence bounds.
    delta : float
        The claimed delta the bound was computed against.
    counts : dict
        Per event (a frozenset of outputs): ``(count on D, count on D')``.
    """

    epsilon_lower_bound: float
    event: object
    direction: str
    n_runs: int
    alpha: float
    counts: dict = field(repr=False)
    delta: float = 0.0

    def summary(self):
        """One line for assertion messages and the docs."""
        count = self.counts.get(self.event, (0, 0))
        at_delta = f"; delta={self.delta:g}" if self.delta else ""
        return (
            f"eps_lb={self.epsilon_lower_bound:.3f} from event {_describe(self.event)} "
            f"({self.direction}; counts {count[0]} on D and {count[1]} on D' of "
            f"{self.n_runs} runs each; alpha={self.alpha:g}{at_delta})"
        )


def clopper_pearson(count, n, alpha):
    """One-sided exact bounds on a binomial probability.

    Parameters
    ----------
    count : int
        Successes observed.
    n : int
        Trials.
    alpha : float
        Error probability of *each* bound.

    Returns
    -------
    lower, upper : float
        ``P(p < lower) <= alpha`` and ``P(p > upper) <= alpha`` over the draw of ``count``.
    """
    lower = 0.0 if count == 0 else float(stats.beta.ppf(alpha, count, n - count + 1))
    upper = 1.0 if count == n else float(stats.beta.ppf(1 - alpha, count + 1, n - count))
    return lower, upper


def epsilon_lower_bound(counts, n_runs, *, delta=0.0, alpha=ALPHA):
    """Largest lower confidence bound on epsilon over events and both directions.

    Parameters
    ----------
    counts : dict
        Event (a frozenset of outputs) -> ``(count on D, count on D')``, each out of
        ``n_runs``. The events must have been fixed before these runs.
    n_runs : int
        Runs per input.
    delta : float, default=0.0
        The claimed delta, subtracted from the lower bound of the larger probability. An
        event whose lower bound does not exceed ``delta`` bounds nothing.
    alpha : float, default=ALPHA
        Family-wise error rate, split evenly (Bonferroni) over the ``4 * len(counts)``
        one-sided bounds.

    Returns
    -------
    AuditResult
    """
    level = alpha / (4 * len(counts))
    best = (-math.inf, None, "")
    for event, (count_d, count_d_prime) in counts.items():
        lower_d, upper_d = clopper_pearson(count_d, n_runs, level)
        lower_dp, upper_dp = clopper_pearson(count_d_prime, n_runs, level)
        for lower, upper, direction in (
            (lower_d, upper_dp, "D vs D'"), (lower_dp, upper_d, "D' vs D"),
        ):
            if lower - delta > 0:
                bound = math.log((lower - delta) / upper)
                if bound > best[0]:
                    best = (bound, event, direction)
    return AuditResult(
        epsilon_lower_bound=best[0], event=best[1], direction=best[2], n_runs=n_runs,
        alpha=alpha, counts=dict(counts), delta=delta,
    )


def sample(mechanism, inputs, n_runs):
    """Run ``mechanism(inputs)`` ``n_runs`` times; the outputs (hashable) and their counts.

    The mechanism must draw fresh noise on every call (secure noise, or a new seed per call):
    a fixed seed would make every run identical and the audit meaningless.
    """
    return Counter(mechanism(inputs) for _ in range(n_runs))


def count_events(outputs_d, outputs_d_prime, events):
    """``{event: (count on D, count on D')}`` for events given as sets of outputs."""
    return {
        event: (
            sum(outputs_d[o] for o in event), sum(outputs_d_prime[o] for o in event),
        )
        for event in events
    }


def choose_events(pilot_d, pilot_d_prime, max_events=6, delta=0.0):
    """Events likely to show the largest privacy loss, chosen on a pilot sample.

    The pilot runs are not counted again, so choosing events by looking at them costs no
    confidence. Returned: for each direction, the ``max_events // 4`` single outputs with the
    largest pilot log-ratio (with add-one smoothing, among outputs seen at least 20 times) and
    the likelihood-ratio sets ``{o : ratio(o) >= r}`` for ``r`` at two of its quantiles (the
    Neyman-Pearson tests, which trade a smaller ratio for a much larger probability).

    With ``delta > 0`` those events are poor: the bound subtracts ``delta`` from the larger
    probability, so an event rarer than ``delta`` bounds nothing, and the best event is the
    likelihood-ratio set that maximises ``(P(E | D) - delta) / P(E | D')`` (at the optimum
    this is the ``epsilon`` of the pair's privacy profile at ``delta``). For each direction
    that set, estimated on the pilot (:func:`delta_events`), comes first.

    Parameters
    ----------
    pilot_d, pilot_d_prime : collections.Counter
        Pilot outputs on ``D`` and ``D'``.
    max_events : int, default=6
        Upper bound on the number of events returned.
    delta : float, default=0.0
        The claimed delta.

    Returns
    -------
    events : list of frozenset
    """
    outputs = set(pilot_d) | set(pilot_d_prime)
    n_d, n_dp = sum(pilot_d.values()), sum(pilot_d_prime.values())
    log_ratio = {
        o: math.log((pilot_d[o] + 1) / (n_d + 1)) - math.log((pilot_d_prime[o] + 1) / (n_dp + 1))
        for o in outputs
    }
    frequent = [o for o in outputs if pilot_d[o] + pilot_d_prime[o] >= 20]
    events = []
    per_kind = max(1, max_events // 4)
    for sign in (1, -1):
        ranked = sorted(frequent, key=lambda o: sign * log_ratio[o], reverse=True)
        events.extend(frozenset([o]) for o in ranked[:per_kind])
        positive = [sign * log_ratio[o] for o in ranked if sign * log_ratio[o] > 0]
        for quantile in (0.5, 0.9):
            if positive:
                cut = float(np.quantile(positive, quantile))
                events.append(frozenset(o for o in outputs if sign * log_ratio[o] >= cut))
    if delta > 0:
        events = delta_events(pilot_d, pilot_d_prime, delta) + events
    unique = list(dict.fromkeys(e for e in events if e))
    return unique[:max_events]


def delta_events(pilot_d, pilot_d_prime, delta):
    """Per direction, the likelihood-ratio set with the largest pilot ``(P(E) - delta) / Q(E)``.

    Outputs are ranked by their pilot ratio (add-one smoothing) and the best prefix is kept;
    ``Q(E)`` is smoothed by one count so that an event never seen on the other input is not
    credited with an infinite ratio.

    Parameters
    ----------
    pilot_d, pilot_d_prime : collections.Counter
        Pilot outputs on ``D`` and ``D'``.
    delta : float
        The claimed delta.

    Returns
    -------
    events : list of frozenset
        At most two (one per direction); none when no prefix beats ``delta`` on the pilot.
    """
    outputs = set(pilot_d) | set(pilot_d_prime)
    n_d, n_dp = sum(pilot_d.values()), sum(pilot_d_prime.values())
    events = []
    for larger, n_larger, smaller, n_smaller in (
        (pilot_d, n_d, pilot_d_prime, n_dp), (pilot_d_prime, n_dp, pilot_d, n_d),
    ):
        ranked = sorted(
            outputs,
            key=lambda o: (larger[o] + 1) / (n_larger + 1) / ((smaller[o] + 1) / (n_smaller + 1)),
            reverse=True,
        )
        best, chosen, count_larger, count_smaller = -math.inf, None, 0, 0
        for size, output in enumerate(ranked, start=1):
            count_larger += larger[output]
            count_smaller += smaller[output]
            excess = count_larger / n_larger - delta
            if excess > 0:
                value = math.log(excess / ((count_smaller + 1) / (n_smaller + 1)))
                if value > best:
                    best, chosen = value, size
        if chosen is not None:
            events.append(frozenset(ranked[:chosen]))
    return events


def audit(mechanism, d, d_prime, n_runs, *, events=None, n_pilot=0, delta=0.0, alpha=ALPHA,
          max_events=6):
    """Lower-bound the epsilon of ``mechanism`` from runs on two neighbouring inputs.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(inputs) -> hashable output``, fresh noise on every call.
    d, d_prime : object
        Neighbouring inputs.
    n_runs : int
        Counted runs per input.
    events : list of frozenset, default=None
        Events fixed a priori, e.g. every possible output when the output space is small
        (:func:`singletons`). None: events chosen by :func:`choose_events` on ``n_pilot``
        separate runs per input.
    n_pilot : int, default=0
        Pilot runs per input used only to choose the events (required when ``events`` is
        None).
    delta : float, default=0.0
        The claimed delta.
    alpha : float, default=ALPHA
        Probability of a false alarm on a mechanism that keeps its claim.
    max_events : int, default=6
        Passed to :func:`choose_events` (with ``delta``).

    Returns
    -------
    AuditResult
    """
    if events is None:
        if not n_pilot:
            raise ValueError("Give the events a priori or n_pilot runs to choose them on.")
        # The Bonferroni correction counts the events, so they cannot depend on the counted
        # runs: choose them on separate pilot runs.
        events = choose_events(
            sample(mechanism, d, n_pilot), sample(mechanism, d_prime, n_pilot), max_events,
            delta=delta,
        )
    outputs_d = sample(mechanism, d, n_runs)
    outputs_d_prime = sample(mechanism, d_prime, n_runs)
    counts = count_events(outputs_d, outputs_d_prime, events)
    return epsilon_lower_bound(counts, n_runs, delta=delta, alpha=alpha)


def singletons(outputs):
    """Every output its own event: the a-priori events of a small, known output space."""
    return [frozenset([o]) for o in outputs]


def _describe(event):
    if event is None:
        return "(none)"
    outputs = sorted(event, key=repr)
    if len(outputs) == 1:
        return repr(outputs[0])
    return f"{{{len(outputs)} outputs, e.g. {outputs[0]!r}}}"


class MiscalibratedSelector(BaseSelector):
    """A deliberately broken copy of a selector, to show that an audit has teeth.

    It runs ``selector`` with its sensitivity multiplied by ``sensitivity_factor``: every
    noise scale of the mechanism shrinks by that factor (``0.5`` turns ``Lap(2 * Delta /
    eps0)`` into ``Lap(Delta / eps0)``), while the claimed epsilon stays the same. Tests only:
    it has no privacy guarantee.

    Parameters
    ----------
    selector : selector instance
        The real selector.
    sensitivity_factor : float, default=0.5
        Multiplier of the sensitivity the selector is told.
    """

    _parameter_constraints = {}

    def __init__(self, selector, sensitivity_factor=0.5):
        self.selector = selector
        self.sensitivity_factor = sensitivity_factor

    def validate_parameters(self):
        self.selector.validate_parameters()

    def select(self, utilities, *, sensitivity, epsilon, delta, random_state=None):
        return self.selector.select(
            utilities, sensitivity=sensitivity * self.sensitivity_factor, epsilon=epsilon,
            delta=delta, random_state=random_state,
        )


def pure_composition_delta(epsilon_per_step, n_steps, epsilon):
    """Exact ``delta(epsilon)`` of ``n_steps`` adaptively composed pure ``epsilon_per_step``-DP
    mechanisms (Kairouz, Oh & Viswanath 2015, Theorem 3.3).

    The composition is dominated by ``n_steps`` randomized-response steps: each keeps a bit
    with probability ``p = e^e0 / (1 + e^e0)``, and with ``i`` of the ``n`` answers flipped
    the pair's probabilities are ``p^(n-i) q^i`` and ``p^i q^(n-i)``, so

        delta(epsilon) = sum_i C(n, i) max(0, p^(n-i) q^i - e^epsilon p^i q^(n-i)).

    An independent check of the library's calibration (tests only; computed in log space).

    Parameters
    ----------
    epsilon_per_step : float
        ``e0 > 0``.
    n_steps : int
        ``n >= 1``.
    epsilon : float
        The composed epsilon at which delta is wanted.

    Returns
    -------
    delta : float
    """
    log_p = -math.log1p(math.exp(-epsilon_per_step))
    log_q = -math.log1p(math.exp(epsilon_per_step))
    total = 0.0
    for flipped in range(n_steps + 1):
        log_binomial = (
            math.lgamma(n_steps + 1) - math.lgamma(flipped + 1)
            - math.lgamma(n_steps - flipped + 1)
        )
        larger = (n_steps - flipped) * log_p + flipped * log_q
        smaller = epsilon + flipped * log_p + (n_steps - flipped) * log_q
        if larger > smaller:
            total += math.exp(log_binomial + larger) * -math.expm1(smaller - larger)
    return total
