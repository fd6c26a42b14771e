"""Random decision trees and forests, all partitions of a candidate in one array program.

Emulates ``fit`` (diffprivlib 0.6.6, ``models/forest.py``, and skdptune's
:class:`~skdptune.tree.DecisionTreeClassifier` and
:class:`~skdptune.ensemble.RandomForestClassifier`, which fit the same law) followed by
``predict`` and accuracy, for every partition of a block at once. The output has the law of a
fit of the candidate's class on that partition with the candidate's (already rescaled)
parameters; the noise is drawn from the partition's own stream (not a secure sampler:
partition fits are never released). What diffprivlib's ``fit`` does, step by step, and what is
done here in its place (skdptune's classes differ where the list says so, :data:`LAWS`):

``RandomForestClassifier.fit``

- ``_validate_params`` (scikit-learn's constraints on ``n_estimators``, ``n_jobs``,
  ``verbose``, ``random_state``, ``warm_start``) and the accountant's check: :func:`plan` runs
  the same validation and falls back when it fails; the accountant is a throw-away one.
- ``validate_data(dtype=float32)``: ``X`` is rounded to float32. Here: the same rounding.
- ``bounds`` (declared; None falls back) through ``check_bounds``, then ``clip_to_bounds``:
  when all lower (upper) bounds are ``allclose`` to their minimum (maximum), every feature is
  clipped to that minimum and maximum (the float32 values then become float64); otherwise per
  feature, into the float32 array. Here: the same branch and dtypes (:func:`_fit_values`).
  skdptune's classes clip each feature to its bounds in float64, then round to float32, and
  send every row where scikit-learn's ``Tree.apply`` sends those values (the tree too).
- ``classes`` (declared; None falls back) raveled into ``classes_``; ``y`` becomes
  ``np.searchsorted(classes_, y)`` as float64, and each tree is given those *positions* with
  ``classes`` as its labels, so a tree's count of class ``i`` is the number of its rows whose
  position equals ``classes_[i]``: right when ``classes`` is ``0 .. C - 1``, something else
  otherwise (with ``classes=[1, 2]`` a class-1 row counts for neither class, a class-2 row for
  class 1). Here: the same per-label arithmetic, once per distinct label
  (:func:`bind_labels`: ``count_map``), so each row counts as diffprivlib counts it.
  skdptune's forest counts labels, as a tree alone does.
- ``n_estimators`` trees, each with the forest's ``epsilon``, ``bounds``, ``classes`` and
  ``max_depth`` (``estimator_params``) and its own seed drawn from ``random_state``. Here: the
  partition's stream draws all of them (skdptune's forest draws the structure from one source
  and the labels from another).
- Rows split between trees: ``tree = position // (n / n_estimators)`` in float64, over the
  rows in order, or over ``random_state.permutation(n)`` when ``shuffle``: disjoint subsets,
  each row in exactly one tree (so every tree spends the full ``epsilon`` on its own rows:
  parallel composition). Here: the same formula on each row's position in its partition (rows
  arrive in the order of the partition's fit), and the stream's permutation when ``shuffle``.
  A tree with no rows (fewer rows than trees) gets random leaves, as there.

``DecisionTreeClassifier.fit`` (a forest's trees, or a tree on its own)

- On its own: ``validate_data`` without a dtype (``X`` stays float64), ``bounds``, clip and
  ``classes_`` as above; a row of label ``l`` counts for class ``i`` when ``l == classes_[i]``.
- ``_FittingTree.build``: a complete binary tree of depth ``max_depth``, built from the public
  bounds only. Each internal node draws ``feature = randint(n_features)`` and ``threshold =
  uniform(lower[feature], upper[feature])`` within the node's box (the declared bounds
  narrowed by its ancestors' thresholds: a left child's upper bound and a right child's lower
  bound on the parent's feature become the parent's threshold); nodes at depth ``max_depth``
  are leaves. Here: the same draws, level by level, in heap order (node ``i`` has children
  ``2 i + 1`` and ``2 i + 2``; diffprivlib numbers nodes depth-first, which changes no law:
  every node's draws are independent given its box), by
  :func:`skdptune.tree.split_thresholds`, which skdptune's classes fit with.
- ``_FittingTree.fit``: each row descends (``x[feature] <= threshold`` goes left) to a leaf;
  per leaf, ``PermuteAndFlip(epsilon, sensitivity=1, monotonic=True)`` on the class counts
  (a record is in one leaf of one tree and changes one count by one) picks the leaf's label;
  a leaf no row reached gets ``randint(n_classes)`` (skdptune's: the same mechanism on counts
  0, a uniform label too). Here: one vectorised descent of all rows,
  a ``bincount`` per (partition, tree, leaf, label), the counts through ``count_map``, and
  permute-and-flip by its definition, for every leaf at once: a uniformly random order of the
  classes (the order of i.i.d. uniform keys) and the first class accepted, class ``i`` being
  accepted with probability ``exp(epsilon * (count_i - max count))``. An empty leaf's counts
  are all 0, which makes that a uniform draw: the law of ``randint(n_classes)``.

``predict`` and accuracy

- scikit-learn converts ``X`` to float32 (no clipping) and descends each tree;
  a tree's ``predict_proba`` is its leaf's one-hot label; the forest averages them and
  predicts ``classes_[argmax]`` (the first of tied classes in ``classes_`` order); a tree
  alone predicts its leaf's label. Here: the same descent on float32 values, votes per class,
  the first maximum. A prediction is right when ``classes_[i] == label`` (``hit_map``), as
  ``accuracy_score`` compares them.

Not reproduced, so the per-fit path takes it (:func:`plan` or :func:`bind_labels` returns
None): ``bounds`` or ``classes`` left to the data, ``max_depth=None`` (which diffprivlib cannot
fit), a non-finite epsilon, structures too large to hold per partition, labels of another kind
than ``classes`` (strings against numbers) or that are not class labels for
``accuracy_score``. ``random_state``, ``n_jobs``, ``verbose`` and ``warm_start`` (a clone has no
trees yet) do not change the law of a partition's fit and are not read. A seeded candidate's
partition fits use the partition's stream instead of the seed: the same law for each
partition, not the same draw.

Every quantity of a partition is a function of its own rows, the public parameters and its own
stream: the structures are drawn from the stream alone, the counts from the partition's rows,
and nothing is computed across partitions from data (the block's arrays only stack them). The
label maps are per label (a row's contribution depends on its own label and the public
``classes``), whatever other labels occur.
"""

