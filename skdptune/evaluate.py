"""The evaluate stage: every candidate fitted on every partition, and its mean utility.

The utilities computed here are raw, non-private values. They leave this module only as the
vector of per-candidate means that the caller hands to a DP selector and then deletes.

Privacy: each partition utility lies in ``[0, 1]`` (a bounded scorer, or ``error_score``)
and one record changes one partition (independent labels, :mod:`skdptune.partition`), so the
mean over ``k`` partitions has sensitivity ``1 / k`` for every candidate at once, whatever the
partition fits do. They are therefore not charged: each gets a throw-away accountant, and its
warnings are recorded and dropped (:func:`skdptune.dp_fit.private_fit_context`).

Speed: the fixed costs of a task (sending the data's indices, slicing a partition, the
warnings lock) are paid once per task, and a task fits a batch of candidates on one
partition. Batches are as large as load balancing allows: about four tasks per worker, never
fewer than one per partition. ``X`` travels as one object (memory-mapped by joblib's process
backends above its default 1 MB) that each task indexes; ``y`` and sample-aligned parameters
are sliced to the partition here, so a task carries its partition's ``n / k`` labels, not
all ``n``. joblib's own memory-mapping threshold is left as it is: a different one makes loky
replace its reusable workers, about a second each time a search follows another joblib call.

Batched families (:mod:`skdptune.batched`): a candidate whose estimator has a batched family
(diffprivlib's ``GaussianNB``, ``LogisticRegression``, ``RandomForestClassifier`` or
``DecisionTreeClassifier``, or skdptune's counterparts, scored by plain accuracy, ``LinearRegression`` scored by the default
bounded squared error, ``KMeans`` scored by its own ``score``, alone or after public steps and
DP partition steps such as diffprivlib's ``StandardScaler``, also inside a
``ColumnTransformer``), without fit or scorer parameters and with 1-d ``y`` (or none, for
``KMeans``), is fitted on all partitions at once by an array program whose
output has the law of the per-fit path's; joblib tasks are then blocks of partitions.
Everything else takes the per-fit path, unchanged.
"""

import math
from types import SimpleNamespace

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.metrics import accuracy_score
from sklearn.utils.validation import _num_samples

from . import batched
from ._sklearn_compat import _check_method_params, _PassthroughScorer, _safe_indexing
from .dp_fit import fit, plain_warnings, private_fit_context, reemit, set_accountants, with_params
from .exceptions import ScorerOutputError
from .utility import EMPTY_PART_UTILITY, BoundedR2Scorer, scores_accuracy

# Tasks per worker that joblib gets to balance the load; fewer, larger tasks pay fewer fixed
#: costs.
_TASKS_PER_WORKER = 4


