"""Bad input beyond the parameter checks (docs/faults.md, "Bad input").

Each case gets the behaviour a GridSearchCV user expects or a clear error naming the problem,
and an error never charges the user's accountant.
"""

import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import StandardScaler
from skdptune.cluster import KMeans
from skdptune.decomposition import PCA
from skdptune.ensemble import RandomForestClassifier
from skdptune.naive_bayes import GaussianNB
from skdptune.linear_model import LogisticRegression, Ridge
from skdptune.tree import DecisionTreeClassifier
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, PolynomialFeatures
from sklearn.svm import SVC, LinearSVC

from skdptune import PrivateGridSearchCV
from skdptune.exceptions import GateError
from skdptune._partition import partition_labels, split_indices
from test_faults import N_SAMPLES, MockDPClassifier, assert_charged, is_private, make_data

CLASSES = [0, 1]  # the labels of binary_data and mixed_frame(), declared

NOTHING = (0.0, 0.0)
pytestmark = pytest.mark.filterwarnings("ignore:The selector selected no candidate:UserWarning")


def search(estimator, param_grid, accountant, **params):
    defaults = dict(selection_epsilon=1.0, delta=1e-6, n_partitions=5, accountant=accountant,
                    random_state=0)
    defaults.update(params)
    return PrivateGridSearchCV(estimator, param_grid, **defaults)


DP_LOGISTIC = LogisticRegression(classes=CLASSES, data_norm=2.0)


@pytest.mark.parametrize("where", ["X", "y"])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nan_and_inf_raise_before_anything_is_charged(binary_data, where, value):
    X, y = binary_data[0].copy(), binary_data[1].astype(float)
    if where == "X":
        X[7, 2] = value
    else:
        y[7] = value
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match=f"{where} contains NaN or infinity"):
        search(DP_LOGISTIC, {"C": [1.0]}, accountant).fit(X, y)
    assert_charged(accountant, NOTHING)


def test_nan_reaching_a_dp_step_whose_tag_allows_it_is_refused_before_anything_is_charged(
        binary_data):
    # Before: diffprivlib's StandardScaler inherits scikit-learn's allow_nan tag but its fit
    # rejects NaN: every partition fit failed, the selection ran on constants and 1.0 was
    # charged.
    X, y = binary_data[0].copy(), binary_data[1]
    X[::10, 1] = np.nan
    pipeline = make_pipeline(StandardScaler(bounds=(0.0, 1.0)),
                             GaussianNB(classes=CLASSES, bounds=(0.0, 1.0)))
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match="step 'standardscaler' .*does not accept them"):
        search(pipeline, {"gaussiannb__var_smoothing": [1e-9, 1e-3]}, accountant,
               refit=False).fit(X, y)
    assert_charged(accountant, NOTHING)


def test_nan_imputed_by_a_public_step_or_routed_away_from_dp_steps_is_accepted(binary_data):
    X, y = binary_data[0].copy(), binary_data[1]
    X[::10, 1] = np.nan
    imputed = make_pipeline(SimpleImputer(strategy="constant", fill_value=0.5),
                            StandardScaler(bounds=(0.0, 1.0)),
                            GaussianNB(classes=CLASSES, bounds=(0.0, 1.0)))
    routed = make_pipeline(
        ColumnTransformer([("nan", SimpleImputer(strategy="constant", fill_value=0.5), [1])],
                          remainder=StandardScaler(bounds=(0.0, 1.0))),
        GaussianNB(classes=CLASSES, bounds=(0.0, 1.0)))
    for pipeline in (imputed, routed):
        accountant = BudgetAccountant()
        fitted = search(pipeline, {"gaussiannb__var_smoothing": [1e-9]}, accountant).fit(X, y)
        assert_charged(accountant, fitted.privacy_spent_)
    # The same NaN column routed to the DP scaler is refused, naming the branch.
    wrong = make_pipeline(
        ColumnTransformer([("nan", SimpleImputer(strategy="constant", fill_value=0.5), [0])],
                          remainder=StandardScaler(bounds=(0.0, 1.0))),
        GaussianNB(classes=CLASSES, bounds=(0.0, 1.0)))
    with pytest.raises(ValueError, match="'columntransformer__remainder'"):
        search(wrong, {"gaussiannb__var_smoothing": [1e-9]}, BudgetAccountant()).fit(X, y)


