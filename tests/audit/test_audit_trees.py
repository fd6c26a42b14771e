"""Audit of the leaf labels of skdptune's released trees and forests at the charged epsilon.

A tree labels the leaf of a record by ``PermuteAndFlip(epsilon, sensitivity=1,
monotonic=True)`` on the leaf's class counts; the gate charges ``tree_charge`` (2) times the
recorded ``epsilon`` under replace-one adjacency (``skdptune._models.tree.tree_charge``). The
neighbours: 11 equal rows (one leaf holds them all, whatever the random structure), 6 of
class 0 and 5 of class 1 on ``D``; one class-0 record relabelled 1 on ``D'``. The output is
the label of that leaf (for a forest of two trees, the pair of labels: the second tree's block
is the same on both sides). Every output is its own event, fixed a priori.

Claim: the lower confidence bound on epsilon stays at most ``tree_charge * epsilon``. The
default suite audits the tree (2,000 fits per side, a few seconds); the ``slow_audit`` run
audits the tree and the forest with 50,000 fits per side. Teeth:
the same runs give a bound above the recorded ``epsilon`` (the exact ratio is ``2 e - 1 =
4.4`` against ``e = 2.7`` at epsilon 1), which is why the charge is twice it. False failures:
at most ``harness.ALPHA = 1e-3`` for the claim (Clopper-Pearson with Bonferroni, see the
harness); the teeth assertion fails with probability below 1e-6 at 2,000 runs per side (in
5,000 audits simulated from the exact output probabilities the tree's bound had mean 1.30,
standard deviation 0.042 and minimum 1.17, against 1.0).
"""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant

from skdptune.ensemble import RandomForestClassifier
from skdptune._models.tree import tree_charge
from skdptune.tree import DecisionTreeClassifier

from .harness import audit, singletons

EPSILON = 1.0
POINT = np.full((1, 1), 0.5, dtype=np.float32)


def _labels(n_ones, n_rows=11):
    return np.r_[np.ones(n_ones), np.zeros(n_rows - n_ones)].astype(int)


def _label(tree):
    """The label of the leaf the rows share (what ``predict`` gives them)."""
    return int(np.argmax(tree.tree_.predict(POINT)[0]))


def _tree(y):
    model = DecisionTreeClassifier(max_depth=2, epsilon=EPSILON, bounds=(0.0, 1.0),
                                   classes=[0, 1], accountant=BudgetAccountant())
    return _label(model.fit(np.full((len(y), 1), 0.5), y))


def _forest(y):
    # 22 rows, two trees: rows 0-10 train tree 0, rows 11-21 tree 1 (positions).
    model = RandomForestClassifier(n_estimators=2, max_depth=2, epsilon=EPSILON,
                                   bounds=(0.0, 1.0), classes=[0, 1],
                                   accountant=BudgetAccountant())
    model.fit(np.full((len(y), 1), 0.5), y)
    return tuple(_label(tree) for tree in model.estimators_)


CASES = {
    # record 0 (class 1 -> 0 between D' and D): 5 ones of 11 on D, 6 on D'.
    "tree": (_tree, _labels(5), _labels(6), singletons([0, 1]),
             DecisionTreeClassifier()),
    "forest": (_forest, np.r_[_labels(5), _labels(5)], np.r_[_labels(6), _labels(5)],
               singletons([(a, b) for a in (0, 1) for b in (0, 1)]),
               RandomForestClassifier()),
}


def _run(case, n_runs):
    mechanism, d, d_prime, events, model = CASES[case]
    result = audit(mechanism, d, d_prime, n_runs, events=events)
    return result, tree_charge(model) * EPSILON


def test_leaf_labels_keep_the_charged_epsilon():
    result, charged = _run("tree", 2000)
    assert result.epsilon_lower_bound <= charged, result.summary()
    # Teeth: the recorded epsilon alone is exceeded.
    assert result.epsilon_lower_bound > EPSILON, result.summary()


@pytest.mark.slow_audit
@pytest.mark.parametrize("case", CASES)
def test_leaf_labels_keep_the_charged_epsilon_large_sample(case):
    result, charged = _run(case, 50_000)
    print(f"\n{case}: charged eps={charged}, {result.summary()}")
    assert result.epsilon_lower_bound <= charged, result.summary()
    assert result.epsilon_lower_bound > EPSILON, result.summary()