def partition_utilities(estimator, candidates, X, y, splits, fit_params, utility, error_score,
                        *, n_jobs=None, pre_dispatch="2*n_jobs", verbose=0, reveal=False,
                        score_params=None, random_state=None):
    """Mean bounded utility of every candidate over the partitions.

    Parameters
    ----------
    estimator : estimator
        The unfitted base estimator.
    candidates : list of dict
        Parameter settings.
    X, y : array-like
        All the data; partitions are row indices into them.
    splits : list of (ndarray, ndarray)
        ``(train_indices, validation_indices)`` of every partition.
    fit_params : dict
        Fit parameters; sample-aligned ones are sliced to each partition's training rows.
    utility : skdptune.utility.BoundedUtility
        Scores a fitted candidate in ``[0, 1]``.
    error_score : float or "raise"
        Utility of a partition whose fit or score fails or is not finite.
    n_jobs, pre_dispatch, verbose
        Passed to :class:`joblib.Parallel` (the backend is the caller's choice).
    reveal : bool, default=False
        Re-emit the partition fits' warnings (:func:`skdptune.reveal_fit_messages`).
    score_params : dict or None, default=None
        Scorer parameters (``sample_weight``); sample-aligned ones are sliced to each
        partition's validation rows. A weighted score still lies in ``[0, 1]`` after the
        utility's clip, so the sensitivity is unchanged.
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator, default=None
        Seed of the batched families' emulation noise (one stream per partition and
        candidate); None draws fresh OS entropy. Not a privacy parameter: partition fits are
        never released.

    Returns
    -------
    utilities : ndarray of shape (n_candidates,)
        Raw (non-private) mean utilities, each in ``[0, 1]``; sensitivity ``1 / len(splits)``.
    """
    values = np.empty((len(candidates), len(splits)))
    groups = _batched_groups(estimator, candidates, X, y, fit_params, score_params, utility)
    in_groups = {i for _, ids, _, _ in groups for i in ids}
    per_fit = [i for i in range(len(candidates)) if i not in in_groups]
    if per_fit:
        values[per_fit] = _per_fit_values(
            estimator, [candidates[i] for i in per_fit], X, y, splits, fit_params, utility,
            error_score, n_jobs, pre_dispatch, verbose, reveal, score_params,
        )
    if groups:
        entropy = batched.stream_entropy(random_state)
        for family, ids, plans, data in groups:
            try:
                values[ids] = _batched_values(family, ids, plans, data, splits, utility,
                                              entropy, n_jobs, pre_dispatch, verbose,
                                              error_score=error_score)
            except _FailedFit:
                # error_score="raise" and a partition's real fit would raise: the per-fit
                # path raises the real fit's exception.
                values[ids] = _per_fit_values(
                    estimator, [candidates[i] for i in ids], X, y, splits, fit_params, utility,
                    error_score, n_jobs, pre_dispatch, verbose, reveal, score_params,
                )
    return values.mean(axis=1)


def _per_fit_values(estimator, candidates, X, y, splits, fit_params, utility, error_score,
                    n_jobs, pre_dispatch, verbose, reveal, score_params):
    """The per-fit path: ``(n_candidates, n_partitions)`` utilities, one diffprivlib (or
    other) fit per candidate and partition."""
    batches = _batches(len(candidates), len(splits), n_jobs)
    outcomes = Parallel(n_jobs=n_jobs, pre_dispatch=pre_dispatch, verbose=verbose)(
        delayed(_evaluate_batch)(
            estimator, [candidates[i] for i in batch], X, part, utility, error_score, reveal,
        )
        for part in _partitions(X, y, splits, fit_params, score_params or {})
        for batch in batches
    )
    values = np.empty((len(candidates), len(splits)))
    outcome = iter(outcomes)
    for partition in range(len(splits)):
        for batch in batches:
            batch_values, recorded = next(outcome)
            values[batch, partition] = batch_values
            if reveal:
                reemit(recorded)
    return values


def _batched_groups(estimator, candidates, X, y, fit_params, score_params, utility):
    """The candidates batched families fit: a list of ``(family, indices, plans, data)``, one
    per family and preprocessing (candidates of a pipeline grid that differ only in the final
    step share one transformed ``X``); empty when none. ``data`` holds the laid-out ``X``
    (public steps and public branches applied once), the class codes, and ``steps``: each
    candidate's partition steps (:func:`skdptune.batched.plan_stage`), or None.

    Decided from the parameters, the scorer and the type and shape of the data; the data's
    values only decide whether a conversion or a stateless step succeeds, and a candidate
    whose does not takes the per-fit path (both paths have the same law).
    """
    if not _batched_inputs(fit_params, score_params, None if y is None else np.ndim(y)):
        return []
    groups, transformed = {}, {}
    for index, params in enumerate(candidates):
        route = batched_route(with_params(estimator, params), utility)
        if route is None:
            continue
        steps, stage, final, family = route
        key = batched.steps_key(steps) + batched.stage_key(stage)
        if (key, family) not in transformed:
            # Public steps and public branches once on all rows; partition steps later, per
            # partition, in the tasks.
            Xt = batched.transform_all_rows(steps, X) if steps else X
            layout = None if Xt is None else batched.lay_out(stage, Xt)
            data = None if layout is None else batched.prepare_data(
                layout.X, y, family.MAX_CLASSES,
                regression=batched.family_score(family) == batched.BOUNDED_R2,
                unsupervised=not batched.uses_labels(family))
            transformed[key, family] = None if data is None else (data, layout.slots)
        if transformed[key, family] is None:
            continue
        data, slots = transformed[key, family]
        planned = batched.plan_stage(stage, slots, data.X.shape[1])
        plan = None if planned is None else family.plan(final, planned[1])
        if plan is not None and hasattr(family, "bind_labels"):
            plan = family.bind_labels(plan, data.labels)
        if plan is not None:
            ids, plans, pieces = groups.setdefault((key, family), ([], [], []))
            ids.append(index)
            plans.append(plan)
            pieces.append(planned[0])
    return [(family, ids, plans, _with_steps(transformed[key, family][0], pieces))
            for (key, family), (ids, plans, pieces) in groups.items()]


