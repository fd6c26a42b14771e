"""skdptune.tree and skdptune.ensemble: random decision trees and forests with the structure and
the leaf labels from separate sources, the labels secure, and nothing else released.

What is checked: where the randomness comes from (fresh OS entropy and ``secrets`` by default,
never numpy's global generator; the sources themselves in ``test_model_base.py``), the
empty-leaf law (diffprivlib's tree draws empty leaves from numpy's global generator: shown as
the "before"), every attribute of a fitted forest and tree against the mechanism (structure
data-independent, leaf values its output, counts zeros), the forest's disjoint blocks, what is
refused before the accountant and the data, and scikit-learn conventions (pickle, clone,
parameters).

Statistical tests: a chi-square test at ALPHA = 1e-3; events of probability 2 ** -60 or less
are treated as impossible (stated where used). Seeds are fixed where a test allows it.
"""

import pickle

import numpy as np
import pandas as pd
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import DecisionTreeClassifier as DPTree
from diffprivlib.models import RandomForestClassifier as DPForest
from diffprivlib.utils import BudgetError, DiffprivlibCompatibilityWarning
from scipy import stats
from sklearn.base import clone
from sklearn.utils import get_tags
from sklearn.utils._param_validation import InvalidParameterError

from skdptune._models import tree
from skdptune.ensemble import RandomForestClassifier
from skdptune._models.base import random_sources
from skdptune._models.tree import DecisionTreeClassifier, split_thresholds

ALPHA = 1e-3


def _forest(**params):
    return RandomForestClassifier(**{"n_estimators": 3, "max_depth": 3, "bounds": (0.0, 1.0),
                                     "classes": [0, 1], "accountant": BudgetAccountant(),
                                     **params})


def _tree(**params):
    return DecisionTreeClassifier(**{"max_depth": 3, "bounds": (0.0, 1.0), "classes": [0, 1],
                                     "accountant": BudgetAccountant(), **params})


MAKERS = pytest.mark.parametrize("make", [_forest, _tree], ids=["forest", "tree"])


def _data(n=200, seed=0, n_features=3):
    rng = np.random.default_rng(seed)
    X = rng.random((n, n_features))
    return X, (X[:, 0] + 0.2 * rng.standard_normal(n) > 0.5).astype(int)


def _trees(model):
    return getattr(model, "estimators_", [model])


def _leaf_labels(model):
    """Every tree's leaf labels (positions in classes_), stacked."""
    n_internal = 2 ** model.max_depth - 1
    return np.stack([np.argmax(t.tree_.value[n_internal:, 0], axis=1) for t in _trees(model)])


def _global_state():
    name, keys, position, has_gauss, cached = np.random.get_state()
    return name, keys.copy(), position, has_gauss, cached


def _same_state(a, b):
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]


# --- Randomness --------------------------------------------------------------------------------


@MAKERS
def test_a_fit_leaves_numpys_global_generator_untouched(make):
    X, y = _data()
    np.random.seed(3)
    before = _global_state()
    make().fit(X, y)
    assert _same_state(before, _global_state())


def test_diffprivlibs_tree_draws_from_numpys_global_generator():
    # The "before": a tree fitted on its own with random_state=None advances numpy's global
    # generator (check_random_state(None)), for its splits and its empty leaves.
    X, y = _data()
    np.random.seed(3)
    before = _global_state()
    DPTree(max_depth=3, bounds=(0.0, 1.0), classes=[0, 1],
           accountant=BudgetAccountant()).fit(X, y)
    assert not _same_state(before, _global_state())


def _fixed_structure(monkeypatch):
    """Make every fit draw the same structure (seed 0), its labels still from their own
    source: what an attacker who knew the structure source's state would see."""
    def sources(random_state, structure=False):
        return random_sources(random_state, structure)[0], np.random.default_rng(0)
    monkeypatch.setattr(tree, "random_sources", sources)  # the tree's and the forest's fit


