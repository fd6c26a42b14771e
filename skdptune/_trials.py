"""The random search's data stage: the trials and their held-out sums.

What :class:`~skdptune.PrivateRandomizedSearchCV` does with the data, as
``skdptune/_evaluate.py`` is for the grid search: draw the secret number of trials and their
settings (:func:`draw_settings`), split the records (:func:`split_records`), fit and score every
trial (:func:`run_trials`). The held-out sums computed here are raw, non-private values: the
search noises them with the Laplace mechanism and keeps only the best trial.

Privacy: each held-out record's utility lies in ``[0, 1]`` (a bounded per-record score, or
``error_score``) and the trial's model never sees held-out records, so a held-out sum has
sensitivity 1 under replace-one adjacency (:func:`holdout_sum`). Labels are independent per
record (stable under adjacency), and the number of trials never leaves :func:`draw_settings`
but as the length of its list, which the caller keeps secret.
"""

import math
import secrets

import numpy as np
from diffprivlib.utils import PrivacyLeakWarning
from joblib import Parallel, delayed
from sklearn.model_selection import ParameterSampler
from sklearn.utils.validation import _num_samples

from ._sklearn_compat import _check_method_params, _safe_indexing
from ._accounting import truncated_negative_binomial_gamma
from ._dp_fit import MeasuringAccountant, fit, private_fit_context, set_accountants, with_params
from .exceptions import ScorerOutputError
from ._partition import partition_labels
from ._utility import BoundedSquaredErrorScorer

#: Scorers that are means of per-record scores, by name: the per-record score from
#: ``(y, y_pred)``, vectorised.
PER_RECORD_SCORES = {
    "accuracy": lambda y, y_pred: (np.asarray(y) == np.asarray(y_pred)).astype(float),
    "neg_mean_squared_error": lambda y, y_pred: -((np.asarray(y) - np.asarray(y_pred)) ** 2),
    "neg_mean_absolute_error": lambda y, y_pred: -np.abs(np.asarray(y) - np.asarray(y_pred)),
}



def draw_settings(param_distributions, mean, shape, count_rng, params_rng):
    """Draw the number of trials ``K`` and one setting per trial, without data.

    Parameters
    ----------
    param_distributions : dict or list of dicts
        As for :class:`~sklearn.model_selection.ParameterSampler`.
    mean, shape : float
        The law of ``K`` (see :func:`sample_trial_count`).
    count_rng, params_rng : random sources
        Independent sources for ``K`` and for the settings.

    Returns
    -------
    settings : list of dict
        ``K`` settings. Its length is ``K``: secret, the guarantee covers the best trial only.
    """
    n_trials = sample_trial_count(mean, shape, count_rng)
    # One independent draw per trial (ParameterSampler with n_iter > 1 would sample lists
    # without replacement, and the trials must be independent runs).
    return [
        next(iter(ParameterSampler(param_distributions, 1, random_state=params_rng)))
        for _ in range(n_trials)
    ]


def split_records(n_samples, validation_fraction, subsample, subsample_rng, split_seed):
    """The rows of the trials' training and held-out parts, and of the final fit.

    Parameters
    ----------
    n_samples : int
        Number of records (public).
    validation_fraction : float
        Probability that a record of the tuning part is held out.
    subsample : float or None
        Probability that a record is in the tuning part; None tunes on all records.
    subsample_rng : numpy.random.Generator or None
        Source of the subsample's uniforms (None: :mod:`secrets`).
    split_seed : int or None
        Seed of the training / held-out labels (None: :mod:`secrets`).

    Returns
    -------
    train, holdout : ndarray of int
        Rows of the trials' training and held-out parts.
    final : ndarray of int or None
        With ``subsample``, the rows outside the tuning part (the final fit's); else None.
    """
    if subsample is None:
        tuning, final = np.arange(n_samples), None
    else:
        # Poisson subsample, one secret independent draw per record (the bound of
        # subsampled_tuning_cost needs each record's membership to stay unknown).
        in_tuning = uniforms(n_samples, subsample_rng) < subsample
        tuning, final = np.flatnonzero(in_tuning), np.flatnonzero(~in_tuning)
    # Training / held-out labels, independent per record (stable under adjacency). Not
    # secret: the trial's bound is the max over the two parts, not a mixture.
    _, is_validation = partition_labels(len(tuning), 1, validation_fraction, split_seed)
    return tuning[~is_validation], tuning[is_validation], final


