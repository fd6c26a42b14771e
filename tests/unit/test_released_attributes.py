"""What a released model keeps: every attribute covered by its mechanism (issue 34, item 5).

The refit gate's table (``skdptune.gate.ALLOWED``) lists, for every DP model, the attributes a
released fit keeps and why its mechanism covers each; ``keep_released`` removes the rest. These
tests walk every entry: a DP model's released attributes are exactly its list (a new
attribute in a diffprivlib release fails here until it is classified), and a public step's
fitted attributes depend on its parameters and the shape of ``X`` only.
"""

import re

import numpy as np
import pytest
from diffprivlib import models as dp
from diffprivlib.accountant import BudgetAccountant
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer, TfidfVectorizer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    Normalizer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
)

from skdptune import PrivateGridSearchCV
from skdptune.cluster import KMeans
from skdptune.decomposition import PCA
from skdptune.ensemble import RandomForestClassifier
from skdptune._gate import ALLOWED, PUBLIC_SHAPE, keep_released
from skdptune.linear_model import LogisticRegression, Ridge
from skdptune.naive_bayes import GaussianNB
from skdptune.preprocessing import RowWiseFunctionTransformer
from skdptune.tree import DecisionTreeClassifier

BOUNDS = (0.0, 1.0)


def _data(seed, n=300, d=3):
    rng = np.random.RandomState(seed)
    X = rng.uniform(0, 1, (n, d))
    return X, (X[:, 0] + rng.normal(0, 0.2, n) > 0.5).astype(int)


#: A configuration of every DP entry of the gate that may be released. Refused entries (their
#: condition refuses every configuration) are listed apart, with the reason.
RELEASABLE = {
    GaussianNB: lambda: GaussianNB(bounds=BOUNDS, classes=[0, 1]),
    LogisticRegression: lambda: LogisticRegression(data_norm=2.0, classes=[0, 1]),
    Ridge: lambda: Ridge(bounds_X=BOUNDS, bounds_y=(0.0, 1.0)),
    dp.StandardScaler: lambda: dp.StandardScaler(bounds=BOUNDS),
    RandomForestClassifier: lambda: RandomForestClassifier(n_estimators=3, bounds=BOUNDS,
                                                           classes=[0, 1]),
    DecisionTreeClassifier: lambda: DecisionTreeClassifier(bounds=BOUNDS, classes=[0, 1]),
    KMeans: lambda: KMeans(n_clusters=3, bounds=BOUNDS),
    PCA: lambda: PCA(n_components=2, data_norm=2.0, bounds=BOUNDS),
}
NEVER_RELEASED = {
    dp.GaussianNB: "classes_ from the data (skdptune.naive_bayes's instead)",
    dp.LogisticRegression: "classes_ from the data (skdptune.linear_model's instead)",
    dp.RandomForestClassifier: "its per-tree seeds are kept (skdptune.ensemble's instead)",
    dp.DecisionTreeClassifier: "empty leaves from numpy's global generator (skdptune.tree's)",
    dp.LinearRegression: "not epsilon-DP (skdptune.linear_model.Ridge instead)",
    dp.KMeans: "not DP at any epsilon",
    dp.PCA: "overspends",
}


def _dp_entries():
    return [cls for cls, rule in ALLOWED.items() if rule.kind == "dp"]


def test_every_dp_entry_is_walked_here():
    # A new entry of the gate needs a configuration here, or a reason it is never released.
    assert set(_dp_entries()) == set(RELEASABLE) | set(NEVER_RELEASED)
    for cls in NEVER_RELEASED:
        assert ALLOWED[cls].releases == {}


def _kept(model):
    """What a fitted model holds beyond an unfitted clone's parameters: attributes the clone
    lacks, and scikit-learn's fitted ones (a trailing underscore) that the clone holds unset."""
    unfitted = vars(clone(model))
    return {name for name, value in vars(model).items()
            if name not in unfitted or (name.endswith("_") and unfitted[name] is None
                                        and value is not None)} - set(PUBLIC_SHAPE)


@pytest.mark.parametrize("cls", list(RELEASABLE), ids=lambda cls: cls.__name__)
def test_a_released_dp_model_keeps_exactly_what_its_mechanism_covers(cls):
    model = RELEASABLE[cls]().set_params(accountant=BudgetAccountant())
    X, y = _data(0)
    keep_released(model.fit(X, y))
    listed = set(ALLOWED[cls].releases)
    assert _kept(model) == listed, (
        f"{cls.__name__} keeps {sorted(_kept(model))}; the gate lists {sorted(listed)}")
    for tree in getattr(model, "estimators_", []):  # an ensemble's members, by their own entry
        assert _kept(tree) == set(ALLOWED[type(tree)].releases)


