"""Tests of PrivateGridSearchCV's orchestration: partitions, bounded utilities, accounting,
private refit, what the fitted object releases, and bad input."""

import pickle
import struct
import warnings

import numpy as np
import pytest
import sklearn
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import KMeans
from skdptune.linear_model import LogisticRegression
from skdptune.naive_bayes import GaussianNB
from diffprivlib.models import StandardScaler as DPStandardScaler
from diffprivlib.utils import BudgetError, PrivacyLeakWarning
from scipy.sparse import coo_array, coo_matrix
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.neighbors import KernelDensity
from sklearn.svm import LinearSVC as SkLinearSVC
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.metrics import accuracy_score, make_scorer
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier as SkDecisionTree
from sklearn.utils._mocking import CheckingClassifier

from conftest import grid_charges
from skdptune import PrivateGridSearchCV
from skdptune.exceptions import ScorerOutputError
from skdptune._models.naive_bayes import gaussian_nb_charge
from skdptune.linear_model import Ridge
from skdptune._partition import partition_labels, split_indices
from skdptune._search import _random_states
from skdptune.preprocessing import RowWiseFunctionTransformer
from skdptune.selection import ProposeTestDoubling
from skdptune.selection._doubling import auto_max_iter
from skdptune.utility import kmeans_score_range

# The binary_data fixture lies in [0, 1]^4 by construction (tests/conftest.py): declared bounds.
BOUNDS = (0.0, 1.0)
# Per-feature KMeans bounds: a width known before the fit (its default range needs it).
KMEANS_BOUNDS = (np.zeros(4), np.ones(4))
DATA_NORM = 2.0  # sqrt(4), the largest norm of a row in [0, 1]^4
CLASSES = [0, 1]  # the binary_data fixture's labels, declared
# A released GaussianNB is charged this many times the epsilon it records (its calibration
# falls short under replace-one adjacency; skdptune._models.naive_bayes.gaussian_nb_charge): 2
# for BOUNDS.
GNB_CHARGE = gaussian_nb_charge(GaussianNB(bounds=BOUNDS))


def gnb(**params):
    return GaussianNB(bounds=BOUNDS, classes=CLASSES, random_state=0, **params)


def search_of(estimator=None, param_grid=None, **params):
    if "epsilon" not in params:  # the selection's epsilon; the refit spends what it declares
        params.setdefault("selection_epsilon", 1.0)
    params.setdefault("n_partitions", 5)
    params.setdefault("random_state", 0)
    params.setdefault("accountant", BudgetAccountant())
    params.setdefault("default", None)  # the selection's mechanics, every candidate alike
    return PrivateGridSearchCV(
        gnb() if estimator is None else estimator,
        {"epsilon": [0.5, 2.0]} if param_grid is None else param_grid,
        **params,
    )


@pytest.fixture
def partition_calls(partition_fits):
    """Every partition fit (the only place data are fitted before the refit): its params,
    train and validation rows, and the utility it returned."""
    return partition_fits


# --- Search --------------------------------------------------------------------------------


def test_adding_a_record_changes_one_partition_utility(binary_data, partition_calls):
    X, y = binary_data
    # A deterministic partition fit, so equal data give equal utilities.
    search = search_of(SkDecisionTree(max_depth=2, random_state=0), {"max_depth": [1, 2]},
                       refit=False)
    search.fit(X[:-1], y[:-1])
    before = {(str(p), number): (train, validation, value)
              for p, number, train, validation, value in partition_calls}
    partition_calls.clear()
    clone(search).fit(X, y)
    after = {(str(p), number): (train, validation, value)
             for p, number, train, validation, value in partition_calls}
    assert before.keys() == after.keys() and len(after) == 2 * 5
    changed = {number for (params, number) in after
               if after[params, number][:2] != before[params, number][:2]}
    assert len(changed) == 1  # the new record joined one partition; no other record moved
    for key in after:
        if key[1] not in changed:
            assert after[key][2] == before[key][2]


def test_utilities_are_rescaled_and_clipped(binary_data, recording_selector):
    X, y = binary_data

    def scorer(estimator, X, y):
        # -5 for epsilon=0.5, 10 for epsilon=2.0: outside the declared range (-2, 8).
        return 10 * estimator.epsilon - 10

    # partition_scaling=None: the scorer reads epsilon, which partition fits would rescale.
    search_of(scoring=scorer, utility_range=(-2, 8), selector=recording_selector(),
              partition_scaling=None).fit(X, y)
    (call,) = recording_selector.calls
    np.testing.assert_array_equal(call["utilities"], [0.0, 1.0])
    assert call["sensitivity"] == pytest.approx(1 / 5)

    recording_selector.calls.clear()
    search_of(scoring=scorer, utility_range=(-10, 10), selector=recording_selector(),
              partition_scaling=None).fit(X, y)
    np.testing.assert_allclose(recording_selector.calls[0]["utilities"], [0.25, 1.0])


def test_failed_partition_score_contributes_error_score(binary_data, recording_selector):
    X, y = binary_data

    def scorer(estimator, X, y):
        if estimator.max_depth == 2:
            raise RuntimeError("scripted scoring failure")
        return 0.75

    params = dict(scoring=scorer, utility_range=(0, 1), refit=False)
    search_of(SkDecisionTree(), {"max_depth": [1, 2]}, error_score=0.3,
              selector=recording_selector(), **params).fit(X, y)
    np.testing.assert_array_equal(recording_selector.calls[0]["utilities"], [0.75, 0.3])
    with pytest.raises(RuntimeError, match="scripted scoring failure"):
        # Two candidates: a single one is refit without partition fits (nothing to select).
        search_of(SkDecisionTree(), {"max_depth": [2, 3]}, error_score="raise",
                  **params).fit(X, y)


def test_invalid_candidate_parameters_are_refused_before_data(binary_data, partition_calls):
    # A parameter every fit would reject is refused up front, not scored error_score
    # everywhere.
    X, y = binary_data
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match=r"param_grid candidate \{'C': -1.0\}.*'C' parameter"):
        search_of(SkLogisticRegression(), {"C": [1.0, -1.0]}, refit=False,
                  accountant=acc).fit(X, y)
    assert acc.spent_budget == [] and partition_calls == []


