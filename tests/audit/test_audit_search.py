"""End-to-end privacy audit of PrivateGridSearchCV: partitioning, utility bounding and
selection together, on two datasets that differ in one adversarial record.

False failures: at most ``harness.ALPHA = 1e-3`` (see the harness). Every fit uses
``random_state=None``: fresh OS entropy for the partition labels and secure noise for the
selection, as in private use (a fixed seed would make every run identical).
"""

import warnings

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from sklearn.base import BaseEstimator

from skdptune import PrivateGridSearchCV
from skdptune.selection import ProposeTestDoubling

from .harness import MiscalibratedSelector, audit, singletons

EPSILON = 1.0
N_PARTITIONS = 2
N_RECORDS = 21  # the fewest that n_partitions=2 and validation_fraction=0.9 accept


class Direction(BaseEstimator):
    """A candidate that learns nothing: its score depends only on the validation records."""

    def __init__(self, direction=-1):
        self.direction = direction

    def fit(self, X, y=None):
        self.is_fitted_ = True
        return self


def adversarial_scorer(estimator, X, y=None):
    """1 for ``direction=+1`` candidates when a validation record has a positive feature, else
    0; the reverse for ``direction=-1``. Bounded in [0, 1] (declared by ``utility_range``)."""
    flag = float(np.any(np.asarray(X)[:, 0] > 0))
    return flag if estimator.direction == 1 else 1.0 - flag


# D: 21 records with feature 0; D' adds one record with feature 1. Wherever the adversarial
# record is held out for validation (probability 0.9), its partition's score moves by the
# full range: +1 for the "+1" candidate and -1 for the two "-1" candidates, so their mean
# utilities move by the whole sensitivity 1/k = 0.5 in opposite directions: (1, 1, 0) on D
# and (0.5, 0.5, 0.5) on D'. That is the selector audits' worst case, reached through the
# real partitioning and utility code. The doubling selector is capped at one iteration (one
# AboveThreshold run with threshold floor + granularity = 0.5, eps0 = epsilon), where a
# violation is large enough to see.
D = np.zeros((N_RECORDS, 1))
D_PRIME = np.vstack([D, [[1.0]]])
GRID = {"direction": [-1, -1, 1]}


def make_search(selector):
    return PrivateGridSearchCV(
        Direction(), GRID, epsilon=EPSILON, delta=0.0, selector=selector,
        n_partitions=N_PARTITIONS, validation_fraction=0.9, scoring=adversarial_scorer,
        utility_range=(0, 1), refit=False, random_state=None,
    )


def search_mechanism(selector):
    """``X -> (best_index_, passed per iteration)``: what a fitted search releases."""

    def run(X):
        search = make_search(selector).set_params(accountant=BudgetAccountant())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "selected no candidate"
            search.fit(X)
        # The audited claim is the one the search reports and charges.
        assert tuple(search.privacy_spent_) == (EPSILON, 0.0)
        return search.best_index_, tuple(it.passed for it in search.selection_.trace)

    return run


def one_iteration():
    return ProposeTestDoubling(granularity=0.25, floor=0.25, max_iter=1)


# Every possible release: the fallback index 0 when none passes.
EVENTS = singletons([(0, (None,))] + [(i, (i,)) for i in range(len(GRID["direction"]))])


def test_search_keeps_its_claim():
    result = audit(search_mechanism(one_iteration()), D, D_PRIME, 1_500, events=EVENTS)
    assert result.epsilon_lower_bound <= EPSILON, result.summary()


@pytest.mark.slow_audit
def test_search_keeps_its_claim_large_sample():
    result = audit(search_mechanism(one_iteration()), D, D_PRIME, 20_000, events=EVENTS)
    print(f"\nsearch: claimed eps={EPSILON}, {result.summary()}")
    assert result.epsilon_lower_bound <= EPSILON, result.summary()


def test_audit_flags_a_search_with_understated_sensitivity():
    # A search that passed sensitivity 1/n_samples (= 1/20) where 1/k (= 1/2) is due: noise
    # ten times too small. On D the two "-1" candidates sit 0.5 above the threshold and pass
    # almost surely; on D' all sit at the threshold.
    broken = MiscalibratedSelector(one_iteration(), sensitivity_factor=0.1)
    result = audit(search_mechanism(broken), D, D_PRIME, 800, events=EVENTS)
    assert result.epsilon_lower_bound > EPSILON, result.summary()
