"""Batched partition fits of random trees and forests (skdptune._batched.forest): diffprivlib's
RandomForestClassifier and DecisionTreeClassifier, and skdptune's (skdptune.ensemble,
skdptune.tree), which fit the same law with secure noise.

What is checked: which candidates take the batched path and which fall back; that the trees'
structure has the law of diffprivlib's ``_FittingTree.build`` (the emulation's and skdptune's
fitted trees), that the leaf mechanism has the law of its ``PermuteAndFlip``, that prediction
from given trees is exactly diffprivlib's (scikit-learn's float32 descent, vote and
tie-breaking), and that rows reach the leaves skdptune's fit sends them to; that a partition's
utility depends on its own records and stream only (replace one record: only its partition
moves); and that the batched partition utilities have the law of each class's own fits on the
same partitions.

Statistical tests use alpha = 1e-3: a test that makes several comparisons states their count
and tests each at alpha / count (Bonferroni), so every test function fails falsely with
probability at most 1e-3. Kolmogorov-Smirnov on discrete values (accuracies) is conservative.
Seeds are fixed, so a run is reproducible, except where skdptune's own forests and trees are
fitted one by one: their leaf labels come from :mod:`secrets`, which no seed reaches, so those
comparisons run at :data:`ALPHA_SECURE` (1e-5), a false failure in about one run of the suite
in 100,000 per comparison.
"""

import warnings

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.mechanisms import PermuteAndFlip
from diffprivlib.models import DecisionTreeClassifier, RandomForestClassifier
from diffprivlib.models.forest import _FittingTree
from scipy import stats

from conftest import batched_groups, batched_values, class_blobs, count_paths, per_fit_values
from skdptune import PrivateGridSearchCV
from skdptune._batched import engine, forest
from skdptune.ensemble import RandomForestClassifier as SecureForest
from skdptune.tree import DecisionTreeClassifier as SecureTree
from skdptune._models.tree import heap_tree, split_thresholds
from skdptune._utility import make_utility

ALPHA = 1e-3
#: The level of comparisons whose per-fit side draws from ``secrets`` (not reproducible).
ALPHA_SECURE = 1e-5


def _splits(n, k, validation_fraction=0.3, seed=1):
    from skdptune._partition import partition_labels, split_indices
    return split_indices(*partition_labels(n, k, validation_fraction, seed), k)


def _forest(cls=RandomForestClassifier, **params):
    return cls(**{"n_estimators": 4, "max_depth": 3, "bounds": (-1, 1), "classes": [0, 1],
                  "epsilon": 2.0, **params})


def _tree(cls=DecisionTreeClassifier, **params):
    return cls(**{"max_depth": 3, "bounds": (-1, 1), "classes": [0, 1], "epsilon": 2.0,
                  **params})


def _secure_forest(**params):
    return _forest(SecureForest, **params)


def _secure_tree(**params):
    return _tree(SecureTree, **params)


MAKERS = pytest.mark.parametrize("make", [_forest, _tree, _secure_forest, _secure_tree],
                                 ids=["forest", "tree", "secure_forest", "secure_tree"])


def _values(estimator, candidates, X, y, splits, entropy=0, n_jobs=1):
    """Per-partition utilities of the batched path, ``(n_candidates, n_partitions)``."""
    _, utility = make_utility(estimator, "accuracy", None)
    (family, ids, plans, data), = batched_groups(estimator, candidates, X, y, utility)
    assert family is forest and ids == list(range(len(candidates)))
    return batched_values(family, ids, plans, data, splits, utility, entropy, n_jobs)


def _per_fit(estimator, candidates, X, y, splits):
    _, utility = make_utility(estimator, "accuracy", None)
    return per_fit_values(estimator, candidates, X, y, splits, utility, "raise")


def _is_batched(estimator, X, y, candidates=({},)):
    _, utility = make_utility(estimator, "accuracy", None)
    groups = batched_groups(estimator, list(candidates), X, y, utility)
    return sorted(i for _, ids, _, _ in groups for i in ids)


# --- Which path ------------------------------------------------------------------------------


@pytest.fixture
def paths(monkeypatch):
    """Counts the (candidate, partition) fits that reach each path."""
    return count_paths(monkeypatch, forest)