def test_sample_weight_is_sliced_to_each_partition(binary_data):
    X, y = binary_data
    # With error_score="raise", an unsliced (full-length) sample_weight would make the tree's
    # fit on a partition raise.
    search = search_of(SkDecisionTree(random_state=0), {"max_depth": [1, 2]}, refit=False,
                       error_score="raise")
    search.fit(X, y, sample_weight=np.linspace(0.5, 1.5, len(X)))
    assert search.best_params_ in search.cv_results_["params"]


def test_pure_dp_selection_uses_basic_composition(binary_data):
    X, y = binary_data
    search = search_of(selection_epsilon=0.9, delta=0.0, selector="doubling")
    report = search.fit(X, y).privacy_report_
    assert report["selector_composition"] == "basic"
    # The selector gets 90 % of the selection's 0.9 less the trivial_lead_ check's 5 %
    # (check_share, issue 40): the rest pays for best_score_'s Laplace estimate.
    assert report["selector_epsilon"] == pytest.approx(0.9 * 0.95 * 0.9)
    assert report["epsilon_per_iteration"] == pytest.approx(0.9 * 0.95 * 0.9
                                                            / report["max_iter"])
    assert report["score_epsilon"] == pytest.approx(0.9 * 0.95 * 0.1)
    assert report["total_delta"] == 0.0


def test_accountant_is_charged_the_selection_then_the_refit(binary_data):
    X, y = binary_data
    acc = BudgetAccountant()
    search = search_of(gnb(epsilon=0.7), {"var_smoothing": [1e-9, 1e-6]}, accountant=acc,
                       selection_epsilon=0.4).fit(X, y)
    # The refit's charge includes GaussianNB's factor; check_share (0.05) of the selection's
    # 0.4 buys trivial_lead_, charged with the refit (issue 40): the total is unchanged.
    assert acc.spent_budget == [pytest.approx((0.38, 0.0)),
                                pytest.approx((GNB_CHARGE * 0.7 + 0.02, 0.0))]
    assert tuple(search.privacy_spent_) == pytest.approx((0.4 + GNB_CHARGE * 0.7, 0.0))


def test_default_accountant_is_charged(binary_data):
    X, y = binary_data
    acc = BudgetAccountant()
    with acc:  # makes it diffprivlib's default accountant
        search = search_of(accountant=None).fit(X, y)
    assert acc.spent_budget == grid_charges(search)


def test_non_dp_refit_raises_before_touching_data(binary_data, partition_calls):
    X, y = binary_data
    for estimator, step in [
        (SkLogisticRegression(), "LogisticRegression"),
        (make_pipeline(StandardScaler(),
                       LogisticRegression(data_norm=DATA_NORM, classes=CLASSES)),
         "StandardScaler"),
    ]:
        acc = BudgetAccountant()
        with pytest.raises(ValueError, match=f"{step}.*refit=False"):
            search_of(estimator, {}, accountant=acc).fit(X, y)
        assert acc.spent_budget == []
    assert partition_calls == []


def test_non_dp_estimator_works_with_refit_false(binary_data):
    X, y = binary_data
    acc = BudgetAccountant()
    search = search_of(SkLogisticRegression(), {"C": [0.1, 1.0]}, refit=False, accountant=acc,
                       selection_epsilon=0.8, delta=0.0).fit(X, y)
    assert tuple(search.privacy_spent_) == (0.8, 0.0)
    assert acc.spent_budget == [(0.8, 0.0)]
    assert not hasattr(search, "best_estimator_")
    assert not hasattr(search, "predict")
    assert search.best_params_ in [{"C": 0.1}, {"C": 1.0}]


def test_undeclared_bounds_are_refused_before_data(binary_data, partition_calls):
    X, y = binary_data
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="bounds=None would be read from the private data"):
        # No bounds: GaussianNB would compute them from the data.
        search_of(GaussianNB(), {"epsilon": [1.0]}, accountant=acc, selection_epsilon=0.5).fit(X, y)
    assert acc.spent_budget == [] and partition_calls == []


class LeakingNB(GaussianNB):
    """A GaussianNB (with declared bounds) that warns PrivacyLeakWarning when fitted."""

    def fit(self, X, y, sample_weight=None):
        warnings.warn("scripted leak", PrivacyLeakWarning)
        return super().fit(X, y, sample_weight=sample_weight)


@pytest.mark.filterwarnings("ignore:The selector selected no candidate:UserWarning")
def test_leaking_refit_is_withheld_and_charged(binary_data, allow_in_gate):
    # Defence in depth: a step the gate admits but that leaks anyway.
    allow_in_gate(LeakingNB)
    X, y = binary_data
    acc = BudgetAccountant()
    search = search_of(LeakingNB(classes=CLASSES, bounds=BOUNDS, epsilon=1.0),
                       {"var_smoothing": [1e-9, 1e-3]}, accountant=acc, selection_epsilon=0.5,
                       check_share=0)
    with pytest.raises(ValueError, match="PrivacyLeakWarning"):
        search.fit(X, y)
    # The selection, then the refit's reservation: it ran.
    assert acc.spent_budget == [(0.5, 0.0), (1.0, 0.0)]
    assert not hasattr(search, "best_estimator_")


def test_privacy_varying_grid_charges_the_maximum(binary_data, recording_selector):
    X, y = binary_data
    # The stub always selects the cheap candidate; the charge must still be the grid's maximum.
    search = search_of(
        selector=recording_selector(index=0, score=0.5, delegate=False), selection_epsilon=0.3,
    ).fit(X, y)
    assert search.best_params_ == {"epsilon": 0.5}
    # The grid's maximum epsilon, times GaussianNB's charge factor.
    assert search.privacy_spent_[0] == pytest.approx(0.3 + GNB_CHARGE * 2.0)
    assert search.privacy_report_["refit_epsilon"] == pytest.approx(GNB_CHARGE * 2.0)

    pipeline = Pipeline([
        ("scale", DPStandardScaler(epsilon=0.5, bounds=BOUNDS, random_state=0)),
        ("lr", LogisticRegression(data_norm=DATA_NORM, classes=CLASSES, random_state=0)),
    ])
    search = search_of(
        pipeline, {"lr__epsilon": [0.5, 2.0]}, selection_epsilon=0.3,
        selector=recording_selector(index=0, score=0.5, delegate=False),
    ).fit(X, y)
    assert search.privacy_spent_[0] == pytest.approx(0.3 + 0.5 + 2.0)


