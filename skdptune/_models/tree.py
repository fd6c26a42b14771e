"""A differentially private decision tree whose noise is secure and whose structure is public.

diffprivlib 0.6.6's ``DecisionTreeClassifier`` (Fletcher & Islam's random decision trees) draws
its splits from the declared bounds alone and labels each leaf with permute-and-flip on the
leaf's class counts. It draws both from one generator: a seeded one inside a forest (the seed
is kept in the released model, and can be recovered from the released thresholds, so refitting
reproduces the labels), and numpy's global generator for the labels of empty leaves when a tree
is fitted on its own. :class:`DecisionTreeClassifier` here fits the same law with the public
structure and the data-dependent labels drawn from separate sources, the labels from a secure
one; :class:`skdptune.ensemble.RandomForestClassifier` grows its trees with the same functions.
"""

from numbers import Integral, Real

import numpy as np
from diffprivlib.mechanisms import PermuteAndFlip
from diffprivlib.models import DecisionTreeClassifier as DPDecisionTreeClassifier

from .._clipping import validate_clippable
from .._sklearn_compat import NODE_DTYPE, Interval, Tree
from .base import accountant_of, random_sources, start_fit
from .facts import ModelFacts

# scikit-learn's marks in a Tree's nodes: a leaf has no children and no split.
_LEAF, _UNDEFINED = -1, -2

#: What a tree's or a forest's fit needs declared (``skdptune._models.base.start_fit``): the
#: splits are drawn from the bounds, the leaves count the classes.
DECLARED = ("bounds", "classes")


def split_thresholds(lower, upper, feature, uniforms):
    """The thresholds of random splits, level by level, in heap order.

    Node ``i`` has children ``2 i + 1`` (``x[feature] <= threshold``) and ``2 i + 2``. Each
    node's threshold is ``uniform(low, high)`` of its box on its feature (``low + (high - low)
    * u``, as numpy's ``RandomState.uniform``): the declared bounds narrowed by the ancestors
    that split on the same feature (a left child's upper bound and a right child's lower bound
    become the parent's threshold). diffprivlib 0.6.6's ``_FittingTree.build`` draws the same
    law, node by node depth first.

    Parameters
    ----------
    lower, upper : ndarray of shape (n_features,)
        The declared bounds.
    feature : ndarray of int, shape (..., 2 ** max_depth - 1)
        The feature of every internal node (uniform over the features).
    uniforms : ndarray of shape feature.shape
        Independent uniforms on ``[0, 1)``, one per node.

    Returns
    -------
    threshold : ndarray of shape feature.shape
    """
    threshold = np.empty(feature.shape)
    max_depth = int(feature.shape[-1] + 1).bit_length() - 1
    for depth in range(max_depth):
        nodes = np.arange(2 ** depth - 1, 2 ** (depth + 1) - 1)
        f = feature[..., nodes]
        low, high = lower[f], upper[f]
        child = nodes
        for _ in range(depth):
            parent = (child - 1) // 2
            same = feature[..., parent] == f
            parent_threshold = threshold[..., parent]
            went_right = (child % 2 == 0)
            low = np.where(same & went_right, np.maximum(low, parent_threshold), low)
            high = np.where(same & ~went_right, np.minimum(high, parent_threshold), high)
            child = parent
        threshold[..., nodes] = low + (high - low) * uniforms[..., nodes]
    return threshold


def heap_tree(feature, threshold, labels, n_features, n_classes):
    """A scikit-learn ``Tree`` of a complete binary tree in heap order.

    Parameters
    ----------
    feature, threshold : ndarray of shape (2 ** max_depth - 1,)
        The internal nodes' splits.
    labels : ndarray of int, shape (2 ** max_depth,), or None
        Each leaf's label, a position in ``classes_``; None: no label yet (every value 0),
        for :meth:`Tree.apply` only.
    n_features, n_classes : int

    Returns
    -------
    tree : sklearn.tree._tree.Tree
        Internal nodes carry their split, leaves a one-hot value (the label), every node an
        impurity and sample counts of 0: nothing but the structure and the labels.
    """
    n_internal = len(feature)
    n_nodes = 2 * n_internal + 1
    nodes = np.zeros(n_nodes, dtype=NODE_DTYPE)  # impurity, counts, missing_go_to_left: 0
    nodes["left_child"], nodes["right_child"] = _LEAF, _LEAF
    nodes["feature"], nodes["threshold"] = _UNDEFINED, _UNDEFINED
    inner = np.arange(n_internal)
    nodes["left_child"][inner], nodes["right_child"][inner] = 2 * inner + 1, 2 * inner + 2
    nodes["feature"][inner], nodes["threshold"][inner] = feature, threshold
    values = np.zeros((n_nodes, 1, n_classes))
    if labels is not None:
        values[n_internal + np.arange(n_internal + 1), 0, labels] = 1.0
    tree = Tree(n_features, np.array([n_classes], dtype=np.intp), 1)
    tree.__setstate__({"max_depth": n_internal.bit_length(), "node_count": n_nodes,
                       "nodes": nodes, "values": values})
    return tree


