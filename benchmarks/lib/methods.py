"""The models, their grids, and one small adapter per tuning method.

Every adapter has the same signature, ``adapter(estimator, grid, X, y, total, seed, config)``,
and returns ``(released_estimator, (epsilon, delta))``: the model the method releases and the
privacy it reports having spent. ``estimator`` already has ``epsilon = total / 2`` (the refit
budget); adapters that split the budget otherwise set their own. The run script asserts that
every reported epsilon equals ``total`` and every delta is at most :data:`DELTA`.
"""

import math
import time
from contextlib import contextmanager
from functools import lru_cache, partial

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.mechanisms import Laplace
from skdptune.ensemble import RandomForestClassifier
from skdptune.linear_model import LogisticRegression
from skdptune.naive_bayes import GaussianNB
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from skdptune import PrivateGridSearchCV

from .datasets import CLASSES, model_bounds
from .partition_hook import wrapped_partition_utilities

#: Delta of every method's guarantee (the ceiling; pure-DP parts report 0).
DELTA = 1e-6

#: Fraction of the total epsilon given to the selection in PrivateGridSearchCV; the rest goes to
#: the refit, and the oracle candidates are trained with that same refit budget.
SELECTION_SHARE = 0.5

#: Grids: 24 candidates each.
GRIDS = {
    "logistic": {"C": [0.01, 0.1, 1.0, 10.0], "fit_intercept": [True, False],
                 "max_iter": [5, 20, 100]},
    "gaussian_nb": {"var_smoothing": [1e-9, 1e-6, 1e-3, 1e-2, 1e-1, 1.0],
                    "priors": [None, [0.5, 0.5], [0.75, 0.25], [0.25, 0.75]]},
    "random_forest": {"n_estimators": [1, 3, 5, 10], "max_depth": [2, 3, 4, 5, 6, 7]},
}


def make_estimator(model, dataset, n_features, row_norm_bound, epsilon):
    """The DP model (skdptune's: the refit gate releases diffprivlib's classifiers only
    through them), with every bound and the classes declared (no PrivacyLeakWarning)."""
    bounds = model_bounds(dataset, n_features)
    if model == "logistic":
        return LogisticRegression(epsilon=epsilon, data_norm=row_norm_bound, classes=CLASSES)
    if model == "gaussian_nb":
        return GaussianNB(epsilon=epsilon, bounds=bounds, classes=CLASSES)
    if model == "random_forest":
        return RandomForestClassifier(epsilon=epsilon, bounds=bounds, classes=CLASSES)
    raise ValueError(f"unknown model {model!r}; use one of {sorted(GRIDS)}.")


def with_params(estimator, params, epsilon=None):
    """A clone of ``estimator`` with ``params`` (and ``epsilon``) set and a fresh accountant."""
    estimator = clone(estimator).set_params(**params, accountant=BudgetAccountant())
    return estimator if epsilon is None else estimator.set_params(epsilon=epsilon)


# --- PrivateGridSearchCV -------------------------------------------------------------------


def grid_search(estimator, grid, X, y, total, seed, config, *, selector):
    """PrivateGridSearchCV: selection epsilon ``total/2`` (delta DELTA), refit ``total/2``."""
    search = PrivateGridSearchCV(
        estimator, grid, selection_epsilon=SELECTION_SHARE * total, delta=DELTA, selector=selector,
        n_partitions=config["n_partitions"], accountant=BudgetAccountant(), random_state=seed,
    ).fit(X, y)
    return search.best_estimator_, tuple(search.privacy_spent_)


@contextmanager
def shared_partition_utilities():
    """Compute the partition utilities once for all PrivateGridSearchCV calls in the block.

    The grid searches of one repetition use the same seed, hence the same partitions, and the
    same candidates; they differ only in the selector (and in the noise of the selection and
    the refit). Inside this block the library's ``partition_utilities`` is memoised on the
    candidates and the partitions' row indices (:mod:`partition_hook`), so the four selectors
    see the very same partition utilities (common random numbers) and the partition fits are
    paid once. Yields a namespace: ``seconds`` spent on those fits, which the run script adds
    to every grid search's wall time, and ``calls``, the searches' calls of the function.
    """
    cache = {}
    shared = None

    def memoised(original, estimator, candidates, X, y, splits, *args, **kwargs):
        key = (repr(candidates),
               tuple((train.tobytes(), validation.tobytes()) for train, validation in splits))
        if key not in cache:
            start = time.perf_counter()
            cache[key] = original(estimator, candidates, X, y, splits, *args, **kwargs)
            shared.seconds += time.perf_counter() - start
        return cache[key].copy()  # each search gets (and may delete) its own copy

    with wrapped_partition_utilities(memoised) as shared:
        shared.seconds = 0.0
        yield shared


