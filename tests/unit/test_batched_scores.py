"""Probability and decision scores in the batched engine: ``scoring="roc_auc"`` on the logistic
and naive Bayes families (issue 40, item 6).

What is checked: the per-partition ROC AUC is scikit-learn's ``roc_auc_score`` (ties at their
average rank, infinite values tied, one-class partitions undefined); given the same fitted
statistics (the family's own fit, from the same streams), each partition's score is
scikit-learn's ``"roc_auc"`` scorer on diffprivlib's model carrying them, within 1e-9, on data
with many equal rows and saturated probabilities; partitions where that scorer raises or is
NaN score ``error_score`` (and under ``"raise"`` the per-fit path raises its error); which
candidates and data take the batched path; and, end to end, that a nearly noiseless search
gives the per-fit path's utilities with string labels. The fits' own law against
diffprivlib's is tested in ``test_batched.py`` and ``test_batched_logistic.py``. Nothing here
is statistical.
"""

import warnings

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression
from sklearn.metrics import get_scorer, roc_auc_score

from conftest import batched_groups, batched_values, count_paths, per_fit_values
from skdptune import PrivateGridSearchCV
from skdptune._batched import engine, gaussian_nb, logistic_regression
from skdptune._batched.common import partition_roc_auc
from skdptune._batched.contract import FIT_FAILED, ROC_AUC, Block
from skdptune._partition import partition_labels, split_indices
from skdptune._utility import make_utility
from skdptune.linear_model import LogisticRegression as CalibratedLogisticRegression
from skdptune.naive_bayes import GaussianNB as DeclaredGaussianNB

SCORER = get_scorer("roc_auc")


