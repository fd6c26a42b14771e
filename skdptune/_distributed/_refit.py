"""The refit without gathering: per-chunk statistics summed on the workers' results, the
room's own release on the client.

A released model of a class here is a function of sums of per-record terms of the clipped
records; each chunk returns its sums (a few arrays of the model's size, never a row), the
client adds them and hands them to the room's release method, which draws every noise term
in this process with the model's own generator (:mod:`secrets` without a seed). So the
distributed refit makes the same releases from the same statistics (up to the rounding of
the additions) with the same mechanisms, in the same order, as the in-memory fit: the same
law, the same recorded ``epsilon``, and the gate's charge for the class (``_gate.ALLOWED``,
read by the plan as for in-memory input).

Models (exact classes, as the gate's rows; ``MODELS``):

- :class:`skdptune.naive_bayes.GaussianNB`: per declared class, the count, the sum and the
  sum of squares of every clipped feature. The release wants, per class and feature, the sum
  of squares about the noisy mean ``mu`` drawn just before it: ``S2 - 2 mu S1 + n_c mu**2``,
  exact in real arithmetic (its rounding is clamped at 0, the true value's lower bound).
- :class:`skdptune.linear_model.Ridge` (one target): ``n``, the sums of the clipped ``x`` and
  ``y``, ``X'X``, ``X'y`` and ``y'y``. With an intercept, the noisy centring means are
  diffprivlib's ``tools.mean`` mechanism per column from ``sum / n`` (the room's
  ``noisy_means``, as the in-memory fit draws them), and the centred monomials follow from
  the raw ones and the offsets (:func:`_centred_monomials`).
- :class:`skdptune.cluster.KMeans`: each private Lloyd iteration's counts and sums about the
  box's middle of the clipped records nearest each released centre (one pass per iteration).
- :class:`skdptune.linear_model.LogisticRegression`: objective perturbation minimises a
  smooth noisy objective; each evaluation of it (value and gradient) is one pass over the
  chunks, each returning the sum of its records' logistic losses and their gradient at the
  client's current coefficients (:func:`_logistic_sums`). The noise vector, the penalty and
  the solver run on the client: diffprivlib's ``Vector`` mechanism around the reduced loss,
  and scipy's L-BFGS-B with diffprivlib 0.6.6's settings (:func:`_objective_perturbation`).
- :class:`skdptune.ensemble.RandomForestClassifier` (``shuffle=False``) and
  :class:`skdptune.tree.DecisionTreeClassifier`: every tree's leaf class counts, each row in
  the tree its global position deals it to; the public structure is drawn here first, the
  labels from the summed counts (:func:`_trees`).
"""

from dataclasses import dataclass

import numpy as np
from diffprivlib.mechanisms import Vector
from scipy import optimize

from .._models.linear_model import (LogisticRegression, Ridge, _centring_share,
                                    logistic_features, noisy_means)
from .._models.cluster import MIN_WIDTH, KMeans, cluster_sums
from .._models.base import accountant_of, random_sources, start_fit
from .._models.ensemble import RandomForestClassifier, tree_blocks
from .._models.naive_bayes import GaussianNB
from .._models.tree import (
    DECLARED,
    DecisionTreeClassifier,
    expanded_bounds,
    float32_rows,
    labelled_trees,
    leaf_counts,
    tree_splits,
)
from .._sklearn_compat import HalfBinomialLoss
from .._utility import BoundedSquaredErrorScorer, declared_bounds_y
from .._validation import declared_box


@dataclass(frozen=True)
class DistributedModel:
    """A model with a distributed refit.

    Attributes
    ----------
    name : str
        Its public name, for messages.
    scorings : tuple
        The ``scoring`` values a search may use with dask input.
    fit : callable
        ``(model, X, y) -> model``: the refit, ``X`` and ``y`` dask arrays.
    classes : callable
        ``model -> declared classes`` (an ndarray), or None for a regressor.
    refusal : callable
        ``model -> None``, or why a configuration (a candidate's) has no distributed fit.
    """

    name: str
    scorings: tuple
    fit: object
    classes: object
    refusal: object = lambda model: None


def refit(estimator, X, y):
    """Fit ``estimator`` for release on the dask input behind the stand-ins ``X`` and ``y``.

    Called through ``skdptune._dp_fit.fit`` inside ``fit_for_release``, which gave the
    model its measuring accountant and turns a failure into a withheld message.

    Returns
    -------
    estimator : estimator
        Fitted; with ``n_features_in_`` (and ``feature_names_in_`` for a data frame's string
        columns), as the in-memory fit sets them.
    """
    MODELS[type(estimator)].fit(estimator, X.source, None if y is None else y.source)
    estimator.n_features_in_ = X.shape[1]
    columns = getattr(X, "columns", None)
    if columns is not None and all(isinstance(column, str) for column in columns):
        estimator.feature_names_in_ = columns
    return estimator