def test_nan_in_x_is_fine_for_an_estimator_that_accepts_it(binary_data):
    # An imputer learns its fill values from the data, so this only works with refit=False.
    X, y = binary_data[0].copy(), binary_data[1]
    X[::10, 0] = np.nan
    accountant = BudgetAccountant()
    pipeline = make_pipeline(SimpleImputer(), SkLogisticRegression())
    with pytest.raises(GateError, match="'simpleimputer'.*strategy='mean' learns fill values"):
        search(pipeline, {"logisticregression__C": [1.0]}, accountant).fit(X, y)
    fitted = search(pipeline, {"logisticregression__C": [0.1, 1.0]}, accountant,
                    refit=False).fit(X, y)
    assert_charged(accountant, fitted.privacy_spent_)


def test_sparse_x_works_when_the_estimator_accepts_it(binary_data):
    X, y = binary_data
    accountant = BudgetAccountant()
    fitted = search(SkLogisticRegression(), {"C": [0.1, 1.0]}, accountant,
                    refit=False).fit(sp.csr_matrix(X), y)
    assert fitted.best_index_ in (0, 1)
    assert_charged(accountant, fitted.privacy_spent_)


@pytest.mark.parametrize("estimator", [DP_LOGISTIC, GaussianNB(classes=CLASSES, bounds=(0, 1))])
def test_sparse_x_is_refused_for_dense_only_estimators(binary_data, estimator):
    # diffprivlib's LogisticRegression inherits sparse=True from scikit-learn's tags but
    # rejects sparse input; GaussianNB declares sparse=False.
    X, y = binary_data
    accountant = BudgetAccountant()
    with pytest.raises(GateError, match="receives a sparse matrix.*needs dense input"):
        search(estimator, {"epsilon": [1.0]}, accountant).fit(sp.csr_matrix(X), y)
    with pytest.raises(TypeError, match="X is a sparse matrix.*does not accept sparse"):
        search(estimator, {"epsilon": [1.0]}, accountant, refit=False).fit(sp.csr_matrix(X), y)
    assert_charged(accountant, NOTHING)


def mixed_frame(n_samples=300, seed=0):
    rng = np.random.RandomState(seed)
    frame = pd.DataFrame({
        "a": rng.uniform(0, 10, n_samples),
        "b": rng.randint(0, 5, n_samples),
        "c": rng.choice(["x", "y", "z"], n_samples),
    })
    return frame, ((frame.a > 5) ^ (frame.c == "x")).to_numpy().astype(int)


def column_pipeline(categories):
    columns = ColumnTransformer([
        # Bounds and categories are declared from public knowledge of the schema.
        ("num", StandardScaler(bounds=([0, 0], [10, 4]), epsilon=0.5), ["a", "b"]),
        ("cat", OneHotEncoder(categories=categories, sparse_output=False), ["c"]),
    ])
    return Pipeline([("columns", columns),
                     ("clf", LogisticRegression(classes=CLASSES, data_norm=5.0))])


def test_mixed_dtype_frame_with_declared_categories_refits_privately():
    frame, y = mixed_frame()
    accountant = BudgetAccountant()
    fitted = search(column_pipeline([["x", "y", "z"]]), {"clf__C": [0.1, 1.0]},
                    accountant).fit(frame, y)
    # ColumnTransformer clones its scaler during fit; the refit's accountant survives the
    # clone, so the scaler's 0.5 is measured with the classifier's 1.0.
    assert tuple(fitted.privacy_spent_) == pytest.approx((1.0 + 0.5 + 1.0, 0.0))
    assert fitted.privacy_report_["refit_epsilon"] == pytest.approx(1.5)
    assert_charged(accountant, fitted.privacy_spent_)
    assert list(fitted.feature_names_in_) == ["a", "b", "c"]
    assert fitted.predict(frame).shape == (len(frame),)


