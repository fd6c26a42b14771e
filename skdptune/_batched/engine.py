"""The batched engine's door: which candidates it fits, and their partition utilities.

Two entry points, for the evaluate stage (:mod:`skdptune.evaluate`) and whoever shares its
routing (the forecast, ``fit``'s verbose line):

- :func:`candidate_paths`: each candidate's path, ``"batched"`` or ``"per-fit"``, from its
  parameters and the scorer alone;
- :func:`batched_work`: the candidates the engine fits on the data, as joblib tasks (blocks of
  partitions) and the map of their outcomes to partition utilities.

The contract with the families, the privacy argument, the noise streams, the routing and the
version pin: ``DESIGN.md``, "The batched engine". In short: a candidate whose final estimator's
exact class is in :data:`~skdptune._batched.registry.FAMILIES`, after public steps and at most
one partition stage (:mod:`skdptune._batched.pipeline`), scored by the family's
:class:`~skdptune._batched.contract.Score`, without fit or scorer parameters, is fitted on all
partitions at once by its family; everything else takes the per-fit path.
"""

import dataclasses
import warnings
from types import SimpleNamespace

import diffprivlib
import numpy as np
import scipy
from joblib import delayed
from scipy import sparse

from .._dp_fit import with_params
from .._utility import EMPTY_PART_UTILITY
from . import pipeline, registry
from .contract import (
    CODES,
    FIT_FAILED,
    NO_TARGET,
    VALUES,
    BindsLabels,
    BindsScore,
    Block,
    check_scores,
    scores_of,
)

#: The versions the emulations were tested against, as in ``pyproject.toml``
#: (``[tool.skdptune.batched-engine]``): every family reproduces diffprivlib 0.6.6's fit, and
#: the logistic family's solver scipy 1.17's L-BFGS-B iterate by iterate. An installed version
#: matches an entry equal to it or one that is a prefix of it at a dot. On any other version
#: the engine steps aside (:func:`versions_tested`).
TESTED_VERSIONS = {"diffprivlib": ("0.6.6",), "scipy": ("1.17",)}

#: Cells (rows x features) of ``X`` a task holds at once, about 16 MB in float64.
BLOCK_CELLS = 2 ** 21

#: With several workers, a group of candidates is cut into at most this many tasks per worker
#: (for the load balance)...
TASKS_PER_WORKER = 4

#: ... and into no more tasks than it has units of this much work (rows x features x
#: candidates): a task's fixed costs (its solver's bookkeeping per round, its share of the
#: data) are paid per task, so cutting small work finer only adds them.
MIN_TASK_WORK = 2 ** 24

_noticed = set()


def versions_tested():
    """Whether the installed diffprivlib and scipy are versions the emulations were tested
    against (:data:`TESTED_VERSIONS`); if not, a warning, once per process, says that the
    partition fits take the per-fit path.

    Returns
    -------
    tested : bool
    """
    installed = {"diffprivlib": diffprivlib.__version__, "scipy": scipy.__version__}
    untested = {name: version for name, version in installed.items()
                if not any(version == tested or version.startswith(tested + ".")
                           for tested in TESTED_VERSIONS[name])}
    if untested and tuple(untested.items()) not in _noticed:
        _noticed.add(tuple(untested.items()))
        warnings.warn(
            "skdptune's batched engine emulates diffprivlib "
            f"{' or '.join(TESTED_VERSIONS['diffprivlib'])} and scipy "
            f"{' or '.join(TESTED_VERSIONS['scipy'])}'s L-BFGS-B, but "
            + ", ".join(f"{name} {version}" for name, version in untested.items())
            + " is installed: every partition fit runs the estimator's own fit instead "
            "(right on any version, slower). The privacy guarantee does not depend on it.",
            UserWarning, stacklevel=2)
    return not untested