def _reduce(function, X, y, *args, offsets=False):
    """``function(X_chunk, y_chunk, *args)`` on every chunk where it lives, added up on the
    client: a tuple of arrays (the chunks' results are small and travel, the rows do not).
    With ``offsets``, the chunk's first row's position comes before ``args``."""
    import dask

    starts = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(int)
    X_chunks = X.to_delayed().ravel()
    y_chunks = [None] * len(X_chunks) if y is None else y.to_delayed().ravel()
    parts = dask.compute(*[
        dask.delayed(function)(X_chunk, y_chunk, *((int(start),) if offsets else ()), *args)
        for X_chunk, y_chunk, start in zip(X_chunks, y_chunks, starts)
    ])
    return tuple(np.sum(values, axis=0) for values in zip(*parts))


def _class_sums(X, y, classes, lower, upper):
    """Per declared class: the count, and the sum and the sum of squares of every feature of
    the chunk's rows clipped to the bounds."""
    X = np.clip(X, lower, upper)
    rows = [X[y == label] for label in classes]
    return (np.array([len(r) for r in rows]), np.array([r.sum(axis=0) for r in rows]),
            np.array([(r * r).sum(axis=0) for r in rows]))


def _gaussian_nb(model, X, y):
    """:class:`~skdptune.naive_bayes.GaussianNB`'s fit from class sums (see the module)."""
    random_state = model._start_fit()
    lower, upper = model._check_bounds(model.bounds, shape=X.shape[1])
    model.classes_ = _declared(model)
    counts, sums, squares = _reduce(_class_sums, X, y, model.classes_, lower, upper)

    def centred_squares(i, j, mean):
        # sum((x - mean)**2) = S2 - 2 mean S1 + n mean**2; never below 0 but by rounding.
        return max(squares[i, j] - 2 * mean * sums[i, j] + counts[i] * mean ** 2, 0.0)

    return model.release(counts, sums, centred_squares, (lower, upper), random_state)


def _declared(model):
    """The declared classes as the fit sorts them (the gate requires them declared)."""
    return np.unique(np.asarray(model.classes))


def _moments(X, y, bounds_X, bounds_y):
    """``n``, the sums of the clipped ``x`` and ``y``, ``X'X``, ``X'y`` and ``y'y`` of one
    chunk."""
    X, y = np.clip(X, *bounds_X), np.clip(y.reshape(-1, 1), *bounds_y)
    return len(X), X.sum(axis=0), y.sum(axis=0), X.T @ X, X.T @ y, (y * y).sum(axis=0)


def _centred_monomials(moments, X_offset, y_offset):
    """``monomials(X - X_offset, y - y_offset)`` from the raw moments (exact algebra)."""
    n, sx, sy, gram, cross, squares = moments
    return (squares - 2 * y_offset * sy + n * y_offset ** 2,
            cross - np.outer(X_offset, sy) - np.outer(sx, y_offset)
            + n * np.outer(X_offset, y_offset),
            gram - np.outer(X_offset, sx) - np.outer(sx, X_offset)
            + n * np.outer(X_offset, X_offset))


def _ridge(model, X, y):
    """:class:`~skdptune.linear_model.Ridge`'s fit from the moments (see the module).

    Privacy as :meth:`Ridge.fit`: with an intercept, ``epsilon s`` (``s = 1 / (d + 1)``)
    buys the ``d + 1`` centring means (``noisy_means``, ``epsilon s / (d + 1)`` each),
    and ``Ridge.release`` spends ``epsilon (1 - s)`` on the objective's monomials: basic
    composition, ``epsilon``.
    """
    random_state = model._start_fit()
    n_features = X.shape[1]
    bounds_X = model._check_bounds(model.bounds_X, n_features)
    bounds_y = model._check_bounds(model.bounds_y, 1)
    moments = _reduce(_moments, X, y, bounds_X, bounds_y)
    n = int(moments[0])
    if model.fit_intercept:
        per_mean = model.epsilon * _centring_share(n_features, True) / (n_features + 1)
        X_offset = noisy_means(moments[1] / n, n, bounds_X, per_mean, random_state)
        y_offset = noisy_means(moments[2] / n, n, bounds_y, per_mean, random_state)
    else:
        X_offset, y_offset = np.zeros(n_features), np.zeros(1)
    return model.release(_centred_monomials(moments, X_offset, y_offset), X_offset, y_offset,
                         (bounds_X, bounds_y), 1, random_state)


