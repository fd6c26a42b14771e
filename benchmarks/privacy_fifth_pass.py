"""What each finding of the fifth privacy pass (issue 38) does, before and after.

Runs on any version of skdptune through its public API, so the same table can be made before
and after::

    python benchmarks/privacy_fifth_pass.py              # the checkout's skdptune
    PYTHONPATH=/path/to/old/checkout python benchmarks/privacy_fifth_pass.py

Every case runs in a child process with a 120 s limit (``lib/cases.py``). Data: 600 generated
records, features in [0, 1]. Budgets: a total of 1.0. "Charged" is the user's accountant in
the parent process of the case.
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skdptune import PrivateGridSearchCV

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.cases import Cases  # noqa: E402

N = 600
RNG = np.random.default_rng(0)
FRAME = pd.DataFrame({name: RNG.uniform(0, 1, N) for name in "abcd"})
FRAME["s"] = RNG.choice(["x", "y"], N)
Y = (FRAME.a + FRAME.b > 1).astype(int).to_numpy()
CASES = Cases(time_limit=120)
case = CASES.case


def _logistic():
    from skdptune.linear_model import LogisticRegression

    return LogisticRegression(data_norm=2.0, classes=[0, 1])


def _outcome(search, X, y=Y):
    try:
        search.fit(X, y)
    except Exception as error:  # noqa: BLE001 - the outcome is the table's
        message = str(error)
        said = "message withheld" if "withheld" in message else "full message"
        return f"{type(error).__name__} ({said})"
    return "fitted"


def _neighbours():
    """Two datasets differing in row 7, one of the 50 rows the old policy's PCA was fitted on:
    in X those rows lie on a line (one component keeps 90 % of their variance), in X2 row 7
    lies far off it."""
    rng = np.random.default_rng(1)
    t = rng.uniform(0, 1, (N, 1))
    X = np.hstack([t, t, t, t]) * 0.5 + rng.uniform(0, 1e-3, (N, 4))
    X[50:] = rng.uniform(0, 1, (N - 50, 4))
    X2 = X.copy()
    X2[7] = [1.0, 0.0, 1.0, 0.0]
    return X, X2, (X[:, 0] > 0.5).astype(int)


def _variance_fraction_search(accountant=None):
    from skdptune.decomposition import PCA

    pipeline = make_pipeline(PCA(n_components=0.9, data_norm=2.0, bounds=(0, 1)), _logistic())
    return PrivateGridSearchCV(pipeline, {"logisticregression__C": [0.1, 1.0, 10.0]},
                               epsilon=1.0, accountant=accountant)


@case("1. neighbours, PCA(n_components=0.9) first: forecast(X)'s refit noise, 200 calls each")
def neighbour_forecasts(acc):
    from collections import Counter

    X, X2, _ = _neighbours()
    search = _variance_fraction_search()
    seen = [Counter(round(search.forecast(data).policy.refit_noise, 4) for _ in range(200))
            for data in (X, X2)]
    return " vs ".join(f"on {name} " + ", ".join(f"{value:g}: {count}" for value, count
                                                 in sorted(counts.items()))
                       for name, counts in zip(("D", "D'"), seen))


@case("1. neighbours, PCA(n_components=0.9) first: fit's accountant entries, 3 fits each")
def neighbour_fits(acc):
    from diffprivlib.accountant import BudgetAccountant

    X, X2, y = _neighbours()
    seen = []
    for data in (X, X2):
        entries = set()
        for _ in range(3):
            accountant = BudgetAccountant()
            _variance_fraction_search(accountant).fit(data, y)
            entries.add(tuple((round(e, 6), d) for e, d in accountant.spent_budget))
        seen.append(sorted(entries))
    return f"on D {seen[0]}, on D' {seen[1]}"


@case("2. DP scaler bounds for 3 of 4 columns inside a ColumnTransformer")
def scaler_three_of_four(acc):
    from diffprivlib.models import StandardScaler

    scaler = StandardScaler(bounds=([0, 0, 0], [1, 1, 1]), epsilon=0.5)
    pipeline = make_pipeline(ColumnTransformer([("num", scaler, list("abcd"))]), _logistic())
    search = PrivateGridSearchCV(pipeline, {"logisticregression__C": [0.1, 1.0]}, epsilon=1.0,
                                 accountant=acc, random_state=0)
    return _outcome(search, FRAME[list("abcd")])


@case("2. a text column against declared categories [0, 1]")
def text_against_numbers(acc):
    encoder = OneHotEncoder(categories=[[0, 1]], sparse_output=False)
    pipeline = make_pipeline(ColumnTransformer([("cat", encoder, ["s"]),
                                                ("num", "passthrough", ["a", "b"])]),
                             _logistic())
    search = PrivateGridSearchCV(pipeline, {"logisticregression__C": [0.1, 1.0]}, epsilon=1.0,
                                 accountant=acc, random_state=0)
    return _outcome(search, FRAME[["s", "a", "b"]])


@case("2. PCA(n_components=5) on 3 features")
def pca_too_many(acc):
    from skdptune.decomposition import PCA

    pipeline = make_pipeline(PCA(n_components=5, data_norm=2.0, epsilon=0.5, bounds=(0, 1)),
                             _logistic())
    search = PrivateGridSearchCV(pipeline, {"logisticregression__C": [0.1, 1.0]}, epsilon=1.0,
                                 accountant=acc, random_state=0)
    return _outcome(search, FRAME[list("abc")].to_numpy())


@case("2. one record outside an encoder's declared categories (handle_unknown='error')")
def one_unknown_category(acc):
    frame = FRAME[["s", "a"]].copy()
    frame.loc[3, "s"] = "z"
    encoder = OneHotEncoder(categories=[["x", "y"]], sparse_output=False)
    pipeline = make_pipeline(ColumnTransformer([("cat", encoder, ["s"])],
                                               remainder="passthrough"), _logistic())
    search = PrivateGridSearchCV(pipeline, {"logisticregression__C": [0.1, 1.0]}, epsilon=1.0,
                                 accountant=acc, random_state=0)
    return _outcome(search, frame)


def _extreme_configurations():
    """Every released family alone and in the pipelines that can turn a finite value into
    an overflow (a DP scaler, polynomial features, a PCA), with the kind of its target."""
    from diffprivlib.models import StandardScaler
    from sklearn.preprocessing import Binarizer, Normalizer, PolynomialFeatures

    from skdptune.cluster import KMeans
    from skdptune.decomposition import PCA
    from skdptune.ensemble import RandomForestClassifier
    from skdptune.linear_model import LogisticRegression, Ridge
    from skdptune.naive_bayes import GaussianNB
    from skdptune.tree import DecisionTreeClassifier

    B = (0.0, 1.0)

    def lr():
        return LogisticRegression(data_norm=1.0, classes=[0, 1])

    def scaler(bounds=B):
        return StandardScaler(bounds=bounds)

    def pca(**params):
        return PCA(n_components=2, data_norm=2.0, **params)

    return {
        "LR": (lr, "clf"),
        "Ridge": (lambda: Ridge(bounds_X=B, bounds_y=B), "reg"),
        "GNB": (lambda: GaussianNB(bounds=B, classes=[0, 1]), "clf"),
        "Tree": (lambda: DecisionTreeClassifier(bounds=B, classes=[0, 1], max_depth=3), "clf"),
        "RF": (lambda: RandomForestClassifier(bounds=B, classes=[0, 1], max_depth=3,
                                              n_estimators=3), "clf"),
        "KMeans": (lambda: KMeans(bounds=B, n_clusters=2), "clu"),
        "Scaler>LR": (lambda: make_pipeline(scaler(), lr()), "clf"),
        "Scaler>GNB": (lambda: make_pipeline(scaler(), GaussianNB(bounds=(-3, 3),
                                                                  classes=[0, 1])), "clf"),
        "Scaler>Tree": (lambda: make_pipeline(scaler(), DecisionTreeClassifier(
            bounds=(-3, 3), classes=[0, 1], max_depth=3)), "clf"),
        "Scaler>Ridge": (lambda: make_pipeline(scaler(), Ridge(bounds_X=(-3, 3), bounds_y=B)),
                         "reg"),
        "Scaler>KMeans": (lambda: make_pipeline(scaler(), KMeans(bounds=(-3, 3),
                                                                 n_clusters=2)), "clu"),
        "PCA>LR": (lambda: make_pipeline(pca(bounds=B), lr()), "clf"),
        "PCA>GNB": (lambda: make_pipeline(pca(bounds=B), GaussianNB(bounds=(-2, 2),
                                                                    classes=[0, 1])), "clf"),
        "PCA(centered=False)>LR": (lambda: make_pipeline(pca(bounds=B, centered=False), lr()),
                                   "clf"),
        "Poly>LR": (lambda: make_pipeline(PolynomialFeatures(2), lr()), "clf"),
        "Normalizer>LR": (lambda: make_pipeline(Normalizer(), lr()), "clf"),
        "Scaler>PCA>LR": (lambda: make_pipeline(scaler(), pca(centered=True), lr()), "clf"),
        "Scaler>Scaler>LR": (lambda: make_pipeline(scaler(), scaler((-3, 3)), lr()), "clf"),
        "Poly>Scaler>LR": (lambda: make_pipeline(PolynomialFeatures(2), scaler(), lr()), "clf"),
        "Scaler>Normalizer>LR": (lambda: make_pipeline(scaler(), Normalizer(), lr()), "clf"),
        "Scaler>Poly>LR": (lambda: make_pipeline(scaler(), PolynomialFeatures(2), lr()),
                           "clf"),
        "PCA>Scaler>LR": (lambda: make_pipeline(pca(bounds=B), scaler((-2, 2)), lr()), "clf"),
        "Binarizer>GNB": (lambda: make_pipeline(Binarizer(threshold=0.5),
                                                GaussianNB(bounds=B, classes=[0, 1])), "clf"),
    }


EXTREMES = {"0.7": 0.7, "1e39": 1e39, "-1e39": -1e39, "1e308": 1e308, "-1e308": -1e308,
            "max": np.finfo(float).max, "1+1e-9": 1 + 1e-9, "-1e-9": -1e-9,
            "5e-324": 5e-324, "-5e-324": -5e-324, "1e-310": 1e-310}


@case("3. one extreme finite value in X (and in y for Ridge): 23 configurations x 11 values")
def extreme_values(acc):
    from diffprivlib.accountant import BudgetAccountant

    charged_then_failed, refused, released, total = [], 0, 0, 0
    for name, (make, kind) in _extreme_configurations().items():
        for value_name, value in EXTREMES.items():
            for target in (("X", "y") if kind == "reg" else ("X",)):
                rng = np.random.default_rng(0)
                X = rng.random((200, 3))
                y = {"clf": (X[:, 0] > 0.5).astype(int), "reg": X[:, 0].copy()}.get(kind)
                if target == "X":
                    X[0, 0] = value
                else:
                    y[0] = value
                accountant = BudgetAccountant()
                search = PrivateGridSearchCV(make(), {}, epsilon=2.0, accountant=accountant,
                                             **({"scoring": "accuracy"} if kind == "clf"
                                                else {}))
                total += 1
                try:
                    search.fit(X, y) if y is not None else search.fit(X)
                    released += 1
                except Exception:  # noqa: BLE001 - counted
                    if accountant.total()[0] > 0:
                        charged_then_failed.append(f"{name} {target}={value_name}")
                    else:
                        refused += 1
    where = sorted({case.split(" ")[0] for case in charged_then_failed})
    return (f"{released} released, {refused} refused before the charge, "
            f"{len(charged_then_failed)} charged then failed (of {total})"
            + (f": {', '.join(where)}" if where else ""))


@case("4. an accountant pickled where skdptune was never imported, charged here")
def accountant_from_a_plain_process(acc):
    import pickle
    import subprocess

    from skdptune.naive_bayes import GaussianNB

    sent = subprocess.run(
        [sys.executable, "-c", "import pickle, sys; from diffprivlib.accountant import "
         "BudgetAccountant; sys.stdout.buffer.write(pickle.dumps(BudgetAccountant()))"],
        capture_output=True, check=True).stdout
    copy = pickle.loads(sent)
    search = PrivateGridSearchCV(GaussianNB(bounds=(0, 1), classes=[0, 1]), {}, epsilon=1.0,
                                 accountant=copy)
    outcome = _outcome(search, FRAME[list("abcd")].to_numpy())
    return f"{outcome}; the copy was charged {copy.total()[0]:g}"


if __name__ == "__main__":
    CASES.command_line(__file__, __doc__)
