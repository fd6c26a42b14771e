"""The evaluate stage: every candidate fitted on every partition, and its mean utility.

The utilities computed here are raw, non-private values. They leave this module only as the
vector of per-candidate means that the caller hands to a DP selector and then deletes.

Privacy: each partition utility lies in ``[0, 1]`` (a bounded scorer, or ``error_score``)
and one record changes one partition (independent labels, ``skdptune/_partition.py``), so the
mean over ``k`` partitions has sensitivity ``1 / k`` for every candidate at once, whatever the
partition fits do. They are therefore not charged: each gets a throw-away accountant, and its
warnings are recorded and dropped (``skdptune._dp_fit.private_fit_context``).

Two paths. The batched engine (``skdptune._batched.engine.batched_work``) fits the
candidates it has a family for on all partitions at once, in blocks of partitions, with the
law of the per-fit path's fits. The per-fit path fits every other candidate on every
partition, one fit at a time: a task fits a batch of candidates on one partition, so that its
fixed costs (sending the data's indices, slicing a partition, the warnings lock) are paid once
per task. ``X`` travels as one object (memory-mapped by joblib's process backends above its
default 1 MB) that each task indexes; ``y`` and sample-aligned parameters are sliced to the
partition here, so a task carries its partition's ``n / k`` labels, not all ``n``.

Parallelism that pays (:func:`_run`): the tasks run in this process one after the other until
their measured pace says that spreading the rest over ``n_jobs`` workers saves more than
:data:`PARALLEL_MIN_SAVING` seconds (about what starting joblib's workers and sending them the
data costs); only then are the remaining tasks handed to :class:`joblib.Parallel`. Under
``verbose``, the number of partition fits done and an estimate of the time left are printed
as the tasks complete (:class:`_Progress`: counts and elapsed times only, nothing private;
timing is a side channel outside the guarantee).
"""

import math
import time

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.utils.validation import _num_samples

from ._sklearn_compat import _check_method_params, _safe_indexing
from ._batched.engine import batched_work
from ._dp_fit import fit, plain_warnings, private_fit_context, reemit, set_accountants, with_params
from .exceptions import ScorerOutputError
from ._utility import EMPTY_PART_UTILITY, is_plain_accuracy

#: Per-fit tasks per worker that joblib gets to balance the load; fewer, larger tasks pay
#: fewer fixed costs.
_TASKS_PER_WORKER = 4

#: Seconds that spreading the remaining tasks over the workers must save before they are
#: handed to joblib: about what starting its worker processes and sending them the data costs.
PARALLEL_MIN_SAVING = 2.0