def _route(configured, utility):
    """The routing of one candidate, from its parameters and the scorer only.

    A :class:`~sklearn.pipeline.Pipeline` cut by
    :func:`~skdptune._batched.pipeline.split_pipeline`, a final estimator whose exact class has
    a family, and a utility that is one of the family's scores (the first whose ``matches``
    holds: its ``SCORE``, or one of its ``SCORES``). What follows
    depends on the data, in :func:`batched_work` only: the steps applied to all rows, the
    conversion of ``X`` and ``y`` and the family's ``plan`` at the width they give; a failure
    there sends the candidate to the per-fit path, which has the same law.

    Parameters
    ----------
    configured : estimator
        A candidate, its parameters set.
    utility : skdptune.utility.BoundedUtility

    Returns
    -------
    route : types.SimpleNamespace or None
        ``steps``, ``stage``, ``final`` (:func:`~skdptune._batched.pipeline.split_pipeline`),
        ``family`` and ``score``; None for the per-fit path.
    """
    split = pipeline.split_pipeline(configured)
    if split is None:
        return None
    steps, stage, final = split
    family = registry.FAMILIES.get(type(final))
    if family is None:
        return None
    score = next((score for score in scores_of(family) if score.matches(utility, configured)),
                 None)
    if score is None:
        return None
    return SimpleNamespace(steps=steps, stage=stage, final=final, family=family, score=score)


def _bound(found, plan):
    """``plan`` bound to the route's score (a :class:`~skdptune._batched.contract.BindsScore`
    family), or as it is; None stays None."""
    if plan is None or not isinstance(found.family, BindsScore):
        return plan
    return found.family.bind_score(plan, found.score)


def _admits(fit_params, score_params, y_ndim, family):
    """Whether the inputs of ``fit`` admit the batched path: no fit or scorer parameters (the
    families take none), and a 1-d ``y``, or none (``y_ndim`` None) for a family that does not
    read it. Public facts: the caller's arguments and the shape of ``y``."""
    if fit_params or score_params:
        return False
    return y_ndim == 1 or (y_ndim is None and family.TARGET == NO_TARGET)


def candidate_paths(estimator, candidates, utility, n_features=None, *, fit_params=None,
                    score_params=None, y_ndim=1):
    """Each candidate's path, ``"batched"`` or ``"per-fit"``, decided from parameters only.

    The decision the evaluate stage, the forecast and ``fit``'s verbose line share:
    :func:`_route`, then the family's ``plan`` at the width of the final estimator's input
    when the parameters tell it (``n_features`` for an estimator without steps before it),
    else ``plan(final, None)``. The data can still send a batched candidate to the per-fit
    path in :func:`batched_work` (values a step or the conversion rejects, more classes than
    the family takes); which one it did depends on the data and is not reported.

    Parameters
    ----------
    estimator : estimator
        The unfitted base estimator.
    candidates : list of dict
        Parameter settings (the partition fits' own, where known).
    utility : skdptune.utility.BoundedUtility
    n_features : int or None, default=None
        Columns of ``X``, when known.
    fit_params, score_params : dict or None, default=None
        What ``fit`` will be given; any sends every candidate to the per-fit path.
    y_ndim : int or None, default=1
        Dimensions of ``y`` (None without ``y``).

    Returns
    -------
    paths : tuple of str
    """
    plans = []
    for params in candidates:
        found = _route(with_params(estimator, params), utility)
        plan = None
        if found is not None and _admits(fit_params, score_params, y_ndim, found.family):
            width = None if found.steps or found.stage is not None else n_features
            plan = _bound(found, found.family.plan(found.final, width))
        plans.append(plan)
    if any(plan is not None for plan in plans) and not versions_tested():
        plans = [None] * len(plans)
    return tuple("per-fit" if plan is None else "batched" for plan in plans)


