"""What each configuration of the privacy-gate issue does: refused (with which message), or
charged what.

Runs on any version of skdptune through its public API, so the same table can be made before
and after a change::

    python benchmarks/privacy_cases.py              # the checkout's skdptune
    PYTHONPATH=/path/to/old/checkout python benchmarks/privacy_cases.py

Data: 300 generated records with 4 features in [0, 1] (bounds and norms are declared as
constants). Prints a Markdown table: case, outcome (the exception type and the start of its
message, or "fitted"), what the user's accountant was charged, and ``privacy_spent_``.
"""

import copy
import warnings

import numpy as np
import pandas as pd
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression, StandardScaler
from diffprivlib.utils import BudgetError
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification
from sklearn.ensemble import BaggingClassifier, VotingClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from skdptune import PrivateGridSearchCV, PrivateRandomizedSearchCV

BOUNDS = (0.0, 1.0)
X, y = make_classification(n_samples=300, n_features=4, n_informative=3, n_redundant=0,
                           flip_y=0.05, random_state=0)
X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
CASES = []


def case(name):
    def register(function):
        CASES.append((name, function))
        return function
    return register


def search(estimator, grid, accountant, **params):
    defaults = dict(selection_epsilon=1.0, delta=1e-6, n_partitions=5, accountant=accountant,
                    random_state=0)
    defaults.update(params)
    return PrivateGridSearchCV(estimator, grid, **defaults)


def lr(**params):
    return LogisticRegression(data_norm=2.0, random_state=0, **params)


def bagged():
    return make_pipeline(StandardScaler(bounds=BOUNDS, epsilon=0.5),
                         BaggingClassifier(lr(epsilon=0.5), n_estimators=8, n_jobs=2))


def measured_spend(estimator, X_fit=X, y_fit=y):
    """What fitting ``estimator`` really spends, sequentially with one fresh accountant."""
    accountant = BudgetAccountant()
    estimator = estimator.set_params(**{
        key: accountant for key in estimator.get_params(deep=True)
        if key == "accountant" or key.endswith("__accountant")
    })
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, value in estimator.get_params(deep=True).items():
            if key.endswith("n_jobs") and value is not None:
                estimator.set_params(**{key: None})
        estimator.fit(X_fit, y_fit)
    return accountant.total()[0]


@case("1. bagged DP LR, n_jobs=2 (true refit spend 4.5)")
def bagging(acc):
    return search(bagged(), {"baggingclassifier__max_samples": [1.0]}, acc).fit(X, y)


@case("1. randomized search, bagged trial (true trial spend 4.5 > epsilon 1)")
def bagging_randomized(acc):
    return PrivateRandomizedSearchCV(bagged(), {"standardscaler__epsilon": [0.5]},
                                     trial_epsilon=1.0, accountant=acc, random_state=0).fit(X, y)


@case("1. VotingClassifier(n_jobs=2) over GaussianNB(bounds=None)")
def voting_leak(acc):
    voting = VotingClassifier([("a", GaussianNB()), ("b", GaussianNB())], n_jobs=2)
    return search(voting, {"voting": ["hard"]}, acc).fit(X, y)


@case("2. GridSearchCV(GaussianNB) as the estimator")
def nested_grid(acc):
    inner = GridSearchCV(GaussianNB(bounds=BOUNDS), {"var_smoothing": [1e-9, 1e-3]}, cv=3)
    return search(inner, {"cv": [3]}, acc).fit(X, y)


@case("2. CalibratedClassifierCV(isotonic)")
def calibrated(acc):
    return search(CalibratedClassifierCV(lr(), method="isotonic"), {"cv": [3]}, acc).fit(X, y)


@case("2. BaggingClassifier(oob_score=True)")
def bagging_oob(acc):
    return search(BaggingClassifier(lr(), n_estimators=4, oob_score=True, random_state=0),
                  {"n_estimators": [4]}, acc).fit(X, y)


@case("2. OneVsRestClassifier(DP LR)")
def one_vs_rest(acc):
    return search(OneVsRestClassifier(lr()), {"estimator__C": [1.0]}, acc).fit(X, y)


@case("2. FunctionTransformer(Z - Z.mean(0)) before GaussianNB")
def centring(acc):
    pipeline = make_pipeline(FunctionTransformer(lambda Z: Z - Z.mean(axis=0)),
                             GaussianNB(bounds=(-1, 1)))
    return search(pipeline, {"gaussiannb__epsilon": [1.0]}, acc).fit(X, y)


@case("3. grid swaps in sklearn LogisticRegression after a DP scaler")
def swapped(acc):
    pipeline = make_pipeline(StandardScaler(bounds=BOUNDS), GaussianNB(bounds=BOUNDS))
    grid = {"gaussiannb": [SkLogisticRegression()]}
    return search(pipeline, grid, acc).fit(X, y)


@case("3. estimator given as a grid value: the user's object after fit")
def grid_value(acc):
    mine = GaussianNB(bounds=BOUNDS)
    search(make_pipeline(GaussianNB(bounds=BOUNDS)), {"gaussiannb": [mine]}, acc).fit(X, y)
    return "the user's object was fitted" if hasattr(mine, "theta_") else "left unfitted"


@case("4. n_estimators of a bagged DP model varies (2 or 8), n_jobs=None")
def varying_bag(acc):
    bag = BaggingClassifier(lr(epsilon=0.5), n_estimators=2)
    return search(bag, {"n_estimators": [2, 8]}, acc).fit(X, y)


