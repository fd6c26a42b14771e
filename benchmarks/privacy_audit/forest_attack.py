"""Released forests and trees, before and after (issue 34, items 1 and 2).

Before: diffprivlib 0.6.6's ``RandomForestClassifier`` and ``DecisionTreeClassifier``, as the
refit gate released them until then. After: ``skdptune.ensemble.RandomForestClassifier`` and
``skdptune.tree.DecisionTreeClassifier``, which the gate releases now. Both are run here, in
one checkout (diffprivlib's classes are still importable).

1. The reproduction attack on a released forest. The attacker knows every record but record
   0's label, and refits every tree from what the released model carries (``clone`` keeps
   each tree's parameters, its ``random_state`` included) on the tree's block of the data,
   under each candidate label; a candidate is consistent when every refitted tree equals the
   released one (thresholds and leaf values). Printed: the share of fits in which exactly one
   candidate, the true label, is consistent (the label named with certainty) and the share in
   which the true label is consistent at all. Data: ``n`` uniform rows of 2 features in
   ``[0, 1]``, labels uniform in ``{0, 1}``, ``bounds=(0, 1)``, ``epsilon=1``.
2. Empty leaves of a tree fitted on its own (``random_state=None``) after ``np.random.seed(11)``
   in the user's program: one row at 0.5, depth 6 (63 empty leaves). Printed: the share of
   pairs of fits, each after the same seed, that give the same tree (splits, and labels of
   the empty leaves), and whether a fit changes numpy's global generator state.

Run from the repository root::

    PYTHONPATH=. python benchmarks/privacy_audit/forest_attack.py [n_fits]

Prints a Markdown table (under a minute for 200 fits per row).
"""

import sys
import warnings

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import DecisionTreeClassifier as DPTree
from diffprivlib.models import RandomForestClassifier as DPForest
from sklearn.base import clone

from skdptune.ensemble import RandomForestClassifier
from skdptune.tree import DecisionTreeClassifier

warnings.simplefilter("ignore")
N_FITS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
#: (records, trees, depth) of the attack's settings; the last is diffprivlib's default forest.
SETTINGS = [(20, 2, 3), (100, 3, 4), (200, 10, 5)]


def _same_tree(a, b):
    return (np.array_equal(a.tree_.threshold, b.tree_.threshold)
            and np.array_equal(a.tree_.value, b.tree_.value))


def _consistent(forest, X, y):
    """Per candidate label of record 0: whether refitting every tree from the released model
    reproduces it."""
    trees = forest.estimators_
    block = (np.arange(len(X)) // (len(X) / len(trees))).astype(int)
    values = X.astype(np.float32)
    result = []
    for label in forest.classes_:
        candidate = y.copy()
        candidate[0] = label
        # diffprivlib's forest hands its trees the labels' positions (float64); skdptune's,
        # the labels.
        fitted = (candidate if isinstance(forest, RandomForestClassifier)
                  else np.searchsorted(forest.classes_, candidate).astype(np.float64))
        result.append(all(
            _same_tree(clone(tree).set_params(accountant=BudgetAccountant()).fit(
                values[block == t], fitted[block == t]), tree)
            for t, tree in enumerate(trees)))
    return result


def attack(forest_class, n, n_trees, depth, rng):
    named = true_consistent = 0
    for _ in range(N_FITS):
        X, y = rng.random((n, 2)), rng.integers(0, 2, n)
        forest = forest_class(n_estimators=n_trees, max_depth=depth, epsilon=1.0,
                              bounds=(0.0, 1.0), classes=[0, 1],
                              accountant=BudgetAccountant()).fit(X, y)
        consistent = _consistent(forest, X, y)
        named += consistent == [label == y[0] for label in (0, 1)]
        true_consistent += consistent[y[0]]
    return named / N_FITS, true_consistent / N_FITS


def empty_leaves(tree_class):
    X, y = np.full((1, 2), 0.5), np.array([1])
    repeated, moved = 0, False
    for _ in range(N_FITS):
        pair = []
        for _ in range(2):
            np.random.seed(11)
            state = np.random.get_state()[1].copy()
            tree = tree_class(max_depth=6, bounds=(0.0, 1.0), classes=[0, 1],
                              accountant=BudgetAccountant()).fit(X, y).tree_
            moved |= not np.array_equal(state, np.random.get_state()[1])
            pair.append(tree)
        empty = np.ones(pair[0].node_count, dtype=bool)
        empty[pair[0].apply(X.astype(np.float32))] = False
        # Only comparable where the two structures agree (always for diffprivlib after the
        # same seed; never for skdptune, whose structure comes from fresh entropy).
        repeated += (np.array_equal(pair[0].threshold, pair[1].threshold)
                     and np.array_equal(pair[0].value[empty], pair[1].value[empty]))
    return repeated / N_FITS, moved


def main():
    rng = np.random.default_rng(0)
    np.random.seed(0)  # diffprivlib's unseeded forest seeds its trees from numpy's generator
    print(f"{N_FITS} fits per cell.\n")
    print("| case | before: diffprivlib 0.6.6 | after: skdptune |")
    print("|---|---|---|")
    for n, n_trees, depth in SETTINGS:
        cells = []
        for forest_class in (DPForest, RandomForestClassifier):
            named, consistent = attack(forest_class, n, n_trees, depth, rng)
            cells.append(f"label named with certainty in {named:.0%} of fits; true label "
                         f"consistent in {consistent:.0%}")
        print(f"| forest attack, n={n}, {n_trees} trees, depth {depth} | {cells[0]} | "
              f"{cells[1]} |")
    cells = []
    for tree_class in (DPTree, DecisionTreeClassifier):
        repeated, moved = empty_leaves(tree_class)
        cells.append(f"the same splits and empty-leaf labels after the same seed in "
                     f"{repeated:.0%} of pairs; numpy's global state "
                     f"{'moved' if moved else 'untouched'}")
    print(f"| tree alone, np.random.seed(11) before each fit | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
