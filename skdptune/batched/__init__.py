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
back to the per-fit path; ``n_features`` is None when the width is not known, for the forecast
before the data, and the plan then decides from the parameters alone) and
``partition_accuracies(...)`` (NaN for a partition without
training or held-out rows, ``-inf``, :data:`~skdptune.batched.common.FIT_FAILED`, where
the real fit would raise: that partition then scores ``error_score``); :data:`FAMILIES` maps an
exact estimator class to it. Adding a family is one module and one row here. A family whose fit
depends on the label values (declared ``classes`` compared with ``y``) also has
``bind_labels(plan, labels)``, given the sorted distinct labels of ``y`` (the order of the
codes); it returns the plan or None, and must map each label on its own (a record's
contribution may depend on its own label, never on which other labels occur).

A family declares the per-partition score it computes as ``SCORE``
(:func:`~skdptune.batched.common.family_score`; absent: plain accuracy of class codes). The
engine batches a candidate only when the search's utility is that score
(:func:`skdptune.evaluate.batched_route`); a family scored by
:data:`~skdptune.batched.common.BOUNDED_R2` (diffprivlib's ``LinearRegression``)
receives ``y`` as float values, not codes (:func:`prepare_data` with ``regression``), and
returns that score where the others return accuracy. A family scored by
:data:`~skdptune.batched.common.NEGATIVE_INERTIA` (diffprivlib's ``KMeans``, whose ``score`` is
the search's utility under ``scoring=None``) returns the raw ``KMeans.score``, which the engine
maps by the utility's range; it declares ``USES_LABELS = False``
(:func:`~skdptune.batched.common.uses_labels`): it is batched with ``y`` None too, and
:func:`prepare_data` with ``unsupervised`` gives it no codes.

Pipelines: a :class:`~sklearn.pipeline.Pipeline` before a family's estimator is batched too
(:func:`split_pipeline`), in two stages:

- Public steps (:func:`is_public_step`: the refit gate's ``"public"`` entries, their conditions
  met) learn nothing from the rows: they are applied once to all rows
  (:func:`transform_all_rows`), which is what every partition's own pipeline computes on its
  rows.
- Then at most one partition stage: a DP transformer of :data:`PARTITION_STEPS`, or a
  :class:`~sklearn.compose.ColumnTransformer` whose branches are public steps,
  ``"passthrough"``/``"drop"`` or partition steps. Its public branches are applied once to all
  rows (:func:`lay_out`); each DP branch is fitted per partition, on the partition's own
  training rows with its own stream, and applied to that partition's rows, inside the task
  (:func:`apply_partition_steps`), before the family's ``partition_accuracies`` sees them.

A partition step is a module with ``plan(step, n_features)`` (public parameters with an
``n_features_out`` attribute, or None to fall back) and ``transform_partitions(plan, X_train,
part_train, X_val, part_val, n_parts, rngs)`` (each partition's rows through its own fit);
:data:`PARTITION_STEPS` maps an exact transformer class to it. Adding one is one module and one
row there; families need no change (they receive per-row arrays with partition indices, already
transformed per partition).
"""

from types import SimpleNamespace
from typing import NamedTuple

import numpy as np
from diffprivlib.models import (
    DecisionTreeClassifier,
    GaussianNB,
    KMeans,
    LinearRegression,
    LogisticRegression,
    RandomForestClassifier,
)
from diffprivlib.models import PCA as DPPCA
from diffprivlib.models import StandardScaler as DPStandardScaler
from scipy import sparse
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from .. import gate
from ..dp_fit import private_fit_context
from ..ensemble import RandomForestClassifier as SecureRandomForestClassifier
from ..linear_model import LogisticRegression as CalibratedLogisticRegression
from ..linear_model import Ridge
from ..tree import DecisionTreeClassifier as SecureDecisionTreeClassifier
from . import (
    forest,
    gaussian_nb,
    kmeans,
    linear_regression,
    logistic_regression,
    pca,
    standard_scaler,
)
from .common import (  # noqa: F401 - re-exported
    ACCURACY,
    BOUNDED_R2,
    NEGATIVE_INERTIA,
    family_score,
    uses_labels,
)

#: Estimator class (matched exactly: a subclass may change ``fit``) -> batched family module.
FAMILIES = {
    GaussianNB: gaussian_nb,
    LogisticRegression: logistic_regression,
    CalibratedLogisticRegression: logistic_regression,
    RandomForestClassifier: forest,
    DecisionTreeClassifier: forest,
    SecureRandomForestClassifier: forest,
    SecureDecisionTreeClassifier: forest,
    LinearRegression: linear_regression,
    Ridge: linear_regression,
    KMeans: kmeans,
}

#: Cells (rows x features) of ``X`` a batched task holds at once, about 16 MB in float64.
BLOCK_CELLS = 2 ** 21


#: DP transformer class (matched exactly) -> partition step module: fitted per partition,
#: inside the task, before the family (see the module docstring for the interface).
PARTITION_STEPS = {
    DPStandardScaler: standard_scaler,
    DPPCA: pca,
}


def is_public_step(step):
    """Whether ``step`` learns nothing private, so that applying it once to all rows is what
    every partition's pipeline computes on its own rows.

    Decided by the refit gate's table (:data:`skdptune.gate.ALLOWED`): an entry of kind
    ``"public"`` for the step's exact class whose condition the step meets. Each such entry is
    a function of its input row and public constants (checked entry by entry):
    ``OneHotEncoder``/``OrdinalEncoder`` with declared categories (their conditions refuse
    learned categories and frequency merges; an unknown value fails the fit of all rows, and
    the candidate then takes the per-fit path), ``Normalizer``, ``Binarizer``,
    ``PolynomialFeatures`` (reads the public number of features), the identity
    ``FunctionTransformer``, :class:`~skdptune.preprocessing.RowWiseFunctionTransformer` (on its
    user's declaration), ``SimpleImputer`` with a constant fill value and no indicator (every
    column kept, filled with the constant), and the vectorizers with a declared vocabulary and
    no idf (sparse output: ``prepare_data`` then falls back).

    Parameters
    ----------
    step : estimator

    Returns
    -------
    public : bool
    """
    rule = gate.ALLOWED.get(type(step))
    return (rule is not None and rule.kind == "public"
            and (rule.condition is None or rule.condition(step) is None))


def _skipped(step):
    return step is None or (isinstance(step, str) and step == "passthrough")


def _column_stage(transformer):
    """``"public"`` if every branch of a ``ColumnTransformer`` is public, ``"partition"`` if
    some are partition steps and the rest public, or None (the per-fit path)."""
    if (transformer.transformer_weights is not None
            or not (isinstance(transformer.remainder, str)
                    and transformer.remainder in ("drop", "passthrough"))
            or gate.ALLOWED[ColumnTransformer].condition(transformer) is not None):
        return None
    kind = "public"
    for _, branch, _ in transformer.transformers:
        if isinstance(branch, str) and branch in ("drop", "passthrough"):
            continue
        if type(branch) in PARTITION_STEPS:
            kind = "partition"
        elif not is_public_step(branch):
            return None
        elif transformer.sparse_threshold > 0 and _may_be_sparse(branch):
            # The stacked output's sparsity would then be decided per partition from its
            # density (data): left to the per-fit path.
            return None
    return kind


def _may_be_sparse(step):
    output = gate.ALLOWED[type(step)].output
    output = output(step) if callable(output) else output
    return output != gate.DENSE


def split_pipeline(estimator):
    """The public steps, the partition stage and the final estimator, or None (per-fit path).

    A plain estimator is ``([], None, estimator)``. A :class:`~sklearn.pipeline.Pipeline`
    (without ``memory``) is ``(steps, stage, final)``: ``steps`` the public steps
    (:func:`is_public_step`, or a ``ColumnTransformer`` of public branches) before the first
    partition step, applied once to all rows; ``stage`` None, a step of
    :data:`PARTITION_STEPS`, or a ``ColumnTransformer`` whose branches are public steps,
    ``"passthrough"``/``"drop"`` or partition steps (``remainder`` ``"drop"`` or
    ``"passthrough"``, no ``transformer_weights``, and no branch that may output a sparse
    matrix unless ``sparse_threshold=0``); ``"passthrough"`` and None are skipped. Anything
    else, and any step after the partition stage but the final one, is None.

    Parameters
    ----------
    estimator : estimator
        A candidate, its parameters set.

    Returns
    -------
    split : tuple of (list, estimator or None, estimator) or None
    """
    if type(estimator) is not Pipeline:
        return [], None, estimator
    if estimator.memory is not None:
        return None
    *before, (_, final) = estimator.steps
    steps, stage = [], None
    for _, step in before:
        if _skipped(step):
            continue
        if stage is not None:
            return None  # after a partition step: it would be fitted per partition
        if type(step) is ColumnTransformer:
            kind = _column_stage(step)
            if kind is None:
                return None
            if kind == "partition":
                stage = step
            else:
                steps.append(step)
        elif type(step) in PARTITION_STEPS:
            stage = step
        elif is_public_step(step):
            steps.append(step)
        else:
            return None
    return steps, stage, final


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


def _public_view(stage):
    """A ``ColumnTransformer`` stage with its partition steps replaced by the identity: its
    output has each partition step's input columns where that step's output goes."""
    view = clone(stage)
    view.set_params(**{name: FunctionTransformer() for name, branch, _ in stage.transformers
                       if type(branch) in PARTITION_STEPS})
    return view


def stage_key(stage):
    """What candidates sharing one :func:`lay_out` of ``X`` have in common: the stage's
    structure without its partition steps' parameters (a tuple, for :func:`steps_key`)."""
    if stage is None:
        return ()
    if type(stage) is ColumnTransformer:
        names = tuple(name for name, branch, _ in stage.transformers
                      if type(branch) in PARTITION_STEPS)
        return (("columns", names),) + steps_key([_public_view(stage)])
    return (("step", type(stage)),)


def lay_out(stage, X):
    """``X`` laid out for a partition stage, or None if a public branch fails.

    Without a stage, ``X`` itself. For a partition step, ``X`` itself: the step's input is all
    columns. For a ``ColumnTransformer``, its output on all rows with every partition step
    replaced by the identity (:func:`_public_view`): the public branches applied once, in the
    transformer's own output order, each partition step's input columns where its output goes.
    Runs inside :func:`~skdptune.dp_fit.private_fit_context`, as :func:`transform_all_rows`.

    Parameters
    ----------
    stage : estimator or None
        From :func:`split_pipeline`.
    X : array-like of shape (n_samples, n_features)

    Returns
    -------
    layout : types.SimpleNamespace or None
        ``X`` (array-like), and ``slots``: ``(start, stop, branch name)`` of each partition
        step's columns in it (the name is None for a lone partition step).
    """
    if stage is None:
        return SimpleNamespace(X=X, slots=[])
    if type(stage) is not ColumnTransformer:
        n_features = np.shape(X)[1] if np.ndim(X) == 2 else 0
        return SimpleNamespace(X=X, slots=[(0, n_features, None)])
    try:
        with private_fit_context(reveal=False):
            view = _public_view(stage)
            Xt = view.fit_transform(X)
    except Exception:  # noqa: BLE001 - the per-fit path reproduces it
        return None
    slots = [(view.output_indices_[name].start, view.output_indices_[name].stop, name)
             for name, branch, _ in stage.transformers if type(branch) in PARTITION_STEPS]
    return SimpleNamespace(X=Xt, slots=sorted(slots, key=lambda slot: slot[0]))


class PartitionStep(NamedTuple):
    """One partition step of a candidate, as a task applies it.

    Attributes
    ----------
    start, stop : int
        Its input columns in the laid-out ``X`` (:func:`lay_out`).
    module : module
        An entry of :data:`PARTITION_STEPS`.
    plan : object
        The module's plan of the candidate's step.
    """

    start: int
    stop: int
    module: object
    plan: object


def plan_stage(stage, slots, n_features):
    """A candidate's partition steps and the width of their output, or None to fall back.

    Parameters
    ----------
    stage : estimator or None
        The candidate's own stage (its steps' parameters, partition-rescaled if the search
        rescales them).
    slots : list of tuple
        From :func:`lay_out` (of any candidate with the same :func:`stage_key`).
    n_features : int
        Columns of the laid-out ``X``.

    Returns
    -------
    planned : tuple of (tuple of PartitionStep, int) or None
    """
    if stage is None:
        return (), n_features
    branches = ({name: branch for name, branch, _ in stage.transformers}
                if type(stage) is ColumnTransformer else {None: stage})
    pieces, width = [], n_features
    for start, stop, name in slots:
        step = branches[name]
        module = PARTITION_STEPS[type(step)]
        plan = module.plan(step, stop - start)
        if plan is None:
            return None
        pieces.append(PartitionStep(start, stop, module, plan))
        width += plan.n_features_out - (stop - start)
    return tuple(pieces), width


def apply_partition_steps(pieces, X_train, part_train, X_val, part_val, partitions, entropy,
                          candidate):
    """The block's rows through one candidate's partition steps, each partition's own fit.

    Columns outside the steps are kept as they are; the output has the columns in layout
    order, each step's output where its input was. Step ``i`` of candidate ``c`` on partition
    ``p`` draws from ``SeedSequence(entropy, spawn_key=(p, c, i))``: its own stream,
    independent of the family's ``(p, c)`` and of the other partitions.

    Parameters
    ----------
    pieces : tuple of PartitionStep
    X_train, part_train, X_val, part_val : ndarray
        The block's rows in the layout and their partitions within the block.
    partitions : ndarray
        The block's partition indices (key the streams).
    entropy : int
    candidate : int
        The candidate's index in the grid.

    Returns
    -------
    X_train, X_val : ndarray
    """
    train_parts, val_parts, last = [], [], 0
    for i, (start, stop, module, plan) in enumerate(pieces):
        rngs = [np.random.default_rng(np.random.SeedSequence(
            entropy, spawn_key=(int(p), int(candidate), i))) for p in partitions]
        train, val = module.transform_partitions(
            plan, X_train[:, start:stop], part_train, X_val[:, start:stop], part_val,
            len(partitions), rngs)
        train_parts += [X_train[:, last:start], train]
        val_parts += [X_val[:, last:start], val]
        last = stop
    train_parts.append(X_train[:, last:])
    val_parts.append(X_val[:, last:])
    return np.hstack(train_parts), np.hstack(val_parts)


def steps_key(steps):
    """A key under which candidates with the same preprocessing share one transformed ``X``:
    the steps' classes and parameters, nested estimators followed (a callable by identity,
    arrays in full)."""
    return tuple(_param_key(step) for step in steps)


def _param_key(value):
    if hasattr(value, "get_params") and not isinstance(value, type):
        return (type(value), tuple(sorted(
            (name, _param_key(param)) for name, param in value.get_params(deep=False).items())))
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_param_key(item) for item in value))
    if isinstance(value, dict):
        return (dict, tuple(sorted((repr(k), _param_key(v)) for k, v in value.items())))
    with np.printoptions(threshold=np.inf):
        return repr(value)


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


def prepare_data(X, y, max_classes, regression=False, unsupervised=False):
    """``X`` as a dense finite float64 array and ``y`` as class codes, or None to fall back.

    With ``regression`` (a family whose ``SCORE`` is :data:`BOUNDED_R2`), ``y`` is
    kept as finite float64 values instead of codes (``n_classes`` 0, ``labels`` None), as
    diffprivlib's ``validate_data(y_numeric=True)`` converts it. The codes follow
    ``np.unique`` order, so each partition's classes (the labels present in
    its training rows, as ``np.unique`` of them) keep their order and ties break as in
    scikit-learn. The encoding is a relabelling only: no partition's fit sees another's rows.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    max_classes : int or None
        Above this many distinct labels, fall back (unused with ``regression``).
    regression : bool, default=False
        Keep ``y`` as float values.
    unsupervised : bool, default=False
        For a family that does not read ``y`` (:func:`~skdptune.batched.common.uses_labels`):
        ``y`` (None or anything) is ignored; ``codes`` are zeros, ``labels`` None.

    Returns
    -------
    data : types.SimpleNamespace or None
        ``X``, ``codes``, ``n_classes`` and ``labels`` (the distinct labels, in code order).
    """
    if unsupervised and not sparse.issparse(X):
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            return None
        if X.ndim != 2 or not np.all(np.isfinite(X)):
            return None  # left to the real fit
        return SimpleNamespace(X=X, codes=np.zeros(len(X), dtype=np.intp), n_classes=0,
                               labels=None)
    if sparse.issparse(X) or y is None or np.ndim(y) != 1:
        return None
    try:
        X = np.asarray(X, dtype=np.float64)
        labels = np.asarray(y)
        if regression:
            values = np.asarray(y, dtype=np.float64) if labels.dtype.kind in "biuf" else None
        classes, codes = ((None, None) if regression
                          else np.unique(labels, return_inverse=True))
    except (TypeError, ValueError):
        return None
    # What the real fit rejects (non-finite values, NaN labels) is left to the real fit.
    if X.ndim != 2 or X.shape[0] != len(labels) or not np.all(np.isfinite(X)):
        return None
    if labels.dtype.kind in "fc" and not np.all(np.isfinite(labels)):
        return None
    if regression:
        # Strings or complex targets: left to the real fit.
        return None if values is None else SimpleNamespace(X=X, codes=values, n_classes=0,
                                                           labels=None)
    if labels.dtype.kind == "O" and not all(isinstance(label, str) for label in labels):
        return None  # mixed objects: left to the real fit
    if labels.dtype.kind not in "biufUSO" or len(classes) > max_classes:
        return None
    return SimpleNamespace(X=X, codes=codes.astype(np.intp), n_classes=len(classes),
                           labels=classes)


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


def block_accuracies(family, plans, candidate_ids, X, task, n_classes, entropy, steps=None):
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
    steps : list of tuple of PartitionStep, optional
        Each candidate's partition steps (:func:`plan_stage`), applied to the block's rows
        per partition (:func:`apply_partition_steps`) before the family fits them; ``X`` is
        then the laid-out ``X`` (:func:`lay_out`). None or empty: ``X`` goes to the family.

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
    X_train, X_val, n_parts = X[train], X[validation], len(task.partitions)
    if not steps or not any(steps):
        return family.partition_accuracies(plans, X_train, y_train, part_train, X_val, y_val,
                                           part_val, n_parts, n_classes, rngs)
    # Each candidate's partition steps give it its own rows: one family call per candidate.
    accuracies = np.empty((len(plans), n_parts))
    for j, (plan, pieces, candidate) in enumerate(zip(plans, steps, candidate_ids)):
        Xt_train, Xt_val = apply_partition_steps(pieces, X_train, part_train, X_val, part_val,
                                                 task.partitions, entropy, candidate)
        accuracies[j] = family.partition_accuracies(
            [plan], Xt_train, y_train, part_train, Xt_val, y_val, part_val, n_parts,
            n_classes, [rngs[j]])[0]
    return accuracies


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