def grow_trees(X, y, block, n_trees, bounds, classes, max_depth, epsilon, structure, noise):
    """Random trees on disjoint blocks of the rows, labelled by permute-and-flip.

    Privacy (one record; the structure is public): every row of block ``t`` reaches exactly
    one leaf of tree ``t`` (scikit-learn's ``Tree.apply``, the comparisons ``predict`` makes),
    so one record is in one count vector, and adding or removing it moves one entry of it by
    one: sensitivity 1, monotone. Each leaf's label is ``PermuteAndFlip(epsilon,
    sensitivity=1, monotonic=True)`` on its counts, ``epsilon``-DP under add-or-remove; leaves
    and blocks hold disjoint records (parallel composition). A leaf no row reaches has counts
    0, and the same mechanism draws its label uniformly. Replace-one costs twice that
    (:func:`tree_charge`).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32
    y : ndarray of shape (n_samples,)
    block : ndarray of int, shape (n_samples,)
        The tree each row trains, ``0 .. n_trees - 1`` (decided from positions and the
        structure source only).
    n_trees : int
    bounds : (ndarray, ndarray)
        The declared ``(lower, upper)``, one value per feature.
    classes : ndarray of shape (n_classes,)
        The declared classes: a row counts for class ``i`` when its label equals
        ``classes[i]`` (a label that is not declared counts for none).
    max_depth : int
    epsilon : float
    structure : numpy.random.Generator
        The structure source of ``skdptune._models.base.random_sources``.
    noise : None or numpy.random.RandomState
        The noise source of ``skdptune._models.base.random_sources``.

    Returns
    -------
    trees : list of sklearn.tree._tree.Tree
    """
    feature, threshold = tree_splits(structure, n_trees, X.shape[1], bounds, max_depth)
    counts = leaf_counts(X, y, block, feature, threshold, classes)
    return labelled_trees(counts, feature, threshold, epsilon, noise, X.shape[1])


def tree_splits(structure, n_trees, n_features, bounds, max_depth):
    """Every tree's internal splits, in heap order: public, drawn from the structure source
    and the declared bounds alone (:func:`split_thresholds`).

    Returns
    -------
    feature : ndarray of int, shape (n_trees, 2 ** max_depth - 1)
    threshold : ndarray of shape (n_trees, 2 ** max_depth - 1)
    """
    lower, upper = bounds
    feature = structure.integers(0, n_features, size=(n_trees, 2 ** max_depth - 1))
    return feature, split_thresholds(lower, upper, feature, structure.random(feature.shape))


def leaf_counts(X, y, block, feature, threshold, classes):
    """Each tree's leaves' class counts over its block's rows (no noise; summable over any
    split of the rows, so a fit on dask input adds the chunks' counts:
    ``skdptune._distributed``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32
        Clipped to the bounds.
    y : ndarray of shape (n_samples,)
    block : ndarray of int, shape (n_samples,)
        The tree each row trains.
    feature, threshold : ndarray of shape (n_trees, 2 ** max_depth - 1)
        :func:`tree_splits`.
    classes : ndarray of shape (n_classes,)

    Returns
    -------
    counts : ndarray of int, shape (n_trees, 2 ** max_depth, n_classes)
    """
    n_trees, n_leaves, n_classes = len(feature), feature.shape[1] + 1, len(classes)
    member = np.stack([np.asarray(y == label, dtype=bool) for label in classes], axis=1)
    counts = np.zeros((n_trees, n_leaves, n_classes), dtype=np.intp)
    for t in range(n_trees):
        rows = block == t
        leaf = heap_tree(feature[t], threshold[t], None, X.shape[1], n_classes).apply(
            X[rows]) - (n_leaves - 1)
        for i in range(n_classes):
            counts[t, :, i] = np.bincount(leaf[member[rows, i]], minlength=n_leaves)
    return counts


