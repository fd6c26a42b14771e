"""The benchmark's two data sets, preprocessed with public constants only.

Nothing here is computed from the data: the categories, the numeric bounds and the synthetic
task's clipping bound are declared below (the Adult categories and ranges are those documented
with the UCI data set), so the preprocessing is a fixed per-record map that costs no privacy.
Every feature ends up in ``[-1, 1]`` (synthetic) or ``[0, 1]`` (Adult), and the bounds that the
diffprivlib models need are derived from these constants in :func:`model_bounds`.
"""

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification

#: Where the Adult file lives: ``../shared/data/adult.csv`` relative to the repository root.
ADULT_PATH = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "adult.csv"

#: Declared categories of Adult's categorical columns (UCI ``adult.names``). A value outside
#: the list (the file's ``?`` for "unknown") is encoded as all zeros.
ADULT_CATEGORIES = {
    "workclass": ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
                  "State-gov", "Without-pay", "Never-worked"],
    "education": ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
                  "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th",
                  "Doctorate", "5th-6th", "Preschool"],
    "marital-status": ["Married-civ-spouse", "Divorced", "Never-married", "Separated",
                       "Widowed", "Married-spouse-absent", "Married-AF-spouse"],
    "occupation": ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
                   "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
                   "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
                   "Armed-Forces"],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative",
                     "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native-country": ["United-States", "Cambodia", "England", "Puerto-Rico", "Canada",
                       "Germany", "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece",
                       "South", "China", "Cuba", "Iran", "Honduras", "Philippines", "Italy",
                       "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal", "Ireland", "France",
                       "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia",
                       "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia",
                       "El-Salvador", "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"],
}

#: Declared ranges of Adult's numeric columns (UCI documentation); values are clipped to them
#: and scaled to [0, 1]. ``fnlwgt`` (a census sampling weight) is not used.
ADULT_NUMERIC_BOUNDS = {
    "age": (17, 90),
    "education-num": (1, 16),
    "capital-gain": (0, 99999),
    "capital-loss": (0, 4356),
    "hours-per-week": (1, 99),
}

#: Positive label of Adult's ``Salary`` column.
ADULT_POSITIVE = ">50K"

#: The generated task: rows, features, informative features, and the declared bound B; the
#: features are clipped to [-B, B] and divided by B.
SYNTHETIC_ROWS = 200_000
SYNTHETIC_FEATURES = 20
SYNTHETIC_INFORMATIVE = 10
SYNTHETIC_BOUND = 4.0
SYNTHETIC_SEED = 0

#: Fraction of each data set held out as the (public) test set in every repetition.
TEST_FRACTION = 0.2


@lru_cache(maxsize=None)
def load(name, n_rows=SYNTHETIC_ROWS):
    """``(X, y, row_norm_bound)`` of data set ``name`` ("adult" or "synthetic").

    ``row_norm_bound`` is a declared upper bound on every row's Euclidean norm (for diffprivlib's
    ``LogisticRegression(data_norm=...)``): Adult has one non-zero per categorical column and
    five numeric columns in [0, 1], so ``sqrt(8 + 5)``; the synthetic rows lie in
    ``[-1, 1]^d``, so ``sqrt(d)``.
    """
    if name == "adult":
        return _load_adult()
    if name == "synthetic":
        return _make_synthetic(n_rows)
    raise ValueError(f"unknown data set {name!r}; use 'adult' or 'synthetic'.")


def adult_available():
    """Whether the Adult file is where the benchmark expects it."""
    return ADULT_PATH.is_file()


def _load_adult():
    frame = pd.read_csv(ADULT_PATH, skipinitialspace=True)
    columns = []
    for column, (low, high) in ADULT_NUMERIC_BOUNDS.items():
        values = frame[column].to_numpy(dtype=float)
        columns.append(((np.clip(values, low, high) - low) / (high - low))[:, None])
    for column, categories in ADULT_CATEGORIES.items():
        values = frame[column].astype(str).to_numpy()
        columns.append((values[:, None] == np.asarray(categories)[None, :]).astype(float))
    X = np.hstack(columns)
    y = (frame["Salary"].astype(str).str.strip() == ADULT_POSITIVE).to_numpy(dtype=int)
    return X, y, float(np.sqrt(len(ADULT_CATEGORIES) + len(ADULT_NUMERIC_BOUNDS)))


def _make_synthetic(n_rows):
    X, y = make_classification(
        n_samples=n_rows, n_features=SYNTHETIC_FEATURES, n_informative=SYNTHETIC_INFORMATIVE,
        n_redundant=0, flip_y=0.05, random_state=SYNTHETIC_SEED,
    )
    X = np.clip(X, -SYNTHETIC_BOUND, SYNTHETIC_BOUND) / SYNTHETIC_BOUND
    return X, y, float(np.sqrt(SYNTHETIC_FEATURES))


def model_bounds(name, n_features):
    """Declared per-feature ``(lower, upper)`` bounds after preprocessing."""
    lower = 0.0 if name == "adult" else -1.0
    return np.full(n_features, lower), np.ones(n_features)