@MAKERS
@pytest.mark.parametrize("in_pipeline", [False, True])
def test_forests_and_trees_with_accuracy_take_the_batched_path(binary_data, paths, make,
                                                                in_pipeline):
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import Binarizer
    X, y = binary_data
    estimator, grid = make(bounds=(0, 1)), {"epsilon": [0.5, 2.0]}
    if in_pipeline:
        estimator = Pipeline([("binarize", Binarizer(threshold=0.5)), ("model", estimator)])
        grid = {"model__epsilon": grid["epsilon"]}
    PrivateGridSearchCV(estimator, grid, n_partitions=4, accountant=BudgetAccountant(),
                        random_state=0, refit=False).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 2 * 4}  # 2 candidates, 4 partitions


@pytest.mark.parametrize("estimator", [
    _forest(classes=None),
    _forest(bounds=None),
    _tree(max_depth=None),                  # diffprivlib cannot fit it: error_score there
    _forest(max_depth=18),                  # too large to hold: the per-fit path's business
    _tree(max_depth=10 ** 9),               # MAX_DEPTH: no 2 ** max_depth computed
    _forest(epsilon=float("inf")),
    _forest(n_estimators=0),                # scikit-learn's constraint, as fit checks it
    _forest(classes=["a", "b"]),            # accuracy_score refuses strings against numbers
    _forest(classes=[0.5, 1.5]),            # not class labels for accuracy_score
    _forest(bounds=(1, -1)),
    type("MyForest", (RandomForestClassifier,), {})(bounds=(-1, 1), classes=[0, 1]),
    _secure_forest(classes=None),
    _secure_tree(bounds=None),
    _secure_forest(warm_start=True),        # its constraint: the fit refuses it
    type("MyForest", (SecureForest,), {})(bounds=(-1, 1), classes=[0, 1]),
], ids=["no_classes", "no_bounds", "depth_none", "too_deep", "far_too_deep", "eps_inf", "no_trees",
        "string_classes", "fractional_classes", "bad_bounds", "subclass", "secure_no_classes",
        "secure_no_bounds", "secure_warm_start", "secure_subclass"])
def test_what_the_emulation_does_not_reproduce_takes_the_per_fit_path(estimator):
    X, y = class_blobs(200)
    assert _is_batched(estimator, X, y) == []


def test_a_grid_is_split_between_the_paths():
    X, y = class_blobs(200)
    assert _is_batched(_forest(), X, y, [{"max_depth": 2}, {"max_depth": None},
                                         {"bounds": None}, {"shuffle": True}]) == [0, 3]


def test_fractional_labels_take_the_per_fit_path():
    # accuracy_score refuses continuous targets: the per-fit path's error_score, not ours.
    X, y = class_blobs(200)
    assert _is_batched(_forest(classes=[0.0, 1.0]), X, y * 1.0) == [0]
    assert _is_batched(_forest(classes=[0.0, 1.0]), X, y * 0.5) == []


# --- Each piece is diffprivlib's -------------------------------------------------------------


def _heap_of(fitting_tree):
    """(feature, threshold) of a diffprivlib ``_FittingTree`` in heap order, from its
    depth-first nodes."""
    nodes = fitting_tree.nodes
    n_internal = 2 ** fitting_tree.max_depth - 1
    feature, threshold = np.empty(n_internal, dtype=int), np.empty(n_internal)
    stack = [(0, 0)]  # (diffprivlib id, heap index)
    while stack:
        node_id, heap = stack.pop()
        node = nodes[node_id]
        if node.left_child == -1:
            assert heap >= n_internal  # a leaf, at depth max_depth exactly
            continue
        feature[heap], threshold[heap] = node.feature, node.threshold
        stack += [(node.left_child, 2 * heap + 1), (node.right_child, 2 * heap + 2)]
    return feature, threshold


def _emulated_structures(lower, upper, max_depth, n):
    candidate = forest.plan(_tree(bounds=(lower, upper), max_depth=max_depth), 3)
    rng = np.random.default_rng(0)
    draws = [forest._draw(candidate, rng, 0) for _ in range(n)]
    feature = np.stack([d[0][0] for d in draws])
    return feature, split_thresholds(lower, upper, feature, np.stack([d[1][0] for d in draws]))


def _secure_structures(lower, upper, max_depth, n):
    # One fit of n trees on one row: every tree's structure is an independent draw of the
    # class's structure source (with random_state=None, fresh OS entropy).
    model = _secure_forest(n_estimators=n, bounds=(lower, upper), max_depth=max_depth,
                           accountant=BudgetAccountant()).fit(np.zeros((1, 3)), [0])
    n_internal = 2 ** max_depth - 1
    return (np.stack([tree.tree_.feature[:n_internal] for tree in model.estimators_]),
            np.stack([tree.tree_.threshold[:n_internal] for tree in model.estimators_]))