# --- PrivateRandomizedSearchCV -------------------------------------------------------------


def randomized_search(estimator, grid, X, y, total, seed, config, *, distribution, shape=1.0,
                      subsample=None):
    """PrivateRandomizedSearchCV with the per-trial epsilon solved so the total is ``total``.

    Every trial fits the estimator with the per-trial epsilon on the training part and scores
    it with the same epsilon on the held-out part (parallel composition: the trial is
    per-trial-epsilon-DP); the best trial's model is released. With ``subsample`` the final
    fit on the records outside the subsample also gets the per-trial epsilon.
    """
    from skdptune._randomized import PrivateRandomizedSearchCV  # added with this benchmark

    mean = config["mean_trials"]
    trial_epsilon = solve_trial_epsilon(total, mean, shape, subsample)
    search = PrivateRandomizedSearchCV(
        clone(estimator).set_params(epsilon=trial_epsilon), grid, trial_epsilon=trial_epsilon,
        delta=DELTA, distribution=distribution, n_iter=mean,
        shape=1.0 if shape is None else shape, subsample=subsample,  # shape unused by Poisson
        accountant=BudgetAccountant(), random_state=seed,
    ).fit(X, y)
    return search.best_estimator_, tuple(search.privacy_spent_)


@lru_cache(maxsize=None)
def solve_trial_epsilon(total, mean, shape, subsample):
    """Largest per-trial epsilon whose accounted total is at most ``total``.

    The library's own inversion (``skdptune._accounting.calibrate_trial_epsilon``) of what
    ``privacy_spent_`` reports, to a relative 1e-12. ``shape=None`` means Poisson.
    """
    from skdptune._accounting import calibrate_trial_epsilon

    return calibrate_trial_epsilon(total, DELTA, mean, math.inf if shape is None else shape,
                                   subsample)


# --- Naive baseline ------------------------------------------------------------------------


def naive(estimator, grid, X, y, total, seed, config):
    """Train every candidate privately, pick the best on a private validation split.

    Every record is independently put in the validation part with probability
    ``config["validation_fraction"]``. Each of the ``m`` candidates is trained on the training
    part with epsilon ``total / m`` (basic composition over the candidates: ``total``). The
    released model is the candidate with the largest noisy count of correct validation
    predictions, report-noisy-max with ``Lap(2 / total)`` noise per count (a count changes by at
    most 1 when a record is added or removed; the factor 2 is the non-monotone calibration,
    conservative here). Training and selection read disjoint records, so by parallel composition
    the whole is ``max(total, total) = total``-DP. No refit: the selected model is released.
    """
    rng = np.random.RandomState(seed)
    is_validation = rng.random_sample(len(y)) < config["validation_fraction"]
    candidates = list(ParameterGrid(grid))
    training_accountant = BudgetAccountant()
    noise = Laplace(epsilon=total, sensitivity=2.0, random_state=rng)
    models, noisy_counts = [], []
    for params in candidates:
        model = with_params(estimator, params, epsilon=total / len(candidates))
        model.set_params(accountant=training_accountant)
        model.fit(X[~is_validation], y[~is_validation])
        # Count of correct validation predictions: sensitivity 1, budget `total` (see above).
        correct = float(np.sum(model.predict(X[is_validation]) == y[is_validation]))
        noisy_counts.append(noise.randomise(correct))
        models.append(model)
    training_epsilon, training_delta = training_accountant.total()
    spent = (max(training_epsilon, total), training_delta)  # parallel composition
    return models[int(np.argmax(noisy_counts))], spent


#: Method name -> adapter. The run script runs them in this order.
METHODS = {
    "grid/doubling": partial(grid_search, selector="doubling"),
    "grid/exponential": partial(grid_search, selector="exponential"),
    "grid/permute_and_flip": partial(grid_search, selector="permute_and_flip"),
    "grid/report_noisy_max": partial(grid_search, selector="report_noisy_max"),
    "random/poisson": partial(randomized_search, distribution="poisson", shape=None),
    "random/geometric": partial(randomized_search, distribution="truncated_negative_binomial",
                                shape=1),
    "random/logarithmic": partial(randomized_search,
                                  distribution="truncated_negative_binomial", shape=0),
    "random/geometric+subsample": partial(randomized_search,
                                          distribution="truncated_negative_binomial", shape=1,
                                          subsample=0.2),
    "naive": naive,
}
