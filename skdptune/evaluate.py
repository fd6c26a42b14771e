"""The evaluate stage: every candidate fitted on every partition, and its mean utility.

The utilities computed here are raw, non-private values. They leave this module only as the
vector of per-candidate means that the caller hands to a DP selector and then deletes.

Privacy: each partition utility lies in ``[0, 1]`` (a bounded scorer, or ``error_score``)
and one record changes one partition (independent labels, :mod:`skdptune.partition`), so the
mean over ``k`` partitions has sensitivity ``1 / k`` for every candidate at once, whatever the
partition fits do. They are therefore not charged: each gets a throw-away accountant, and its
warnings are recorded and dropped (:func:`skdptune.dp_fit.private_fit_context`).
"""

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from joblib import Parallel, delayed

from ._sklearn_compat import _check_method_params, _safe_indexing
from .dp_fit import fit, plain_warnings, private_fit_context, reemit, set_accountants, with_params


def partition_utilities(estimator, candidates, X, y, splits, fit_params, utility, error_score,
                        *, n_jobs=None, pre_dispatch="2*n_jobs", verbose=0, reveal=False):
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

    Returns
    -------
    utilities : ndarray of shape (n_candidates,)
        Raw (non-private) mean utilities, each in ``[0, 1]``; sensitivity ``1 / len(splits)``.
    """
    outcomes = Parallel(n_jobs=n_jobs, pre_dispatch=pre_dispatch, verbose=verbose)(
        delayed(_partition_utility)(
            estimator, params, X, y, train, validation, fit_params, utility, error_score,
            reveal,
        )
        for params in candidates
        for train, validation in splits
    )
    if reveal:
        for _, recorded in outcomes:
            reemit(recorded)
    values = np.array([value for value, _ in outcomes], dtype=float)
    return values.reshape(len(candidates), len(splits)).mean(axis=1)


def _partition_utility(estimator, params, X, y, train, validation, fit_params, utility,
                       error_score, reveal):
    """Fit one candidate on one partition's training rows; its bounded utility on the rest.

    Runs in a joblib worker. Returns ``(utility, recorded warnings)``; the warnings are only
    returned under ``reveal``.
    """
    estimator = with_params(estimator, params)
    set_accountants(estimator, BudgetAccountant())  # throw-away: partition fits are not charged
    caught = []
    try:
        with private_fit_context() as caught:
            train_params = _check_method_params(X, params=fit_params, indices=train)
            y_train = None if y is None else _safe_indexing(y, train)
            fit(estimator, _safe_indexing(X, train), y_train, train_params)
            y_validation = None if y is None else _safe_indexing(y, validation)
            value = utility(estimator, _safe_indexing(X, validation), y_validation)
    except Exception:
        if error_score == "raise":
            raise
        value = error_score
    # A NaN score (e.g. an empty validation part) is a failure like any other.
    if not np.isfinite(value):
        value = error_score
    return value, (plain_warnings(caught) if reveal else [])