@MAKERS
def test_empty_leaves_are_not_a_function_of_numpys_seed(make, monkeypatch):
    # One row, depth 6: 63 of the 64 leaves of a tree are empty, each labelled uniformly. With
    # the structure fixed, two fits after the same np.random.seed give the same labels only if
    # the labels are a function of the seed; secure labels agree on all the empty leaves of a
    # tree with probability 2 ** -63 (treated as impossible).
    _fixed_structure(monkeypatch)
    X, y = np.full((1, 2), 0.5), np.array([1])
    labels = []
    for _ in range(2):
        np.random.seed(11)
        labels.append(_leaf_labels(make(max_depth=6).fit(X, y)))
    assert labels[0].shape[1] == 64
    for first, second in zip(*labels):
        assert not np.array_equal(first, second)


def test_diffprivlibs_empty_leaves_are_a_function_of_numpys_seed():
    # The "before": after np.random.seed(s), diffprivlib's tree (random_state=None) gives the
    # same structure and the same labels to its 63 empty leaves every time (the one leaf the
    # row reaches is labelled by PermuteAndFlip, which maps numpy's global generator to
    # secrets).
    X, y = np.full((1, 2), 0.5), np.array([1])
    fits = []
    for _ in range(2):
        np.random.seed(11)
        fits.append(DPTree(max_depth=6, bounds=(0.0, 1.0), classes=[0, 1],
                           accountant=BudgetAccountant()).fit(X, y).tree_)
    np.testing.assert_array_equal(fits[0].threshold, fits[1].threshold)
    empty = np.ones(fits[0].node_count, dtype=bool)
    empty[fits[0].apply(X.astype(np.float32))] = False
    np.testing.assert_array_equal(fits[0].value[empty], fits[1].value[empty])


def test_labels_do_not_come_from_the_structure_source(monkeypatch):
    # The structure fixed (as if its source's state were recovered from released thresholds),
    # labels at a small epsilon still vary between fits on the same data: they come from
    # another source. 40 trees of 8 leaves on 200 rows; two fits with equal labels everywhere
    # have probability far below 2 ** -60 (treated as impossible).
    _fixed_structure(monkeypatch)
    X, y = _data()
    first, second = (_forest(n_estimators=40, epsilon=0.1).fit(X, y) for _ in range(2))
    for a, b in zip(first.estimators_, second.estimators_):
        np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    assert not np.array_equal(_leaf_labels(first), _leaf_labels(second))


def test_empty_leaves_are_labelled_uniformly():
    # 60 trees of 32 leaves on 3 equal rows, three classes: rows 0, 1 and 2 train trees 0, 20
    # and 40 (position // (3 / 60)), every other leaf is empty (1,917 of them), each labelled
    # by permute-and-flip on counts 0, a uniform draw. Chi-square at ALPHA.
    # Seeded: the same mechanism as the secure path (a seed changes the source, not the law),
    # and a result that cannot change from one run or machine to the next.
    X, y = np.full((3, 2), 0.5), np.array([0, 1, 2])
    model = _forest(n_estimators=60, max_depth=5, classes=[0, 1, 2], random_state=0).fit(X, y)
    empty = np.ones((60, 32), dtype=bool)
    for t in (0, 20, 40):
        empty[t, model.estimators_[t].tree_.apply(X[:1].astype(np.float32)) - 31] = False
    counts = np.bincount(_leaf_labels(model)[empty], minlength=3)
    assert counts.sum() == 60 * 32 - 3
    assert stats.chisquare(counts).pvalue > ALPHA, counts


@MAKERS
def test_a_seed_reproduces_the_fit(make):
    X, y = _data()
    first, second = make(random_state=5).fit(X, y), make(random_state=5).fit(X, y)
    for a, b in zip(_trees(first), _trees(second)):
        np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
        np.testing.assert_array_equal(a.tree_.value, b.tree_.value)


# --- What a fitted model releases -------------------------------------------------------------

#: Attributes scikit-learn's and diffprivlib's constructors set to constants (the forest's
#: unused scikit-learn parameters, diffprivlib's template): the same in every instance.
FOREST_CONSTANTS = {"estimator", "estimator_params", "bootstrap", "oob_score", "class_weight",
                    "max_samples", "criterion", "min_samples_split", "min_samples_leaf",
                    "min_weight_fraction_leaf", "max_features", "max_leaf_nodes",
                    "min_impurity_decrease", "monotonic_cst", "ccp_alpha"}