def test_privacy_report_adds_up(binary_data):
    X, y = binary_data
    search = search_of(selection_epsilon=0.6, delta=1e-5, selector="doubling").fit(X, y)
    report = search.privacy_report_
    # check_share (0.05) of selection_epsilon buys trivial_lead_ (issue 40), a pure-DP
    # release of its own in the report: the three add up to the total.
    assert report["selection_epsilon"] == pytest.approx(0.6 * 0.95)
    assert report["check_epsilon"] == pytest.approx(0.6 * 0.05)
    assert report["selection_delta"] == 1e-5
    assert report["total_epsilon"] == pytest.approx(
        report["selection_epsilon"] + report["refit_epsilon"] + report["check_epsilon"])
    assert report["total_delta"] == pytest.approx(
        report["selection_delta"] + report["refit_delta"])
    # The grid's maximum, times GaussianNB's charge factor.
    assert report["refit_epsilon"] == pytest.approx(GNB_CHARGE * 2.0)
    assert tuple(search.privacy_spent_) == (report["total_epsilon"], report["total_delta"])
    assert report["n_partitions"] == search.n_partitions_ == 5
    assert report["max_iter"] == auto_max_iter(0.01, 0.0)
    assert 1 <= report["n_iterations"] <= report["max_iter"]
    assert report["adjacency"].startswith("replace one record")
    assert "number of records n" in report["adjacency"]
    assert "record" in report["unit"]
    assert report["selector_composition"] == "optimal"
    # Both splits are exact (Sterbenz): the parts add up to selection_epsilon bit for bit.
    assert report["selector_epsilon"] + report["score_epsilon"] == report["selection_epsilon"]
    assert report["selection_epsilon"] + report["check_epsilon"] == 0.6