def partition_utilities(estimator, candidates, X, y, splits, fit_params, utility, error_score,
                        *, n_jobs=None, pre_dispatch="2*n_jobs", verbose=0, reveal=False,
                        score_params=None, random_state=None, clock=time.perf_counter):
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
    utility : skdptune._utility.BoundedUtility
        Scores a fitted candidate in ``[0, 1]``.
    error_score : float or "raise"
        Utility of a partition whose fit or score fails or is not finite.
    n_jobs, pre_dispatch : int or str
        For :class:`joblib.Parallel` (the backend is the caller's choice), when spreading the
        tasks pays (:func:`_run`).
    verbose : int, default=0
        Above 0, progress lines (:class:`_Progress`); above 1, also joblib's own messages.
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
    clock : callable, default=time.perf_counter
        Seconds, for the progress lines and the decision to spread the work.

    Returns
    -------
    utilities : ndarray of shape (n_candidates,)
        Raw (non-private) mean utilities, each in ``[0, 1]``; sensitivity ``1 / len(splits)``.
    """
    n_workers = effective_n_jobs(n_jobs)
    values = np.empty((len(candidates), len(splits)))
    engine = batched_work(estimator, candidates, X, y, splits, utility, error_score,
                          fit_params=fit_params, score_params=score_params,
                          random_state=random_state, n_workers=n_workers)
    batched = set(engine.ids)
    rest = [i for i in range(len(candidates)) if i not in batched]
    per_fit = _PerFitWork(estimator, [candidates[i] for i in rest], X, y, splits, fit_params,
                          utility, error_score, reveal, score_params, n_workers)
    progress = _Progress(sum(engine.fits) + sum(per_fit.fits), verbose, clock)
    run = dict(n_jobs=n_jobs, pre_dispatch=pre_dispatch, verbose=verbose, progress=progress)
    values[engine.ids], redo = engine.collect(_run(engine.tasks, engine.fits, **run))
    values[rest] = per_fit.collect(_run(per_fit.tasks, per_fit.fits, **run))
    if redo:
        # error_score="raise" and a partition's real fit would raise: the per-fit path raises
        # the real fit's exception.
        again = _PerFitWork(estimator, [candidates[i] for i in redo], X, y, splits, fit_params,
                            utility, error_score, reveal, score_params, n_workers)
        values[redo] = again.collect(_run(again.tasks, again.fits, **run))
    return values.mean(axis=1)


class _Progress:
    """Partition fits done, and an estimate of the time left from the pace so far, printed
    under ``verbose`` after the first task and then at every tenth of the work.

    Counts and elapsed times only (no score, no partition's outcome); the time is a side
    channel outside the guarantee, as ``verbose`` says.
    """

    def __init__(self, total, verbose, clock):
        self.total, self.done, self.verbose, self.clock = total, 0, verbose, clock
        self.start = clock()
        self._printed = -1

    def add(self, n_fits):
        """Count ``n_fits`` more fits done; print a line when a new tenth is reached."""
        self.done += n_fits
        tenth = 10 * self.done // max(self.total, 1)
        if self.verbose > 0 and tenth > self._printed:
            self._printed = tenth
            elapsed = self.clock() - self.start
            line = (f"Partition fits: {self.done}/{self.total} done "
                    f"({100 * self.done // max(self.total, 1)}%) in {elapsed:.1f} s")
            if self.done < self.total:
                line += (f"; about {elapsed / self.done * (self.total - self.done):.0f} s left "
                         "(estimated from the fits so far)")
            print(line, flush=True)


def _spreads(n_workers, n_tasks, seconds_left):
    """Whether spreading ``n_tasks`` tasks, about ``seconds_left`` of work in this process,
    over ``n_workers`` saves more than :data:`PARALLEL_MIN_SAVING`."""
    workers = min(n_workers, n_tasks)
    return workers > 1 and seconds_left * (1 - 1 / workers) > PARALLEL_MIN_SAVING


def _run(tasks, fits, *, n_jobs, pre_dispatch, verbose, progress):
    """The outcomes of ``tasks`` (``joblib.delayed`` calls; ``fits[i]`` partition fits each),
    in order.

    They run in this process, one after the other, until the pace of those done (their
    seconds per fit, by ``progress.clock``) says that spreading the rest over the workers
    saves more than :data:`PARALLEL_MIN_SAVING` (:func:`_spreads`); then the rest goes to
    :class:`joblib.Parallel`. Small work never starts a worker; large work pays one task's
    time in this process to find out.
    """
    n_workers = effective_n_jobs(n_jobs)
    outcomes, start, done = [], progress.clock(), 0
    for i, (function, args, kwargs) in enumerate(tasks):
        pace = (progress.clock() - start) / done if done else None
        if pace is not None and _spreads(n_workers, len(tasks) - i, pace * sum(fits[i:])):
            spread = Parallel(n_jobs=n_jobs, pre_dispatch=pre_dispatch,
                              verbose=max(verbose - 1, 0), return_as="generator")
            for outcome, n_fits in zip(spread(tasks[i:]), fits[i:]):
                outcomes.append(outcome)
                progress.add(n_fits)
            break
        outcomes.append(function(*args, **kwargs))
        progress.add(fits[i])
        done += fits[i]
    return outcomes


def _batches(n_candidates, n_partitions, n_workers):
    """Candidate index batches: at least one task per partition, about
    ``_TASKS_PER_WORKER`` tasks per worker in all."""
    wanted = _TASKS_PER_WORKER * n_workers
    per_partition = max(1, min(n_candidates, math.ceil(wanted / n_partitions)))
    return [batch for batch in np.array_split(np.arange(n_candidates), per_partition)
            if len(batch)]


class _PerFitWork:
    """The per-fit path's tasks: one diffprivlib (or other) fit per candidate and partition,
    a batch of candidates on one partition per task, at least one task per partition and
    about ``_TASKS_PER_WORKER`` per worker in all."""

    def __init__(self, estimator, candidates, X, y, splits, fit_params, utility, error_score,
                 reveal, score_params, n_workers):
        self.batches = _batches(len(candidates), len(splits), n_workers)
        self.n_candidates, self.n_partitions, self.reveal = len(candidates), len(splits), reveal
        self.tasks = [] if not candidates else [
            delayed(_evaluate_batch)(estimator, [candidates[i] for i in batch], X, part,
                                     utility, error_score, reveal)
            for part in _partitions(X, y, splits, fit_params, score_params or {})
            for batch in self.batches
        ]
        self.fits = [len(batch) for _ in splits for batch in self.batches]

    def collect(self, outcomes):
        """``(n_candidates, n_partitions)`` utilities of the tasks' outcomes (in task order);
        the fits' warnings re-emitted under ``reveal``."""
        values = np.empty((self.n_candidates, self.n_partitions))
        outcome = iter(outcomes)
        for partition in range(self.n_partitions):
            for batch in self.batches:
                batch_values, recorded = next(outcome)
                values[batch, partition] = batch_values
                if self.reveal:
                    reemit(recorded)
        return values


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
    if (not score_params and is_plain_accuracy(utility, estimator) and y is not None
            and np.ndim(y) == 1 and len(y)):
        return float(utility.to_utility(np.mean(estimator.predict(X) == np.asarray(y))))
    return utility(estimator, X, y, **(score_params or {}))