def test_the_solvers_iteration_count_is_not_released():
    # Before: skdptune's LogisticRegression released n_iter_, which depends on the data and
    # the noise in a way the minimiser does not.
    X, y = _data(1, n=600)
    ours = LogisticRegression(data_norm=2.0, classes=[0, 1],
                              accountant=BudgetAccountant()).fit(X, y)
    assert not hasattr(ours, "n_iter_")
    # diffprivlib's own sets it (never released now: its classes_ come from the data); a
    # search releases skdptune's without.
    theirs = dp.LogisticRegression(data_norm=1.0, fit_intercept=False,
                                   accountant=BudgetAccountant()).fit(X, y)
    assert hasattr(theirs, "n_iter_")
    search = PrivateGridSearchCV(
        LogisticRegression(data_norm=2.0, classes=[0, 1]), {"C": [1.0]},
        epsilon=1.0, n_partitions=5, accountant=BudgetAccountant(), random_state=0).fit(X, y)
    assert not hasattr(search.best_estimator_, "n_iter_")
    assert hasattr(search.best_estimator_, "coef_")


def test_every_justification_names_only_parameters_its_class_has():
    # Issue 38, item 5: KMeans's n_iter_ was justified as "the parameter max_iter", which
    # neither skdptune's KMeans nor diffprivlib's has.
    for cls, rule in ALLOWED.items():
        for name, why in (rule.releases or {}).items():
            for parameter in re.findall(r"\bparameters? (\w+)", why):
                assert parameter in cls._get_param_names(), (cls.__name__, name, why)


@pytest.mark.parametrize("epsilon, n, d, k, expected", [
    (0.1, 500, 5, 4, 2),  # the floor
    (1.0, 1000, 2, 2, 3),  # epsilon / e_m = 3.49
    (2.0, 1000, 2, 2, 6),  # 6.97: truncated, not rounded
    (10.0, 2000, 2, 2, 7),  # the cap
])
def test_kmeans_iteration_count_is_the_public_formula_its_entry_states(epsilon, n, d, k,
                                                                       expected):
    # n_iter_ = int(max(2, min(7, epsilon / e_m))), e_m = sqrt(500 k**3 / n**2 * (d + cbrt(4 d
    # 0.225**2))**3) (diffprivlib 0.6.6's _calc_iters): the same for any values of the data.
    e_m = np.sqrt(500 * k ** 3 / n ** 2 * (d + np.cbrt(4 * d * 0.225 ** 2)) ** 3)
    assert int(max(2, min(7, epsilon / e_m))) == expected
    rng = np.random.default_rng(0)
    for X in (rng.random((n, d)), np.zeros((n, d)), rng.random((n, d)) ** 8):
        model = KMeans(n_clusters=k, epsilon=epsilon, bounds=BOUNDS,
                       accountant=BudgetAccountant()).fit(X)
        assert model.n_iter_ == expected
    assert "_calc_iters" in ALLOWED[KMeans].releases["n_iter_"]


#: A configuration of every public entry that its condition accepts, with the input it takes.
PUBLIC = {
    OneHotEncoder: (lambda: OneHotEncoder(categories=[["a", "b", "c"]]), "text"),
    OrdinalEncoder: (lambda: OrdinalEncoder(categories=[["a", "b", "c"]]), "text"),
    Normalizer: (Normalizer, "numbers"),
    Binarizer: (lambda: Binarizer(threshold=0.5), "numbers"),
    RowWiseFunctionTransformer: (lambda: RowWiseFunctionTransformer(np.sqrt), "numbers"),
    FunctionTransformer: (FunctionTransformer, "numbers"),
    SimpleImputer: (lambda: SimpleImputer(strategy="constant", fill_value=0.5), "numbers"),
    PolynomialFeatures: (PolynomialFeatures, "numbers"),
    HashingVectorizer: (HashingVectorizer, "documents"),
    CountVectorizer: (lambda: CountVectorizer(vocabulary=["a", "b"]), "documents"),
    TfidfVectorizer: (lambda: TfidfVectorizer(vocabulary=["a", "b"], use_idf=False),
                      "documents"),
}


def _public_input(kind, seed):
    rng = np.random.RandomState(seed)
    if kind == "numbers":
        return rng.uniform(0, 1, (50, 3))
    if kind == "text":
        return rng.choice(["a", "b", "c"], (50, 1))
    return [" ".join(rng.choice(["a", "b", "c"], 4)) for _ in range(50)]


def _fitted_state(step):
    state = {}
    for name, value in vars(step).items():
        if name.endswith("_") and not name.startswith("__"):
            state[name] = repr(value) if not isinstance(value, np.ndarray) else value.tolist()
    return state


def test_every_public_entry_is_walked_here():
    public = {cls for cls, rule in ALLOWED.items() if rule.kind == "public"}
    compositions = {cls for cls, rule in ALLOWED.items() if rule.kind == "composition"}
    assert public == set(PUBLIC)
    assert compositions == {Pipeline, ColumnTransformer, FeatureUnion}


@pytest.mark.parametrize("cls", list(PUBLIC), ids=lambda cls: cls.__name__)
def test_a_public_steps_fitted_attributes_depend_on_its_parameters_and_shape_only(cls):
    make, kind = PUBLIC[cls]
    first = make().fit(_public_input(kind, 0))
    second = make().fit(_public_input(kind, 1))
    assert ALLOWED[cls].condition is None or ALLOWED[cls].condition(first) is None
    assert _fitted_state(first) == _fitted_state(second)