def labelled_trees(counts, feature, threshold, epsilon, noise, n_features):
    """The trees with a label per leaf by ``PermuteAndFlip`` on its counts (see
    :func:`grow_trees` for the privacy).

    Parameters
    ----------
    counts : ndarray of shape (n_trees, n_leaves, n_classes)
        :func:`leaf_counts`.
    feature, threshold : ndarray of shape (n_trees, n_leaves - 1)
    epsilon : float
    noise : None or numpy.random.RandomState
        The noise source of ``skdptune._models.base.random_sources``.
    n_features : int

    Returns
    -------
    trees : list of sklearn.tree._tree.Tree
    """
    n_trees, n_leaves, n_classes = counts.shape
    mechanisms, trees = {}, []
    for t in range(n_trees):
        labels = np.empty(n_leaves, dtype=np.intp)
        for j, count in enumerate(map(tuple, counts[t].tolist())):
            # The leaf's label: PermuteAndFlip(epsilon, sensitivity 1, monotonic) on its class
            # counts; each call to randomise draws afresh, so leaves with equal counts share
            # one mechanism.
            if count not in mechanisms:
                mechanisms[count] = PermuteAndFlip(
                    epsilon=epsilon, sensitivity=1, monotonic=True, utility=list(count),
                    random_state=noise)
            labels[j] = mechanisms[count].randomise()
        trees.append(heap_tree(feature[t], threshold[t], labels, n_features, n_classes))
    return trees


def prepare_fit(estimator, X, y, sample_weight):
    """What a tree's or a forest's ``fit`` does before growing trees, in this order.

    Checks the parameters (scikit-learn's constraints), refuses undeclared ``bounds`` or
    ``classes`` (before the accountant and the data: diffprivlib would read them from the
    data), checks the accountant for ``epsilon``, warns that ``sample_weight`` is ignored (as
    diffprivlib does), validates ``X`` in float64 (infinities let through, NaN refused:
    ``skdptune._clipping.validate_clippable``) and ``y``, expands the bounds (one value per
    feature, finite: diffprivlib's ``check_bounds`` lets NaN through), clips ``X`` to them,
    and only then rounds it to float32, what ``predict`` compares. Clipped first, no finite
    value (``1e39`` is beyond float32's range) or infinity can fail the fit; a clipped row
    reaches the leaf its unclipped value would (every threshold lies within the bounds),
    unless the bound itself rounds across a threshold in float32.

    Parameters
    ----------
    estimator : DecisionTreeClassifier or skdptune.ensemble.RandomForestClassifier
    X, y : array-like
    sample_weight : array-like or None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float32
        Clipped to the bounds.
    y : ndarray of shape (n_samples,)
    bounds : (ndarray, ndarray)
        ``(lower, upper)``, one value per feature.
    classes : ndarray of shape (n_classes,)
        ``np.ravel(classes)``.
    structure, noise
        ``skdptune._models.base.random_sources`` of the estimator's ``random_state``.

    Raises
    ------
    ValueError
        Naming ``bounds`` or ``classes`` when not declared, and ``bounds`` when of the wrong
        width, ``lower > upper``, NaN or infinite; when ``X`` holds NaN.
    """
    start_fit(estimator, DECLARED, sample_weight)
    X, y = validate_clippable(estimator, X, y, multi_output=False, dtype=np.float64)
    lower, upper = expanded_bounds(estimator, X.shape[1])
    noise, structure = random_sources(estimator.random_state, structure=True)
    return (float32_rows(X, (lower, upper)), y, (lower, upper), np.ravel(estimator.classes),
            structure, noise)


def expanded_bounds(estimator, n_features):
    """The declared bounds, one finite value per feature (``ValueError`` otherwise)."""
    lower, upper = estimator._check_bounds(estimator.bounds, shape=n_features)
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise ValueError(f"bounds={estimator.bounds!r} is not finite (NaN or infinity); declare "
                         "bounds=(lower, upper) with finite values from public knowledge.")
    return lower, upper