def _logistic_sums(X, y, coefficients, positive, data_norm, fit_intercept):
    """The sum of one chunk's logistic losses and of their gradient at ``coefficients``, on
    the rows the room's fit sees (``logistic_features``: clipped to ``data_norm``, the
    intercept's 1 appended, in the unit ball), with ``positive`` the problem's positive
    class."""
    Z = logistic_features(X, data_norm, fit_intercept, clip=True)
    target = (y == positive).astype(np.float64)
    loss, gradient = HalfBinomialLoss().loss_gradient(target, Z @ coefficients)
    return loss.sum(), Z.T @ gradient


def _objective_perturbation(X, y, n, positive, model, epsilon, data_norm, C, random_state):
    """diffprivlib 0.6.6's ``_logistic_regression_path`` for one ``C`` and one problem, its
    loss reduced over the chunks.

    diffprivlib minimises ``Vector.randomise(loss)``, ``loss`` scikit-learn's mean logistic
    loss plus ``||w||^2 / (2 C n)``, with ``fmin_l_bfgs_b(factr=64, pgtol=tol,
    maxiter=max_iter)`` from zero (and ``iprint=-1``: no output, the default here). Here
    ``loss`` is the same function, its sums computed on the workers
    (:func:`_logistic_sums`), and ``Vector`` the same mechanism drawn here:
    ``epsilon``-DP on rows in the ball of radius ``data_norm`` (the room's calibration,
    ``LogisticRegression._problems``).
    """
    def loss(coefficients, l2_reg_strength):
        value, gradient = _reduce(_logistic_sums, X, y, coefficients, positive,
                                  model.data_norm, model.fit_intercept)
        return (value / n + 0.5 * l2_reg_strength * coefficients @ coefficients,
                gradient / n + l2_reg_strength * coefficients)

    dimension = X.shape[1] + int(model.fit_intercept)
    mechanism = Vector(epsilon=epsilon, dimension=dimension, alpha=1.0 / C,
                       function_sensitivity=0.25, data_sensitivity=data_norm, n=n,
                       random_state=random_state)
    solution, _, _ = optimize.fmin_l_bfgs_b(
        mechanism.randomise(loss), np.zeros(dimension), fprime=None, factr=64,
        args=(1.0 / (C * n),), pgtol=model.tol, maxiter=model.max_iter)
    return solution


def _logistic_regression(model, X, y):
    """:class:`~skdptune.linear_model.LogisticRegression`'s fit, each evaluation of each
    problem's objective one pass over the chunks (see the module).

    Privacy as the room's fit: its problems and calibration (``_problems``), each
    ``epsilon / K``-DP by objective perturbation, sequential composition over the ``K``
    problems: ``epsilon``, recorded by ``_release``. The coefficients sent to the workers are
    iterates of the solver on the noisy objective, never released; only the minimiser is.
    """
    random_state = model._start_fit()
    model.classes_ = _declared(model)
    positives, epsilon, scale, inner_norm, C_fit = model._problems()
    n = X.shape[0]
    coefficients = np.vstack([
        _objective_perturbation(X, y, n, positive, model, epsilon, inner_norm, C_fit,
                                random_state)
        for positive in positives])
    return model._release(coefficients, X.shape[1], scale)


def _forest_counts(X, y, start, n, n_trees, feature, threshold, classes, bounds):
    """One chunk's leaf counts of every tree: its rows clipped and cast as the room's fit
    does, each dealt to the tree of its position among the ``n`` records."""
    block = tree_blocks(np.arange(start, start + len(X)), n, n_trees)
    return (leaf_counts(float32_rows(X, bounds), y, block, feature, threshold, classes),)


def _trees(model, X, y, n_trees):
    """The room's trees from leaf counts reduced over the chunks (see the module): the
    structure drawn here from the structure source, as the room's fit draws it, then the
    counts, then the labels from the noise source."""
    start_fit(model, DECLARED)
    n, n_features = X.shape
    bounds = expanded_bounds(model, n_features)
    classes = np.ravel(model.classes)
    noise, structure = random_sources(model.random_state, structure=True)
    feature, threshold = tree_splits(structure, n_trees, n_features, bounds, model.max_depth)
    counts, = _reduce(_forest_counts, X, y, n, n_trees, feature, threshold, classes, bounds,
                      offsets=True)
    return labelled_trees(counts, feature, threshold, model.epsilon, noise, n_features), classes


def _random_forest(model, X, y):
    """:class:`~skdptune.ensemble.RandomForestClassifier`'s fit (``shuffle=False``).

    Privacy as the room's (``grow_trees``): a public structure; each record in one leaf of
    the one tree its position deals it to; ``PermuteAndFlip`` per leaf on the summed counts;
    ``epsilon`` recorded by ``_release``, the gate's charge for the class.
    """
    trees, classes = _trees(model, X, y, model.n_estimators)
    return model._release(trees, classes, X.shape[1])