from dataclasses import dataclass, replace
from numbers import Integral

import numpy as np
from diffprivlib.models import DecisionTreeClassifier, RandomForestClassifier
from sklearn.utils.multiclass import type_of_target

from .._models.ensemble import RandomForestClassifier as SecureRandomForestClassifier
from .._models.tree import DecisionTreeClassifier as SecureDecisionTreeClassifier
from .._models.tree import split_thresholds
from .._validation import positive_finite
from .common import comparable_labels, declared_bounds
from .contract import ACCURACY, CODES

#: The family's per-partition score and what it reads of ``y`` (the family contract,
#: :class:`~skdptune._batched.contract.Family`): accuracy, from label codes.
SCORE, TARGET = ACCURACY, CODES

#: Above this many labels (in ``y`` or declared) the per-leaf arrays stop being cheap.
MAX_CLASSES = 64

#: Deeper trees (``2 ** max_depth`` leaves each) take the per-fit path.
MAX_DEPTH = 24

#: Cells (trees x leaves x classes) one partition's fit may hold; above, the per-fit path.
MAX_CELLS_PER_PARTITION = 2 ** 22

#: Cells a block holds at once: partitions are processed in chunks of about this size.
CHUNK_CELLS = 2 ** 22


#: Estimator class (matched exactly) -> its law's name. The three fit the same mechanism and
#: differ in what their trees compare and count (the module docstring): ``"diffprivlib
#: forest"`` fits float32 values clipped by diffprivlib's ``clip_to_bounds`` and counts
#: positions in ``classes_``; ``"diffprivlib tree"`` fits float64 values so clipped and counts
#: labels; ``"skdptune"`` fits float64 values clipped per feature, then rounded to float32
#: (scikit-learn's ``Tree.apply``), and counts labels.
LAWS = {
    RandomForestClassifier: "diffprivlib forest",
    DecisionTreeClassifier: "diffprivlib tree",
    SecureRandomForestClassifier: "skdptune",
    SecureDecisionTreeClassifier: "skdptune",
}