def _with_steps(data, pieces):
    """The group's data with its candidates' partition steps (``steps``; None if none has)."""
    return SimpleNamespace(**vars(data), steps=pieces if any(pieces) else None)


class _FailedFit(Exception):
    """A batched partition fit that the real fit would fail, under ``error_score="raise"``."""


def _batched_inputs(fit_params, score_params, y_ndim):
    """Whether the inputs of ``fit`` admit the batched path at all: no fit or scorer
    parameters (the families take none) and a 1-d ``y`` or none (``y_ndim``, None without
    ``y``: only families that do not read ``y``, :func:`skdptune.batched.uses_labels`, are
    then batched). Public facts: the caller's arguments and the shape of ``y``."""
    return not fit_params and not score_params and y_ndim in (1, None)


def batched_route(configured, utility):
    """The routing of one candidate, from its parameters and the scorer only.

    The one decision that the evaluate stage (:func:`_batched_groups`), the forecast
    (:meth:`skdptune.PrivateGridSearchCV.forecast`) and ``fit``'s verbose line share: a
    :class:`~sklearn.pipeline.Pipeline` cut by :func:`skdptune.batched.split_pipeline`, a
    final estimator with a batched family, and a utility that is the family's per-partition
    score (plain accuracy; for a regression family the default bounded R²; for
    ``KMeans`` its own ``score``). What follows depends on the data in the evaluate stage
    only: the steps applied to all rows, the conversion of ``X`` and ``y``
    (:func:`skdptune.batched.prepare_data`) and the family's ``plan`` at the width they give;
    a failure there sends the candidate to the per-fit path, which has the same law.

    Parameters
    ----------
    configured : estimator
        A candidate, its parameters set.
    utility : skdptune.utility.BoundedUtility

    Returns
    -------
    route : (list, estimator or None, estimator, module) or None
        ``(steps, stage, final, family)``: the public steps applied to all rows, the partition
        stage (:func:`skdptune.batched.split_pipeline`), the final estimator and its family;
        None for the per-fit path.
    """
    split = batched.split_pipeline(configured)
    if split is None:
        return None
    steps, stage, final = split
    family = batched.batched_family(final)
    if family is None or not _scores_as(family, utility, configured):
        return None
    return steps, stage, final, family


def _scores_as(family, utility, configured):
    """Whether the search's utility is the score the family computes per partition
    (:func:`skdptune.batched.family_score`): plain accuracy, or the default bounded R²
    (:class:`~skdptune.utility.BoundedR2Scorer`, which reads the candidate's own ``bounds_y``,
    as the family's plan does, under any range), or the estimator's own
    ``score`` (``scoring=None``, any declared or default range)."""
    score = batched.family_score(family)
    if score == batched.ACCURACY:
        return _is_plain_accuracy(utility, configured)
    if score == batched.BOUNDED_R2:
        # Whatever range maps it (the engine applies the utility's map).
        return type(getattr(utility, "scorer", None)) is BoundedR2Scorer
    if score == batched.NEGATIVE_INERTIA:
        # scoring=None: the candidate's own score, scikit-learn's KMeans.score (through
        # Pipeline.score), whatever range maps it (the engine applies the utility's map).
        return type(getattr(utility, "scorer", None)) is _PassthroughScorer
    return False


