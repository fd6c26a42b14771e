"""Pipelines on the batched path: which steps run once on all rows, and which per partition.

A :class:`~sklearn.pipeline.Pipeline` before a family's estimator is batched in two stages
(:func:`split_pipeline`):

- Public steps (:func:`is_public_step`: the refit gate's ``"public"`` entries, their conditions
  met) learn nothing from the rows: applied once to all rows (:func:`transform_all_rows`), they
  give what every partition's own pipeline computes on its rows.
- Then at most one partition stage: a DP transformer of
  :data:`~skdptune._batched.registry.PARTITION_STEPS`, or a
  :class:`~sklearn.compose.ColumnTransformer` whose branches are public steps,
  ``"passthrough"``/``"drop"`` or partition steps. Its public branches are applied once to all
  rows (:func:`lay_out`); each partition step is fitted per partition, on the partition's own
  training rows with its own stream, and applied to that partition's rows, inside the task
  (:func:`apply_partition_steps`), before the family sees them.
"""

from types import SimpleNamespace
from typing import NamedTuple

import numpy as np
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from .. import _gate as gate
from .._dp_fit import private_fit_context
from . import registry


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
    no idf (sparse output: the engine's conversion then falls back).

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
        if type(branch) in registry.PARTITION_STEPS:
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
    partition step, applied once to all rows; ``stage`` None, a partition step, or a
    ``ColumnTransformer`` whose branches are public steps, ``"passthrough"``/``"drop"`` or
    partition steps (``remainder`` ``"drop"`` or ``"passthrough"``, no
    ``transformer_weights``, and no branch that may output a sparse matrix unless
    ``sparse_threshold=0``); ``"passthrough"`` and None are skipped. Anything else, and any
    step after the partition stage but the final one, is None.

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
        elif type(step) in registry.PARTITION_STEPS:
            stage = step
        elif is_public_step(step):
            steps.append(step)
        else:
            return None
    return steps, stage, final


def _fit_transform_privately(transformers, X):
    """``X`` through clones of ``transformers``, each fitted on all rows, or None if one fails.

    Runs inside :func:`~skdptune.dp_fit.private_fit_context`: what the steps warn or print
    about the private rows is recorded and dropped, as for any partition fit. A failure (a
    value a step rejects) sends the candidate to the per-fit path, which gives it a real fit's
    outcome.
    """
    try:
        with private_fit_context(reveal=False):
            for transformer in transformers:
                X = transformer.fit_transform(X)
    except Exception:  # noqa: BLE001 - the per-fit path reproduces it
        return None
    return X


def transform_all_rows(steps, X):
    """``X`` through the public ``steps``, each fitted on all rows (:func:`split_pipeline`
    admits only steps for which that is what each partition's own pipeline computes on its
    rows), or None if one fails.

    Parameters
    ----------
    steps : list of transformer
    X : array-like of shape (n_samples, n_features)

    Returns
    -------
    Xt : array-like or None
    """
    return _fit_transform_privately([clone(step) for step in steps], X)


def _public_view(stage):
    """A ``ColumnTransformer`` stage with its partition steps replaced by the identity: its
    output has each partition step's input columns where that step's output goes."""
    view = clone(stage)
    view.set_params(**{name: FunctionTransformer() for name, branch, _ in stage.transformers
                       if type(branch) in registry.PARTITION_STEPS})
    return view


def stage_key(stage):
    """What candidates sharing one :func:`lay_out` of ``X`` have in common: the stage's
    structure without its partition steps' parameters (a tuple, for :func:`steps_key`)."""
    if stage is None:
        return ()
    if type(stage) is ColumnTransformer:
        names = tuple(name for name, branch, _ in stage.transformers
                      if type(branch) in registry.PARTITION_STEPS)
        return (("columns", names),) + steps_key([_public_view(stage)])
    return (("step", type(stage)),)


def lay_out(stage, X):
    """``X`` laid out for a partition stage, or None if a public branch fails.

    Without a stage, ``X`` itself. For a partition step, ``X`` itself: the step's input is all
    columns. For a ``ColumnTransformer``, its output on all rows with every partition step
    replaced by the identity (:func:`_public_view`): the public branches applied once, in the
    transformer's own output order, each partition step's input columns where its output goes.

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
    view = _public_view(stage)
    Xt = _fit_transform_privately([view], X)
    if Xt is None:
        return None
    slots = [(view.output_indices_[name].start, view.output_indices_[name].stop, name)
             for name, branch, _ in stage.transformers
             if type(branch) in registry.PARTITION_STEPS]
    return SimpleNamespace(X=Xt, slots=sorted(slots, key=lambda slot: slot[0]))


class StepPlan(NamedTuple):
    """One partition step of a candidate, as a task applies it.

    Attributes
    ----------
    start, stop : int
        Its input columns in the laid-out ``X`` (:func:`lay_out`).
    module : module
        An entry of :data:`~skdptune._batched.registry.PARTITION_STEPS`.
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
    planned : tuple of (tuple of StepPlan, int) or None
    """
    if stage is None:
        return (), n_features
    branches = ({name: branch for name, branch, _ in stage.transformers}
                if type(stage) is ColumnTransformer else {None: stage})
    pieces, width = [], n_features
    for start, stop, name in slots:
        step = branches[name]
        module = registry.PARTITION_STEPS[type(step)]
        plan = module.plan(step, stop - start)
        if plan is None:
            return None
        pieces.append(StepPlan(start, stop, module, plan))
        width += plan.n_features_out - (stop - start)
    return tuple(pieces), width


def apply_partition_steps(pieces, block, partitions, entropy, candidate):
    """The block's rows through one candidate's partition steps, each partition's own fit.

    Columns outside the steps are kept as they are; the output has the columns in layout
    order, each step's output where its input was. Step ``i`` of candidate ``c`` on partition
    ``p`` draws from ``SeedSequence(entropy, spawn_key=(p, c, i))``: its own stream,
    independent of the family's ``(p, c)`` and of the other partitions.

    Parameters
    ----------
    pieces : tuple of StepPlan
    block : skdptune._batched.contract.Block
        The block's rows in the layout.
    partitions : ndarray
        The block's partition indices (key the streams).
    entropy : int
    candidate : int
        The candidate's index in the grid.

    Returns
    -------
    block : skdptune._batched.contract.Block
        Non-finite rows (a partition whose step fit raises) replaced by zeros.
    failed : ndarray of shape (block.n_parts,), bool
        The partitions with a non-finite row, training or held-out: the real pipeline would
        raise there (a step's fit, or the next step's check of its input, which every
        family's real fit makes), and the engine scores them ``FIT_FAILED``.
    """
    X_train, X_val = block.X_train, block.X_val
    train_parts, val_parts, last = [], [], 0
    for i, (start, stop, module, plan) in enumerate(pieces):
        rngs = [np.random.default_rng(np.random.SeedSequence(
            entropy, spawn_key=(int(p), int(candidate), i))) for p in partitions]
        train, val = module.transform_partitions(
            plan, block.with_X(X_train[:, start:stop], X_val[:, start:stop]), rngs)
        train_parts += [X_train[:, last:start], train]
        val_parts += [X_val[:, last:start], val]
        last = stop
    train_parts.append(X_train[:, last:])
    val_parts.append(X_val[:, last:])
    X_train, X_val = np.hstack(train_parts), np.hstack(val_parts)
    failed = np.zeros(block.n_parts, dtype=bool)
    for X, part in ((X_train, block.part_train), (X_val, block.part_val)):
        bad = ~np.isfinite(X).all(axis=1)
        failed[part[bad]] = True
        X[bad] = 0.0
    return block.with_X(X_train, X_val), failed


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