def test_mixed_dtype_frame_with_learned_categories_needs_refit_false():
    frame, y = mixed_frame()
    accountant = BudgetAccountant()
    with pytest.raises(GateError, match=r"'columns__cat'.*declare them: OneHotEncoder\(categories="):
        search(column_pipeline("auto"), {"clf__C": [0.1, 1.0]}, accountant).fit(frame, y)
    assert_charged(accountant, NOTHING)
    fitted = search(column_pipeline("auto"), {"clf__C": [0.1, 1.0]}, accountant,
                    refit=False).fit(frame, y)
    assert_charged(accountant, fitted.privacy_spent_)


def test_string_labels(binary_data):
    X, y = binary_data
    labels = np.array(["no", "yes"])[y]
    accountant = BudgetAccountant()
    fitted = search(GaussianNB(classes=["no", "yes"], bounds=(0, 1)), {"epsilon": [0.5, 1.0]},
                    accountant).fit(X, labels)
    assert list(fitted.classes_) == ["no", "yes"]
    assert set(fitted.predict(X)) <= {"no", "yes"}
    assert_charged(accountant, fitted.privacy_spent_)


def test_class_present_in_one_record_works(binary_data):
    # Partitions without that class fit and score as usual; the model's classes_ are the
    # declared ones, whether or not the class occurs (issue 34, item 8).
    X, y = binary_data
    y = y.copy()
    y[0] = 2
    accountant = BudgetAccountant()
    fitted = search(GaussianNB(classes=[0, 1, 2], bounds=(0, 1)), {"epsilon": [0.5, 1.0]},
                    accountant).fit(X, y)
    assert list(fitted.classes_) == [0, 1, 2]
    assert_charged(accountant, fitted.privacy_spent_)


@pytest.mark.parametrize("estimator", [DP_LOGISTIC, GaussianNB(classes=CLASSES, bounds=(0, 1))])
def test_single_class_raises_before_anything_is_charged(binary_data, estimator):
    X, _ = binary_data
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match="y has a single class"):
        search(estimator, {"epsilon": [1.0]}, accountant).fit(X, np.ones(len(X), dtype=int))
    assert_charged(accountant, NOTHING)


class CountingClassifier(MockDPClassifier):
    """Counts its fits on the class (n_jobs=1: the same process)."""

    n_fits = 0
    n_rehearsals = 0

    def __init__(self, epsilon=1.0, accountant=None, candidate=0):
        super().__init__(epsilon=epsilon, accountant=accountant)
        self.candidate = candidate

    def fit(self, X, y, sample_weight=None):
        if is_private(X):
            type(self).n_fits += 1
        else:
            type(self).n_rehearsals += 1
        return super().fit(X, y)


def test_five_thousand_candidates_fit_exactly_k_times_each_with_linear_storage():
    X, y = make_data()
    n_candidates, k = 5000, 2
    CountingClassifier.n_fits = CountingClassifier.n_rehearsals = 0
    accountant = BudgetAccountant()
    fitted = search(CountingClassifier(), {"candidate": list(range(n_candidates))}, accountant,
                    n_partitions=k, refit=False, selector="exponential").fit(X, y)
    assert CountingClassifier.n_fits == n_candidates * k
    # Not a class of the gate's table (refit=False): not rehearsed (skdptune._rehearsal).
    assert CountingClassifier.n_rehearsals == 0
    assert len(fitted.cv_results_["params"]) == n_candidates
    for key, values in fitted.cv_results_.items():
        assert len(values) == n_candidates, key
    assert len(fitted.selection_.trace) <= fitted.selection_.max_iter
    # Storage is O(n_candidates): a few hundred bytes per candidate (about 30 today).
    assert len(pickle.dumps(fitted)) < 200 * n_candidates
    assert_charged(accountant, fitted.privacy_spent_)


class RecordingClassifier(MockDPClassifier):
    """Records the rows and sample weights of every fit (n_jobs=1: the same process)."""

    fits = []

    def fit(self, X, y, sample_weight=None):
        if is_private(X):  # the rehearsal's public rows are not the data's
            type(self).fits.append((np.asarray(X)[:, 0].copy(), sample_weight))
        return super().fit(X, y, sample_weight=sample_weight)