def _coarse_block(n_parts=6, n_rows=900, seed=0):
    """Two classes on a coarse grid of values (many equal rows, hence tied scores); partition 0
    with one training class, partition 1 with one held-out class."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n_rows)
    X = np.round(np.clip(rng.normal(y[:, None] * 1.2, 1.0, (n_rows, 3)) / 3, -1, 1) * 2) / 2
    part = rng.integers(0, n_parts, n_rows)
    validation = rng.random(n_rows) < 0.3
    drop = ((part == 0) & ~validation & (y == 1)) | ((part == 1) & validation & (y == 0))
    X, y, part, validation = X[~drop], y[~drop], part[~drop], validation[~drop]
    train = ~validation
    return Block(X[train], y[train], part[train], X[validation], y[validation],
                 part[validation], n_parts, 2)


def _rngs(n_parts, seed=0):
    return [np.random.default_rng([seed, p]) for p in range(n_parts)]


def _sklearn_scores(block, model_of):
    """scikit-learn's roc_auc scorer per partition on ``model_of(p)``, or FIT_FAILED where
    there is no model (None: the real fit raises) or the scorer raises or is NaN."""
    scores = []
    for p in range(block.n_parts):
        rows = block.part_val == p
        model = model_of(p)
        if model is None:  # the real fit raises
            scores.append(FIT_FAILED)
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = SCORER(model, block.X_val[rows], block.y_val[rows])
        except ValueError:
            value = np.nan
        scores.append(value if np.isfinite(value) else FIT_FAILED)
    return np.array(scores)


# --- The ROC AUC of each partition ------------------------------------------------------------


def test_partition_roc_auc_is_sklearns_with_ties_and_infinities():
    rng = np.random.default_rng(0)
    n_parts, n_rows = 5, 400
    part = rng.integers(0, n_parts, n_rows)
    positive = rng.random(n_rows) < 0.4
    positive[part == 4] = True  # one class: undefined
    values = rng.integers(0, 6, n_rows).astype(float)  # many ties
    values[rng.random(n_rows) < 0.1] = np.inf
    auc = partition_roc_auc(values, positive, part, n_parts)
    assert np.isnan(auc[4])
    for p in range(4):
        rows = part == p
        # scikit-learn refuses infinities: the largest float ties them as well.
        expected = roc_auc_score(positive[rows], np.where(np.isinf(values[rows]), 1e300,
                                                          values[rows]))
        assert auc[p] == pytest.approx(expected, abs=1e-12)


def test_all_tied_scores_give_one_half():
    auc = partition_roc_auc(np.full(6, np.inf), np.array([1, 0, 1, 0, 0, 1], bool),
                            np.zeros(6, int), 1)
    assert auc[0] == pytest.approx(0.5, abs=1e-15)


# --- Given the same fit, the score is scikit-learn's scorer on diffprivlib's model -------------


def _bound(family, estimator, block):
    plan = family.bind_score(family.plan(estimator, block.X_train.shape[1]), ROC_AUC)
    if plan.classes is not None:
        plan = family.bind_labels(plan, np.arange(block.n_classes))
    return plan


@pytest.mark.parametrize("params", [{"epsilon": 3.0}, {"epsilon": 50.0, "var_smoothing": 1e-4},
                                    {"epsilon": 3.0, "priors": [0.3, 0.7]}])
def test_gaussian_nb_roc_auc_is_sklearns_scorer_on_the_same_fit(params):
    block = _coarse_block()
    plan = _bound(gaussian_nb, GaussianNB(bounds=(-1, 1), **params), block)
    ours = gaussian_nb.partition_scores([plan], block, [_rngs(block.n_parts)])[0]
    theta, var, counts = gaussian_nb.fit_partitions(
        plan, block.X_train, block.y_train, block.part_train, block.n_parts, 2,
        _rngs(block.n_parts))

    def model_of(p):
        present = counts[p] > 0
        model = GaussianNB(bounds=(-1, 1), **params)
        model.classes_ = np.flatnonzero(present)
        model.theta_, model.var_ = theta[p, present], var[p, present]
        model.class_count_ = counts[p, present]
        model.class_prior_ = (np.asarray(params["priors"]) if "priors" in params
                              else model.class_count_ / model.class_count_.sum())
        model.n_features_in_ = block.X_train.shape[1]
        return model

    expected = _sklearn_scores(block, model_of)
    assert ours[0] == FIT_FAILED and ours[1] == FIT_FAILED  # one class: training, held-out
    np.testing.assert_allclose(ours, expected, atol=1e-9, rtol=0)
    # The coarse grid ties many probabilities.
    rows = block.part_val == 2
    assert len(np.unique(model_of(2).predict_proba(block.X_val[rows])[:, 1])) < 0.75 * rows.sum()


@pytest.mark.parametrize("params", [{"epsilon": 3.0, "C": 1.0}, {"epsilon": 30.0, "C": 10.0},
                                    {"epsilon": 3.0, "C": 1.0, "fit_intercept": False}])
def test_logistic_roc_auc_is_sklearns_scorer_on_the_same_fit(params):
    block = _coarse_block()
    estimator = LogisticRegression(data_norm=1.5, **params)
    plan = _bound(logistic_regression, estimator, block)
    ours = logistic_regression.partition_scores([plan], block, [_rngs(block.n_parts)])[0]
    w = logistic_regression.fit_partitions(plan, block.X_train, block.y_train, block.part_train,
                                           block.n_parts, 2, _rngs(block.n_parts))
    n_features = block.X_train.shape[1]

    def model_of(p):
        if len(np.unique(block.y_train[block.part_train == p])) < 2:
            return None
        model = LogisticRegression(data_norm=1.5, **params)
        model.classes_ = np.array([0, 1])
        model.coef_ = w[:, p, :n_features]
        model.intercept_ = w[:, p, n_features] if plan.fit_intercept else np.zeros(1)
        model.n_features_in_ = n_features
        return model

    expected = _sklearn_scores(block, model_of)
    assert ours[0] == FIT_FAILED and ours[1] == FIT_FAILED
    np.testing.assert_allclose(ours, expected, atol=1e-9, rtol=0)


def test_skdptunes_logistic_roc_auc_is_its_scorer_on_the_same_fit():
    block = _coarse_block()
    estimator = CalibratedLogisticRegression(data_norm=0.8, epsilon=3.0, classes=[0, 1])
    plan = _bound(logistic_regression, estimator, block)
    ours = logistic_regression.partition_scores([plan], block, [_rngs(block.n_parts)])[0]
    from skdptune._models.linear_model import logistic_features, logistic_unit_ball
    Z = logistic_features(block.X_train, 0.8, True, clip=True)
    w = logistic_regression.fit_partitions(plan, Z, plan.code_map[block.y_train],
                                           block.part_train, block.n_parts, 2,
                                           _rngs(block.n_parts))
    scale = logistic_unit_ball(0.8, True)[0]

    def model_of(p):
        model = CalibratedLogisticRegression(data_norm=0.8, epsilon=3.0, classes=[0, 1])
        model.classes_ = np.array([0, 1])
        model.coef_, model.intercept_ = w[:, p, :3] / scale, w[:, p, 3] / scale
        model.n_features_in_ = 3
        return model

    expected = _sklearn_scores(block, model_of)
    # Declared classes: partition 0 (one training class) fits; partition 1 cannot be scored.
    assert ours[0] != FIT_FAILED and ours[1] == FIT_FAILED
    np.testing.assert_allclose(ours, expected, atol=1e-9, rtol=0)


# --- Which candidates and data take the batched path -----------------------------------------


def _paths(estimator, scoring, n_features=3):
    _, utility = make_utility(estimator, scoring, None)
    return engine.candidate_paths(estimator, [{}], utility, n_features)


@pytest.mark.parametrize("estimator", [
    GaussianNB(bounds=(-1, 1)), DeclaredGaussianNB(bounds=(-1, 1), classes=[0, 1]),
    LogisticRegression(data_norm=2.0), CalibratedLogisticRegression(data_norm=2.0)])
def test_roc_auc_is_batched_and_its_variants_are_not(estimator):
    assert _paths(estimator, "roc_auc") == ("batched",)
    for scoring in ("roc_auc_ovr", "average_precision", "neg_log_loss"):
        _, utility = make_utility(estimator, scoring, None if scoring != "neg_log_loss"
                                  else (-5.0, 0.0))
        assert engine.candidate_paths(estimator, [{}], utility, 3) == ("per-fit",)


def test_more_than_two_declared_classes_keep_roc_auc_on_the_per_fit_path():
    assert _paths(DeclaredGaussianNB(bounds=(-1, 1), classes=[0, 1, 2]), "roc_auc") == (
        "per-fit",)
    assert _paths(DeclaredGaussianNB(bounds=(-1, 1), classes=[0, 1, 2]), "accuracy") == (
        "batched",)


@pytest.mark.parametrize("labels", [np.array([0, 1, 2]), np.array([0.5, 1.5])])
def test_labels_roc_auc_is_not_binary_on_take_the_per_fit_path(labels):
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (60, 3)), labels[rng.integers(0, len(labels), 60)]
    for estimator in (GaussianNB(bounds=(-1, 1)), LogisticRegression(data_norm=2.0)):
        _, utility = make_utility(estimator, "roc_auc", None)
        assert batched_groups(estimator, [{}], X, y, utility) == []
        _, utility = make_utility(estimator, "accuracy", None)
        assert len(batched_groups(estimator, [{}], X, y, utility)) == 1


@pytest.mark.parametrize("estimator, family", [
    (GaussianNB(bounds=(0, 1)), gaussian_nb),
    (LogisticRegression(data_norm=2.0), logistic_regression)])
def test_a_roc_auc_search_is_batched(binary_data, monkeypatch, estimator, family):
    X, y = binary_data
    paths = count_paths(monkeypatch, family)
    PrivateGridSearchCV(estimator, {"epsilon": [1.0, 2.0]}, scoring="roc_auc", n_partitions=4,
                        refit=False, accountant=BudgetAccountant(), random_state=0,
                        default=None).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 8}


# --- End to end: the per-fit path's utilities, and its errors -------------------------------


def _string_labelled(n=600, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 2, n)
    X = np.clip(rng.normal(codes[:, None] * 0.8, 1.0, (n, 3)) / 3, -1, 1)
    return X, np.array(["no", "yes"])[codes]


def test_a_nearly_noiseless_batched_search_gives_the_per_fit_utilities():
    # epsilon 1e8: the noise moves no rank, so both paths give the same AUC, and the larger
    # label ("yes") is positive on both.
    X, y = _string_labelled()
    splits = split_indices(*partition_labels(len(y), 5, 0.3, 0), 5)
    estimator = GaussianNB(bounds=(-1, 1), epsilon=1e8)
    _, utility = make_utility(estimator, "roc_auc", None)
    (family, ids, plans, data), = batched_groups(estimator, [{}], X, y, utility)
    assert plans[0].score is ROC_AUC
    ours = batched_values(family, ids, plans, data, splits, utility)
    theirs = per_fit_values(estimator, [{}], X, y, splits, utility)
    np.testing.assert_allclose(ours, theirs, atol=1e-9)
    assert 0.6 < ours.mean() < 1.0


def test_a_partition_scikit_learn_cannot_score_gets_error_score_or_raises():
    X, y = _string_labelled(n=200)
    splits = split_indices(*partition_labels(len(y), 4, 0.3, 0), 4)
    train, validation = splits[2]
    y = y.copy()
    y[validation] = "no"  # partition 2's held-out rows: one class, AUC undefined
    estimator = GaussianNB(bounds=(-1, 1), epsilon=5.0)
    _, utility = make_utility(estimator, "roc_auc", None)
    work = engine.batched_work(estimator, [{}], X, y, splits, utility, 0.25, random_state=0)
    values, redo = work.collect([f(*a, **k) for f, a, k in work.tasks])
    assert values[0, 2] == 0.25 and not redo and np.all(values[0, [0, 1, 3]] != 0.25)
    work = engine.batched_work(estimator, [{}], X, y, splits, utility, "raise", random_state=0)
    assert work.collect([f(*a, **k) for f, a, k in work.tasks])[1] == [0]
    with pytest.raises(ValueError, match="not a finite number"):
        per_fit_values(estimator, [{}], X, y, splits, utility)