def batched_work(estimator, candidates, X, y, splits, utility, error_score, *, fit_params=None,
                 score_params=None, random_state=None, n_workers=1):
    """The candidates the engine fits, as joblib tasks and the map of their outcomes.

    Parameters
    ----------
    estimator : estimator
        The unfitted base estimator.
    candidates : list of dict
        The partition fits' parameter settings.
    X, y : array-like
        All the data; partitions are row indices into them.
    splits : list of (ndarray, ndarray)
        ``(train_indices, validation_indices)`` of every partition.
    utility : skdptune.utility.BoundedUtility
    error_score : float or "raise"
    fit_params, score_params : dict or None, default=None
        Any sends every candidate to the per-fit path.
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator
        Root of the emulation noise (one stream per partition and candidate); None draws
        fresh OS entropy. Not a privacy parameter: partition fits are never released.
    n_workers : int, default=1
        Workers the tasks may be spread over (cut into more tasks only when the work is
        large enough to pay for them: :data:`MIN_TASK_WORK`).

    Returns
    -------
    work : BatchedWork
        ``ids`` (the candidates batched, possibly none), ``tasks`` and ``fits`` (partition
        fits per task), and ``collect(outcomes)``.
    """
    grouped = _groups(estimator, candidates, X, y, utility, fit_params, score_params)
    if not grouped:
        return BatchedWork([], splits, utility, error_score, 0)
    return BatchedWork(grouped, splits, utility, error_score, _stream_entropy(random_state),
                       n_workers)


@dataclasses.dataclass
class _Group:
    """Candidates of one family and one preprocessing: one laid-out ``X`` for all of them.

    Attributes
    ----------
    family : module
    ids : list of int
        The candidates' indices in the grid (they key the noise streams).
    plans : list
        The family's plans, bound to the labels and the score.
    data : types.SimpleNamespace
        ``X`` (laid out: public steps and public branches applied once), ``codes`` (what the
        family reads of ``y``), ``n_classes`` and ``labels``.
    steps : list of tuple of StepPlan, or None
        Each candidate's partition steps; None when none has any.
    score : Score or None, default=None
        The plans' score (None: the family's ``SCORE``).
    """

    family: object
    ids: list
    plans: list
    data: object
    steps: object = None
    score: object = None


def _groups(estimator, candidates, X, y, utility, fit_params=None, score_params=None):
    """The candidates the engine fits, as :class:`_Group`: one per family and preprocessing
    (candidates of a pipeline grid that differ only in the final step share one transformed
    ``X``); empty when none, or when the installed versions are not those tested
    (:func:`versions_tested`).

    Routed from the parameters (:func:`_route`), the inputs' public shape and the scorer; the
    data's values only decide whether a conversion or a stateless step succeeds, and a
    candidate whose does not takes the per-fit path (both paths have the same law).
    """
    y_ndim = None if y is None else np.ndim(y)
    found = [_route(with_params(estimator, params), utility) for params in candidates]
    found = [None if found_ is None or not _admits(fit_params, score_params, y_ndim,
                                                   found_.family) else found_
             for found_ in found]
    if not any(found) or not versions_tested():
        return []
    grouped, transformed = {}, {}
    for index, found_ in enumerate(found):
        if found_ is None:
            continue
        family, stage, score = found_.family, found_.stage, found_.score
        key = (pipeline.steps_key(found_.steps) + pipeline.stage_key(stage), family)
        if key not in transformed:
            # Public steps and public branches once on all rows; partition steps later, per
            # partition, in the tasks.
            Xt = pipeline.transform_all_rows(found_.steps, X) if found_.steps else X
            layout = None if Xt is None else pipeline.lay_out(stage, Xt)
            data = None if layout is None else _prepare_data(layout.X, y, family)
            transformed[key] = None if data is None else (data, layout.slots)
        if transformed[key] is None:
            continue
        data, slots = transformed[key]
        if score.admits is not None and not score.admits(data.labels):
            continue  # a score not defined for these labels: the per-fit path's behaviour
        planned = pipeline.plan_stage(stage, slots, data.X.shape[1])
        plan = None if planned is None else _bound(found_, family.plan(found_.final, planned[1]))
        if plan is not None and isinstance(family, BindsLabels):
            plan = family.bind_labels(plan, data.labels)
        if plan is not None:
            group = grouped.setdefault(key + (score.name,),
                                       _Group(family, [], [], data, [], score))
            group.ids.append(index)
            group.plans.append(plan)
            group.steps.append(planned[0])
    for group in grouped.values():
        group.steps = group.steps if any(group.steps) else None
    return list(grouped.values())