@dataclass(frozen=True)
class ForestPlan:
    """What a partition fit of one candidate needs: public parameters only.

    Attributes
    ----------
    epsilon : float
        The candidate's (partition-scaled) ``epsilon``; every tree spends it on its own rows.
    lower, upper : ndarray of shape (n_features,)
        The declared bounds, as diffprivlib's ``check_bounds`` expands them.
    n_estimators : int
        Trees; 1 for a ``DecisionTreeClassifier``.
    max_depth : int
    shuffle : bool
        Rows dealt to trees in a random order (a forest's ``shuffle``).
    law : str
        Whose fit: a key of :data:`LAWS`, which says how it compares rows and counts labels.
    classes : ndarray of shape (n_declared,)
        ``np.ravel(classes)``: the model's ``classes_``.
    count_map, hit_map : ndarray of shape (n_labels, n_declared) or None
        Set by :func:`bind_labels`: whether a training row of each label (in ``np.unique``
        order) counts for each declared class, and whether predicting that class is right for
        a held-out row of that label.
    """

    epsilon: float
    lower: np.ndarray
    upper: np.ndarray
    n_estimators: int
    max_depth: int
    shuffle: bool
    law: str
    classes: np.ndarray
    count_map: np.ndarray = None
    hit_map: np.ndarray = None

    @property
    def n_internal(self):
        """Internal nodes of a tree (complete, depth ``max_depth``)."""
        return 2 ** self.max_depth - 1

    @property
    def n_leaves(self):
        """Leaves of a tree."""
        return 2 ** self.max_depth


def plan(estimator, n_features):
    """The :class:`ForestPlan` of a configured forest or tree of :data:`LAWS`, or None to fall
    back.

    Decided from the parameters and the number of features only: what this emulation does not
    reproduce (see the module docstring) goes to the per-fit path, which gives it the behaviour
    of a real fit (``error_score`` included).

    Parameters
    ----------
    estimator : RandomForestClassifier or DecisionTreeClassifier
        The candidate (diffprivlib's or skdptune's), its parameters set.
    n_features : int or None
        Columns of ``X``; None before the data (the forecast): the width the bounds declare.

    Returns
    -------
    plan : ForestPlan or None
    """
    law = LAWS.get(type(estimator))
    if law is None:
        return None
    params = estimator.get_params(deep=False)
    epsilon, bounds, classes = params.get("epsilon"), params.get("bounds"), params.get("classes")
    max_depth = params.get("max_depth")
    n_estimators = params.get("n_estimators", 1)
    if bounds is None or classes is None:
        return None  # read from the data by diffprivlib (a leak the refit gate refuses)
    if not positive_finite(epsilon):
        return None
    for value in (max_depth, n_estimators):
        if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
            return None
    if max_depth > MAX_DEPTH:
        return None  # 2 ** max_depth leaves per tree: not even worth computing the size
    try:
        estimator._validate_params()  # scikit-learn's own constraints, as fit checks them
        classes = np.ravel(classes)
    except Exception:  # noqa: BLE001 - whatever the real fit would make of it
        return None
    declared = declared_bounds(bounds, n_features)
    if declared is None:
        return None
    lower, upper = declared
    # Class labels accuracy_score takes (no object arrays, no fractional floats), not too many.
    if (classes.dtype.kind not in "biufU" or not 0 < len(classes) <= MAX_CLASSES
            or type_of_target(classes) not in ("binary", "multiclass")):
        return None
    if int(n_estimators) * 2 ** int(max_depth) * (3 * len(classes)) > MAX_CELLS_PER_PARTITION:
        return None  # the per-fit path (a Python loop per node) is no faster, but bounded
    return ForestPlan(float(epsilon), lower, upper, int(n_estimators), int(max_depth),
                      bool(params.get("shuffle", False)), law, classes)


def bind_labels(candidate, labels):
    """``candidate`` with the label maps of ``labels`` (the sorted distinct labels of ``y``),
    or None to fall back.

    Each map's row is a function of one label and the public ``classes`` only, computed with
    the same numpy operations diffprivlib and ``accuracy_score`` apply to that label: a
    record's contribution to its partition's counts and score depends on its own label.

    Parameters
    ----------
    candidate : ForestPlan
    labels : ndarray of shape (n_labels,)

    Returns
    -------
    plan : ForestPlan or None
    """
    classes = candidate.classes
    if not comparable_labels(labels, classes):
        return None  # accuracy_score refuses a mix of strings and numbers: per-fit path
    if (len(labels) > MAX_CLASSES or len(labels) * candidate.n_estimators * candidate.n_leaves
            > MAX_CELLS_PER_PARTITION):
        return None
    try:
        with np.errstate(all="ignore"):
            # What each tree compares its rows' y with: diffprivlib's forest's searchsorted
            # positions (float64, as it hands them to its trees), or the labels themselves.
            fitted = (np.searchsorted(classes, labels).astype(np.float64)
                      if candidate.law == "diffprivlib forest" else labels)
            count_map = np.stack([np.asarray(fitted == label) for label in classes], axis=1)
            hit_map = np.stack([np.asarray(labels == label) for label in classes], axis=1)
    except Exception:  # noqa: BLE001 - comparisons numpy refuses: left to the real fit
        return None
    shape = (len(labels), len(classes))
    if count_map.shape != shape or hit_map.shape != shape:
        return None
    return replace(candidate, count_map=count_map.astype(np.float64), hit_map=hit_map)