def test_sample_weight_is_sliced_for_partitions_and_whole_for_the_refit(allow_in_gate):
    allow_in_gate(RecordingClassifier)
    X, y = make_data()
    weights = np.arange(N_SAMPLES) + 1.0  # weight of row i is i + 1
    RecordingClassifier.fits = []
    accountant = BudgetAccountant()
    fitted = search(RecordingClassifier(), {"epsilon": [0.5, 1.0]}, accountant).fit(
        X, y, sample_weight=weights
    )
    *partition_fits, refit = RecordingClassifier.fits
    assert len(partition_fits) == 2 * 5
    # The partitions the search used, re-derived from its seed.
    seed = np.random.RandomState(0).randint(np.iinfo(np.int32).max)
    splits = split_indices(*partition_labels(N_SAMPLES, 5, 0.2, seed), 5)
    expected_rows = [train for train, _ in splits for _ in range(2)]  # both candidates
    for (rows, received), train in zip(partition_fits, expected_rows):
        np.testing.assert_array_equal(rows, train)
        np.testing.assert_array_equal(received, weights[train])
    np.testing.assert_array_equal(refit[0], np.arange(N_SAMPLES))
    np.testing.assert_array_equal(refit[1], weights)
    assert_charged(accountant, fitted.privacy_spent_)


@pytest.mark.parametrize(
    "estimator, grid, scoring, utility_range, bad",
    [
        (LinearSVC(), {"C": [1.0]}, "neg_log_loss", (-5.0, 0.0), "LinearSVC"),
        (SVC(), {"probability": [True, False]}, "neg_log_loss", (-5.0, 0.0),
         "{'probability': False}"),
        (make_pipeline(LinearSVC()), {"linearsvc__C": [1.0]}, "neg_brier_score", (-1.0, 0.0),
         "Pipeline"),
    ],
)
def test_scorer_needing_predict_proba_on_an_estimator_without_it(
    binary_data, estimator, grid, scoring, utility_range, bad
):
    X, y = binary_data
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match=r"needs predict_proba") as error:
        search(estimator, grid, accountant, scoring=scoring, utility_range=utility_range,
               refit=False).fit(X, y)
    assert bad in str(error.value)
    assert_charged(accountant, NOTHING)


def test_roc_auc_uses_decision_function_when_there_is_no_predict_proba(binary_data):
    X, y = binary_data
    accountant = BudgetAccountant()
    fitted = search(LinearSVC(), {"C": [0.1, 1.0]}, accountant, scoring="roc_auc",
                    refit=False).fit(X, y)
    assert_charged(accountant, fitted.privacy_spent_)


# --- Keywords of scikit-learn's searches (issue 19, item 3) -----------------------------------


def _randomized(**params):
    from skdptune import PrivateRandomizedSearchCV

    return PrivateRandomizedSearchCV(GaussianNB(classes=CLASSES, bounds=(0.0, 1.0)),
                                     {"epsilon": [1.0]}, **params)


def _grid(**params):
    return PrivateGridSearchCV(GaussianNB(classes=CLASSES, bounds=(0.0, 1.0)), {"epsilon": [1.0]},
                               **params)


@pytest.mark.parametrize("keyword", ["cv", "n_splits"])
def test_cv_names_n_partitions_and_says_why_there_is_no_splitter(keyword):
    # Before: "__init__() got an unexpected keyword argument 'cv'", nothing more; then a
    # suggestion of n_partitions=5, with which the selection cannot tell candidates apart
    # (issue 33, item 3): the message points to the default and says why.
    with pytest.raises(TypeError, match=rf"no {keyword} parameter \(got {keyword}=5\): there "
                                        r"is no splitter.*independently") as raised:
        _grid(**{keyword: 5})
    message = str(raised.value)
    assert "n_partitions=5" not in message
    assert "Keep the default n_partitions='auto'" in message
    assert "noise scales as 1 / (n_partitions * epsilon)" in message


