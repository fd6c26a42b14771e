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


@case("1. neighbours, PCA(n_components=0.9) first: forecast(X)'s refit noise, 20 calls each")
def neighbour_forecasts(acc):
    X, X2, _ = _neighbours()
    search = _variance_fraction_search()
    seen = [sorted({round(search.forecast(data).policy.refit_noise, 6) for _ in range(20)})
            for data in (X, X2)]
    return f"on D {seen[0]}, on D' {seen[1]}"


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


if __name__ == "__main__":
    CASES.command_line(__file__, __doc__)
