"""Batched partition fits: all partitions of a candidate fitted in one array program.

A partition fit is never released and never charged: the selection's guarantee rests on each
partition utility lying in ``[0, 1]`` and depending on its own partition's records only
(sensitivity ``1 / k``). So a partition fit need not call diffprivlib: an array program that
fits every partition at once, with emulation noise whose law is that of diffprivlib's fit on
the same partition, gives the selection the same input distribution, much faster. Its noise
need not be secure.

Privacy, by construction: every partition's statistics, noise scales and scores are computed
from its own rows, the public parameters and its own noise stream (``SeedSequence(entropy,
spawn_key=(partition, candidate))``); arrays only stack partitions side by side. Nothing is
computed across partitions from data: no shared stopping rule, normalisation or cache keyed by
another partition's values (the scale cache of :mod:`~skdptune.batched.gaussian_nb` is keyed by
public parameters and the partition's own noisy count, and returns a deterministic function of
them).

A family is a module with ``plan(estimator, n_features)`` (public parameters, or None to fall
back to the per-fit path) and ``partition_accuracies(...)`` (NaN for a partition without
training or held-out rows, :data:`FIT_FAILED` where the real fit raises); :data:`FAMILIES`
maps an exact estimator class to it. Adding a family is one module and one row here.

Pipelines: a :class:`~sklearn.pipeline.Pipeline` whose steps before a family's estimator are
all in :data:`STATELESS_STEPS` (they learn nothing from the rows) is batched too: those steps
are applied once to all rows (:func:`transform_all_rows`), which is what every partition's own
pipeline computes on its rows, and the family fits the result.
"""

from types import SimpleNamespace

import numpy as np
from diffprivlib.models import GaussianNB, LogisticRegression
from scipy import sparse
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Binarizer, FunctionTransformer, Normalizer, PolynomialFeatures

from ..dp_fit import private_fit_context
from ..preprocessing import RowWiseFunctionTransformer
from . import gaussian_nb, logistic_regression

#: Estimator class (matched exactly: a subclass may change ``fit``) -> batched family module.
FAMILIES = {
    GaussianNB: gaussian_nb,
    LogisticRegression: logistic_regression,
}

#: What a family's ``partition_accuracies`` returns for a partition whose real fit raises (a
#: condition of the partition's own rows, such as diffprivlib's ``LogisticRegression`` on
#: training rows of one class): the engine scores it ``error_score``, as the per-fit path does.
FIT_FAILED = -np.inf

#: Cells (rows x features) of ``X`` a batched task holds at once, about 16 MB in float64.
BLOCK_CELLS = 2 ** 21


#: Pipeline steps before a family's estimator that the batched path applies once to all rows
#: (exact classes): fitting them reads nothing from the rows but their number of features
#: (public), and each output row is a function of its own input row and public constants. A
#: ``FunctionTransformer`` qualifies only as the identity (``func=None``); a
#: :class:`~skdptune.preprocessing.RowWiseFunctionTransformer` on its user's declaration.
STATELESS_STEPS = (Normalizer, Binarizer, PolynomialFeatures, RowWiseFunctionTransformer,
                   FunctionTransformer)


def split_pipeline(estimator):
    """The steps to apply to all rows once and the final estimator, or None (the per-fit path).

    A plain estimator is ``([], estimator)``. A :class:`~sklearn.pipeline.Pipeline` (without
    ``memory``) is ``(steps, final)`` when every step before the last is ``"passthrough"``,
    ``None`` or an instance of exactly one of :data:`STATELESS_STEPS`; anything else is None.

    Parameters
    ----------
    estimator : estimator
        A candidate, its parameters set.

    Returns
    -------
    split : tuple of (list, estimator) or None
    """
    if type(estimator) is not Pipeline:
        return [], estimator
    if estimator.memory is not None:
        return None
    *before, (_, final) = estimator.steps
    steps = []
    for _, step in before:
        if step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        if type(step) not in STATELESS_STEPS or (
                type(step) is FunctionTransformer
                and (step.func is not None or step.inverse_func is not None)):
            return None
        steps.append(step)
    return steps, final


def transform_all_rows(steps, X):
    """``X`` through clones of ``steps``, each fitted on all rows, or None if one fails.

    For the steps :func:`split_pipeline` admits, this is what each partition's own pipeline
    computes on its rows (they learn nothing from the rows). Runs inside
    :func:`~skdptune.dp_fit.private_fit_context`: what the steps warn or print about the
    private rows is recorded and dropped, as for any partition fit. A failure (a value a step
    rejects) sends the candidate to the per-fit path, which gives it a real fit's outcome.

    Parameters
    ----------
    steps : list of transformer
    X : array-like of shape (n_samples, n_features)

    Returns
    -------
    Xt : array-like or None
    """
    try:
        with private_fit_context(reveal=False):
            for step in steps:
                X = clone(step).fit_transform(X)
    except Exception:  # noqa: BLE001 - the per-fit path reproduces it
        return None
    return X