def partition_scores(plans, block, rngs):
    """Accuracy of every plan's fit on every partition of a block (the family contract,
    :meth:`~skdptune._batched.contract.Family.partition_scores`). The plans are bound to the
    labels (:func:`bind_labels`); a partition's training rows arrive in the order of its fit
    (they decide which tree a row trains)."""
    result = np.empty((len(plans), block.n_parts))
    for j, candidate in enumerate(plans):
        if candidate.count_map is None:
            raise ValueError("the plan is not bound to the labels (bind_labels)")
        trees = fit_partitions(candidate, block.X_train, block.y_train, block.part_train,
                               block.n_parts, rngs[j])
        predicted = predict_partitions(candidate, trees, block.X_val, block.part_val)
        result[j] = block.accuracy(candidate.hit_map[block.y_val, predicted])
    return result


@dataclass
class Trees:
    """The fitted trees of every partition of a block, in heap layout.

    Attributes
    ----------
    feature, threshold : ndarray of shape (n_parts, n_estimators, n_internal)
        Split of each internal node (node ``i`` has children ``2 i + 1``, ``2 i + 2``).
    label : ndarray of shape (n_parts, n_estimators, n_leaves)
        Position in ``classes_`` of each leaf's label.
    """

    feature: np.ndarray
    threshold: np.ndarray
    label: np.ndarray