def float32_rows(X, bounds):
    """``X`` (float64) clipped to the bounds, then cast to float32, what ``predict`` compares."""
    # Clip, then cast: the cast of an unclipped value beyond float32's range would fail the
    # fit (after a search has charged it) on one record's value.
    return np.clip(X, *bounds).astype(np.float32)


class DecisionTreeClassifier(DPDecisionTreeClassifier):
    r"""diffprivlib's ``DecisionTreeClassifier``, its noise drawn securely and kept apart.

    The law of diffprivlib 0.6.6's tree (Fletcher & Islam's random decision trees): a complete
    binary tree of depth ``max_depth`` whose splits are drawn from the declared ``bounds``
    alone (each internal node a uniform feature and a uniform threshold within its box,
    ``split_thresholds``), and a label per leaf. What differs is where the randomness comes
    from and what the fitted model keeps (``skdptune._models.base.random_sources``):

    - the structure (splits) comes from its own source, with ``random_state=None`` fresh OS
      entropy (numpy's global generator is neither read nor advanced);
    - the leaf labels come from diffprivlib's ``PermuteAndFlip``, which with
      ``random_state=None`` samples from :mod:`secrets`; every leaf, reached by rows or not,
      gets its label from it (a leaf with no rows has counts 0: a uniform label, diffprivlib's
      law for empty leaves, from a secure source);
    - the fitted model keeps no seed or generator state, the declared parameters as given,
      and in ``tree_`` only the splits and the labels (impurities and sample counts are 0);
    - rows reach their leaves by scikit-learn's ``Tree.apply`` on ``X`` clipped to the
      bounds and rounded to float32, the comparisons ``predict`` makes (diffprivlib compares
      float64 values when fitting).

    Privacy (replace-one adjacency, ``n`` public): the structure is data-independent. One
    record is counted in one leaf; each leaf's label is ``PermuteAndFlip(epsilon,
    sensitivity=1, monotonic=True)`` on its class counts (a record whose label is not in
    ``classes`` counts for none); leaves hold disjoint records (parallel composition). The
    monotone form is ``epsilon``-DP when neighbours move every count the same way (adding or
    removing a record); replacing one lowers a count and raises another, in one leaf or two,
    and a fit spends ``2 epsilon`` (:func:`tree_charge`). It records
    ``epsilon`` on ``accountant``, as diffprivlib does; a search charges ``2 epsilon``.

    Parameters
    ----------
    max_depth : int, default=5
        Depth of the complete tree (``2 ** max_depth`` leaves).
    epsilon : float, default=1
        The budget of each leaf's label (recorded once per fit).
    bounds : tuple, default=None
        ``(lower, upper)``, numbers or one value per feature, from public knowledge; a fit
        without them raises ``ValueError``. Rows are clipped to them (infinities too) before
        the cast to float32, so no value fails the fit; a row outside them reaches the leaf
        its bound does, the one ``predict`` gives its own value unless the bound rounds across
        a threshold in float32 (every threshold lies within the bounds).
    classes : array-like of shape (n_classes,), default=None
        The labels, from public knowledge; a fit without them raises ``ValueError``.
    random_state : None, int or numpy.random.RandomState, default=None
        None: the structure from fresh OS entropy and the labels from :mod:`secrets`, which
        the privacy guarantee assumes. An int or ``RandomState`` seeds both sources
        (independent of each other) for reproducible tests and examples: whoever knows the
        seed can reproduce the labels, so a seeded fit has no privacy guarantee.
    accountant : BudgetAccountant, default=None
        Records ``epsilon`` per fit (None: diffprivlib's default accountant).
    criterion : None
        Ignored, as in diffprivlib.
    **unused_args
        As in diffprivlib (warned about and ignored).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        ``np.ravel(classes)``.
    n_classes_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        When ``X`` has string column names.
    n_outputs_ : int
        1.
    tree_ : sklearn.tree._tree.Tree
        Heap order (node ``i`` has children ``2 i + 1`` and ``2 i + 2``); leaves hold one-hot
        values.

    See Also
    --------
    skdptune.ensemble.RandomForestClassifier : Trees of this law on disjoint blocks of rows.

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune.tree import DecisionTreeClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((2000, 2))
    >>> y = (X[:, 0] > 0.5).astype(int)
    >>> tree = DecisionTreeClassifier(max_depth=6, epsilon=1.0, bounds=(0, 1), classes=[0, 1])
    >>> tree.fit(X, y).score(X, y) > 0.6
    True
    """

    # Beyond diffprivlib's: a complete tree needs a finite depth (2 ** max_depth leaves), and
    # epsilon is a budget.
    _parameter_constraints = {
        **DPDecisionTreeClassifier._parameter_constraints,
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
    }

    def fit(self, X, y, sample_weight=None, check_input=True):
        """Fit the tree (see the class docstring for the law and its privacy).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Clipped to ``bounds``, then converted to float32, as ``predict`` converts it;
            NaN raises ``ValueError``.
        y : array-like of shape (n_samples,)
        sample_weight : ignored
            As in diffprivlib (warned about).
        check_input : bool, default=True
            Ignored: ``X`` and ``y`` are always checked.

        Returns
        -------
        self : DecisionTreeClassifier
        """
        X, y, bounds, classes, structure, noise = prepare_fit(self, X, y, sample_weight)
        tree, = grow_trees(X, y, np.zeros(len(X), dtype=np.intp), 1, bounds, classes,
                           self.max_depth, self.epsilon, structure, noise)
        self._set_fitted(tree, classes, X.shape[1])
        accountant_of(self).spend(self.epsilon, 0)
        return self

    def _set_fitted(self, tree, classes, n_features):
        """Set the fitted attributes (a forest sets its trees' the same way)."""
        self.tree_, self.classes_, self.n_classes_ = tree, classes, len(classes)
        self.n_features_in_, self.n_outputs_ = n_features, 1
        return self