@pytest.mark.parametrize("structures", [_emulated_structures, _secure_structures],
                         ids=["emulated", "skdptune"])
def test_tree_structures_have_diffprivlibs_law(structures):
    # Features of nodes at depth 0 and 2 (chi-square), thresholds of the root, of its left
    # child and of the right-right-left grandchild at depth 3 (KS): 5 comparisons at ALPHA / 5.
    # Per-feature bounds of different widths, so that a threshold's law shows its feature
    # and the box its ancestors leave it.
    lower, upper = np.array([-1.0, 0.0, 2.0]), np.array([1.0, 0.5, 6.0])
    max_depth, n = 4, 3000
    feature, threshold = structures(lower, upper, max_depth, n)
    state = np.random.RandomState(1)
    theirs = [_heap_of(_FittingTree(max_depth, 3, np.array([0, 1]), 1.0, (lower, upper),
                                    state).build()) for _ in range(n)]
    their_feature = np.stack([f for f, _ in theirs])
    their_threshold = np.stack([t for _, t in theirs])
    p_values = []
    for node in (0, 3):
        table = [np.bincount(feature[:, node], minlength=3),
                 np.bincount(their_feature[:, node], minlength=3)]
        p_values.append(stats.chi2_contingency(table).pvalue)
    for node in (0, 1, 13):  # 13: right, right, left of the root
        p_values.append(stats.ks_2samp(threshold[:, node], their_threshold[:, node]).pvalue)
    assert min(p_values) > ALPHA / 5, p_values
    # Every threshold lies in its feature's declared bounds.
    assert np.all((threshold >= lower[feature]) & (threshold <= upper[feature]))


@pytest.mark.parametrize("counts, epsilon", [
    ([3, 1], 1.0), ([0, 0, 0], 1.0), ([5, 2, 4], 0.5),
])
def test_leaf_labels_have_the_law_of_permute_and_flip(counts, epsilon):
    # One chi-square comparison per case at ALPHA.
    n = 6000
    mechanism = PermuteAndFlip(epsilon=epsilon, sensitivity=1, monotonic=True, utility=counts,
                               random_state=np.random.RandomState(2))
    theirs = np.bincount([mechanism.randomise() for _ in range(n)], minlength=len(counts))
    uniforms = np.random.default_rng(3).random((2, n, len(counts)))
    ours = np.bincount(forest._permute_and_flip(np.tile(np.asarray(counts, float), (n, 1)),
                                                epsilon, uniforms), minlength=len(counts))
    assert stats.chi2_contingency([ours, theirs]).pvalue > ALPHA, (ours, theirs)


def _as_diffprivlib(candidate, trees, p, n_features):
    """Partition ``p``'s emulated trees as a fitted diffprivlib model (its ``tree_`` built
    from the arrays), for scikit-learn's own ``predict``."""
    n_classes = len(candidate.classes)
    models = []
    for t in range(candidate.n_estimators):
        model = DecisionTreeClassifier(max_depth=candidate.max_depth,
                                       classes=candidate.classes)
        model.tree_ = heap_tree(trees.feature[p, t], trees.threshold[p, t],
                                trees.label[p, t], n_features, n_classes)
        model.n_outputs_ = 1
        model.classes_, model.n_classes_ = candidate.classes, n_classes
        model.n_features_in_ = n_features
        models.append(model)
    if candidate.law == "diffprivlib tree":
        return models[0]
    model = RandomForestClassifier(n_estimators=candidate.n_estimators,
                                   classes=candidate.classes)
    model.estimators_, model.estimator_ = models, models[0]
    model.classes_, model.n_classes_ = candidate.classes, n_classes
    model.n_outputs_, model.n_features_in_ = 1, n_features
    return model


