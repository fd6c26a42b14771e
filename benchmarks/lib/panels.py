"""The panels of the fidelity study: data set, DP model, grid and default candidate.

Every bound, norm and category below is a declared public constant, never computed from the
data. Adult comes from :mod:`datasets` (declared categories and numeric ranges, features in
``[0, 1]``, declared row-norm bound ``sqrt(13)``). ``big-lr`` is generated here (no download).

A panel's candidates are parameter dicts *without* ``epsilon``: the study sets the refit
epsilon (and, for partition fits, the library's rescaling) itself.
"""

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from skdptune.ensemble import RandomForestClassifier
from skdptune.linear_model import LogisticRegression
from skdptune.naive_bayes import GaussianNB
from sklearn.datasets import make_classification
from sklearn.model_selection import ParameterGrid, train_test_split

from . import datasets

# --- Adult -----------------------------------------------------------------------------------

#: Declared row-norm bound of the preprocessed Adult rows: one non-zero (at most 1) per
#: categorical column (8) and five numeric columns in [0, 1]: sqrt(8 + 5).
ADULT_ROW_NORM = float(np.sqrt(len(datasets.ADULT_CATEGORIES) + len(datasets.ADULT_NUMERIC_BOUNDS)))
#: Number of Adult features after the declared one-hot encoding (5 numeric + 99 indicators).
ADULT_N_FEATURES = len(datasets.ADULT_NUMERIC_BOUNDS) + sum(
    len(c) for c in datasets.ADULT_CATEGORIES.values())
#: Declared per-feature bounds of the preprocessed Adult features: [0, 1] each.
ADULT_LOWER = np.zeros(ADULT_N_FEATURES)
ADULT_UPPER = np.ones(ADULT_N_FEATURES)
#: The first five Adult features are the numeric ones (see datasets._load_adult).
ADULT_N_NUMERIC = len(datasets.ADULT_NUMERIC_BOUNDS)

# --- big-lr: a generated data set of 1,000,000 rows -----------------------------------------

#: make_classification settings (public): 20 features, 10 informative, 5 % flipped labels,
#: 70 % / 30 % classes.
BIG_ROWS = 1_000_000
BIG_FEATURES = 20
BIG_INFORMATIVE = 10
BIG_FLIP_Y = 0.05
BIG_WEIGHTS = (0.7,)
BIG_SEED = 0
#: Heavy-tailed row norms: every row is multiplied by ``1 + Pareto(BIG_PARETO_SHAPE)`` (a
#: public, seeded, per-record transform), so a few rows are thousands of times longer than the
#: median one, and a public bound on the row norm has to be large.
BIG_PARETO_SHAPE = 1.2
BIG_SCALE_SEED = 1
#: Declared row-norm bound of big-lr: rows longer than this are scaled down to it (a fixed
#: per-record map). The median row norm is about 12, the 99th percentile about 300.
BIG_ROW_NORM = 10_000.0


@lru_cache(maxsize=None)
def load_adult():
    """``(X, y)`` of Adult, preprocessed with the declared constants of :mod:`datasets`."""
    X, y, row_norm = datasets.load("adult")
    assert X.shape[1] == ADULT_N_FEATURES and np.isclose(row_norm, ADULT_ROW_NORM)
    return X, y


@lru_cache(maxsize=None)
def load_big():
    """``(X, y)`` of big-lr: make_classification, heavy-tailed row scales, clipped row norm."""
    X, y = make_classification(
        n_samples=BIG_ROWS, n_features=BIG_FEATURES, n_informative=BIG_INFORMATIVE,
        n_redundant=0, flip_y=BIG_FLIP_Y, weights=list(BIG_WEIGHTS), random_state=BIG_SEED,
    )
    scale = 1.0 + np.random.default_rng(BIG_SCALE_SEED).pareto(BIG_PARETO_SHAPE, BIG_ROWS)
    X *= scale[:, None]
    norms = np.linalg.norm(X, axis=1)
    X *= np.minimum(1.0, BIG_ROW_NORM / norms)[:, None]
    return X, y