def test_cv_of_the_randomized_search_names_validation_fraction():
    with pytest.raises(TypeError, match=r"no cv parameter \(got cv=KFold.*there is no "
                                        r"splitter.*independently.*Use validation_fraction"):
        from sklearn.model_selection import KFold

        _randomized(cv=KFold(3))


@pytest.mark.parametrize("make", [_grid, _randomized])
def test_return_train_score_says_no_score_is_released(make):
    with pytest.raises(TypeError, match=r"no return_train_score parameter.*none is differentially "
                                        r"private"):
        make(return_train_score=True)


@pytest.mark.parametrize("make", [_grid, _randomized])
def test_a_misspelt_keyword_names_the_closest_parameter(make):
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'epsilom' \(epsilom=1\)"
                                        r".*did you mean 'epsilon'\?"):
        make(epsilom=1)


@pytest.mark.parametrize("make", [_grid, _randomized])
def test_refusing_unknown_keywords_leaves_the_parameters_alone(make):
    from sklearn.base import clone

    search = make(epsilon=0.5)
    assert "kwargs" not in search.get_params()
    assert clone(search).get_params()["epsilon"] == 0.5
    with pytest.raises(ValueError, match="Invalid parameter 'cv'"):
        search.set_params(cv=5)


BOUNDS = (0.0, 1.0)
RELEASED_FAMILIES = {
    "logistic": LogisticRegression(classes=CLASSES, data_norm=2.0),
    "ridge": Ridge(bounds_X=BOUNDS, bounds_y=BOUNDS),
    "gaussian_nb": GaussianNB(classes=CLASSES, bounds=BOUNDS),
    "tree": DecisionTreeClassifier(classes=CLASSES, bounds=BOUNDS, max_depth=3),
    "forest": RandomForestClassifier(classes=CLASSES, bounds=BOUNDS, max_depth=3,
                                     n_estimators=3),
    "kmeans": KMeans(bounds=BOUNDS, n_clusters=2),
    "pca_logistic": make_pipeline(PCA(n_components=2, data_norm=2.0, bounds=BOUNDS),
                                  LogisticRegression(classes=CLASSES, data_norm=2.0)),
    "scaler_logistic": make_pipeline(StandardScaler(bounds=BOUNDS),
                                     LogisticRegression(classes=CLASSES, data_norm=2.0)),
    "scaler_tree": make_pipeline(StandardScaler(bounds=BOUNDS), DecisionTreeClassifier(
        classes=CLASSES, bounds=(-3.0, 3.0), max_depth=3)),
    "scaler_ridge": make_pipeline(StandardScaler(bounds=BOUNDS),
                                  Ridge(bounds_X=(-3.0, 3.0), bounds_y=BOUNDS)),
    "polynomial_gaussian_nb": make_pipeline(PolynomialFeatures(2),
                                            GaussianNB(classes=CLASSES, bounds=BOUNDS)),
}


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("value", [1e39, -1e39, 1e308, -np.finfo(float).max, 1.0 + 1e-9,
                                   -5e-324],
                         ids=["1e39", "-1e39", "1e308", "-max", "just_above", "subnormal"])
@pytest.mark.parametrize("family", RELEASED_FAMILIES)
def test_one_extreme_record_is_charged_and_released_as_an_ordinary_one(binary_data, family,
                                                                       value):
    # Issue 38, item 3: a value finite in float64 but beyond float32's range in a tree's
    # refit was charged the whole budget and then raised PrivateFitError, where 0.7 released
    # a model. Every released family (and pipelines where a step overflows on the value, so
    # that the next receives an infinity) clips to its declared bounds before any cast:
    # the search releases a model and charges what it charges with an ordinary record.
    estimator = RELEASED_FAMILIES[family]
    X = binary_data[0].copy()
    y = X[:, 1].copy() if "ridge" in family else binary_data[1]
    y = None if family == "kmeans" else y
    charged = []
    for record in (0.7, value):
        X[7, 0] = record
        accountant = BudgetAccountant()
        fitted = search(estimator, {}, accountant).fit(X, y)
        assert hasattr(fitted, "best_estimator_")
        charged.append(accountant.total())
    assert charged[1] == pytest.approx(charged[0], rel=1e-12)