def candidate_paths(estimator, candidates, utility, n_features=None, *, fit_params=None,
                    score_params=None, y_ndim=1):
    """Each candidate's path, ``"batched"`` or ``"per-fit"``, decided from parameters only.

    :func:`batched_route`, then the family's ``plan`` at the width of the final estimator's
    input when the parameters tell it (``n_features`` for an estimator without steps before
    it), else ``plan(final, None)``: the family decides from the parameters alone. The data
    can still send a batched candidate to the per-fit path in :func:`partition_utilities`
    (values a step or the conversion rejects, more classes than the family handles); which
    one it did depends on the data and is not reported.

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
    if not _batched_inputs(fit_params, score_params, y_ndim):
        return ("per-fit",) * len(candidates)
    paths = []
    for params in candidates:
        route = batched_route(with_params(estimator, params), utility)
        plan = None
        if route is not None and (y_ndim is not None or not batched.uses_labels(route[3])):
            steps, stage, final, family = route
            plan = family.plan(final, None if steps or stage is not None else n_features)
        paths.append("per-fit" if plan is None else "batched")
    return tuple(paths)


def _batched_values(family, ids, plans, data, splits, utility, entropy, n_jobs, pre_dispatch,
                    verbose, error_score="raise"):
    """One family's candidates on every partition, through joblib in blocks of partitions:
    ``(len(ids), n_partitions)`` utilities.

    A partition without training or held-out rows scores ``EMPTY_PART_UTILITY``, as on the
    per-fit path; accuracy is mapped by the utility's range and clip, as ``_score`` does. A
    partition whose real fit would raise (``FIT_FAILED``, -inf) scores
    ``error_score``, as on the per-fit path; under ``"raise"``, :class:`_FailedFit` is raised.
    """
    n_jobs_effective = effective_n_jobs(n_jobs)
    n_tasks = 1 if n_jobs_effective == 1 else _TASKS_PER_WORKER * n_jobs_effective
    cut = batched.blocks(splits, data.X.shape[1], n_tasks)
    outcomes = Parallel(n_jobs=n_jobs, pre_dispatch=pre_dispatch, verbose=verbose)(
        delayed(batched.block_accuracies)(
            family, plans, ids, data.X, batched.block_task(splits, block, data.codes),
            data.n_classes, entropy, getattr(data, "steps", None),
        )
        for block in cut
    )
    accuracies = np.concatenate(outcomes, axis=1)
    failed = np.isneginf(accuracies)
    if failed.any() and isinstance(error_score, str):
        raise _FailedFit
    finite = np.isfinite(accuracies)
    values = np.where(finite, utility.to_utility(np.where(finite, accuracies, 0.0)),
                      EMPTY_PART_UTILITY)
    if failed.any():
        values[failed] = error_score
    return values


def _batches(n_candidates, n_partitions, n_jobs):
    """Candidate index batches: at least one task per partition, about
    ``_TASKS_PER_WORKER`` tasks per worker in all."""
    wanted = _TASKS_PER_WORKER * effective_n_jobs(n_jobs)
    per_partition = min(n_candidates, max(1, math.ceil(wanted / n_partitions)))
    return [batch for batch in np.array_split(np.arange(n_candidates), per_partition)
            if len(batch)]


def _partitions(X, y, splits, fit_params, score_params):
    """Per partition, lazily: ``(train, validation, y_train, y_validation, train_params,
    validation_params)``, the row indices with ``y`` and the sample-aligned fit and scorer
    parameters sliced to them (once per partition, whatever the number of batches)."""
    for train, validation in splits:
        yield (
            train, validation,
            None if y is None else _safe_indexing(y, train),
            None if y is None else _safe_indexing(y, validation),
            _check_method_params(X, params=fit_params, indices=train),
            _check_method_params(X, params=score_params, indices=validation),
        )


def _evaluate_batch(estimator, batch, X, part, utility, error_score, reveal):
    """Fit a batch of candidates on one partition's training rows; their utilities on the rest.

    Runs in a joblib worker. ``part`` is one item of :func:`_partitions`; ``X`` is sliced
    once for the batch. Returns ``(utilities, recorded warnings)``; the warnings are only
    returned under ``reveal``.
    """
    train, validation, y_train, y_validation, train_params, validation_params = part
    X_train, X_validation = _safe_indexing(X, train), _safe_indexing(X, validation)
    values = []
    with private_fit_context(reveal) as caught:
        for params in batch:
            values.append(_candidate_utility(
                estimator, params, X_train, y_train, X_validation, y_validation, train_params,
                utility, error_score, validation_params,
            ))
    return values, (plain_warnings(caught) if reveal else [])


def _candidate_utility(estimator, params, X_train, y_train, X_validation, y_validation,
                       train_params, utility, error_score, validation_params):
    """One candidate's bounded utility on one partition, or ``error_score``."""
    # A part the random split left empty is a property of the labels, not of the estimator:
    # if the fit or the score cannot handle it, the partition scores the fixed
    # EMPTY_PART_UTILITY, never error_score or an error (also under error_score="raise").
    # Either way the utility depends on this partition's records only: sensitivity 1/k.
    empty_part = _num_samples(X_train) == 0 or _num_samples(X_validation) == 0
    estimator = with_params(estimator, params)
    set_accountants(estimator, BudgetAccountant())  # throw-away: partition fits are not charged
    try:
        fit(estimator, X_train, y_train, train_params)
        value = _score(utility, estimator, X_validation, y_validation, validation_params)
    except ScorerOutputError:
        raise  # a misconfigured scorer, not a failure of the fit: never error_score
    except Exception:
        if empty_part:
            return EMPTY_PART_UTILITY
        if error_score == "raise":
            raise
        return error_score
    if np.isfinite(value):
        return value
    # A NaN score is a failure like any other.
    if empty_part:
        return EMPTY_PART_UTILITY
    if error_score == "raise":
        raise ValueError(
            f"The score of param_grid candidate {params} on a partition is {value}, not a "
            "finite number; error_score='raise' makes this an error (a numeric error_score "
            "would count it as that value)."
        )
    return error_score


def _score(utility, estimator, X, y, score_params=None):
    """``utility(estimator, X, y, **score_params)``, with a fast exact path for unweighted
    accuracy.

    scikit-learn's accuracy scorer costs about 3.5 ms per call in overhead; ``mean(predict(X)
    == y)`` is the same number (``accuracy_score`` of 1-d labels) without it.
    """
    if (not score_params and _is_plain_accuracy(utility, estimator) and y is not None
            and np.ndim(y) == 1 and len(y)):
        return float(utility.to_utility(np.mean(estimator.predict(X) == np.asarray(y))))
    return utility(estimator, X, y, **(score_params or {}))


def _is_plain_accuracy(utility, estimator=None):
    """Whether the utility is scikit-learn's accuracy scorer without options, or
    ``estimator.score`` (``scoring=None``) where that is scikit-learn's accuracy."""
    scorer = getattr(utility, "scorer", None)
    if isinstance(scorer, _PassthroughScorer):  # decided per candidate: a grid swaps steps
        return estimator is not None and scores_accuracy(estimator)
    return (getattr(scorer, "_score_func", None) is accuracy_score
            and getattr(scorer, "_sign", None) == 1 and not getattr(scorer, "_kwargs", True))