def _decision_tree(model, X, y):
    """:class:`~skdptune.tree.DecisionTreeClassifier`'s fit: one tree on every row."""
    (tree,), classes = _trees(model, X, y, 1)
    model._set_fitted(tree, classes, X.shape[1])
    accountant_of(model).spend(model.epsilon, 0)
    return model


def _clipped_cluster_sums(X, y, centres, box, middle):
    """:func:`~skdptune._models.cluster.cluster_sums` of one chunk's rows clipped to the
    box."""
    return cluster_sums(np.clip(X, *box), centres, middle)


def _kmeans(model, X, y):
    """:class:`~skdptune.cluster.KMeans`' fit, each private Lloyd iteration one pass over the
    chunks for its counts and sums (``y`` is not read).

    Privacy as the room's: the iterations' noisy counts and sums, drawn by the room's
    ``_release`` from the summed statistics at the centres it released last; the centres
    sent to the workers are released values (post-processing).
    """
    model._start_fit()
    n_samples, n_features = X.shape
    model._check_samples(n_samples)
    box = declared_box(model, n_features, min_separation=MIN_WIDTH)
    middle = (box[0] + box[1]) / 2
    return model._release(
        lambda centres: _reduce(_clipped_cluster_sums, X, None, centres, box, middle),
        n_samples, box, np.float64)


def _shuffled(model):
    if model.shuffle:
        return (f"shuffle={model.shuffle!r} deals the rows to the trees by a permutation of "
                "all n records, which would be drawn here and sent to every chunk; use "
                "shuffle=False (rows dealt by position: the same privacy)")
    return None


#: The models with a distributed refit, by exact class.
MODELS = {
    GaussianNB: DistributedModel("skdptune.naive_bayes.GaussianNB", (None, "accuracy"),
                                 _gaussian_nb, _declared),
    Ridge: DistributedModel("skdptune.linear_model.Ridge", (None,), _ridge,
                            lambda model: None),
    LogisticRegression: DistributedModel("skdptune.linear_model.LogisticRegression",
                                         (None, "accuracy"), _logistic_regression, _declared),
    RandomForestClassifier: DistributedModel("skdptune.ensemble.RandomForestClassifier",
                                             (None, "accuracy"), _random_forest, _declared,
                                             _shuffled),
    DecisionTreeClassifier: DistributedModel("skdptune.tree.DecisionTreeClassifier",
                                             (None, "accuracy"), _decision_tree, _declared),
    KMeans: DistributedModel("skdptune.cluster.KMeans", (None,), _kmeans, lambda model: None),
}


def lead(kind, model, X, y):
    """``skdptune._trivial._lead`` on the dask input: the released model's mean per-record
    score minus the best constant's, from per-chunk sums (not private: the caller adds the
    Laplace noise, whose sensitivity is the in-memory one).

    Parameters
    ----------
    kind : str
        ``skdptune._trivial.ACCURACY`` or ``BOUNDED_SQUARED_ERROR`` (one target).
    model : estimator
        The released model (a DP output, sent to the workers).
    X, y : OnWorkers

    Returns
    -------
    lead : float
    """
    from .._trivial import ACCURACY

    n = X.shape[0]
    if kind == ACCURACY:
        classes = _declared(model)
        correct, counts = _reduce(_correct_and_counts, X.source, y.source, model, classes)
        return float(correct / n - counts.max() / n)
    low, high = (float(np.ravel(bound)[0]) for bound in declared_bounds_y(model))
    scores, s1, s2 = _reduce(_scores_and_sums, X.source, y.source, model, low, high)
    # The best constant, the clipped targets' mean s1 / n, scores n - sum((y - mean)**2) /
    # (high - low)**2 in all (its errors never reach the clip at 1).
    constant = n - max(s2 - s1 * s1 / n, 0.0) / (high - low) ** 2
    return float((scores - constant) / n)


def _correct_and_counts(X, y, model, classes):
    """The chunk's correct predictions and its count of each declared class."""
    return (np.sum(np.asarray(model.predict(X)) == y),
            np.array([np.sum(y == label) for label in classes]))


def _scores_and_sums(X, y, model, low, high):
    """The chunk's sum of the model's bounded per-record scores, and the sum and the sum of
    squares of its clipped targets."""
    clipped = np.clip(y, low, high)
    return (BoundedSquaredErrorScorer().per_record(model, X, y).sum(), clipped.sum(),
            (clipped * clipped).sum())