def fit_partitions(candidate, X_train, y_train, part_train, n_parts, rngs):
    """The emulated trees of one plan on every partition of a block.

    Parameters
    ----------
    candidate : ForestPlan
        Bound to the labels.
    X_train, y_train, part_train, n_parts
        A block's training rows, label codes (the rows of the maps) and partitions (as
        :class:`~skdptune._batched.contract.Block`).
    rngs : list of numpy.random.Generator
        One stream per partition.

    Returns
    -------
    trees : Trees
    """
    values = _fit_values(candidate, X_train)
    n_train = np.bincount(part_train, minlength=n_parts)
    # The rows of each partition together, in their order: a chunk is a slice of them.
    by_part = np.argsort(part_train, kind="stable")
    starts = np.r_[0, np.cumsum(n_train)]
    position = np.arange(len(part_train)) - starts[part_train[by_part]]
    T, leaves = candidate.n_estimators, candidate.n_leaves
    n_labels, n_declared = candidate.count_map.shape
    per_part = T * leaves * (2 * n_declared + n_labels)
    feature = np.empty((n_parts, T, candidate.n_internal), dtype=np.intp)
    threshold = np.empty((n_parts, T, candidate.n_internal))
    label = np.empty((n_parts, T, leaves), dtype=np.intp)
    # Chunks of partitions bound the memory of the per-leaf arrays; each partition's draws
    # come from its own stream in a fixed layout, so chunking changes nothing.
    size = max(1, CHUNK_CELLS // per_part)
    for start in range(0, n_parts, size):
        chunk = np.arange(start, min(n_parts, start + size))
        draws = [_draw(candidate, rngs[p], n_train[p]) for p in chunk]
        f = np.stack([d[0] for d in draws])
        feature[chunk] = f
        threshold[chunk] = split_thresholds(candidate.lower, candidate.upper, f,
                                            np.stack([d[1] for d in draws]))
        in_chunk = slice(starts[chunk[0]], starts[chunk[-1] + 1])
        rows, local = by_part[in_chunk], part_train[by_part[in_chunk]] - chunk[0]
        # Tree of each row: diffprivlib's float formula on its position (or its place in the
        # partition's permutation), with the partition's own row count.
        order = position[in_chunk]
        if candidate.shuffle:  # row j trains tree permutation[j] // (n / n_estimators)
            offsets = np.r_[0, np.cumsum(n_train[chunk])[:-1]]
            order = np.concatenate([d[3] for d in draws])[offsets[local] + order]
        tree = (order // (n_train[part_train[rows]] / T)).astype(np.intp)
        leaf = _descend(feature[chunk], threshold[chunk], local, tree, values[rows],
                        candidate.max_depth)
        counts = np.bincount(((local * T + tree) * leaves + leaf) * n_labels + y_train[rows],
                             minlength=len(chunk) * T * leaves * n_labels)
        counts = counts.reshape(len(chunk), T, leaves, n_labels) @ candidate.count_map
        label[chunk] = _permute_and_flip(counts, candidate.epsilon,
                                         np.stack([d[2] for d in draws], axis=1))
    return Trees(feature, threshold, label)


def predict_partitions(candidate, trees, X, part):
    """Position in ``classes_`` that each row's partition's model predicts.

    Every tree of the row's partition votes its leaf's label; the first of the most voted
    classes wins (scikit-learn's argmax of the averaged one-hot probabilities).

    Parameters
    ----------
    candidate : ForestPlan
    trees : Trees
    X : ndarray of shape (n_rows, n_features)
    part : ndarray of shape (n_rows,), int

    Returns
    -------
    predicted : ndarray of shape (n_rows,), int
    """
    n_declared, T = len(candidate.classes), candidate.n_estimators
    values = X.astype(np.float32).astype(np.float64)  # scikit-learn predicts on float32
    votes = np.zeros(len(X) * n_declared)
    row = np.arange(len(X))
    for t in range(T):
        leaf = _descend(trees.feature, trees.threshold, part, np.full(len(X), t), values,
                        candidate.max_depth)
        votes += np.bincount(row * n_declared + trees.label[part, t, leaf],
                             minlength=len(X) * n_declared)
    return np.argmax(votes.reshape(len(X), n_declared), axis=1)


def _fit_values(candidate, X):
    """The values a fit compares with thresholds: ``X`` in the fit's dtype, clipped as
    diffprivlib's ``clip_to_bounds`` clips it (both of its branches), or, for skdptune's
    classes, clipped per feature and then rounded to float32 (what ``Tree.apply`` compares,
    ``skdptune._models.tree.prepare_fit``)."""
    lower, upper = candidate.lower, candidate.upper
    if candidate.law == "skdptune":
        return np.clip(X, lower, upper).astype(np.float32).astype(np.float64)
    X = X.astype(np.float32) if candidate.law == "diffprivlib forest" else X
    if np.allclose(lower, np.min(lower)) and np.allclose(upper, np.max(upper)):
        # np.clip with float64 scalars: a float32 array becomes float64.
        return np.clip(X, np.min(lower), np.max(upper)).astype(np.float64)
    clipped = X.copy()
    for f in range(X.shape[1]):
        clipped[:, f] = np.clip(X[:, f], lower[f], upper[f])  # cast back into X's dtype
    return clipped.astype(np.float64)


def _draw(candidate, rng, n_rows):
    """One partition's draws, in a fixed layout: features, threshold uniforms, leaf
    uniforms (order keys and acceptances), and the row permutation when ``shuffle``."""
    T, n_declared = candidate.n_estimators, len(candidate.classes)
    feature = rng.integers(0, len(candidate.lower), size=(T, candidate.n_internal))
    uniforms = rng.random((T, candidate.n_internal))
    leaf_uniforms = rng.random((2, T, candidate.n_leaves, n_declared))
    permutation = rng.permutation(n_rows) if candidate.shuffle else None
    return feature, uniforms, leaf_uniforms, permutation


def _descend(feature, threshold, part, tree, values, max_depth):
    """Leaf (0 .. 2 ** max_depth - 1) each row reaches in tree ``tree[i]`` of partition
    ``part[i]``: left when ``value <= threshold``, as diffprivlib and scikit-learn test."""
    n_internal = feature.shape[2]
    base = (part * feature.shape[1] + tree) * n_internal
    flat_feature, flat_threshold = feature.reshape(-1), threshold.reshape(-1)
    node = np.zeros(len(part), dtype=np.intp)
    row = np.arange(len(part))
    for _ in range(max_depth):
        at = base + node
        right = values[row, flat_feature[at]] > flat_threshold[at]
        node = 2 * node + 1 + right
    return node - n_internal


def _permute_and_flip(counts, epsilon, uniforms):
    """diffprivlib's ``PermuteAndFlip(epsilon, sensitivity=1, monotonic=True)`` on the last
    axis of ``counts``: visit the classes in a uniformly random order (the order of the keys
    ``uniforms[0]``) and return the first accepted, class ``i`` being accepted with
    probability ``exp(epsilon * (counts_i - max counts))`` (``uniforms[1]`` below it). The
    most counted class is always accepted, so every leaf gets a label."""
    keys, accept = uniforms[0], uniforms[1]
    # monotonic=True: scale epsilon / sensitivity / (2 - 1).
    accepted = accept < np.exp(epsilon * (counts - counts.max(axis=-1, keepdims=True)))
    return np.argmin(np.where(accepted, keys, np.inf), axis=-1)
