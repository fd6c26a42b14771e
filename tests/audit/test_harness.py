"""The audit harness itself, on mechanisms whose privacy is known exactly.

The delta > 0 audits rely on the harness subtracting the claimed delta correctly and on its
pilot-chosen events finding the event that a delta claim is weakest on. Both are checked
here on mechanisms whose privacy is known in closed form. False failures: at most
``harness.ALPHA = 1e-3`` for each test that expects no flag; the flagged cases sit 0.2 or
more above the claim, where the bound's standard deviation is below 0.01.
"""

import math
from collections import Counter

import numpy as np
import pytest

from .harness import (
    audit,
    choose_events,
    delta_events,
    epsilon_lower_bound,
    pure_composition_delta,
)

EPSILON = 1.0
DELTA = 0.2
_RNG = np.random.default_rng()  # OS entropy: fresh draws on every run


def tight_mechanism(epsilon, delta):
    """A randomized response that is exactly ``(epsilon, delta)``-DP and no better.

    Input: a secret bit, released unchanged with probability ``P = delta + (1 - delta) *
    e^eps / (1 + e^eps)`` and flipped otherwise. For the event "the output is the input",
    ``P - e^eps (1 - P) = delta`` exactly, and no event does better: the tight claim at
    ``epsilon`` is ``delta``. As a pure claim it is ``ln(P / (1 - P))`` (1.295 below).
    """
    keep = delta + (1 - delta) * math.exp(epsilon) / (1 + math.exp(epsilon))

    def run(bit):
        return bit if _RNG.random() < keep else 1 - bit

    return run


EVENTS = [frozenset([0]), frozenset([1])]  # every output, a priori
N_RUNS = 100_000  # about 2 us per run


@pytest.mark.parametrize(
    "claimed_delta, flagged",
    # Expected bounds: 0.975 at the real delta; ln((0.785 - 0.05) / 0.215) - 0.03 = 1.20 at a
    # quarter of it; ln(0.785 / 0.215) - 0.03 = 1.27 as a pure claim.
    [(DELTA, False), (DELTA / 4, True), (0.0, True)],
    ids=["tight", "delta-understated", "delta-ignored"],
)
def test_harness_on_a_tight_delta_claim(claimed_delta, flagged):
    result = audit(tight_mechanism(EPSILON, DELTA), 0, 1, N_RUNS, events=EVENTS,
                   delta=claimed_delta)
    assert (result.epsilon_lower_bound > EPSILON) == flagged, result.summary()


@pytest.mark.parametrize("claimed_delta, flagged", [(DELTA, False), (DELTA / 4, True)],
                         ids=["tight", "delta-understated"])
def test_harness_on_a_tight_delta_claim_with_pilot_events(claimed_delta, flagged):
    # The same with events chosen on 10,000 pilot runs (harness.delta_events first).
    result = audit(tight_mechanism(EPSILON, DELTA), 0, 1, N_RUNS, n_pilot=10_000,
                   delta=claimed_delta)
    assert (result.epsilon_lower_bound > EPSILON) == flagged, result.summary()


def test_delta_events_find_the_privacy_profile_event():
    # A mechanism that releases ("leak", bit) with probability DELTA and otherwise the bit
    # through randomized response: also exactly (EPSILON, DELTA)-DP. Its pilot counts (the
    # exact expectations for 100,000 runs per input): the likelihood ratio ranks the leak
    # first, but once DELTA is subtracted the leak alone bounds nothing, and the best event
    # is the leak together with the kept bit, whose (P - DELTA) / Q is exactly e^EPSILON.
    keep = math.exp(EPSILON) / (1 + math.exp(EPSILON))
    n = 100_000
    on_0 = Counter({("leak", 0): DELTA * n, 0: (1 - DELTA) * keep * n,
                    1: (1 - DELTA) * (1 - keep) * n})
    on_1 = Counter({("leak", 1): DELTA * n, 1: (1 - DELTA) * keep * n,
                    0: (1 - DELTA) * (1 - keep) * n})
    events = delta_events(on_0, on_1, DELTA)
    assert frozenset([("leak", 0), 0]) in events
    assert frozenset([("leak", 1), 1]) in events
    assert events == choose_events(on_0, on_1, delta=DELTA)[:2]


@pytest.mark.parametrize("epsilon_per_step", [0.3, 1.0, 2.5])
def test_pure_composition_delta(epsilon_per_step):
    e0 = epsilon_per_step
    # One step: exactly (e0, 0)-DP, and at epsilon 0 its delta is the total variation.
    assert pure_composition_delta(e0, 1, e0) == pytest.approx(0.0, abs=1e-12)
    assert pure_composition_delta(e0, 1, 0.0) == pytest.approx(math.tanh(e0 / 2))
    # Basic composition is tight for pure DP: delta 0 at n * e0, positive just below.
    assert pure_composition_delta(e0, 3, 3 * e0) == pytest.approx(0.0, abs=1e-12)
    assert pure_composition_delta(e0, 3, 3 * e0 - 1e-3) > 1e-9
    # Two steps in closed form: (e^{2 e0} - e^eps) / (1 + e^e0)^2 for eps in [0, 2 e0).
    for eps in np.linspace(0, 2 * e0, 5, endpoint=False):
        expected = (math.exp(2 * e0) - math.exp(eps)) / (1 + math.exp(e0)) ** 2
        assert pure_composition_delta(e0, 2, eps) == pytest.approx(expected, rel=1e-12)
