"""A differentially private random forest whose noise is secure and whose trees carry no seed.

diffprivlib 0.6.6's ``RandomForestClassifier`` builds its trees through scikit-learn's
``_make_estimator``, which gives every tree an integer seed kept in the released model
(``estimators_[i].random_state``); each tree draws its splits and its leaf labels from that
seed, so refitting from the stored seeds under each candidate value of one record reproduces
the forest and names the value. :class:`RandomForestClassifier` here fits the same law with the
structure and the labels from separate sources (``skdptune._models.base.random_sources``).
"""

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import RandomForestClassifier as DPRandomForestClassifier

from .._sklearn_compat import Options
from .base import accountant_of
from .facts import ModelFacts
from .tree import (
    DecisionTreeClassifier,
    grow_trees,
    prepare_fit,
    tree_charge,
    tree_noise_dimension,
    tree_zero_out,
)


class _NoWarmStart(Options):
    """``warm_start`` must be False; the constraint's text says why, in scikit-learn's
    parameter error."""

    def __init__(self):
        super().__init__((bool, np.bool_), {False})

    def __str__(self):
        return ("False (a warm start fits new trees on the records earlier trees used: the "
                "trees' blocks would not be disjoint across fits, and the forest would spend "
                "more than it records)")


class RandomForestClassifier(DPRandomForestClassifier):
    r"""diffprivlib's ``RandomForestClassifier``, its noise drawn securely and kept apart.

    The law of diffprivlib 0.6.6's forest (with ``shuffle=False``, its default, or ``True``):
    the rows are dealt to ``n_estimators`` trees by position (row ``j`` trains tree ``j // (n
    / n_estimators)``, or that of its place in a random permutation when ``shuffle``), and each
    tree is a :class:`~skdptune.tree.DecisionTreeClassifier` of the same law on its block:
    random splits from the declared ``bounds`` alone, and a label per leaf by
    ``PermuteAndFlip``. What differs from diffprivlib's:

    - the structure (splits, the shuffle) comes from its own source, with
      ``random_state=None`` fresh OS entropy (numpy's global generator is neither read nor
      advanced), and the leaf labels from diffprivlib's ``PermuteAndFlip`` with
      ``random_state=None``, which samples from :mod:`secrets`
      (``skdptune._models.base.random_sources``); empty leaves too;
    - the trees are built here, not by scikit-learn's ``_make_estimator``: ``estimators_``
      carries no per-tree seed (each tree's ``random_state`` is None) and no generator state,
      and each tree's ``tree_`` only its splits and labels (impurities and sample counts 0);
    - a row is counted for class ``i`` when its label equals ``classes[i]`` (diffprivlib hands
      its trees the labels' positions in ``classes`` and counts those, which is right only for
      ``classes=[0, 1, ...]``);
    - rows reach their leaves by scikit-learn's ``Tree.apply`` on ``X`` clipped to the bounds
      and rounded to float32, the comparisons ``predict`` makes; ``bounds`` and ``classes``
      must be declared; a warm start is refused.

    Privacy (replace-one adjacency, ``n`` public): which block a record trains is decided by
    its position and the structure source, not by the data, and a replaced record keeps its
    position; blocks are disjoint (parallel composition), so the forest spends what one tree
    spends on its block. In a tree, one record is counted in one leaf; each leaf's label is
    ``PermuteAndFlip(epsilon, sensitivity=1, monotonic=True)`` on its class counts, leaves
    disjoint (parallel composition). The monotone form is ``epsilon``-DP under add-or-remove;
    replacing a record lowers a count and raises another, in one leaf or two, so a fit spends
    ``2 epsilon`` (:func:`forest_charge`). It records ``epsilon`` on
    ``accountant`` once per fit, as diffprivlib does; a search charges ``2 epsilon``.

    Parameters
    ----------
    n_estimators : int, default=10
        Trees; each trains on about ``n / n_estimators`` rows.
    epsilon : float, default=1.0
        The budget of every leaf's label (recorded once per fit).
    bounds : tuple, default=None
        ``(lower, upper)``, numbers or one value per feature, from public knowledge; a fit
        without them raises ``ValueError``. Rows are clipped to them (infinities too) before
        the cast to float32, so no value fails the fit; a row outside them reaches the leaf
        its bound does in each tree (see :class:`~skdptune.tree.DecisionTreeClassifier`).
    classes : array-like of shape (n_classes,), default=None
        The labels, from public knowledge; a fit without them raises ``ValueError``.
    n_jobs : int, default=1
        For ``predict`` (scikit-learn's); the fit runs in one process.
    verbose : int, default=0
        For ``predict`` (scikit-learn's).
    accountant : BudgetAccountant, default=None
        Records ``epsilon`` per fit (None: diffprivlib's default accountant).
    random_state : None, int or numpy.random.RandomState, default=None
        None: the structure from fresh OS entropy and the labels from :mod:`secrets`, which
        the privacy guarantee assumes. An int or ``RandomState`` seeds both sources
        (independent of each other) for reproducible tests and examples: whoever knows the
        seed can reproduce the labels, so a seeded fit has no privacy guarantee.
    max_depth : int, default=5
        Depth of every tree (``2 ** max_depth`` leaves each).
    warm_start : bool, default=False
        Must be False.
    shuffle : bool, default=False
        Deal the rows to the trees in a random order (from the structure source) rather than
        in order.
    **unused_args
        As in diffprivlib (warned about and ignored).

    Attributes
    ----------
    estimators_ : list of skdptune.tree.DecisionTreeClassifier
        The fitted trees, with the forest's ``max_depth``, ``epsilon``, ``bounds``,
        ``classes`` and ``accountant`` as parameters and ``random_state=None``.
    classes_ : ndarray of shape (n_classes,)
        ``np.ravel(classes)``.
    n_classes_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        When ``X`` has string column names.
    n_outputs_ : int
        1.

    See Also
    --------
    skdptune.tree.DecisionTreeClassifier : One tree of this law.

    Examples
    --------
    >>> import numpy as np
    >>> from skdptune.ensemble import RandomForestClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((5000, 2))
    >>> y = (X[:, 0] > 0.5).astype(int)
    >>> forest = RandomForestClassifier(n_estimators=10, epsilon=1.0, bounds=(0, 1),
    ...                                 classes=[0, 1])
    >>> forest.fit(X, y).score(X, y) > 0.6
    True
    """

    _parameter_constraints = {
        **DPRandomForestClassifier._parameter_constraints,
        # The tree's max_depth and epsilon, which every tree of the forest gets.
        **{name: DecisionTreeClassifier._parameter_constraints[name]
           for name in ("max_depth", "epsilon")},
        "warm_start": [_NoWarmStart()],
        "shuffle": ["boolean"],
    }

    def __init__(self, n_estimators=10, *, epsilon=1.0, bounds=None, classes=None, n_jobs=1,
                 verbose=0, accountant=None, random_state=None, max_depth=5, warm_start=False,
                 shuffle=False, **unused_args):
        super().__init__(n_estimators=n_estimators, epsilon=epsilon, bounds=bounds,
                         classes=classes, n_jobs=n_jobs, verbose=verbose, accountant=accountant,
                         random_state=random_state, max_depth=max_depth,
                         warm_start=warm_start, shuffle=shuffle, **unused_args)
        # scikit-learn's ensemble reads the tree class from here (its tags); trees are built
        # by fit, not from this template. Its own accountant, so that the model does not carry
        # diffprivlib's process-wide default one.
        self.estimator = DecisionTreeClassifier(accountant=BudgetAccountant())

    def fit(self, X, y, sample_weight=None):
        """Fit the forest (see the class docstring for the law and its privacy).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Clipped to ``bounds``, then converted to float32, as ``predict`` converts it;
            NaN raises ``ValueError``.
        y : array-like of shape (n_samples,)
        sample_weight : ignored
            As in diffprivlib (warned about).

        Returns
        -------
        self : RandomForestClassifier
        """
        X, y, bounds, classes, structure, noise = prepare_fit(self, X, y, sample_weight)
        n_samples, n_trees = len(X), self.n_estimators
        # Each row's tree, from its position (or its place in a permutation drawn from the
        # structure source) and the public n: diffprivlib's formula. Disjoint blocks.
        order = structure.permutation(n_samples) if self.shuffle else np.arange(n_samples)
        block = tree_blocks(order, n_samples, n_trees)
        trees = grow_trees(X, y, block, n_trees, bounds, classes, self.max_depth, self.epsilon,
                           structure, noise)
        return self._release(trees, classes, X.shape[1])

    def _release(self, trees, classes, n_features):
        """Set the fitted trees and attributes, and record ``epsilon`` (shared with the fit on
        dask input, ``skdptune._distributed``)."""
        self.estimators_ = [
            DecisionTreeClassifier(max_depth=self.max_depth, epsilon=self.epsilon,
                                   bounds=self.bounds, classes=self.classes,
                                   accountant=self.accountant)._set_fitted(tree, classes,
                                                                           n_features)
            for tree in trees]
        self.classes_, self.n_classes_, self.n_outputs_ = classes, len(classes), 1
        accountant_of(self).spend(self.epsilon, 0)
        return self


