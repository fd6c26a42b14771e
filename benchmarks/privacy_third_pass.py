"""What each case of the third privacy pass (issue 15) does: refused, hung, or charged what.

Runs on any version of skdptune through its public API, so the same table can be made before
and after a change::

    python benchmarks/privacy_third_pass.py              # the checkout's skdptune
    PYTHONPATH=/path/to/old/checkout python benchmarks/privacy_third_pass.py

Every case runs in a child process with a time limit (a fit that never returns is reported
as hung) and its standard output and error are captured at the file-descriptor level: the
"printed" column counts the bytes the fits printed where a user would see them. Budgets are
left at each version's default (they differ: before issue 19 the default spent the selection's
1.0 plus the refit's own epsilon, after it a total of 1.0). Data: 300 generated records with 4
features in [0, 1]. Prints a Markdown table.
"""

import copy
import multiprocessing
import sys
from pathlib import Path

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import GaussianNB, LinearRegression, LogisticRegression, StandardScaler
from sklearn.datasets import make_classification
from sklearn.linear_model import SGDClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

from skdptune import PrivateGridSearchCV, PrivateRandomizedSearchCV
from skdptune.selection import PermuteAndFlip

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.cases import Cases  # noqa: E402

BOUNDS = (0.0, 1.0)
X, y = make_classification(n_samples=300, n_features=4, n_informative=3, n_redundant=0,
                           flip_y=0.05, random_state=0)
X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
CASES = Cases(time_limit=30)  # seconds per case
case = CASES.case


def grid(estimator, accountant, param_grid=None, **params):
    defaults = dict(n_partitions=5, accountant=accountant, random_state=0)
    defaults.update(params)
    return PrivateGridSearchCV(estimator, param_grid or {}, **defaults)


def fitted(search, X_fit=X, y_fit=y):
    search.fit(X_fit, y_fit)
    return f"fitted ({type(search.best_estimator_).__name__ if search.refit else 'no refit'})"


@case("1. LogisticRegression(data_norm=-1)")
def negative_norm(acc):
    return fitted(grid(LogisticRegression(data_norm=-1.0), acc))


@case("1. LogisticRegression(data_norm=nan)")
def nan_norm(acc):
    search = grid(LogisticRegression(data_norm=float("nan")), acc)
    search.fit(X, y)
    return f"fitted, coef_ {np.asarray(search.best_estimator_.coef_).ravel()[:2]}"


@case("1. GaussianNB(bounds=(1, 0))")
def reversed_bounds(acc):
    return fitted(grid(GaussianNB(bounds=(1.0, 0.0)), acc))


@case("1. GaussianNB(bounds=(nan, nan))")
def nan_bounds(acc):
    search = grid(GaussianNB(bounds=(float("nan"), float("nan"))), acc)
    search.fit(X, y)
    return f"fitted, theta_ {search.best_estimator_.theta_[0, :2]}"


@case("1. LinearRegression(bounds_y=(-inf, inf))")
def infinite_y_bounds(acc):
    search = grid(LinearRegression(bounds_X=BOUNDS, bounds_y=(-np.inf, np.inf)), acc,
                  utility_range=(-1.0, 1.0), scoring="r2")
    search.fit(X, y.astype(float))
    return f"fitted, coef_ {np.asarray(search.best_estimator_.coef_).ravel()[:2]}"


@case("1. GaussianNB(bounds=(-inf, inf))")
def infinite_bounds(acc):
    return fitted(grid(GaussianNB(bounds=(-np.inf, np.inf)), acc))


@case("1. StandardScaler(bounds=(0, inf)) + GaussianNB, refit=False")
def infinite_scaler(acc):
    return fitted(grid(make_pipeline(StandardScaler(bounds=(0.0, np.inf)),
                                     GaussianNB(bounds=BOUNDS)), acc, refit=False))


@case("1. PrivateRandomizedSearchCV, LogisticRegression(data_norm=-1)")
def randomized_negative_norm(acc):
    search = PrivateRandomizedSearchCV(LogisticRegression(data_norm=-1.0), {"C": [0.1, 1.0]},
                                       accountant=acc, random_state=0)
    search.fit(X, y)
    return "fitted"


FORKED = {}


def _fit_forked(_):
    try:
        FORKED["search"].fit(X, y)
    except Exception as error:  # noqa: BLE001 - reported, whatever it is
        return type(error).__name__
    return "charged a copy"


@case("2. a module-level search fitted in 3 forked children")
def forked(acc):
    FORKED["search"] = grid(GaussianNB(bounds=BOUNDS), acc)
    with multiprocessing.get_context("fork").Pool(3) as pool:
        outcomes = pool.map(_fit_forked, range(3))
    return "children: " + ", ".join(outcomes)


@case("3. MLPClassifier(verbose=True), refit=False")
def mlp_verbose(acc):
    return fitted(grid(MLPClassifier(hidden_layer_sizes=(3,), max_iter=20, verbose=True), acc,
                       refit=False, scoring="accuracy"))


@case("3. SGDClassifier(verbose=1), refit=False")
def sgd_verbose(acc):
    return fitted(grid(SGDClassifier(max_iter=5, tol=None, verbose=1), acc, refit=False,
                       scoring="accuracy"))


@case("4. partition_scaling rule giving epsilon=-v")
def negative_scaled_epsilon(acc):
    return fitted(grid(GaussianNB(bounds=BOUNDS), acc, {"epsilon": [0.5, 1.0]},
                       partition_scaling={"epsilon": lambda value, ratio: -value}))


@case("4. partition_scaling rule giving var_smoothing=-1")
def negative_var_smoothing(acc):
    return fitted(grid(GaussianNB(bounds=BOUNDS), acc, {"var_smoothing": [1e-9, 1e-3]},
                       partition_scaling={"var_smoothing": lambda value, ratio: -1.0}))


@case("5. the adjacency privacy_report_ states")
def adjacency(acc):
    search = grid(GaussianNB(bounds=BOUNDS), acc)
    search.fit(X, y)
    return repr(search.privacy_report_["adjacency"])


@case("6. GaussianNB(random_state=0) in a search with secure noise")
def seeded_step(acc):
    return fitted(grid(GaussianNB(bounds=BOUNDS, random_state=0), acc, random_state=None))


@case("7. copy.copy(search), then the original's fit")
def shallow_copy(acc):
    search = grid(GaussianNB(bounds=BOUNDS), acc)
    copy.copy(search)
    return fitted(search)


class HalfReporting(PermuteAndFlip):
    """Reports half the epsilon it is handed."""

    def select(self, utilities, *, sensitivity, epsilon, delta, random_state=None):
        result = super().select(utilities, sensitivity=sensitivity, epsilon=epsilon,
                                delta=delta, random_state=random_state)
        return result.__class__(**{**vars(result), "epsilon": epsilon / 2})


@case("8. a selector reporting half the epsilon it was handed")
def under_reporting(acc):
    search = grid(GaussianNB(bounds=BOUNDS), acc, selector=HalfReporting(), score_share=0.0)
    search.fit(X, y)
    return f"fitted; privacy_spent_ {tuple(round(v, 6) for v in search.privacy_spent_)}"


@case("issue 19.2: pure configuration, BudgetAccountant(epsilon=5, delta=0)")
def pure_delta(acc):
    search = grid(GaussianNB(bounds=BOUNDS), BudgetAccountant(epsilon=5, delta=0))
    search.fit(X, y)
    return f"fitted; privacy_spent_ {tuple(round(v, 6) for v in search.privacy_spent_)}"


if __name__ == "__main__":
    CASES.command_line(__file__, __doc__)