def run_trials(estimator, fitted, X, y, train, holdout, fit_params, scoring, utility,
               error_score, n_jobs=None, pre_dispatch="2*n_jobs"):
    """Fit and score every trial (:func:`trial`), in parallel with ``joblib.Parallel``.

    Parameters
    ----------
    estimator : estimator
        The search's estimator (cloned per trial).
    fitted : list of (dict, dict or None)
        Per trial, the parameters of its fit (and of the final fit, unused here).
    X, y, train, holdout, fit_params, scoring, utility, error_score
        As for :func:`trial`.
    n_jobs, pre_dispatch
        As for ``joblib.Parallel`` (backend not forced).

    Returns
    -------
    outcomes : list of dict
        One :func:`trial` outcome per trial, in order.
    """
    return Parallel(
        # No verbose: joblib's task counts would show the number of trials, which is secret.
        n_jobs=n_jobs, pre_dispatch=pre_dispatch
    )(
        delayed(trial)(estimator, trial_params, X, y, train, holdout, fit_params, scoring,
                       utility, error_score)
        for trial_params, _ in fitted
    )

def trial(estimator, params, X, y, train, holdout, fit_params, scoring, utility, error_score):
    """One trial: fit on the training rows; the raw (non-private) sum of held-out utilities.

    Parameters
    ----------
    estimator : estimator
        The search's estimator; set to ``params`` on a clone.
    params : dict
        The trial's parameters.
    X, y : array-like
        All the records.
    train, holdout : ndarray of int
        Rows of the training and held-out parts.
    fit_params : dict
        Routed fit parameters, sliced to ``train``.
    scoring, utility
        The per-record scoring (see :func:`holdout_sum`).
    error_score : "raise" or float
        Per-record utility credited to a failed trial.

    Runs in a joblib worker. The clone gets a throw-away accountant on every step, read
    afterwards to check the fit's spend; PrivacyLeakWarnings are recorded, not silenced: the
    model may be released.

    Returns
    -------
    outcome : dict
        ``model`` (None if the fit or scoring failed), ``sum`` (raw, in ``[0, n_holdout]``),
        ``spent`` (the fit's ``(epsilon, delta)``), ``leak`` (the first PrivacyLeakWarning or
        None) and ``params``.
    """
    estimator = with_params(estimator, params, source="sampled setting")
    spent = MeasuringAccountant()
    set_accountants(estimator, spent)
    caught = []
    try:
        with private_fit_context() as caught:
            fit(estimator, _safe_indexing(X, train), _safe_indexing(y, train),
                _check_method_params(X, params=fit_params, indices=train))
            value = holdout_sum(
                estimator, _safe_indexing(X, holdout), _safe_indexing(y, holdout), scoring,
                utility,
            )
        if not np.isfinite(value):
            raise ValueError("the held-out score is not finite")
    except ScorerOutputError:
        raise  # a misconfigured scorer, not a failure of the trial: never error_score
    except Exception:
        if error_score == "raise":
            raise
        # Every held-out record is credited error_score in [0, 1]: sensitivity stays 1.
        estimator, value = None, error_score * len(holdout)
    leaks = [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    leak = leaks[0] if leaks else None
    # Plain values only: the outcome travels back from the worker by pickle, and diffprivlib's
    # Budget (what total() returns) does not unpickle.
    return {"model": estimator, "sum": float(value), "spent": tuple(map(float, spent.total())),
            "leak": leak, "params": params}


def holdout_sum(estimator, X, y, scoring, utility):
    """Sum over held-out records of their utility, each rescaled and clipped to ``[0, 1]``.

    Replacing one record changes at most one term in ``[0, 1]``: sensitivity 1.

    Parameters
    ----------
    estimator : estimator
        A fitted model.
    X, y : array-like
        The held-out records.
    scoring : str, BoundedSquaredErrorScorer or callable
        A name in :data:`PER_RECORD_SCORES`, the bounded squared error (vectorised), or a
        callable ``scorer(estimator, X, y)`` applied to one record at a time.
    utility : skdptune._utility.BoundedUtility
        Maps scores to utilities in ``[0, 1]``.

    Returns
    -------
    total : float
        The raw sum, in ``[0, len(y)]``.
    """
    if _num_samples(X) == 0:
        return 0.0
    if isinstance(scoring, str):
        scores = PER_RECORD_SCORES[scoring](y, estimator.predict(X))
    elif isinstance(scoring, BoundedSquaredErrorScorer):  # vectorised, each in [0, 1]
        scores = scoring.per_record(estimator, X, y)
    else:  # a callable: applied to one record at a time
        scores = np.array([
            utility.metric_value(scoring(estimator, _safe_indexing(X, [i]),
                                         _safe_indexing(y, [i])))
            for i in range(_num_samples(X))
        ], dtype=float)
    return float(np.sum(utility.to_utility(scores)))


def sample_trial_count(mean, shape, rng):
    """Draw K by inversion of its CDF from one uniform of ``rng`` (SystemRandom or RandomState).

    Poisson (``shape`` infinite): ``P[K=0] = e^-mean``, ``P[K=k+1] = P[K=k] mean / (k+1)``.
    Truncated negative binomial with ``eta = shape`` and ``gamma`` from
    ``skdptune._accounting.truncated_negative_binomial_gamma`` (the parametrisation of
    dp-accounting's ``RepeatAndSelectDpEvent``): ``P[K=1] = (1-gamma) eta / (gamma^-eta - 1)``
    (``(1-gamma) / log(1/gamma)`` for ``eta = 0``) and
    ``P[K=k+1] = P[K=k] (1-gamma) (k+eta) / (k+1)``. The recursion runs on log-probabilities.
    Floating point makes the law of K differ from the exact one by about 1e-15 in total
    variation, which is not charged (as for diffprivlib's floating-point noise).

    Parameters
    ----------
    mean, shape : float
        Mean and shape of the law (``shape`` infinite for Poisson).
    rng : random.SystemRandom or numpy.random.RandomState
        Source of the uniform.

    Returns
    -------
    k : int
        The number of trials.
    """
    uniform = rng.random()
    if math.isinf(shape):
        k, log_probability = 0, -mean
        log_ratio = lambda k: math.log(mean / (k + 1))  # noqa: E731
    else:
        gamma = truncated_negative_binomial_gamma(shape, mean)
        k = 1
        if shape == 0:
            log_probability = math.log1p(-gamma) - math.log(-math.log(gamma))
        else:
            log_probability = (math.log1p(-gamma) + math.log(shape)
                               - math.log(math.expm1(-shape * math.log(gamma))))
        log_ratio = lambda k: math.log1p(-gamma) + math.log((k + shape) / (k + 1))  # noqa
    cumulative = math.exp(log_probability)
    # Stop in the far tail only (past the bulk, where the probabilities underflow).
    while cumulative <= uniform and (log_probability > -800 or k < 2 * mean + 10):
        log_probability += log_ratio(k)
        k += 1
        cumulative += math.exp(log_probability)
    return k


def uniforms(n, rng):
    """``n`` uniforms in ``[0, 1)``: from :mod:`secrets` when ``rng`` is None, else ``rng``.

    Parameters
    ----------
    n : int
        How many.
    rng : numpy.random.Generator or None
        The source; None draws 53-bit uniforms from :mod:`secrets`.

    Returns
    -------
    u : ndarray of shape (n,)
    """
    if rng is None:
        words = np.frombuffer(secrets.token_bytes(8 * n), dtype=np.uint64)
        return (words >> np.uint64(11)).astype(float) * 2.0 ** -53
    return rng.random(n)