def _floats(obj, seen=None):
    """Every float reachable from ``obj`` through containers, arrays and instance dicts."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, (float, np.floating)):
        yield float(obj)
    elif isinstance(obj, np.ndarray):
        if obj.dtype.kind == "f":
            yield from (float(v) for v in obj.ravel())
        elif obj.dtype == object:
            for v in obj.ravel():
                yield from _floats(v, seen)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _floats(v, seen)
    elif isinstance(obj, (list, tuple, set)):
        for v in obj:
            yield from _floats(v, seen)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        yield from _floats(vars(obj), seen)


def test_no_raw_score_is_reachable(binary_data, partition_calls):
    X, y = binary_data
    search = search_of(param_grid={"epsilon": [0.5, 1.0, 2.0]}).fit(X, y)
    # The per-candidate means the selector saw, computed as the search computes them.
    per_partition = np.zeros((3, 5))
    for params, number, _, _, value in partition_calls:
        # Partition fits see epsilon * k / (1 - validation_fraction) = epsilon * 6.25.
        per_partition[[0.5, 1.0, 2.0].index(params["epsilon"] / 6.25), number] = value
    means = per_partition.mean(axis=1)
    # Values that also occur as public numbers (grid values, 0, 1) prove nothing: skip them.
    secrets_ = [u for u in means if u not in (0.0, 0.5, 1.0, 2.0)]
    assert len(secrets_) == 3

    reachable = set(_floats(search))
    assert not reachable.intersection(secrets_)
    assert not set(_floats(search.cv_results_)).intersection(secrets_)
    dumped = pickle.dumps(search)
    for value in secrets_:
        # Numpy arrays pickle little-endian doubles; pickle's BINFLOAT is big-endian.
        assert struct.pack("<d", value) not in dumped
        assert struct.pack(">d", value) not in dumped


def test_clone_keeps_the_accountant(binary_data):
    X, y = binary_data
    acc = BudgetAccountant()
    search = search_of(accountant=acc, check_share=0)  # two entries a fit, as below
    assert clone(search).accountant is acc
    assert clone(make_pipeline(FunctionTransformer(), search))[-1].accountant is acc
    cross_val_score(search, X, y, cv=2)
    # Two fits, each charged its selection then its refit (GaussianNB's factor included).
    assert acc.spent_budget == [(1.0, 0.0), (GNB_CHARGE * 2.0, 0.0)] * 2


def test_set_params_reaches_the_selector_instance(binary_data):
    X, y = binary_data
    search = search_of(selector=ProposeTestDoubling())
    search.set_params(selector__granularity=0.05, selector__floor=0.2)
    assert search.get_params()["selector__granularity"] == 0.05
    search.fit(X, y)
    assert search.privacy_report_["max_iter"] == auto_max_iter(0.05, 0.2)
    # The user's selector instance is not fitted or replaced.
    assert search.selector.get_params() == {"granularity": 0.05, "floor": 0.2,
                                            "max_iter": "auto", "order": "grid",
                                            "noise_split": "ding_wu"}


def test_fallback_when_nothing_passes(binary_data, recording_selector):
    X, y = binary_data
    search = search_of(selector=recording_selector(index=None, delegate=False),
                       score_share=0.0)
    with pytest.warns(UserWarning, match="no candidate"):
        search.fit(X, y)
    assert search.best_index_ == 0
    assert search.best_params_ == {"epsilon": 0.5}
    assert np.isnan(search.best_score_)  # no estimate bought, and the selector had none
    np.testing.assert_array_equal(search.cv_results_["selected"], [True, False])
    assert hasattr(search, "best_estimator_")


def test_best_score_is_mapped_back_through_utility_range(binary_data, recording_selector):
    X, y = binary_data
    for score, expected in [(0.25, -5.0), (1.3, 10.0)]:  # an overshoot above 1 is capped
        search = search_of(
            selector=recording_selector(index=1, score=score, delegate=False),
            scoring="accuracy", utility_range=(-10, 10), score_share=0.0,
        ).fit(X, y)
        assert search.best_index_ == 1
        assert search.best_score_ == pytest.approx(expected)


def test_cv_results_hold_only_released_information(binary_data):
    X, y = binary_data
    search = search_of(param_grid={"epsilon": [0.5, 1.0, 2.0]}, score_share=0.0,
                       selector="doubling").fit(X, y)
    results = search.cv_results_
    assert set(results) == {"params", "param_epsilon", "n_passes", "selected"}
    assert results["params"] == [{"epsilon": e} for e in (0.5, 1.0, 2.0)]
    np.testing.assert_array_equal(results["param_epsilon"].data, [0.5, 1.0, 2.0])
    passed = [it.passed for it in search.selection_.trace if it.passed is not None]
    np.testing.assert_array_equal(results["n_passes"], np.bincount(passed, minlength=3))
    assert results["selected"].sum() == 1
    assert results["selected"][search.best_index_]
    assert search.best_index_ == search.selection_.index
    assert search.best_score_ == pytest.approx(min(search.selection_.score, 1.0))


def test_same_random_state_gives_identical_results(binary_data):
    X, y = binary_data
    first = search_of(random_state=7).fit(X, y)
    second = search_of(random_state=7).fit(X, y)
    assert first.selection_ == second.selection_
    assert tuple(first.privacy_spent_) == tuple(second.privacy_spent_)
    np.testing.assert_array_equal(first.predict(X), second.predict(X))


# Secure (unseeded) noise: the selection may pass nothing and warn.
@pytest.mark.filterwarnings("ignore:The selector selected no candidate:UserWarning")
def test_parallel_fits_match_sequential_ones(binary_data, recording_selector, spread_work):
    X, y = binary_data
    acc = BudgetAccountant()
    estimator, grid = SkDecisionTree(random_state=0), {"max_depth": [1, 3]}
    sequential = search_of(estimator, grid, refit=False, selector=recording_selector())
    sequential.fit(X, y)
    parallel = search_of(estimator, grid, refit=False, selector=recording_selector(),
                         n_jobs=2, accountant=acc, random_state=None)
    # Secure noise (random_state=None) with workers: the noise generator stays in the parent.
    # Its partition labels differ from the seeded run's, so compare only the accounting.
    parallel.fit(X, y)
    assert acc.spent_budget == [tuple(parallel.privacy_spent_)]
    seeded_parallel = search_of(estimator, grid, refit=False, selector=recording_selector(),
                                n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(recording_selector.calls[0]["utilities"],
                                  recording_selector.calls[2]["utilities"])
    assert seeded_parallel.selection_ == sequential.selection_


# --- Bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, match",
    [
        ({"epsilon": 0}, "'epsilon' parameter"),
        ({"epsilon": -1.0}, "'epsilon' parameter"),
        ({"epsilon": float("nan")}, "'epsilon' parameter"),
        ({"epsilon": float("inf")}, "'epsilon' parameter"),
        ({"delta": -0.1}, "'delta' parameter"),
        ({"delta": 1.0}, "'delta' parameter"),
        ({"n_partitions": 1}, "'n_partitions' parameter"),
        ({"n_partitions": 100}, "n_partitions=100 is too many for 300 samples"),
        ({"validation_fraction": 0.0}, "'validation_fraction' parameter"),
        ({"validation_fraction": 1.0}, "'validation_fraction' parameter"),
        ({"param_grid": []}, "param_grid"),
        ({"param_grid": {"not_a_parameter": [1]}}, "param_grid.*not_a_parameter"),
        ({"error_score": 1.5}, "'error_score' parameter"),
        ({"error_score": -0.1}, "'error_score' parameter"),
        ({"scoring": "r2"}, "'r2'.*utility_range"),
        ({"scoring": "neg_mean_squared_error"}, "'neg_mean_squared_error'.*utility_range"),
        ({"scoring": lambda est, X, y: 0.5}, "utility_range"),
        ({"utility_range": (1.0, 0.0)}, r"utility_range.*\(1.0, 0.0\)"),
        ({"utility_range": (0.0, 0.0)}, "utility_range"),
        ({"utility_range": (0.0, float("inf"))}, "utility_range"),
        ({"selector": "nope"}, "'selector' parameter"),
        ({"selector": ProposeTestDoubling(granularity=0.0)}, "'granularity' parameter"),
    ],
)
def test_bad_input_raises_before_touching_data(binary_data, partition_calls, params, match):
    X, y = binary_data
    acc = BudgetAccountant()
    search = search_of(accountant=acc)
    search.set_params(**params)
    with pytest.raises(ValueError, match=match):
        search.fit(X, y)
    assert acc.spent_budget == []
    assert partition_calls == []


def test_unbounded_default_score_needs_a_range(binary_data, partition_calls):
    # Scalar bounds of a KMeans inside a pipeline: the width of its input is not known before
    # the fit, so no range is derived (a KMeans on X itself gets one, see below).
    X, _ = binary_data
    acc = BudgetAccountant()
    search = search_of(make_pipeline(FunctionTransformer(), KMeans(bounds=BOUNDS)),
                       {"kmeans__n_clusters": [2, 3]}, accountant=acc, refit=False)
    with pytest.raises(ValueError, match="estimator.score.*utility_range"):
        search.fit(X)
    assert acc.spent_budget == [] and partition_calls == []


def test_kmeans_with_declared_bounds_gets_its_range_after_n_partitions_is_resolved(
        binary_data, recording_selector, capsys):
    # Before: "not known to be bounded", and the user had to fix n_partitions to compute a
    # range with kmeans_score_range by hand.
    X, _ = binary_data
    # refit=False: the refit gate refuses a released diffprivlib KMeans (not DP).
    default = search_of(KMeans(bounds=KMEANS_BOUNDS, random_state=0), {"n_clusters": [2, 3]},
                        n_partitions="auto", selector=recording_selector(), verbose=1,
                        refit=False).fit(X)
    k = default.n_partitions_
    n_records = len(X) * 0.2 / k
    low, high = kmeans_score_range(KMEANS_BOUNDS, n_records, n_features=X.shape[1])
    assert f"Scoring with KMeans.score, utility_range=({low:g}, 0) from the declared bounds " \
           f"and {n_records:g} validation records per partition" in capsys.readouterr().out
    search_of(KMeans(bounds=KMEANS_BOUNDS, random_state=0), {"n_clusters": [2, 3]},
              n_partitions=k, utility_range=(low, high), selector=recording_selector(),
              refit=False).fit(X)
    assert recording_selector.calls[0]["utilities"].tolist() == \
        recording_selector.calls[1]["utilities"].tolist()
    assert low <= default.best_score_ <= high


def _bounded_regression(n_samples=300):
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (n_samples, 3))
    return X, X @ np.array([1.0, 2.0, -1.0]) + rng.normal(0, 0.2, n_samples)


def test_linear_regression_with_bounds_y_is_tuned_without_a_range(capsys):
    # Before: R² was refused until the user computed a utility_range by hand.

    from skdptune._utility import R2_RANGE, BoundedR2Scorer

    X, y = _bounded_regression()
    acc = BudgetAccountant()
    search = search_of(Ridge(alpha=0.0, noise_alpha=0.0, bounds_X=(-1, 1), bounds_y=(-4, 4),
                             random_state=0),
                       {"epsilon": [0.5, 5.0]}, accountant=acc, verbose=1).fit(X, y)
    assert "Scoring with R² of predictions and targets clipped" in capsys.readouterr().out
    assert isinstance(search.scorer_, BoundedR2Scorer)
    # In the scorer's range: R² mapped from R2_RANGE = (-1, 1) (was [0, 1] for the bounded MSE).
    assert R2_RANGE[0] <= search.best_score_ <= R2_RANGE[1]
    prediction = np.clip(search.best_estimator_.predict(X), -4, 4)
    assert search.score(X, y) == pytest.approx(
        1 - np.sum((prediction - y) ** 2) / np.sum((y - y.mean()) ** 2))
    assert len(acc.spent_budget) == 2  # selection and refit, as for any estimator


@pytest.mark.parametrize("utility_range", [None, (-3.0, 1.0)])
def test_r2_of_a_regressor_with_bounds_y_is_the_bounded_r2(capsys, utility_range):
    # Issue 33: scoring="r2" was refused for a Ridge declaring bounds_y while scoring=None
    # gave the bounded R²; both now mean the R² of values clipped to bounds_y, mapped from
    # R2_RANGE or from a declared utility_range.
    from skdptune._utility import R2_RANGE, BoundedR2Scorer

    X, y = _bounded_regression()
    search = search_of(Ridge(bounds_X=(-1, 1), bounds_y=(-4, 4), random_state=0),
                       {"alpha": [0.1, 1.0]}, scoring="r2", utility_range=utility_range,
                       accountant=BudgetAccountant(), verbose=1).fit(X, y)
    low, high = R2_RANGE if utility_range is None else utility_range
    assert (f"Scoring with R² of predictions and targets clipped to the declared bounds_y, "
            f"each partition's clipped to [{low:g}, {high:g}] (scoring='r2'"
            in capsys.readouterr().out)
    assert isinstance(search.scorer_, BoundedR2Scorer)
    assert low <= search.best_score_ <= high
    prediction = np.clip(search.best_estimator_.predict(X), -4, 4)
    assert search.score(X, y) == pytest.approx(
        1 - np.sum((prediction - y) ** 2) / np.sum((y - y.mean()) ** 2))


def test_a_candidate_without_bounds_y_is_refused_before_the_data(partition_calls):
    from diffprivlib.models import LinearRegression

    X, y = _bounded_regression()
    acc = BudgetAccountant()
    search = search_of(make_pipeline(FunctionTransformer(), LinearRegression(bounds_y=(-4, 4))),
                       {"linearregression": [LinearRegression(bounds_y=(-4, 4)),
                                             LinearRegression()]},
                       refit=False, accountant=acc)
    with pytest.raises(ValueError, match="does not end in diffprivlib's LinearRegression with "
                                         "bounds_y"):
        search.fit(X, y)
    assert acc.spent_budget == [] and partition_calls == []


def test_missing_y_for_a_supervised_estimator(binary_data, partition_calls):
    X, _ = binary_data
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="requires y to be passed"):
        search_of(accountant=acc).fit(X)
    assert acc.spent_budget == [] and partition_calls == []


def test_inconsistent_lengths(binary_data, partition_calls):
    X, y = binary_data
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        search_of(accountant=acc).fit(X, y[:-1])
    assert acc.spent_budget == [] and partition_calls == []


def test_accountant_that_cannot_afford_the_fit(binary_data, partition_calls):
    X, y = binary_data
    acc = BudgetAccountant(epsilon=2.0)
    # Selection 1.0 + the grid's largest refit 2.0 exceeds the budget, even though the cheap
    # candidate alone would fit.
    with pytest.raises(BudgetError):
        search_of(accountant=acc, selection_epsilon=1.0).fit(X, y)
    assert acc.spent_budget == [] and partition_calls == []


def test_minimum_sample_count_is_exact_despite_float_rounding():
    # k / min(v, 1 - v) = 2 / 0.1 = 20 records, though 1 - 0.9 is 0.0999... in floating point.
    X = np.linspace(0, 1, 40).reshape(20, 2)
    y = np.tile([0, 1], 10)
    search = PrivateGridSearchCV(
        GaussianNB(bounds=(0.0, 1.0)), {"var_smoothing": [1e-9, 1e-3]}, n_partitions=2,
        validation_fraction=0.9,
        refit=False, accountant=BudgetAccountant(),
    )
    search.fit(X, y)
    with pytest.raises(ValueError, match="needs at least 20 samples"):
        search.fit(X[:19], y[:19])


# --- scikit-learn conventions (the parity issue: tests/parity/test_sklearn_parity.py ports the rest) --


class StrictParamsClassifier(ClassifierMixin, BaseEstimator):
    """scikit-learn's MockClassifier contract: no accountant, and ``set_params`` that requires
    its parameter (``set_params()`` with no argument raises KeyError)."""

    def __init__(self, foo_param=0):
        self.foo_param = foo_param

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])

    def get_params(self, deep=False):
        return {"foo_param": self.foo_param}

    def set_params(self, **params):
        self.foo_param = params["foo_param"]
        return self


@pytest.mark.parametrize("estimator", [StrictParamsClassifier(), CheckingClassifier()],
                         ids=["MockClassifier-like", "CheckingClassifier"])
def test_estimators_without_accountant_and_an_empty_grid(binary_data, estimator):
    # Before: set_params() was called with no argument for the empty grid: KeyError.
    X, y = binary_data
    search = search_of(estimator, {}, refit=False, scoring="accuracy").fit(X, y)
    assert search.best_params_ == {}


@pytest.mark.parametrize("container", [coo_matrix, coo_array])
def test_coo_input_is_made_indexable(binary_data, container):
    # Before: "'coo_matrix' object is not subscriptable" on every partition (error_score="raise"
    # shows it) and in the refit.
    X, y = binary_data
    search = search_of(SkLogisticRegression(), {"C": [0.1, 1.0]}, refit=False,
                       error_score="raise").fit(container(X), y)
    dense = search_of(SkLogisticRegression(), {"C": [0.1, 1.0]}, refit=False).fit(X, y)
    assert search.best_params_ == dense.best_params_
    densify = make_pipeline(RowWiseFunctionTransformer(lambda Z: Z.toarray(), accept_sparse=True),
                            gnb())
    refit = search_of(densify, {"gaussiannb__epsilon": [0.5, 1.0]}).fit(container(X), y)
    assert refit.predict(container(X[:5])).shape == (5,)


@pytest.mark.parametrize(
    "estimator, grid, named",
    [
        (SVC(kernel="precomputed"), {"C": [0.1, 1.0]}, "kernel='precomputed'"),
        (SVC(), {"kernel": ["rbf", "precomputed"]}, "kernel='precomputed'"),
        (KNeighborsClassifier(metric="precomputed"), {"n_neighbors": [3]},
         "metric='precomputed'"),
    ],
    ids=["SVC", "SVC-in-grid", "KNeighbors"],
)
def test_pairwise_estimators_are_refused_before_data(binary_data, partition_calls, estimator,
                                                      grid, named):
    # Before: accepted, with partition fits on a square matrix sliced by rows only.
    X, y = binary_data
    acc = BudgetAccountant()
    kernel = X @ X.T
    with pytest.raises(ValueError, match=f"{named}.*a record is also a column.*1/n_partitions "
                                         "sensitivity"):
        search_of(estimator, grid, refit=False, accountant=acc).fit(kernel, y)
    assert acc.spent_budget == [] and partition_calls == []


class ThresholdScoreClassifier(StrictParamsClassifier):
    """scikit-learn's MockClassifier score: 1 when foo_param > 1, else 0 (not accuracy)."""

    def score(self, X=None, y=None):
        return 1.0 if self.foo_param > 1 else 0.0