@pytest.mark.parametrize("estimator", [
    _forest(n_estimators=4, classes=[0, 1, 2], max_depth=2),  # even: many tied votes
    _forest(n_estimators=5, classes=[0, 1, 2], max_depth=4, bounds=([-1, -1, 0], [1, 1, 1])),
    _tree(classes=[0, 1, 2], max_depth=5),
], ids=["forest_ties", "forest_feature_bounds", "tree"])
def test_predictions_from_given_trees_are_diffprivlibs_exactly(estimator):
    # Three classes, values outside the bounds, and roots that split at 0.1 exactly, where
    # rows of value 0.1 go left in float64 and right in float32 (0.1 rounds up).
    X, y = class_blobs(600, n_classes=3, n_features=3, shift=1.0, seed=4)
    X[:60] = 0.1
    X[60:70] *= 3
    candidate = forest.bind_labels(forest.plan(estimator, 3), np.array([0, 1, 2]))
    n_parts = 3
    part = np.arange(len(y)) % n_parts
    rngs = [np.random.default_rng(p) for p in range(n_parts)]
    trees = forest.fit_partitions(candidate, X, y, part, n_parts, rngs)
    trees.threshold[:, :, 0] = 0.1
    predicted = forest.predict_partitions(candidate, trees, X, part)
    for p in range(n_parts):
        model = _as_diffprivlib(candidate, trees, p, 3)
        np.testing.assert_array_equal(candidate.classes[predicted[part == p]],
                                      model.predict(X[part == p]))


@pytest.mark.parametrize("make", [_forest, _tree], ids=["forest", "tree"])
@pytest.mark.parametrize("bounds", [(-0.5, 0.5), ([-0.5, -0.5, -1.0], [0.1, 0.5, 0.7])],
                         ids=["scalar", "per_feature"])
def test_fitted_values_are_what_diffprivlibs_fit_compares(make, bounds):
    # A forest fits on X rounded to float32 (validate_data(dtype=float32)), a tree alone on
    # float64; both clip with clip_to_bounds, whose two branches keep different dtypes.
    from diffprivlib.validation import check_bounds, clip_to_bounds
    X, _ = class_blobs(300, n_features=3, seed=6)
    X[:20] = 0.1
    candidate = forest.plan(make(bounds=bounds), 3)
    declared = check_bounds(bounds, shape=3)
    fitted = X.astype(np.float32) if candidate.law == "diffprivlib forest" else X
    expected = clip_to_bounds(fitted, declared).astype(np.float64)
    np.testing.assert_array_equal(forest._fit_values(candidate, X), expected)