TREE_CONSTANTS = {"splitter", "min_samples_split", "min_samples_leaf",
                  "min_weight_fraction_leaf", "max_features", "max_leaf_nodes",
                  "min_impurity_decrease", "class_weight", "ccp_alpha", "monotonic_cst"}
#: Fitted attributes: the public shape of X and the declared classes, and the trees.
FOREST_FITTED = {"n_features_in_", "n_outputs_", "classes_", "n_classes_", "estimators_"}
TREE_FITTED = {"n_features_in_", "n_outputs_", "classes_", "n_classes_", "tree_"}


def _check_released(model, params, other):
    """Every attribute of ``model`` is a parameter as given, a constructor constant, a public
    fitted value, or the trees; ``other`` is the same configuration (same seed) fitted on other
    data of the same shape: everything but the leaf labels must be equal."""
    is_forest = isinstance(model, RandomForestClassifier)
    constants = FOREST_CONSTANTS if is_forest else TREE_CONSTANTS
    fitted = FOREST_FITTED if is_forest else TREE_FITTED
    names = set(vars(model))
    assert names == set(model._get_param_names()) | constants | fitted, names
    for name in model._get_param_names():
        if name in params:  # stored unchanged, not a copy or a converted value
            assert getattr(model, name) is params[name], name
    fresh = vars(type(model)())
    for name in constants - {"estimator"}:
        assert getattr(model, name) == fresh[name], name
    if is_forest:  # an unfitted template, with an accountant of its own that recorded nothing
        assert type(model.estimator) is DecisionTreeClassifier
        assert not hasattr(model.estimator, "tree_")
        assert model.estimator.accountant is not BudgetAccountant.load_default(None)
        assert model.estimator.accountant.spent_budget == []
    assert model.n_features_in_ == 3 and model.n_outputs_ == 1
    np.testing.assert_array_equal(model.classes_, np.ravel(params["classes"]))
    assert model.n_classes_ == len(model.classes_)
    for name in names - fitted - {"accountant", "estimator"}:
        assert np.array_equal(getattr(model, name), getattr(other, name)) or (
            getattr(model, name) == getattr(other, name)), name


def _check_tree_state(mine, other, n_classes):
    """A tree's ``tree_``: splits equal across datasets (data-independent), every node's
    impurity and sample counts 0, internal values 0, leaf values one-hot (the labels)."""
    state, theirs = mine.__getstate__(), other.__getstate__()
    assert set(state) == {"max_depth", "node_count", "nodes", "values"}
    assert state["max_depth"] == theirs["max_depth"]
    assert state["node_count"] == theirs["node_count"]
    nodes = state["nodes"]
    for field in nodes.dtype.names:
        np.testing.assert_array_equal(nodes[field], theirs["nodes"][field], err_msg=field)
    for field in ("impurity", "n_node_samples", "weighted_n_node_samples", "missing_go_to_left"):
        assert not np.any(nodes[field]), field
    values = state["values"]
    inner = nodes["left_child"] != -1
    assert not np.any(values[inner])
    assert np.all(values[~inner].sum(axis=2) == 1) and set(np.unique(values)) <= {0.0, 1.0}
    assert values.shape[2] == n_classes
    assert (mine.n_features, mine.n_outputs, list(mine.n_classes)) == (3, 1, [n_classes])


@MAKERS
def test_every_released_attribute_is_covered_by_the_mechanism(make):
    # Two unrelated datasets of the same shape, fitted with the same seed: the structure is the
    # same (drawn from the bounds and the structure source alone), the counts are not kept, and
    # only the leaf labels may differ.
    params = {"bounds": (0.0, 1.0), "classes": [0, 1], "epsilon": 1.0}
    (X, y), (X2, y2) = _data(seed=1), _data(seed=2)
    model = make(random_state=3, **params).fit(X, y)
    other = make(random_state=3, **params).fit(X2, 1 - y2)
    _check_released(model, params, other)
    assert len(_trees(model)) == getattr(model, "n_estimators", 1)
    for mine, theirs in zip(_trees(model), _trees(other)):
        if mine is not model:  # a forest's tree: its own attributes
            assert mine.random_state is None  # no per-tree seed
            assert mine.accountant is model.accountant
            _check_released(mine, {**params, "max_depth": model.max_depth}, theirs)
        _check_tree_state(mine.tree_, theirs.tree_, 2)