def _prepare_data(X, y, family):
    """``X`` as a dense finite float64 array and ``y`` as the family reads it, or None (the
    per-fit path).

    ``y`` becomes class codes in ``np.unique`` order (``TARGET`` :data:`CODES`: each
    partition's classes, the labels present in its training rows, keep their order and ties
    break as in scikit-learn; a relabelling only, no partition's fit sees another's rows),
    finite float64 values (:data:`VALUES`, as diffprivlib's ``validate_data(y_numeric=True)``
    converts them), or zeros (``"none"``: ``y`` may be None). What the real fit rejects
    (non-finite values, NaN labels, sparse ``X``) is left to it.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,) or None
    family : module

    Returns
    -------
    data : types.SimpleNamespace or None
        ``X``, ``codes``, ``n_classes`` and ``labels`` (the distinct labels, in code order;
        None unless :data:`CODES`).
    """
    if sparse.issparse(X):
        return None
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if X.ndim != 2 or not _all_finite(X):
        return None
    if family.TARGET not in (CODES, VALUES):
        return SimpleNamespace(X=X, codes=np.zeros(len(X), dtype=np.intp), n_classes=0,
                               labels=None)
    if y is None or np.ndim(y) != 1 or len(y) != len(X):
        return None
    labels = np.asarray(y)
    if labels.dtype.kind in "fc" and not np.all(np.isfinite(labels)):
        return None
    if family.TARGET == VALUES:
        # Strings or complex targets: left to the real fit.
        if labels.dtype.kind not in "biuf":
            return None
        return SimpleNamespace(X=X, codes=labels.astype(np.float64), n_classes=0, labels=None)
    if labels.dtype.kind == "O" and not all(isinstance(label, str) for label in labels):
        return None  # mixed objects: left to the real fit
    if labels.dtype.kind not in "biufUSO":
        return None
    try:
        classes, codes = np.unique(labels, return_inverse=True)
    except (TypeError, ValueError):
        return None
    if len(classes) > family.MAX_CLASSES:
        return None
    return SimpleNamespace(X=X, codes=codes.astype(np.intp), n_classes=len(classes),
                           labels=classes)


def _all_finite(X, rows=2 ** 16):
    """``np.all(np.isfinite(X))``, a slice of rows at a time (no temporary the size of X)."""
    return all(np.isfinite(X[start:start + rows]).all() for start in range(0, len(X), rows))


def _blocks(splits, n_features, n_tasks):
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


def _block_task(splits, block, codes):
    """What a task carries for one block: its rows' indices, ``y`` (as the family reads it)
    and partition within the block (sliced here, so that a task carries its block's labels,
    not all of ``y``)."""
    def rows(side):
        index = [splits[p][side] for p in block]
        part = np.repeat(np.arange(len(block)), [len(i) for i in index])
        index = np.concatenate(index) if index else np.empty(0, dtype=np.intp)
        return index.astype(np.intp), codes[index], part
    return SimpleNamespace(partitions=np.asarray(block), train=rows(0), validation=rows(1))


def _run_block(family, plans, candidate_ids, X, task, n_classes, entropy, steps=None,
               score=None):
    """Run in a joblib worker: the scores of ``plans`` on the block's partitions.

    Parameters
    ----------
    family : module
    plans : list
    candidate_ids : list of int
        The candidates' indices in the grid (they key the noise streams).
    X : ndarray
        All of the laid-out ``X`` (memory-mapped by joblib's process backends); the task
        indexes its rows.
    task : types.SimpleNamespace
        From :func:`_block_task`.
    n_classes : int
    entropy : int
        Root of the noise streams.
    steps : list of tuple of StepPlan, optional
        Each candidate's partition steps, applied to the block's rows per partition before
        the family fits them.
    score : Score or None, default=None
        The plans' score, whose range the outputs are checked against (None: the family's
        ``SCORE``).

    Returns
    -------
    scores : ndarray of shape (len(plans), len(task.partitions))
    """
    (train, y_train, part_train), (validation, y_val, part_val) = task.train, task.validation
    # One stream per (partition, candidate): a partition's noise never depends on which
    # block, task or worker it landed in, nor on the other partitions.
    rngs = [[np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(int(p), int(c))))
             for p in task.partitions] for c in candidate_ids]
    block = Block(X[train], y_train, part_train, X[validation], y_val, part_val,
                  len(task.partitions), n_classes)
    if not steps:
        scores = family.partition_scores(plans, block, rngs)
    else:
        # Each candidate's partition steps give it its own rows: one family call per candidate.
        # A partition whose steps fail scores FIT_FAILED (NaN, no rows, takes precedence).
        scores = np.empty((len(plans), block.n_parts))
        for j, (plan, pieces, candidate) in enumerate(zip(plans, steps, candidate_ids)):
            own, failed = pipeline.apply_partition_steps(pieces, block, task.partitions,
                                                         entropy, candidate)
            row = family.partition_scores([plan], own, [rngs[j]])[0]
            scores[j] = np.where(failed & ~np.isnan(row), FIT_FAILED, row)
    problem = check_scores(family, scores, len(plans), block.n_parts, score)
    if problem is not None:
        raise RuntimeError(f"The batched family {family.__name__} broke its contract "
                           f"(skdptune._batched.contract.Family): {problem}.")
    return scores