# --- Panels ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Panel:
    """One (data set, model, grid) of the study.

    Attributes
    ----------
    name : str
    data : str
        ``"adult"`` or ``"big"``.
    model : str
        ``"lr"``, ``"rf"`` or ``"nb"``.
    grid : dict
        ``ParameterGrid`` input; its order is the candidates' (grid) order.
    default : dict
        The default candidate (stated before any result).
    labels : dict
        ``{parameter: {repr(value): short label}}`` for values that print badly (bounds).
    """

    name: str
    data: str
    model: str
    grid: dict
    default: dict
    labels: dict = field(default_factory=dict)

    @property
    def candidates(self):
        return list(ParameterGrid(self.grid))

    def load(self):
        return load_adult() if self.data == "adult" else load_big()

    def estimator(self, epsilon):
        """The panel's DP model with every bound and the classes declared and the given
        epsilon."""
        if self.model == "lr":
            return LogisticRegression(epsilon=epsilon, classes=datasets.CLASSES)
        if self.model == "rf":
            return RandomForestClassifier(epsilon=epsilon, bounds=(ADULT_LOWER, ADULT_UPPER),
                                          classes=datasets.CLASSES)
        if self.model == "nb":
            return GaussianNB(epsilon=epsilon, classes=datasets.CLASSES)
        raise ValueError(self.model)

    def default_index(self):
        for i, params in enumerate(self.candidates):
            if all(_same(params[key], value) for key, value in self.default.items()):
                return i
        raise ValueError(f"default {self.default} is not a candidate of {self.name}")

    def describe(self, params):
        """A short, printable label of one candidate."""
        parts = []
        for key in sorted(params):
            value = params[key]
            label = None
            for name, known in self.labels.get(key, {}).items():
                if _same(known, value):
                    label = name
            parts.append(f"{key}={label if label is not None else _short(value)}")
        return ", ".join(parts)


def _same(a, b):
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(np.array_equal(x, y) for x, y in zip(a, b)))
    return a == b


def _short(value):
    return f"{value:g}" if isinstance(value, float) else str(value)


# NB bounds variants: the declared bounds scaled by 0.5, 1 and 2, and the declared bounds with
# the five numeric columns' upper bounds shrunk to 0.05 (about 3.6 years of age above 17, a
# capital gain of 5,000: public choices, not computed from the data).
_NB_BOUNDS = {
    "declared*0.5": (ADULT_LOWER, 0.5 * ADULT_UPPER),
    "declared": (ADULT_LOWER, ADULT_UPPER),
    "declared*2": (ADULT_LOWER, 2.0 * ADULT_UPPER),
    "numeric_upper*0.05": (ADULT_LOWER, np.r_[np.full(ADULT_N_NUMERIC, 0.05),
                                              ADULT_UPPER[ADULT_N_NUMERIC:]]),
}

# Default candidates, stated now, before any result: adult-lr and big-lr: C=1.0, data_norm =
# the declared row-norm bound of the panel; adult-rf: max_depth=5, n_estimators=10
# (diffprivlib's defaults); adult-nb: the declared bounds, var_smoothing=1e-9.
PANELS = {
    "adult-lr": Panel(
        "adult-lr", "adult", "lr",
        {"C": [0.01, 0.1, 1.0, 10.0, 100.0], "data_norm": [0.5, 1.0, 2.0, ADULT_ROW_NORM]},
        default={"C": 1.0, "data_norm": ADULT_ROW_NORM},
        labels={"data_norm": {"sqrt13": ADULT_ROW_NORM}},
    ),
    "adult-rf": Panel(
        "adult-rf", "adult", "rf",
        {"max_depth": [2, 3, 4, 5, 6, 7, 8], "n_estimators": [1, 5, 10, 20]},
        default={"max_depth": 5, "n_estimators": 10},
    ),
    "adult-nb": Panel(
        "adult-nb", "adult", "nb",
        {"bounds": list(_NB_BOUNDS.values()), "var_smoothing": [1e-9, 1e-3, 1e-2, 1e-1, 1.0]},
        default={"bounds": _NB_BOUNDS["declared"], "var_smoothing": 1e-9},
        labels={"bounds": _NB_BOUNDS},
    ),
    "big-lr": Panel(
        "big-lr", "big", "lr",
        {"C": [1e-4, 1e-2, 1.0], "data_norm": [1.0, 10.0, 100.0, 1000.0, BIG_ROW_NORM]},
        default={"C": 1.0, "data_norm": BIG_ROW_NORM},
    ),
}


#: Share of a panel's records held out as the public test set of every study.
TEST_FRACTION = 0.2


@lru_cache(maxsize=2)  # big-lr's split holds 1,000,000 rows
def split(panel_name, rep):
    """``(X_train, X_test, y_train, y_test)``: the repetition's stratified 80 / 20 split of
    the panel's data (seed = repetition), the same in every study."""
    X, y = PANELS[panel_name].load()
    return train_test_split(X, y, test_size=TEST_FRACTION, random_state=rep, stratify=y)