@MAKERS
def test_feature_names_are_the_public_schema(make):
    X, y = _data()
    model = make().fit(pd.DataFrame(X, columns=["a", "b", "c"]), y)
    np.testing.assert_array_equal(model.feature_names_in_, ["a", "b", "c"])
    assert model.predict(pd.DataFrame(X, columns=["a", "b", "c"])).shape == (len(X),)


def test_a_forests_trees_train_disjoint_blocks_of_rows_in_order():
    # Rows in order: the first half trains tree 0, the second tree 1. At a large epsilon every
    # leaf a row reaches carries that block's only class.
    X, _ = _data(n=400)
    y = np.r_[np.zeros(200, dtype=int), np.ones(200, dtype=int)]
    model = _forest(n_estimators=2, epsilon=50.0).fit(X, y)
    for t, estimator in enumerate(model.estimators_):
        rows = X[200 * t:200 * (t + 1)].astype(np.float32)
        np.testing.assert_array_equal(estimator.predict(rows), np.full(200, t))


@MAKERS
def test_labels_count_declared_classes_by_value(make):
    # classes=[2, 0] (not positions): a row of label 2 counts for class 2, of label 0 for 0.
    # Equal rows share a leaf; at epsilon 50 its label is the majority (another with
    # probability below exp(-50 * 7)).
    X = np.full((13, 1), 0.5)
    for majority, minority in ((2, 0), (0, 2)):
        y = np.r_[np.full(10, majority), np.full(3, minority)]
        model = make(classes=[2, 0], epsilon=50.0, **(
            {"n_estimators": 1} if make is _forest else {})).fit(X, y)
        assert model.predict(X[:1])[0] == majority
    # A label outside the declared classes (1) counts for none: every leaf is a uniform draw
    # whatever epsilon, and the 64 leaves of a depth-6 tree all get one class with
    # probability 2 ** -63 (impossible).
    ones = make(classes=[2, 0], max_depth=6, epsilon=50.0).fit(X, np.ones(13, dtype=int))
    assert set(np.unique(_leaf_labels(ones))) == {0, 1}


def test_a_forest_spends_its_epsilon_once_and_its_trees_nothing():
    accountant = BudgetAccountant()
    X, y = _data()
    model = _forest(accountant=accountant, epsilon=0.7).fit(X, y)
    assert accountant.spent_budget == [(0.7, 0)]
    assert all(t.accountant is accountant for t in model.estimators_)


# --- Refused before the accountant and the data -----------------------------------------------


@MAKERS
@pytest.mark.parametrize("name", ["bounds", "classes"])
def test_undeclared_bounds_or_classes_are_refused_before_the_accountant(make, name):
    # An accountant with no budget left: checking it would raise BudgetError; X=None: reading
    # the data would raise another error.
    accountant = BudgetAccountant(epsilon=1.0)
    accountant.spend(1.0, 0)
    with pytest.raises(ValueError, match=f"{name}=None.*declare {name}=") as error:
        make(**{name: None, "accountant": accountant}).fit(None, None)
    assert not isinstance(error.value, BudgetError)


@MAKERS
@pytest.mark.parametrize("params, needle", [
    ({"max_depth": None}, "max_depth"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"epsilon": -1.0}, "epsilon"),
])
def test_invalid_parameters_are_refused_by_their_constraints(make, params, needle):
    with pytest.raises(InvalidParameterError, match=needle):
        make(**params).fit(*_data())


def test_a_warm_start_is_refused_with_the_reason():
    with pytest.raises(InvalidParameterError, match="warm_start.*must be False.*not be "
                                                     "disjoint.*Got True"):
        _forest(warm_start=True).fit(*_data())


@MAKERS
@pytest.mark.parametrize("bounds", [(0.0, np.inf), (np.nan, 1.0), (1.0, 0.0),
                                    ([0.0, 0.0], [1.0, 1.0])])
def test_bad_bounds_are_refused(make, bounds):
    with pytest.raises(ValueError, match="bounds|Bounds|shape|lower"):
        make(bounds=bounds).fit(*_data())