def tree_blocks(positions, n_samples, n_trees):
    """The tree of each row at ``positions`` (or places in a permutation) among ``n_samples``:
    ``position // (n_samples / n_trees)``, diffprivlib's formula; disjoint blocks."""
    return (positions // (n_samples / n_trees)).astype(np.intp)


def forest_charge(step):
    """What a random forest spends per unit of the ``epsilon`` it records: what one tree
    spends, 2 (:func:`skdptune._models.tree.tree_charge`).

    The law of diffprivlib 0.6.6's ``RandomForestClassifier``, which
    :class:`RandomForestClassifier` fits with secure noise: each tree gets all of ``epsilon``
    on a disjoint, position-based block of the records, and a replaced record keeps its
    position, hence its block: it changes one tree's leaf counts only (parallel composition),
    and that tree spends ``tree_charge`` times ``epsilon``.

    Parameters
    ----------
    step : RandomForestClassifier or diffprivlib.models.RandomForestClassifier

    Returns
    -------
    factor : float
    """
    return tree_charge(step)


def forest_zero_out(step):
    """What a random forest spends per unit of its recorded ``epsilon`` under zero-out
    adjacency: one tree's, 1 (:func:`skdptune._models.tree.tree_zero_out`): a null record
    sits in one tree's block, and the other trees are unchanged (parallel composition)."""
    return tree_zero_out(step)


def forest_noise_dimension(step, width):
    """The tuning policy's ``D`` for a forest: ``n_estimators * 2 ** max_depth``, every tree's
    permute-and-flip labels (:func:`skdptune._models.tree.tree_noise_dimension`)."""
    return step.n_estimators * tree_noise_dimension(step, width)


#: What a released fit keeps, each with why its mechanism covers it (besides the public
#: shape).
RELEASES = {
    "classes_": "the declared classes",
    "n_classes_": "the number of declared classes",
    "n_outputs_": "1",
    "estimators_": "the fitted trees, each kept as its own entry says",
}

#: The facts of :class:`RandomForestClassifier` (the refit gate's row reads them).
FACTS = ModelFacts(
    why="diffprivlib's random decision trees with the structure and the leaf labels from "
        "separate sources, the labels secure: pure DP given declared bounds and classes; a "
        "fit spends forest_charge (2) times the `epsilon` it records under replace-one "
        "adjacency, and is charged that",
    declared=("bounds", "classes"),
    charge=forest_charge,
    zero_out=forest_zero_out,
    releases=RELEASES,
    noise_dimension=forest_noise_dimension,
)
