"""Audit of the Laplace estimate behind ``best_score_`` (skdptune.selection._score).

The estimate is ``clip(u + Lap(Delta / epsilon), 0, 1)`` of one utility of sensitivity
``Delta``. Neighbours move that utility by ``Delta``; the tail events ``{estimate >= t}`` for
``t`` at least a sensitivity above both means have probability ratio exactly ``exp(epsilon)``:
the worst case. False failures: at most ``harness.ALPHA = 1e-3`` per audit.
"""

import numpy as np
import pytest

from skdptune.selection._score import estimate_utility

from .harness import audit

EPSILON = 1.0
SENSITIVITY = 0.1
THRESHOLDS = (0.7, 0.8)  # 2 and 3 noise scales above D's utility 0.5
D, D_PRIME = np.array([0.5]), np.array([0.5 + SENSITIVITY])


def mechanism(sensitivity):
    def run(utilities):
        estimate = estimate_utility(utilities, 0, sensitivity=sensitivity, epsilon=EPSILON)
        return sum(estimate >= t for t in THRESHOLDS)  # 0, 1 or 2: which tail it is in
    return run


EVENTS = [frozenset([1, 2]), frozenset([2])]


def test_score_estimate_keeps_its_claim():
    result = audit(mechanism(SENSITIVITY), D, D_PRIME, 40_000, events=EVENTS)
    assert result.epsilon_lower_bound <= EPSILON, result.summary()


@pytest.mark.slow_audit
def test_score_estimate_keeps_its_claim_large_sample():
    result = audit(mechanism(SENSITIVITY), D, D_PRIME, 1_000_000, events=EVENTS)
    print(f"\nscore estimate: claimed eps={EPSILON}, {result.summary()}")
    assert result.epsilon_lower_bound <= EPSILON, result.summary()


def test_audit_flags_a_score_estimate_with_half_the_noise():
    # Lap(Delta / (2 epsilon)): the tail ratio is exp(2 epsilon).
    result = audit(mechanism(SENSITIVITY / 2), D, D_PRIME, 40_000, events=EVENTS)
    assert result.epsilon_lower_bound > EPSILON, result.summary()