@pytest.mark.parametrize("make", [_secure_forest, _secure_tree], ids=["forest", "tree"])
def test_rows_reach_the_leaves_skdptunes_fit_sends_them_to(make):
    # skdptune's classes send a training row where scikit-learn's Tree.apply sends it (float32,
    # unclipped), which is where the emulation's descent on its fitted values sends it. At a
    # large epsilon each leaf's label is the class most counted there: every leaf with a
    # strict majority among the rows the emulation sends it (its tree's block: rows in
    # order) carries that class. Then the same descent with the roots split at 0.1, where
    # rows of value 0.1 go right in float32 (0.1 rounds up), and rows outside the bounds.
    X, y = class_blobs(400, n_features=3, seed=7)
    X[:20], X[20:40] = 0.1, X[20:40] * 3
    model = make(bounds=(-0.5, 0.5), max_depth=4, epsilon=1e3,
                 accountant=BudgetAccountant()).fit(X, y)
    trees = getattr(model, "estimators_", [model])
    n_internal, T = 2 ** 4 - 1, len(trees)
    feature = np.stack([tree.tree_.feature[:n_internal] for tree in trees])[None]
    threshold = np.stack([tree.tree_.threshold[:n_internal] for tree in trees])[None]
    candidate = forest.plan(make(bounds=(-0.5, 0.5), max_depth=4), 3)
    values = forest._fit_values(candidate, X)
    block = (np.arange(len(X)) // (len(X) / T)).astype(np.intp)
    leaf = forest._descend(feature, threshold, np.zeros(len(X), dtype=np.intp), block, values, 4)
    checked = 0
    for t, tree in enumerate(trees):
        labels = np.argmax(tree.tree_.value[n_internal:, 0], axis=1)
        counts = np.zeros((n_internal + 1, 2))
        np.add.at(counts, (leaf[block == t], y[block == t]), 1)
        strict = counts.max(axis=1) > np.sort(counts, axis=1)[:, -2]
        np.testing.assert_array_equal(labels[strict], counts.argmax(axis=1)[strict])
        checked += strict.sum()
    assert checked >= 10
    threshold[..., 0] = 0.1
    for t in range(T):
        node = heap_tree(feature[0, t], threshold[0, t], None, 3, 2).apply(X.astype(np.float32))
        descended = forest._descend(feature, threshold, np.zeros(len(X), dtype=np.intp),
                                    np.full(len(X), t), values, 4)
        np.testing.assert_array_equal(descended, node - n_internal)


def test_label_maps_count_as_diffprivlib_counts():
    # The forest counts a row by its position in classes_ compared with the class labels
    # (diffprivlib 0.6.6 hands its trees searchsorted positions, not labels); a tree alone
    # compares labels. With classes=[1, 2], a forest counts label 2 as class 1 and label 1 as
    # nothing; a tree counts both right.
    labels = np.array([1, 2])
    forest_maps = forest.bind_labels(forest.plan(_forest(classes=[1, 2]), 3), labels)
    tree_maps = forest.bind_labels(forest.plan(_tree(classes=[1, 2]), 3), labels)
    np.testing.assert_array_equal(forest_maps.count_map, [[0, 0], [1, 0]])
    np.testing.assert_array_equal(tree_maps.count_map, [[1, 0], [0, 1]])
    np.testing.assert_array_equal(forest_maps.hit_map, [[True, False], [False, True]])
    # skdptune's forest counts labels, as a tree does.
    secure_maps = forest.bind_labels(forest.plan(_secure_forest(classes=[1, 2]), 3), labels)
    np.testing.assert_array_equal(secure_maps.count_map, [[1, 0], [0, 1]])


# --- Privacy: a partition's utility is a function of its own records and stream -------------


def test_replacing_one_record_moves_only_its_partition():
    X, y = class_blobs(1200, n_classes=3, n_features=4, shift=1.5)
    splits = _splits(len(y), 12)
    estimator = _forest(n_estimators=10, max_depth=3, classes=[0, 1, 2], epsilon=20.0)
    candidates = [{}, {"shuffle": True}]
    before = _values(estimator, candidates, X, y, splits)
    candidate = forest.bind_labels(forest.plan(estimator, 4), np.array([0, 1, 2]))

    def labels(X_, y_):
        task = engine._block_task(splits, np.arange(12), y_)
        train, codes, part = task.train
        rngs = [np.random.default_rng(np.random.SeedSequence(0, spawn_key=(p, 0)))
                for p in range(12)]
        return forest.fit_partitions(candidate, X_[train], codes, part, 12, rngs).label

    trees_before, moved = labels(X, y), 0
    # A training record of each partition in turn: no other partition's trees or utilities
    # move; its own trees' leaf labels move in most partitions (few rows per leaf).
    for p in range(12):
        row, rest = splits[p][0][0], np.arange(12) != p
        X2, y2 = X.copy(), y.copy()
        X2[row], y2[row] = -X2[row], (y2[row] + 1) % 3
        np.testing.assert_array_equal(_values(estimator, candidates, X2, y2, splits)[:, rest],
                                      before[:, rest])
        trees_after = labels(X2, y2)
        np.testing.assert_array_equal(trees_after[rest], trees_before[rest])
        moved += not np.array_equal(trees_after[p], trees_before[p])
    assert moved >= 6
    # A held-out record of partition 5, given each other label: one of them changes whether
    # it is predicted right, so partition 5's utility moves, and no other.
    row, changed = splits[5][1][0], False
    for shift in (1, 2):
        y2 = y.copy()
        y2[row] = (y2[row] + shift) % 3
        after = _values(estimator, candidates, X, y2, splits)
        np.testing.assert_array_equal(after[:, np.arange(12) != 5],
                                      before[:, np.arange(12) != 5])
        changed |= bool(np.any(after[:, 5] != before[:, 5]))
    assert changed


def test_partitions_do_not_depend_on_how_they_are_cut_into_tasks(monkeypatch):
    X, y = class_blobs(900, n_classes=2, n_features=3)
    splits = _splits(len(y), 9)
    estimator, candidates = _forest(), [{"epsilon": 1.0}, {"max_depth": 2, "shuffle": True}]
    whole = _values(estimator, candidates, X, y, splits)
    monkeypatch.setattr(engine, "BLOCK_CELLS", 200)  # about one partition per block
    monkeypatch.setattr(forest, "CHUNK_CELLS", 1)     # one partition per chunk
    np.testing.assert_array_equal(_values(estimator, candidates, X, y, splits), whole)
    np.testing.assert_array_equal(_values(estimator, candidates, X, y, splits, n_jobs=2), whole)
    assert not np.array_equal(_values(estimator, candidates, X, y, splits, entropy=1), whole)


# --- Equivalence with diffprivlib's own fits -------------------------------------------------


def _compare_utilities(estimator, n_classes, n_train, repetitions, seed):
    """KS p-value of the batched against diffprivlib's per-fit utilities on one partition
    repeated (independent fits), and both means."""
    X, y = class_blobs(n_train + 300, n_classes=n_classes, n_features=3, shift=1.5, seed=seed)
    # Training rows sorted by label: which rows a tree trains on (diffprivlib deals them in
    # order) then changes what each tree sees.
    train = np.argsort(y[:n_train], kind="stable")
    splits = [(train, np.arange(n_train, n_train + 300))] * repetitions
    ours = _values(estimator, [{}], X, y, splits, entropy=seed)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _per_fit(estimator, [{}], X, y, splits)[0]
    return stats.ks_2samp(ours, theirs).pvalue, ours.mean(), theirs.mean()


@pytest.mark.parametrize("estimator, n_classes, n_train", [
    (_forest(n_estimators=3, max_depth=3, epsilon=1.0), 2, 120),
    (_tree(max_depth=3, epsilon=1.0, classes=[0, 1, 2]), 3, 120),
    # Fewer rows than trees: some trees train on nothing (random leaves).
    (_forest(n_estimators=8, max_depth=2, epsilon=3.0, classes=[0, 1, 2], shuffle=True), 3, 6),
    (_secure_forest(n_estimators=3, max_depth=3, epsilon=1.0), 2, 120),
    (_secure_tree(max_depth=3, epsilon=1.0, classes=[0, 1, 2]), 3, 120),
    (_secure_forest(n_estimators=8, max_depth=2, epsilon=3.0, classes=[0, 1, 2], shuffle=True),
     3, 6),
    # Labels declared out of order, which skdptune's forest counts as labels.
    (_secure_forest(n_estimators=4, max_depth=3, epsilon=5.0, classes=[2, 0, 1]), 3, 150),
], ids=["forest_binary", "tree_3_classes", "forest_fewer_rows_than_trees", "secure_forest_binary",
        "secure_tree_3_classes", "secure_forest_fewer_rows_than_trees",
        "secure_forest_unsorted_classes"])
def test_partition_utilities_have_diffprivlibs_law(estimator, n_classes, n_train):
    np.random.seed(5)  # diffprivlib's unseeded fits draw from numpy's global generator
    p_value, ours, theirs = _compare_utilities(estimator, n_classes, n_train, 250, seed=5)
    secure = isinstance(estimator, (SecureForest, SecureTree))
    assert p_value > (ALPHA_SECURE if secure else ALPHA), (ours, theirs)


@pytest.mark.slow_audit
@pytest.mark.parametrize("estimator, n_classes, n_train", [
    (_forest(n_estimators=10, max_depth=5, epsilon=0.5), 2, 200),
    (_forest(n_estimators=5, max_depth=4, epsilon=3.0, classes=[0, 1, 2]), 3, 300),
    (_forest(n_estimators=7, max_depth=3, epsilon=2.0, classes=[0, 1, 2], shuffle=True), 3, 50),
    (_forest(n_estimators=4, max_depth=3, epsilon=5.0, classes=[1, 0, 2]), 3, 150),
    (_forest(n_estimators=3, max_depth=2, epsilon=5.0, bounds=([-1, 0, -1], [1, 1, 0.5])), 2,
     100),
    (_tree(max_depth=6, epsilon=0.3), 2, 400),
    (_tree(max_depth=4, epsilon=2.0, classes=[0, 1, 2]), 3, 200),
    (_secure_forest(n_estimators=10, max_depth=5, epsilon=0.5), 2, 200),
    (_secure_forest(n_estimators=5, max_depth=4, epsilon=3.0, bounds=([-1, 0, -1], [1, 1, 0.5]),
                    classes=[0, 1, 2]), 3, 300),
    (_secure_tree(max_depth=6, epsilon=0.3), 2, 400),
], ids=["forest_default_depth", "forest_3", "forest_shuffle_few_rows", "forest_unsorted_classes",
        "forest_feature_bounds", "tree_deep", "tree_3", "secure_forest_default_depth",
        "secure_forest_feature_bounds", "secure_tree_deep"])
def test_partition_utilities_have_diffprivlibs_law_audit(estimator, n_classes, n_train):
    np.random.seed(n_train)
    p_value, ours, theirs = _compare_utilities(estimator, n_classes, n_train, 1500, n_train)
    secure = isinstance(estimator, (SecureForest, SecureTree))
    assert p_value > (ALPHA_SECURE if secure else ALPHA), (ours, theirs)