@case("5. refit fails and the late charge is refused")
def refused_late(acc):
    class Refusing(BudgetAccountant):
        def spend(self, epsilon, delta):
            if self.spent_budget:
                raise BudgetError("refused")
            return super().spend(epsilon, delta)

    refusing = Refusing()
    pipeline = make_pipeline(OneHotEncoder(categories=[["a", "b"]], sparse_output=False),
                             GaussianNB(bounds=BOUNDS))
    frame = pd.DataFrame({"c": np.array(["a", "b", "c"])[np.arange(len(X)) % 3]})
    fitted = search(pipeline, {"gaussiannb__epsilon": [1.0]}, refusing)
    try:
        fitted.fit(frame, y)
    except Exception as error:  # noqa: BLE001 - the outcome is the point
        left = sorted(name for name in vars(fitted) if name.endswith("_"))
        return (f"{type(error).__name__}; charged {refusing.total()[0]:.1f}; attributes left: "
                f"{left or 'none'}")
    return "fitted"


@case("5. fit(X, y, groups=...)")
def groups(acc):
    return search(GaussianNB(bounds=BOUNDS), {"epsilon": [1.0]}, acc).fit(
        X, y, groups=np.arange(len(X)) % 3)


@case("5. text through TfidfVectorizer (refit=True)")
def tfidf(acc):
    words = np.array(["good", "bad", "fine", "awful"])
    text = [" ".join(words[[label, label + 2]]) for label in y]
    pipeline = make_pipeline(TfidfVectorizer(), SkLogisticRegression())
    return search(pipeline, {"logisticregression__C": [1.0]}, acc).fit(text, y)


@case("6. DP LogisticRegression without data_norm")
def no_norm(acc):
    return search(LogisticRegression(), {"C": [1.0]}, acc).fit(X, y)


@case("6. GaussianNB without bounds")
def no_bounds(acc):
    return search(GaussianNB(), {"var_smoothing": [1e-9]}, acc).fit(X, y)


@case("6. StandardScaler without bounds in a pipeline")
def scaler_no_bounds(acc):
    pipeline = make_pipeline(StandardScaler(), GaussianNB(bounds=(-3, 3)))
    return search(pipeline, {"gaussiannb__epsilon": [1.0]}, acc).fit(X, y)


@case("6. epsilon='1.0' as a string")
def string_epsilon(acc):
    return search(GaussianNB(bounds=BOUNDS), {"epsilon": ["1.0"]}, acc).fit(X, y)


@case("6. sparse one-hot ColumnTransformer before DP LR (data_norm given)")
def sparse_one_hot(acc):
    frame = pd.DataFrame({"a": X[:, 0], "c": np.array(["x", "y"])[y]})
    columns = ColumnTransformer([("num", "passthrough", ["a"]),
                                 ("cat", OneHotEncoder(categories=[["x", "y"]]), ["c"])])
    return search(make_pipeline(columns, lr()), {"logisticregression__C": [1.0]}, acc).fit(
        frame, y)


@case("6. OneHotEncoder() with learned categories")
def learned_categories(acc):
    frame = pd.DataFrame({"c": np.array(["x", "y"])[y]})
    pipeline = make_pipeline(OneHotEncoder(sparse_output=False), GaussianNB(bounds=BOUNDS))
    return search(pipeline, {"gaussiannb__epsilon": [1.0]}, acc).fit(frame, y)


@case("7. cross_val_score(search, n_jobs=2), cv=3 (3 fits of 2.0)")
def cross_val(acc):
    scores = cross_val_score(search(GaussianNB(bounds=BOUNDS), {"epsilon": [1.0]}, acc), X, y,
                             cv=3, n_jobs=2)
    return f"scores {np.round(scores, 2).tolist()}"


@case("7. GridSearchCV(search, n_jobs=2), 2 x cv=2 + refit (5 fits of 2.0)")
def outer_grid(acc):
    inner = search(GaussianNB(bounds=BOUNDS), {"epsilon": [1.0]}, acc)
    GridSearchCV(inner, {"n_partitions": [3, 5]}, cv=2, n_jobs=2).fit(X, y)
    return "fitted"


@case("7. deepcopy(search).fit")
def deep_copy(acc):
    copy.deepcopy(search(GaussianNB(bounds=BOUNDS), {"epsilon": [1.0]}, acc)).fit(X, y)
    return "fitted (charged a copy)"


@case("8. refit error from a declared-category encoder quoting 'ssn=123-45-6789'")
def ssn(acc):
    frame = pd.DataFrame({"c": np.array(["a", "b", "ssn=123-45-6789"])[np.arange(len(X)) % 3]})
    pipeline = make_pipeline(OneHotEncoder(categories=[["a", "b"]], sparse_output=False),
                             GaussianNB(bounds=BOUNDS))
    return search(pipeline, {"gaussiannb__epsilon": [1.0]}, acc).fit(frame, y)


def run(function):
    accountant = BudgetAccountant()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = function(accountant)
        except Exception as error:  # noqa: BLE001 - the outcome is the point
            text = " ".join(str(error).split())
            outcome = f"{type(error).__name__}: {text[:150]}"
            reported = ""
        else:
            if isinstance(result, str):
                outcome, reported = result, ""
            else:
                outcome = "fitted"
                reported = tuple(round(float(v), 6) for v in result.privacy_spent_)
    shown = sorted({w.category.__name__ for w in caught
                    if "selector selected no candidate" not in str(w.message)})
    charged = tuple(round(float(v), 6) for v in accountant.total())
    return outcome, charged, reported, shown


def main():
    print("| case | outcome | accountant charged | privacy_spent_ | warnings shown |")
    print("|---|---|---|---|---|")
    for name, function in CASES:
        outcome, charged, reported, shown = run(function)
        outcome = outcome.replace("|", "\\|")
        print(f"| {name} | {outcome} | {charged} | {reported} | {', '.join(shown)} |")


if __name__ == "__main__":
    main()