def steps_key(steps):
    """A key under which candidates with the same preprocessing share one transformed ``X``:
    the steps' classes and parameters (a callable by identity, arrays in full)."""
    with np.printoptions(threshold=np.inf):
        return tuple((type(step), repr(sorted((name, repr(value)) for name, value
                                              in step.get_params(deep=False).items())))
                     for step in steps)


def batched_family(estimator):
    """The batched family of a configured estimator, or None (the per-fit path).

    Parameters
    ----------
    estimator : estimator
        A candidate, its parameters set.

    Returns
    -------
    family : module or None
        An entry of :data:`FAMILIES`, looked up by the estimator's exact class.
    """
    return FAMILIES.get(type(estimator))


def prepare_data(X, y, max_classes):
    """``X`` as a dense finite float64 array and ``y`` as class codes, or None to fall back.

    The codes follow ``np.unique`` order, so each partition's classes (the labels present in
    its training rows, as ``np.unique`` of them) keep their order and ties break as in
    scikit-learn. The encoding is a relabelling only: no partition's fit sees another's rows.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    max_classes : int
        Above this many distinct labels, fall back.

    Returns
    -------
    data : types.SimpleNamespace or None
        ``X``, ``codes`` and ``n_classes``.
    """
    if sparse.issparse(X) or y is None or np.ndim(y) != 1:
        return None
    try:
        X = np.asarray(X, dtype=np.float64)
        labels = np.asarray(y)
        classes, codes = np.unique(labels, return_inverse=True)
    except (TypeError, ValueError):
        return None
    # What the real fit rejects (non-finite values, NaN labels) is left to the real fit.
    if X.ndim != 2 or X.shape[0] != len(labels) or not np.all(np.isfinite(X)):
        return None
    if labels.dtype.kind in "fc" and not np.all(np.isfinite(labels)):
        return None
    if labels.dtype.kind == "O" and not all(isinstance(label, str) for label in labels):
        return None  # mixed objects: left to the real fit
    if labels.dtype.kind not in "biufUSO" or len(classes) > max_classes:
        return None
    return SimpleNamespace(X=X, codes=codes.astype(np.intp), n_classes=len(classes))


def blocks(splits, n_features, n_tasks):
    """Partition indices cut into contiguous blocks: at least ``n_tasks`` (at most one per
    partition), and small enough that a block holds about :data:`BLOCK_CELLS` cells of ``X``.

    Returns
    -------
    blocks : list of ndarray
    """
    n_rows = sum(len(train) + len(validation) for train, validation in splits)
    wanted = max(n_tasks, -(-n_rows * max(n_features, 1) // BLOCK_CELLS))
    return [block for block in np.array_split(np.arange(len(splits)), min(len(splits), wanted))
            if len(block)]


def block_task(splits, block, codes):
    """What a task carries for one block: its rows' indices, class codes and partition within
    the block (sliced here, so that a task carries its block's labels, not all of ``y``)."""
    def rows(side):
        index = [splits[p][side] for p in block]
        part = np.repeat(np.arange(len(block)), [len(i) for i in index])
        index = np.concatenate(index) if index else np.empty(0, dtype=np.intp)
        return index.astype(np.intp), codes[index], part
    return SimpleNamespace(partitions=np.asarray(block), train=rows(0), validation=rows(1))


def block_accuracies(family, plans, candidate_ids, X, task, n_classes, entropy):
    """Run in a joblib worker: the accuracies of ``plans`` on the block's partitions.

    Parameters
    ----------
    family : module
        An entry of :data:`FAMILIES`.
    plans : list
        The family's plans, one per candidate.
    candidate_ids : list of int
        The candidates' indices in the grid (they key the noise streams).
    X : ndarray
        All of ``X`` (memory-mapped by joblib's process backends); the task indexes its rows.
    task : types.SimpleNamespace
        From :func:`block_task`.
    n_classes : int
    entropy : int
        Root of the noise streams.

    Returns
    -------
    accuracies : ndarray of shape (len(plans), len(block))
        NaN where a partition has no training or no held-out rows.
    """
    (train, y_train, part_train), (validation, y_val, part_val) = task.train, task.validation
    # One stream per (partition, candidate): a partition's noise never depends on which
    # block, task or worker it landed in, nor on the other partitions.
    rngs = [[np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(int(p), int(c))))
             for p in task.partitions] for c in candidate_ids]
    return family.partition_accuracies(
        plans, X[train], y_train, part_train, X[validation], y_val, part_val,
        len(task.partitions), n_classes, rngs,
    )


def stream_entropy(random_state):
    """Root entropy of the emulation noise: from ``random_state`` (None: fresh OS entropy).

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator

    Returns
    -------
    entropy : int
    """
    if random_state is None:
        return int(np.random.SeedSequence().entropy)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int64).max))
    return int(random_state)