def test_default_scoring_is_the_estimators_own_score(binary_data, recording_selector):
    # Before: scoring=None meant accuracy for every classifier, whatever its score method.
    X, y = binary_data
    grid = {"foo_param": [1, 2, 3]}
    search_of(ThresholdScoreClassifier(), grid, refit=False, utility_range=(0, 1),
              selector=recording_selector()).fit(X, y)
    np.testing.assert_array_equal(recording_selector.calls[0]["utilities"], [0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="estimator.score of ThresholdScoreClassifier is not "
                                         "known to be bounded"):
        search_of(ThresholdScoreClassifier(), grid, refit=False).fit(X, y)
    # scikit-learn's accuracy (ClassifierMixin.score), also at the end of a pipeline: bounded.
    search = search_of(make_pipeline(FunctionTransformer(), gnb()),
                       {"gaussiannb__epsilon": [1.0]}).fit(X, y)
    assert search.score(X, y) == search.best_estimator_.score(X, y)


class NoScoreSVC(SkLinearSVC):
    """scikit-learn's LinearSVCNoScore."""

    @property
    def score(self):
        raise AttributeError


def test_an_estimator_without_score_and_no_scoring_is_refused_up_front(binary_data,
                                                                        partition_calls):
    # Before: accepted; every partition scored error_score and the selection was pure noise.
    acc = BudgetAccountant()
    with pytest.raises(TypeError, match="no scoring is specified.*NoScoreSVC does not"):
        search_of(NoScoreSVC(), {"C": [1.0]}, refit=False, accountant=acc).fit([[1]])
    X, y = binary_data
    swapped = Pipeline([("scale", FunctionTransformer()), ("svc", SkLinearSVC())])
    with pytest.raises(TypeError, match="NoScoreSVC.*does not"):
        search_of(swapped, {"svc": [SkLinearSVC(), NoScoreSVC()]}, refit=False,
                  accountant=acc).fit(X, y)
    assert acc.spent_budget == [] and partition_calls == []
    # With a scorer it works.
    search_of(NoScoreSVC(), {"C": [1.0]}, refit=False, scoring="accuracy").fit(X, y)


def test_unsupervised_callable_scorer_is_called_without_y(binary_data, recording_selector):
    # Before: scorer(estimator, X, None), a TypeError on every partition (error_score).
    X, _ = binary_data

    def scorer(estimator, X):
        return 42.0 if estimator.bandwidth == 0.1 else 0.0

    search = search_of(KernelDensity(), {"bandwidth": [0.01, 0.1, 1.0]}, refit=False,
                       scoring=scorer, utility_range=(0, 42), selector=recording_selector())
    search.fit(X)
    np.testing.assert_array_equal(recording_selector.calls[0]["utilities"], [0.0, 1.0, 0.0])
    assert 0 <= search.best_score_ <= 42


def test_kmeans_score_with_a_range_from_public_bounds(binary_data, recording_selector):
    X, _ = binary_data
    n_records = len(X) * 0.2 / 5  # validation_fraction * n_samples / n_partitions
    search_of(KMeans(bounds=KMEANS_BOUNDS, random_state=0), {"n_clusters": [2, 3]},
              utility_range=kmeans_score_range(([0.0] * 4, [1.0] * 4), n_records),
              selector=recording_selector(), refit=False).fit(X)
    utilities = recording_selector.calls[0]["utilities"]
    # Spread over [0, 1], not all within 1e-12 of 1 as with a guessed (-1e13, 0).
    assert np.all((utilities > 0.5) & (utilities < 1.0))


def _seed_leaving_a_part_empty(n_samples, n_partitions, validation_fraction):
    """A random_state whose partition labels leave some training or validation part empty."""
    for seed in range(1000):
        probe = PrivateGridSearchCV(gnb(), {}, n_partitions=n_partitions, random_state=seed,
                                    validation_fraction=validation_fraction)
        partition_seed, _ = _random_states(probe)
        labels = partition_labels(n_samples, n_partitions, validation_fraction, partition_seed)
        splits = split_indices(*labels, n_partitions)
        if any(len(train) == 0 or len(validation) == 0 for train, validation in splits):
            return seed
    raise AssertionError("no such seed")


def test_a_part_left_empty_by_the_split_is_not_an_error(binary_data, recording_selector):
    # Before: at a size the search accepts (every part expects a record), a part the random
    # split left empty failed the fit or gave a NaN score: with error_score="raise" a user
    # error ("could not convert string to float: 'raise'"), else error_score.
    X, y = binary_data
    n_samples = 25  # the smallest accepted for 5 partitions and validation_fraction=0.2
    seed = _seed_leaving_a_part_empty(n_samples, 5, 0.2)
    search = search_of(SkDecisionTree(random_state=0), {"max_depth": [1, 2]}, refit=False,
                       error_score="raise", random_state=seed, selector=recording_selector())
    search.fit(X[:n_samples], y[:n_samples])
    assert search.best_params_ in search.cv_results_["params"]
    assert np.all(recording_selector.calls[0]["utilities"] <= 4 / 5)  # one part scores 0


def test_a_nan_score_under_error_score_raise_is_a_clear_error(binary_data):
    X, y = binary_data
    search = search_of(SkDecisionTree(), {"max_depth": [1, 2]}, refit=False, error_score="raise",
                       scoring=lambda estimator, X, y: float("nan"), utility_range=(0, 1))
    with pytest.raises(ValueError, match=r"candidate \{'max_depth': 1\} on a partition is nan"):
        search.fit(X, y)


def _recording_accuracy(received):
    """An accuracy scorer that records the sample_weight it receives."""

    def accuracy(y_true, y_pred, sample_weight=None):
        received.append(None if sample_weight is None else np.asarray(sample_weight))
        return accuracy_score(y_true, y_pred, sample_weight=sample_weight)

    return make_scorer(accuracy)


def test_the_scorer_receives_sample_weight_of_the_validation_rows(binary_data, partition_calls,
                                                                 recording_selector):
    # Before: the scorer never received metadata (GridSearchCV gives it sample_weight).
    X, y = binary_data
    weights = np.arange(1.0, len(X) + 1)
    received = []
    search_of(SkDecisionTree(random_state=0), {"max_depth": [1, 2]}, refit=False,
              scoring=_recording_accuracy(received), utility_range=(0, 1),
              selector=recording_selector()).fit(X, y, sample_weight=weights)
    assert len(received) == len(partition_calls) == 10
    for (_, _, _, validation, _), got in zip(partition_calls, received):
        np.testing.assert_array_equal(got, weights[list(validation)])
    # Weighted scores still lie in [0, 1] (a weighted mean), as the 1/k sensitivity needs.
    utilities = recording_selector.calls[0]["utilities"]
    assert np.all((utilities >= 0) & (utilities <= 1))
    # A scorer that takes no sample_weight is warned about, as in scikit-learn.
    with pytest.warns(UserWarning, match="does not support sample_weight"):
        search_of(SkDecisionTree(), {"max_depth": [1]}, refit=False, utility_range=(0, 1),
                  scoring=lambda estimator, X, y: 0.5).fit(X, y, sample_weight=weights)


def test_metadata_routing_routes_fit_and_score_params_like_grid_search_cv(binary_data,
                                                                         partition_calls):
    # Before: with routing enabled, fit parameters went unchecked to every partition fit.
    X, y = binary_data
    weights = np.arange(1.0, len(X) + 1)
    acc = BudgetAccountant()
    with sklearn.config_context(enable_metadata_routing=True):
        unrequested = search_of(SkDecisionTree(), {"max_depth": [1]}, refit=False, accountant=acc,
                                scoring="accuracy")
        with pytest.raises(UnsetMetadataPassedError, match="sample_weight"):
            unrequested.fit(X, y, sample_weight=weights)
        assert acc.spent_budget == [] and partition_calls == []
        received = []
        scorer = _recording_accuracy(received).set_score_request(sample_weight="score_weight")
        search = search_of(SkDecisionTree().set_fit_request(sample_weight=True),
                           {"max_depth": [1, 2]}, refit=False, scoring=scorer,
                           utility_range=(0, 1))
        search.fit(X, y, sample_weight=weights, score_weight=2 * weights)
        assert len(received) == 10
        np.testing.assert_array_equal(received[0], 2 * weights[list(partition_calls[0][3])])
        # score() routes its metadata to the scorer too; without routing it refuses them.
        refit = search_of(gnb(), {"var_smoothing": [1e-9]}, utility_range=(0, 1),
                          scoring=_recording_accuracy(received).set_score_request(
                              sample_weight=True)).fit(X, y)
        refit.score(X, y, sample_weight=weights)
        np.testing.assert_array_equal(received[-1], weights)
    with pytest.raises(ValueError, match="is only supported if enable_metadata_routing=True"):
        refit.score(X, y, sample_weight=weights)


def test_multimetric_scoring_selects_on_the_metric_refit_names(binary_data, recording_selector):
    # Before: a list or dict of metrics was refused with a generic message.
    X, y = binary_data
    unused = []
    scoring = {"acc": "accuracy", "other": _recording_accuracy(unused)}
    search = search_of(gnb(), {"var_smoothing": [1e-9, 1e-3]}, scoring=scoring, refit="acc",
                       selector=recording_selector()).fit(X, y)
    plain = search_of(gnb(), {"var_smoothing": [1e-9, 1e-3]}, scoring="accuracy",
                      selector=recording_selector()).fit(X, y)
    first, second = recording_selector.calls
    np.testing.assert_array_equal(first["utilities"], second["utilities"])
    assert unused == []  # the metric the selection does not use is not computed
    assert search.best_params_ == plain.best_params_
    assert search.score(X, y) == plain.score(X, y)
    lists = search_of(gnb(), {"var_smoothing": [1e-9]}, scoring=["recall", "accuracy"],
                      refit="accuracy").fit(X, y)
    assert lists.score(X, y) == lists.best_estimator_.score(X, y)


@pytest.mark.parametrize("refit, remedy", [
    (True, r"E.g. refit='acc'"),
    (False, r"pass that metric alone, e.g. scoring='acc'"),
    ("recall", r"E.g. refit='acc'"),
])
def test_multimetric_scoring_without_a_metric_to_select_on_is_refused(binary_data,
                                                                      partition_calls, refit,
                                                                      remedy):
    X, y = binary_data
    acc = BudgetAccountant()
    search = search_of(gnb(), {"var_smoothing": [1e-9]}, accountant=acc, refit=refit,
                       scoring={"acc": "accuracy", "prec": "precision"})
    with pytest.raises(ValueError, match="For multi-metric scoring, the parameter refit must be "
                                         rf"set to a scorer key.*would not be private.*{remedy}"):
        search.fit(X, y)
    assert acc.spent_budget == [] and partition_calls == []


def test_a_callable_returning_a_dict_is_never_accepted_silently(binary_data, recording_selector):
    # Before: each partition's dict failed the utility, silently scored error_score.
    X, y = binary_data

    def metrics(estimator, X, y):
        predicted = estimator.predict(X)
        return {"accuracy": accuracy_score(y, predicted), "constant": 0.25}

    acc = BudgetAccountant()
    for refit, match in [(True, "returned a dict of metrics.*refit='<key>'"),
                         ("recall", "returned a dict without the key refit='recall'")]:
        search = search_of(gnb(), {"var_smoothing": [1e-9, 1e-3]}, scoring=metrics, refit=refit,
                           utility_range=(0, 1), accountant=acc, error_score=0.5)
        with pytest.raises(ScorerOutputError, match=match):
            search.fit(X, y)
    assert acc.spent_budget == []
    search = search_of(gnb(), {"var_smoothing": [1e-9, 1e-3]}, scoring=metrics,
                       refit="constant", utility_range=(0, 1),
                       selector=recording_selector()).fit(X, y)
    np.testing.assert_array_equal(recording_selector.calls[0]["utilities"], [0.25, 0.25])
    assert search.score(X, y) == 0.25


def test_a_callable_refit_chooses_from_the_released_cv_results(binary_data):
    # Before: refit accepted booleans only.
    X, y = binary_data
    seen = []

    def fewest_passes(results):
        seen.append(set(results))
        return int(np.argmin(results["n_passes"]))

    acc = BudgetAccountant()
    grid = {"epsilon": [0.5, 1.0, 2.0]}
    # The doubling selector: its trace makes n_passes informative.
    search = search_of(gnb(), grid, refit=fewest_passes, accountant=acc, selection_epsilon=0.6,
                       selector="doubling").fit(X, y)
    assert seen == [{"params", "param_epsilon", "n_passes", "selected"}]
    assert search.best_index_ == int(np.argmin(search.cv_results_["n_passes"]))
    assert search.best_params_ == search.cv_results_["params"][search.best_index_]
    assert search.best_estimator_.epsilon == search.best_params_["epsilon"]
    assert not hasattr(search, "best_score_")  # as GridSearchCV with a callable refit
    # No best_score_ is released, so the selector gets the whole selection budget.
    assert search.privacy_report_["score_epsilon"] == 0
    # The refit: the grid's maximum, times GaussianNB's charge factor; with it, the
    # trivial_lead_ check, bought with check_share (0.05) of the selection's 0.6 (issue 40).
    assert acc.spent_budget == [pytest.approx((0.57, 1e-6)),
                                pytest.approx((GNB_CHARGE * 2.0 + 0.03, 0.0))]


@pytest.mark.parametrize("returned, error, match", [
    (None, TypeError, "best_index_ returned is not an integer"),
    (-1, IndexError, "best_index_ index out of range"),
    (3, IndexError, "best_index_ index out of range"),
])
def test_a_callable_refit_returning_no_valid_index(binary_data, returned, error, match):
    X, y = binary_data
    acc = BudgetAccountant()
    search = search_of(gnb(), {"epsilon": [0.5, 1.0, 2.0]}, refit=lambda results: returned,
                       accountant=acc, selector="doubling")
    with pytest.raises(error, match=match):
        search.fit(X, y)
    # The selection was released to the callable: 1.0 less the trivial_lead_ check's share
    # (0.05, issue 40), which is charged with a refit, and none starts.
    assert acc.spent_budget == [pytest.approx((0.95, 1e-6))]
    assert not hasattr(search, "best_estimator_")


def failing_score(estimator, X, y):
    raise ValueError("scripted failure")


def test_when_nothing_is_selected_the_warning_names_failing_fits(binary_data,
                                                                  recording_selector):
    # Before: "consider a larger epsilon" only, though every score had failed. (A fit that
    # fails on any rows is refused before the data: the rehearsal.)
    X, y = binary_data
    search = search_of(StrictParamsClassifier(), {"foo_param": [1, 2]}, refit=False,
                       scoring=failing_score, utility_range=(0, 1),
                       selector=recording_selector(index=None, delegate=False))
    with pytest.warns(UserWarning, match=r"fits or scores failed: each failure scores "
                                         r"error_score=0.0.*error_score='raise'.*"
                                         r"skdptune.reveal_fit_messages\(\)"):
        search.fit(X, y)
    np.testing.assert_array_equal(recording_selector.calls[0]["utilities"], [0.0, 0.0])
    assert search.best_index_ == 0


def test_warnings_point_at_the_callers_line(binary_data, recording_selector):
    X, y = binary_data
    column = y.reshape(-1, 1)
    search = search_of(selector=recording_selector(index=None, delegate=False), n_partitions=2,
                       scoring=lambda estimator, X, y: 0.5, utility_range=(0, 1))
    swamped = search_of(selector="exponential", selection_epsilon=1e-3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, column, sample_weight=np.ones(len(X)))
        swamped.fit(X, y)
    shown = {w.category.__name__: w.filename for w in caught}
    assert {"UserWarning", "NoisySelectionWarning", "DataConversionWarning",
            "FitWarningsWithheld"} <= set(shown)
    assert set(shown.values()) == {__file__}


def test_verbose_prints_what_grid_search_cv_prints_and_nothing_private(binary_data, capsys):
    # Before: joblib's task counts only. Then (issue 19): best_score_ with its noise std.
    X, y = binary_data
    search = search_of(verbose=1, selection_epsilon=0.5, selector="doubling",
                       check_share=0).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Fitting 5 partitions for each of 2 candidates, totalling 10 fits"
    selected = [line for line in lines if line.startswith("Selected candidate")]
    released = (f"; best_score_={search.best_score_:.4g} +/- {search.best_score_std_:.2g} "
                "(a partition score: DP estimate of the mean score of fits on 1/5 of the "
                "records each, noise std; not the released model's test score)")
    assert selected == [
        f"Selected candidate 1/2 with ProposeTestDoubling, charged epsilon=0.5, delta=1e-06: "
        f"{{'epsilon': 0.5}}" + released
    ] or selected == [
        f"Selected candidate 2/2 with ProposeTestDoubling, charged epsilon=0.5, delta=1e-06: "
        f"{{'epsilon': 2.0}}" + released
    ]
    # Public: sqrt(2) * (1 / k) / (score_share * epsilon), accuracy's range being 1.
    assert search.best_score_std_ == pytest.approx(np.sqrt(2) * 0.2 / (0.1 * 0.5))
    assert [line for line in lines if line.startswith("Refit ")] == [
        "Refit " + selected[0].split(": ", 1)[1].split("; ", 1)[0] + " on all the data, "
        # The grid's maximum epsilon, times GaussianNB's charge factor.
        f"privately; charged epsilon={GNB_CHARGE * 2.0:g}, delta=0"
    ]
    # No other line speaks of a score (no per-fit score).
    assert [line for line in lines if "score" in line] == selected