def _stream_entropy(random_state):
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


def _n_tasks(group, n_workers):
    """Tasks to cut a group into for ``n_workers``: :data:`TASKS_PER_WORKER` each, no more
    than its work has units of :data:`MIN_TASK_WORK`, at least one."""
    if n_workers <= 1:
        return 1
    work = group.data.X.shape[0] * group.data.X.shape[1] * len(group.ids)
    return int(max(1, min(TASKS_PER_WORKER * n_workers, work // MIN_TASK_WORK)))


class BatchedWork:
    """The engine's share of an evaluate stage: its candidates' blocks as joblib tasks.

    Parameters
    ----------
    groups : list of _Group
    splits : list of (ndarray, ndarray)
    utility : skdptune.utility.BoundedUtility
    error_score : float or "raise"
    entropy : int
        Root of the noise streams.
    n_workers : int, default=1

    Attributes
    ----------
    ids : list of int
        The candidates the engine fits, in the order of :meth:`collect`'s rows.
    tasks : list
        ``joblib.delayed`` calls of :func:`_run_block`, one per block of each group.
    fits : list of int
        Partition fits per task.
    """

    def __init__(self, groups, splits, utility, error_score, entropy, n_workers=1):
        self.groups, self.utility, self.error_score = groups, utility, error_score
        self.n_partitions = len(splits)
        self.ids = [i for group in groups for i in group.ids]
        self.tasks, self.fits, self._owner = [], [], []
        for g, group in enumerate(groups):
            data = group.data
            for block in _blocks(splits, data.X.shape[1], _n_tasks(group, n_workers)):
                self.tasks.append(delayed(_run_block)(
                    group.family, group.plans, group.ids, data.X,
                    _block_task(splits, block, data.codes), data.n_classes, entropy,
                    group.steps, group.score))
                self.fits.append(len(group.ids) * len(block))
                self._owner.append(g)

    def collect(self, outcomes):
        """The partition utilities of the tasks' outcomes (in task order).

        A partition without training or held-out rows (NaN) scores
        :data:`~skdptune.utility.EMPTY_PART_UTILITY`, as on the per-fit path; a score is
        mapped by the utility's range and clip; a partition whose real fit would raise
        (:data:`~skdptune._batched.contract.FIT_FAILED`) scores ``error_score``, and under
        ``"raise"`` its group's candidates are returned in ``redo``: the per-fit path raises
        the real fit's error.

        Returns
        -------
        values : ndarray of shape (len(ids), n_partitions)
        redo : list of int
            Candidates for the per-fit path.
        """
        values = np.empty((len(self.ids), self.n_partitions))
        redo, row = [], 0
        for g, group in enumerate(self.groups):
            scores = np.concatenate([outcome for outcome, owner in zip(outcomes, self._owner)
                                     if owner == g], axis=1)
            failed = np.isneginf(scores)
            finite = np.isfinite(scores)
            mapped = np.where(finite, self.utility.to_utility(np.where(finite, scores, 0.0)),
                              EMPTY_PART_UTILITY)
            if failed.any():
                if isinstance(self.error_score, str):
                    redo += group.ids
                mapped[failed] = np.nan if isinstance(self.error_score, str) else self.error_score
            values[row:row + len(group.ids)] = mapped
            row += len(group.ids)
        return values, redo