@MAKERS
def test_sample_weight_is_ignored_with_diffprivlibs_warning(make):
    X, y = _data()
    with pytest.warns(DiffprivlibCompatibilityWarning, match="sample_weight"):
        make().fit(X, y, sample_weight=np.ones(len(y)))


# --- scikit-learn conventions -------------------------------------------------------------------


@MAKERS
def test_pickle_clone_and_params(make):
    X, y = _data()
    model = make(epsilon=0.5, random_state=None).fit(X, y)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))
    cloned = clone(model)
    assert not hasattr(cloned, "classes_") and type(cloned) is type(model)
    params = model.get_params()
    assert {k: v for k, v in clone(model).get_params().items() if k != "accountant"} == {
        k: v for k, v in params.items() if k != "accountant"}
    assert params["epsilon"] == 0.5 and params["bounds"] == (0.0, 1.0)
    model.set_params(epsilon=2.0, max_depth=2)
    assert (model.epsilon, model.max_depth) == (2.0, 2)
    assert model.fit(X, y).predict(X).shape == (len(X),)
    base = DPForest if isinstance(model, RandomForestClassifier) else DPTree
    assert sorted(type(model)._get_param_names()) == sorted(base._get_param_names())


@MAKERS
def test_tags_and_predictions_are_diffprivlibs(make):
    X, y = _data()
    model = make()
    base = DPForest if isinstance(model, RandomForestClassifier) else DPTree
    assert get_tags(model) == get_tags(base())
    model.fit(X, y)
    proba = model.predict_proba(X)
    assert proba.shape == (len(X), 2) and np.allclose(proba.sum(axis=1), 1)
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(proba, axis=1)])


def test_split_thresholds_stay_in_the_box_their_ancestors_leave():
    lower, upper = np.array([0.0, -1.0]), np.array([1.0, 3.0])
    rng = np.random.default_rng(0)
    feature = rng.integers(0, 2, (500, 15))
    threshold = split_thresholds(lower, upper, feature, rng.random((500, 15)))
    for node in range(1, 15):
        parent = (node - 1) // 2
        same = feature[:, node] == feature[:, parent]
        if node % 2:  # left child: at most its parent's threshold on the same feature
            assert np.all(threshold[same, node] <= threshold[same, parent])
        else:
            assert np.all(threshold[same, node] >= threshold[same, parent])
    assert np.all((threshold >= lower[feature]) & (threshold <= upper[feature]))


@MAKERS
@pytest.mark.parametrize("value, bound", [
    (1e39, 1.0), (-1e39, 0.0), (1e308, 1.0), (-np.finfo(float).max, 0.0), (np.inf, 1.0),
    (1.0 + 1e-9, 1.0), (-5e-324, 0.0),
], ids=["1e39", "-1e39", "1e308", "-max", "inf", "just_above", "negative_subnormal"])
def test_a_value_outside_the_bounds_is_fitted_as_its_bound(make, value, bound):
    # Issue 38, item 3: a value finite in float64 but beyond float32's range (1e39) made
    # validate_data(dtype=float32) raise, after a search had charged the fit. The fit clips
    # to the declared bounds before the cast: with the same seed, the record fitted with its
    # extreme value gives the very model it gives fitted with its bound.
    X, y = _data()
    extreme, clipped = X.copy(), X.copy()
    extreme[0, 0], clipped[0, 0] = value, bound
    models = [make(random_state=1, epsilon=1e3).fit(data, y) for data in (extreme, clipped)]
    for fitted, expected in zip(*map(_trees, models)):
        np.testing.assert_array_equal(fitted.tree_.threshold, expected.tree_.threshold)
        np.testing.assert_array_equal(fitted.tree_.value, expected.tree_.value)
    assert models[0].accountant.total()[0] == pytest.approx(1e3)


@MAKERS
def test_nan_is_refused_without_quoting_a_value(make):
    X, y = _data()
    X[0, 0] = np.nan
    model = make()
    with pytest.raises(ValueError, match="X contains NaN") as raised:
        model.fit(X, y)
    assert "nan" not in str(raised.value).replace("NaN", "")
    assert model.accountant.total() == (0, 0)
