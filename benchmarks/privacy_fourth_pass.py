"""What each finding of the fourth privacy pass (issue 34) does, before and after.

Runs on any version of skdptune through its public API (a name the old version lacks makes
its case fail, and the table says so), so the same table can be made before and after::

    python benchmarks/privacy_fourth_pass.py              # the checkout's skdptune
    PYTHONPATH=/path/to/old/checkout python benchmarks/privacy_fourth_pass.py

Every case runs in a child process with a 60 s limit (``lib/cases.py``). Data: 300 generated
records with 4 features in [0, 1]; the rare-class cases add one record of a third class.
Budgets: a total of 1.0 where the version has it. "Charged" is the user's accountant in the
parent process of the case. The forest's reproduction attack has its own script with the
attack's success rates (``benchmarks/privacy_audit/forest_attack.py``); its cases here say
what a released forest keeps.
"""

import pickle
import sys
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification
from sklearn.pipeline import make_pipeline

from skdptune import PrivateGridSearchCV

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.cases import Cases  # noqa: E402

BOUNDS = (0.0, 1.0)
X, y = make_classification(n_samples=300, n_features=4, n_informative=3, n_redundant=0,
                           flip_y=0.05, random_state=0)
X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
CASES = Cases(time_limit=60)
case = CASES.case


def grid(estimator, accountant, param_grid=None, **params):
    defaults = dict(n_partitions=5, accountant=accountant, random_state=0)
    defaults.update(params)
    return PrivateGridSearchCV(estimator, param_grid or {}, **defaults)


def _released_seeds(forest):
    seeds = [tree.random_state for tree in forest.estimators_]
    kept = [seed for seed in seeds if seed is not None]
    return f"released; {len(kept)} of {len(seeds)} trees keep an integer seed"


@case("1. search over diffprivlib's RandomForestClassifier, refit")
def diffprivlib_forest(acc):
    from diffprivlib.models import RandomForestClassifier

    search = grid(RandomForestClassifier(bounds=BOUNDS, classes=[0, 1]), acc)
    return _released_seeds(search.fit(X, y).best_estimator_)


@case("1. search over skdptune.ensemble.RandomForestClassifier, refit")
def skdptune_forest(acc):
    from skdptune.ensemble import RandomForestClassifier

    search = grid(RandomForestClassifier(bounds=BOUNDS, classes=[0, 1]), acc)
    return _released_seeds(search.fit(X, y).best_estimator_)


@case("2. a released DecisionTreeClassifier's fit and numpy's global generator")
def tree_global_generator(acc):
    try:
        from skdptune.tree import DecisionTreeClassifier
    except ImportError:
        from diffprivlib.models import DecisionTreeClassifier
    np.random.seed(0)
    before = np.random.get_state()[1].copy()
    tree = DecisionTreeClassifier(bounds=BOUNDS, classes=[0, 1], max_depth=8,
                                  accountant=acc).fit(X, y)
    moved = not np.array_equal(before, np.random.get_state()[1])
    return (f"{type(tree).__module__}.{type(tree).__name__}: global generator "
            + ("consumed (empty leaves labelled from it)" if moved else "untouched"))


def _fit_with_accountant_sent_alone(accountant):
    from diffprivlib.models import GaussianNB

    try:
        grid(GaussianNB(bounds=BOUNDS), accountant, {"var_smoothing": [1e-9, 1e-3]},
             refit=False).fit(X, y)
    except Exception as error:  # noqa: BLE001 - the worker's outcome, reported
        return type(error).__name__
    return f"charged the worker's copy {tuple(round(v, 4) for v in accountant.total())}"


@case("3. a search built in a loky worker with your accountant sent alone")
def accountant_sent_alone(acc):
    from joblib import Parallel, delayed

    (outcome,) = Parallel(n_jobs=2)(delayed(_fit_with_accountant_sent_alone)(acc)
                                    for _ in range(1))
    return outcome


@case("3. an unpickled accountant given to a search in this process")
def unpickled_accountant(acc):
    copied = pickle.loads(pickle.dumps(acc))
    return _fit_with_accountant_sent_alone(copied)


@case("4. NaN in X, diffprivlib's StandardScaler first, refit=False")
def nan_scaler_first(acc):
    from diffprivlib.models import GaussianNB, StandardScaler

    X_nan = X.copy()
    X_nan[::10, 1] = np.nan
    pipeline = make_pipeline(StandardScaler(bounds=BOUNDS), GaussianNB(bounds=BOUNDS))
    search = grid(pipeline, acc, {"gaussiannb__var_smoothing": [1e-9, 1e-3]}, refit=False)
    search.fit(X_nan, y)
    return f"fitted (no refit); selected {search.best_params_}"


def _logistic(**params):
    from skdptune.linear_model import LogisticRegression

    try:
        return LogisticRegression(data_norm=2.0, classes=[0, 1], **params)
    except TypeError:  # a version without declared classes
        return LogisticRegression(data_norm=2.0, **params)


@case("5. skdptune's LogisticRegression released by a search: n_iter_")
def released_n_iter(acc):
    search = grid(_logistic(), acc, {"C": [0.1, 1.0]}).fit(X, y)
    return ("n_iter_ released" if hasattr(search.best_estimator_, "n_iter_")
            else "n_iter_ not released")


@case("7. privacy_report_: the zero-out figure")
def zero_out(acc):
    report = grid(_logistic(), acc, {"C": [0.1, 1.0]}).fit(X, y).privacy_report_
    if "zero_out_epsilon" not in report:
        return "no zero-out figure"
    return (f"charged {report['total_epsilon']:g} (replace one); zero-out "
            f"{report['zero_out_epsilon']:.4g}")


def _rare_class_pair():
    """The data with one record of class 2, and its neighbour with that record's label 0."""
    y_rare = y.copy()
    y_rare[0] = 2
    return (X, y_rare), (X, y)


def _classes_on_the_pair(make, acc):
    outcomes = []
    for data in _rare_class_pair():
        model = grid(make(), acc).fit(*data).best_estimator_
        outcomes.append(str(np.asarray(model.classes_).tolist()))
    return "released; classes_ " + " on D, ".join(outcomes) + " on D'"


@case("8. GaussianNB released on the rare-class pair (diffprivlib's, no classes)")
def rare_class_diffprivlib_nb(acc):
    from diffprivlib.models import GaussianNB

    return _classes_on_the_pair(lambda: GaussianNB(bounds=BOUNDS), acc)


@case("8. GaussianNB released on the rare-class pair (declared classes [0, 1, 2])")
def rare_class_declared_nb(acc):
    from skdptune.naive_bayes import GaussianNB

    return _classes_on_the_pair(lambda: GaussianNB(bounds=BOUNDS, classes=[0, 1, 2]), acc)


@case("8. LogisticRegression released on the rare-class pair (no classes)")
def rare_class_logistic(acc):
    from skdptune.linear_model import LogisticRegression

    return _classes_on_the_pair(lambda: LogisticRegression(data_norm=2.0), acc)


@case("8. LogisticRegression released on the rare-class pair (declared classes [0, 1, 2])")
def rare_class_declared_logistic(acc):
    from skdptune.linear_model import LogisticRegression

    return _classes_on_the_pair(
        lambda: LogisticRegression(data_norm=2.0, classes=[0, 1, 2]), acc)


if __name__ == "__main__":
    CASES.command_line(__file__, __doc__)