def tree_charge(step):
    """What a random decision tree spends per unit of the ``epsilon`` it records: 2.

    The law of diffprivlib 0.6.6's ``DecisionTreeClassifier``, which
    :class:`DecisionTreeClassifier` fits with secure noise. A tree's splits are drawn from the
    declared bounds alone (public). Each leaf's label is ``PermuteAndFlip(epsilon,
    sensitivity=1, monotonic=True)`` on the leaf's class counts; leaves hold disjoint records
    (parallel composition). The monotonic form (exponent ``epsilon / sensitivity``) is
    ``epsilon``-DP only when a neighbouring dataset moves every count the same way, as adding
    or removing a record does. Replacing one (the library's adjacency) lowers a count and
    raises another: in one leaf (a new label), or in two leaves (a new row). Either way the
    labels are ``2 epsilon``-DP (the non-monotone form's exponent is ``epsilon / (2
    sensitivity)``).

    Parameters
    ----------
    step : DecisionTreeClassifier or diffprivlib.models.DecisionTreeClassifier

    Returns
    -------
    factor : float
    """
    return 2.0


def tree_zero_out(step):
    """What a random decision tree spends per unit of its recorded ``epsilon`` under zero-out
    adjacency: 1.

    A null record contributes to no leaf: one leaf's count of one class falls by one, a change
    in one direction, for which the monotone permute-and-flip (exponent ``epsilon /
    sensitivity``) is ``epsilon``-DP; the other leaves are unchanged (parallel composition).
    The splits read no data.
    """
    return 1.0


def tree_noise_dimension(step, width):
    """The tuning policy's ``D`` for a tree: ``2 ** max_depth``, a permute-and-flip label per
    leaf (the splits are public and cost no noise)."""
    return 2 ** step.max_depth


#: What a released fit keeps, each with why its mechanism covers it (besides the public
#: shape).
RELEASES = {
    "classes_": "the declared classes",
    "n_classes_": "the number of declared classes",
    "n_outputs_": "1",
    "tree_": "splits drawn from the declared bounds alone; leaf values the PermuteAndFlip "
             "labels; node counts and impurities zeros",
}

#: The facts of :class:`DecisionTreeClassifier` (the refit gate's row reads them).
FACTS = ModelFacts(
    why="diffprivlib's random decision trees with the structure and the leaf labels from "
        "separate sources, the labels secure: pure DP given declared bounds and classes; a "
        "fit spends tree_charge (2) times the `epsilon` it records under replace-one "
        "adjacency, and is charged that",
    declared=("bounds", "classes"),
    charge=tree_charge,
    zero_out=tree_zero_out,
    releases=RELEASES,
    noise_dimension=tree_noise_dimension,
)
