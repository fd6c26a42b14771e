"""Batched partition fits (skdptune._batched): diffprivlib's GaussianNB as an array program
(and skdptune's, over declared classes).

What is checked: which candidates take the batched path and which fall back; that each piece
of the emulation is diffprivlib's (the same transform of a uniform where that can be checked
exactly, the same law where it is a sampler); that a partition's utility depends on its own
records and stream only (replace one record: only its partition moves); that the result does
not depend on how partitions are cut into joblib tasks; and that the batched utilities and
fitted parameters have the law of diffprivlib's own fits on the same partitions.

Statistical tests use alpha = 1e-3 per comparison; the test functions that make several
comparisons state their count, and the false-failure rate of a run is at most alpha times the
number of comparisons (Bonferroni). Seeds are fixed, so a run is reproducible either way.
"""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.mechanisms import GeometricTruncated, LaplaceBoundedDomain
from diffprivlib.models import GaussianNB
from skdptune.linear_model import LogisticRegression
from scipy import stats

from conftest import (
    batched_groups,
    batched_values,
    class_blobs,
    column_ks,
    count_paths,
    per_fit_values,
)
from skdptune import PrivateGridSearchCV, _evaluate as evaluate
from skdptune._batched import common, engine, gaussian_nb
from skdptune.naive_bayes import GaussianNB as DeclaredGaussianNB
from skdptune._utility import EMPTY_PART_UTILITY, make_utility

ALPHA = 1e-3


def _values(candidates, X, y, splits, scoring="accuracy", utility_range=None, entropy=0,
            n_jobs=1, estimator=None):
    """Per-partition utilities of the batched path, ``(n_candidates, n_partitions)``."""
    estimator = estimator if estimator is not None else GaussianNB(bounds=(-1, 1))
    _, utility = make_utility(estimator, scoring, utility_range)
    (family, ids, plans, data), = batched_groups(estimator, candidates, X, y, utility)
    assert family is gaussian_nb and ids == list(range(len(candidates)))
    return batched_values(family, ids, plans, data, splits, utility, entropy, n_jobs)


def _per_fit(candidates, X, y, splits, estimator=None):
    estimator = estimator if estimator is not None else GaussianNB(bounds=(-1, 1))
    _, utility = make_utility(estimator, "accuracy", None)
    return per_fit_values(estimator, candidates, X, y, splits, utility, "raise")


def _splits(n, k, validation_fraction=0.3, seed=1):
    from skdptune._partition import partition_labels, split_indices
    return split_indices(*partition_labels(n, k, validation_fraction, seed), k)


# --- Which path ------------------------------------------------------------------------------


@pytest.fixture
def paths(monkeypatch):
    """Counts the (candidate, partition) fits that reach each path."""
    return count_paths(monkeypatch)


def _search(estimator, grid, **params):
    return PrivateGridSearchCV(estimator, grid, n_partitions=4, accountant=BudgetAccountant(),
                               random_state=0, refit=False, **{"default": None, **params})


@pytest.mark.parametrize("in_pipeline", [False, True])
def test_gaussian_nb_with_accuracy_takes_the_batched_path(binary_data, paths, in_pipeline):
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import Binarizer
    X, y = binary_data
    estimator, grid = GaussianNB(bounds=(0, 1)), {"var_smoothing": [1e-9, 1e-3]}
    if in_pipeline:
        estimator = Pipeline([("binarize", Binarizer(threshold=0.5)), ("nb", estimator)])
        grid = {"nb__var_smoothing": grid["var_smoothing"]}
    _search(estimator, grid).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 2 * 4}  # 2 candidates, 4 partitions


TWO = {"var_smoothing": [1e-9, 1e-6]}  # a grid of one selects nothing: no partition fits


@pytest.mark.parametrize("estimator, grid, search_params, fit_params", [
    (GaussianNB(bounds=(0, 1)), TWO, {"scoring": "balanced_accuracy"}, {}),
    (GaussianNB(bounds=(0, 1)), TWO, {}, {"sample_weight": np.ones(300)}),
    (type("MyNB", (GaussianNB,), {})(bounds=(0, 1)), TWO, {}, {}),
], ids=["scorer", "fit_params", "subclass"])
def test_everything_else_takes_the_per_fit_path(binary_data, paths, estimator, grid,
                                                search_params, fit_params):
    X, y = binary_data
    _search(estimator, grid, **search_params).fit(X, y, **fit_params)
    assert paths == {"per_fit": 2 * 4, "batched": 0}


def test_a_candidate_every_fit_rejects_reaches_no_path(binary_data, paths):
    # Priors not summing to one, a warm start: the families' plans refuse them, and so does
    # every real fit, so the rehearsal on public rows refuses the grid before the data
    # (skdptune._rehearsal).
    X, y = binary_data
    with pytest.raises(ValueError, match="public rows.*The sum of the priors should be 1"):
        _search(GaussianNB(bounds=(0, 1), priors=[0.5, 0.6]), {"var_smoothing": [1e-9]},
                error_score=0.0).fit(X, y)
    with pytest.raises(ValueError, match="public rows.*warm_start=True is not supported"):
        _search(LogisticRegression(data_norm=2.0, warm_start=True), {"C": [1.0]}).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 0}


def test_a_grid_is_split_between_the_paths(binary_data, paths):
    # A candidate the emulation cannot reproduce (zero-width bounds) goes to the per-fit path,
    # the others stay batched.
    X, y = binary_data
    _search(GaussianNB(), {"bounds": [(0, 1), (0.5, 0.5)]}).fit(X, y)
    assert paths == {"per_fit": 4, "batched": 4}


def test_a_pipeline_of_stateless_steps_is_batched_on_the_transformed_rows():
    # Its partition utilities are those of the bare estimator on the transformed rows, with the
    # same streams: the steps are applied once to all rows, as each partition would.
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Binarizer, PolynomialFeatures
    X, y = class_blobs(600, n_classes=2, n_features=3, shift=2.0)
    splits = _splits(len(y), 6)
    pipeline = make_pipeline(Binarizer(threshold=0.1), "passthrough",
                             PolynomialFeatures(degree=2), GaussianNB(bounds=(-1, 1)))
    candidates = [{"gaussiannb__epsilon": 5.0}, {"binarizer__threshold": -0.1}]
    Xt = [PolynomialFeatures(degree=2).fit_transform(Binarizer(threshold=t).fit_transform(X))
          for t in (0.1, -0.1)]
    _, utility = make_utility(pipeline, "accuracy", None)
    groups = batched_groups(pipeline, candidates, X, y, utility)
    assert [ids for _, ids, _, _ in groups] == [[0], [1]]  # two preprocessings
    for (family, ids, plans, data), Xt_, params in zip(groups, Xt, [{"epsilon": 5.0}, {}]):
        got = batched_values(family, ids, plans, data, splits, utility, 0, 1)
        # The bare estimator's candidate index must match for the streams to match.
        bare = GaussianNB(bounds=(-1, 1), **params)
        (f, _, bare_plans, bare_data), = batched_groups(bare, [{}], Xt_, y, utility)
        expected = batched_values(f, ids, bare_plans, bare_data, splits, utility, 0,
                                            1)
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("step", ["scaler", "log1p", "learned_categories"])
def test_a_pipeline_with_a_step_that_learns_takes_the_per_fit_path(binary_data, step):
    # (diffprivlib's StandardScaler is batched as a partition step: tests/unit/test_batched_steps.py)
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, OrdinalEncoder, StandardScaler
    X, y = binary_data
    first = {"scaler": StandardScaler(), "log1p": FunctionTransformer(np.log1p),
             "learned_categories": OrdinalEncoder()}[step]
    _, utility = make_utility(GaussianNB(), "accuracy", None)
    pipeline = make_pipeline(first, GaussianNB(bounds=(-3, 3)))
    assert batched_groups(pipeline, [{}], X, y, utility) == []


@pytest.mark.parametrize("X_change", ["nan", "sparse", "strings"])
def test_data_the_emulation_does_not_take_falls_back(binary_data, paths, X_change):
    from scipy import sparse
    X, y = binary_data
    X = X.copy()
    if X_change == "nan":
        X[0, 0] = np.nan  # diffprivlib rejects it: error_score on its partition, as before
    elif X_change == "sparse":
        X = sparse.csr_matrix(X)
    else:
        X = X.astype(object)
        X[0, 0] = "a"  # numbers as strings would convert, as in scikit-learn's check_array
    _, utility = make_utility(GaussianNB(bounds=(0, 1)), "accuracy", None)
    assert batched_groups(GaussianNB(bounds=(0, 1)), [{}], X, y, utility) == []


# --- Each piece is diffprivlib's -------------------------------------------------------------


def _reference_adjust(noisy_counts, n_total):
    """diffprivlib 0.6.6 GaussianNB._noisy_class_counts, after the noise (verbatim loop)."""
    noisy_counts = np.array(noisy_counts)
    argsort = np.argsort(noisy_counts)
    i = 0 if noisy_counts.sum() > n_total else len(noisy_counts) - 1
    while np.sum(noisy_counts) != n_total:
        _i = argsort[i]
        sgn = np.sign(n_total - noisy_counts.sum())
        noisy_counts[_i] = np.clip(noisy_counts[_i] + sgn, 1, n_total)
        i = (i - sgn) % len(noisy_counts)
    return noisy_counts


def test_count_adjustment_is_diffprivlibs_round_robin():
    rng = np.random.default_rng(0)
    for _ in range(3000):
        n_classes = int(rng.integers(1, 7))
        n_total = int(rng.integers(n_classes, 60))
        noisy = rng.integers(1, n_total + 1, n_classes)
        noisy[rng.random(n_classes) < 0.3] = noisy[0]  # ties: the argsort order matters
        np.testing.assert_array_equal(gaussian_nb.adjust_counts(noisy, n_total),
                                      _reference_adjust(noisy, n_total))


def test_class_count_noise_is_diffprivlibs_transform_of_a_uniform():
    # The same uniform in, the same noisy count out: diffprivlib's GeometricTruncated draws
    # one uniform from its random_state per randomise.
    for seed in range(300):
        epsilon, n_total, value = 0.05 + seed / 100, 40 + seed % 7, seed % 40 + 1
        expected = GeometricTruncated(epsilon=epsilon, sensitivity=1, lower=1, upper=n_total,
                                      random_state=np.random.RandomState(seed)).randomise(value)
        uniform = np.random.RandomState(seed).random_sample()
        got = gaussian_nb._geometric_truncated(np.array([[value]]), np.array([[uniform]]),
                                               epsilon, np.array([n_total]))
        assert got[0, 0] == expected


@pytest.mark.parametrize("value, sensitivity, n_c, epsilon", [
    (0.0, 1.0, 3, 0.05),      # at the lower end, the scale far above the domain
    (30.0, 2.0, 20, 0.5),     # inside
    (40.0, 2.0, 20, 5.0),     # at the upper end, little noise
])
def test_variance_noise_has_the_bounded_domain_law(value, sensitivity, n_c, epsilon):
    # Three KS comparisons at ALPHA each.
    mechanism = LaplaceBoundedDomain(epsilon=epsilon, delta=0, sensitivity=sensitivity,
                                     lower=0, upper=sensitivity * n_c, random_state=0)
    reference = np.array([mechanism.randomise(value) for _ in range(3000)])
    scale = sensitivity * gaussian_nb._unit_scale(epsilon, n_c)
    assert scale == pytest.approx(mechanism._find_scale(), rel=1e-12)
    domain = sensitivity * n_c
    uniforms = np.random.default_rng(1).random(3000)
    ours = value + scale * common.laplace_within(uniforms, -value / scale,
                                                       (domain - value) / scale)
    assert stats.ks_2samp(reference, ours).pvalue > ALPHA


def test_laplace_is_standard_laplace():
    draws = common.laplace(np.random.default_rng(2).random(5000))
    assert stats.kstest(draws, stats.laplace.cdf).pvalue > ALPHA


# --- Privacy: a partition's utility is a function of its own records and stream -------------


def _parameters(candidate, X, y, splits, entropy=0):
    """The batched path's fitted parameters on every partition (the engine's streams)."""
    task = engine._block_task(splits, np.arange(len(splits)), y)
    train, codes, part = task.train
    rngs = [np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(p, 0)))
            for p in range(len(splits))]
    plan = gaussian_nb.plan(GaussianNB(bounds=(-1, 1), **candidate), X.shape[1])
    return gaussian_nb.fit_partitions(plan, X[train], codes, part, len(splits), y.max() + 1,
                                      rngs)


def test_replacing_one_record_moves_only_its_partition():
    X, y = class_blobs(1200, n_classes=3, n_features=4, shift=1.5)
    splits = _splits(len(y), 12)
    candidates = [{"epsilon": 2.0}, {"epsilon": 50.0, "var_smoothing": 1e-3}]
    before = _values(candidates, X, y, splits)
    parameters = _parameters(candidates[0], X, y, splits)
    others = np.arange(12) != 5
    # A training record of each partition in turn (a quantity shared across partitions, such
    # as a maximum, moves only when its own partition changes): its partition's fitted
    # parameters move, no other partition's parameters or utilities do.
    for p in range(12):
        row, rest = splits[p][0][0], np.arange(12) != p
        X2, y2 = X.copy(), y.copy()
        X2[row], y2[row] = -X2[row], (y2[row] + 1) % 3
        np.testing.assert_array_equal(_values(candidates, X2, y2, splits)[:, rest],
                                      before[:, rest])
        for old, new in zip(parameters, _parameters(candidates[0], X2, y2, splits)):
            np.testing.assert_array_equal(new[rest], old[rest])
            assert not np.array_equal(new[p], old[p])
    # A held-out record of partition 5, given each other label: one of them changes whether
    # it is predicted right (its prediction is fixed), so partition 5's utility moves.
    row, moved = splits[5][1][0], False
    for shift in (1, 2):
        y2 = y.copy()
        y2[row] = (y2[row] + shift) % 3
        after = _values(candidates, X, y2, splits)
        np.testing.assert_array_equal(after[:, others], before[:, others])
        moved |= bool(np.any(after[:, 5] != before[:, 5]))
    assert moved


def test_partitions_do_not_depend_on_how_they_are_cut_into_tasks(monkeypatch):
    X, y = class_blobs(900, n_classes=2, n_features=3)
    splits = _splits(len(y), 9)
    candidates = [{"epsilon": 1.0}, {"epsilon": 10.0}]
    whole = _values(candidates, X, y, splits)
    monkeypatch.setattr(engine, "BLOCK_CELLS", 200)  # about one partition per block
    np.testing.assert_array_equal(_values(candidates, X, y, splits), whole)
    np.testing.assert_array_equal(_values(candidates, X, y, splits, n_jobs=2), whole)
    assert not np.array_equal(_values(candidates, X, y, splits, entropy=1), whole)


def test_a_seeded_search_is_reproducible_and_the_seed_matters(binary_data, monkeypatch):
    X, y = binary_data
    seen = []
    original = evaluate.partition_utilities

    def spy(*args, **kwargs):
        seen.append(original(*args, **kwargs))
        return seen[-1]

    from skdptune import _search as search_module
    monkeypatch.setattr(search_module, "partition_utilities", spy)
    for random_state in (0, 0, 1):
        PrivateGridSearchCV(GaussianNB(bounds=(0, 1)), {"epsilon": [0.5, 1.0, 2.0]},
                            n_partitions=5, accountant=BudgetAccountant(),
                            random_state=random_state, refit=False).fit(X, y)
    np.testing.assert_array_equal(seen[0], seen[1])
    assert not np.array_equal(seen[0], seen[2])


def test_empty_parts_score_the_fixed_constant_and_the_range_is_applied():
    X, y = class_blobs(200)
    splits = _splits(len(y), 4)
    splits[1] = (splits[1][0], splits[1][0][:0])  # no held-out rows
    splits[2] = (splits[2][0][:0], splits[2][1])  # no training rows
    plain = _values([{"epsilon": 5.0}], X, y, splits)[0]
    assert plain[1] == plain[2] == EMPTY_PART_UTILITY
    ranged = _values([{"epsilon": 5.0}], X, y, splits, utility_range=(0.5, 1.0))[0]
    np.testing.assert_allclose(ranged[[0, 3]], np.clip((plain[[0, 3]] - 0.5) / 0.5, 0, 1))
    assert ranged[1] == ranged[2] == EMPTY_PART_UTILITY


def test_partition_labels_and_classes_are_the_partitions_own():
    # String labels; a partition that has seen one class only predicts that class: its
    # held-out rows of the other class all count as errors.
    X, y = class_blobs(400, n_classes=2, shift=3.0)
    labels = np.array(["no", "yes"])[y]
    splits = _splits(len(y), 2)
    train, validation = splits[0]
    splits[0] = (train[y[train] == 0], validation)
    values = _values([{"epsilon": 1e6}], X, labels, splits)[0]
    assert values[0] == pytest.approx(np.mean(y[validation] == 0))


# --- Equivalence with diffprivlib's own fits -------------------------------------------------


def _diffprivlib_parameters(X, y, epsilon, repetitions, seed):
    rng = np.random.RandomState(seed)
    fits = []
    for _ in range(repetitions):
        model = GaussianNB(bounds=(-1, 1), epsilon=epsilon, random_state=rng,
                           accountant=BudgetAccountant()).fit(X, y)
        fits.append((model.theta_, model.var_, model.class_count_))
    return [np.array(values) for values in zip(*fits)]


def _batched_parameters(X, y, epsilon, repetitions, seed):
    codes = np.unique(y, return_inverse=True)[1]
    n_classes = codes.max() + 1
    # The same partition, repeated: each copy has its own stream.
    part = np.repeat(np.arange(repetitions), len(y))
    rngs = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(p,)))
            for p in range(repetitions)]
    plan = gaussian_nb.plan(GaussianNB(bounds=(-1, 1), epsilon=epsilon), X.shape[1])
    return gaussian_nb.fit_partitions(plan, np.tile(X, (repetitions, 1)), np.tile(codes,
                                      repetitions), part, repetitions, n_classes, rngs)


def _compare_parameters(X, y, epsilon, repetitions, seed):
    """KS comparisons of every class's count and every (class, feature)'s mean and variance;
    returns the smallest p-value and the number of comparisons."""
    ours = _batched_parameters(X, y, epsilon, repetitions, seed)
    theirs = _diffprivlib_parameters(X, y, epsilon, repetitions, seed)
    return column_ks((got.reshape(repetitions, -1), expected.reshape(repetitions, -1))
                     for got, expected in zip(ours, theirs))


def test_fitted_parameters_have_diffprivlibs_law():
    # 2 classes x (1 count + 2 features x 2): 10 KS comparisons at ALPHA / 10 each (the
    # counts' two columns are mirror images, kept for simplicity: conservative).
    X, y = class_blobs(80, n_classes=2, n_features=2, shift=2.0, seed=3)
    p_value, n = _compare_parameters(X, y, epsilon=3.0, repetitions=400, seed=4)
    assert p_value > ALPHA / n


@pytest.mark.slow_audit
@pytest.mark.parametrize("n_classes, n_train, epsilon", [
    (2, 50, 0.5), (2, 300, 5.0), (3, 120, 1.0), (3, 500, 30.0),
])
def test_fitted_parameters_have_diffprivlibs_law_audit(n_classes, n_train, epsilon):
    X, y = class_blobs(n_train, n_classes=n_classes, n_features=3, shift=1.5, seed=n_train)
    p_value, n = _compare_parameters(X, y, epsilon, repetitions=1500, seed=n_train)
    assert p_value > ALPHA / n  # Bonferroni over the n comparisons of this configuration


def _compare_utilities(n_classes, n_train, epsilon, repetitions, seed):
    X, y = class_blobs(n_train + 300, n_classes=n_classes, n_features=3, shift=1.5, seed=seed)
    split = (np.arange(n_train), np.arange(n_train, n_train + 300))
    splits = [split] * repetitions  # the same partition, repeated: independent fits
    ours = _values([{"epsilon": epsilon}], X, y, splits, entropy=seed, estimator=GaussianNB(
        bounds=(-1, 1)))[0]
    theirs = _per_fit([{"epsilon": epsilon}], X, y, splits)[0]
    return stats.ks_2samp(ours, theirs).pvalue, ours.mean(), theirs.mean()


def test_partition_utilities_have_diffprivlibs_law():
    np.random.seed(5)  # diffprivlib's unseeded fits draw from numpy's global generator
    p_value, ours, theirs = _compare_utilities(2, 100, 2.0, repetitions=300, seed=5)
    assert p_value > ALPHA, (ours, theirs)


@pytest.mark.slow_audit
@pytest.mark.parametrize("n_classes, n_train, epsilon", [
    (2, 50, 0.5), (2, 300, 5.0), (3, 120, 1.0), (3, 500, 30.0),
])
def test_partition_utilities_have_diffprivlibs_law_audit(n_classes, n_train, epsilon):
    np.random.seed(n_train)
    p_value, ours, theirs = _compare_utilities(n_classes, n_train, epsilon, 1500, n_train)
    assert p_value > ALPHA, (ours, theirs)


def test_no_batched_utility_is_reachable_from_the_fitted_search(binary_data, monkeypatch):
    import pickle
    import struct

    X, y = binary_data
    seen, original = [], engine.BatchedWork.collect

    def spy(work, outcomes):
        values, redo = original(work, outcomes)
        seen.append(values)
        return values, redo

    monkeypatch.setattr(engine.BatchedWork, "collect", spy)
    search = PrivateGridSearchCV(DeclaredGaussianNB(bounds=(0, 1), classes=[0, 1]),
                                 {"epsilon": [0.5, 1.0, 2.0]},
                                 selection_epsilon=1.0, n_partitions=5,
                                 accountant=BudgetAccountant(), random_state=0,
                                 default=None).fit(X, y)
    (values,) = seen
    secrets_ = {v for v in np.r_[values.ravel(), values.mean(axis=1)].tolist()
                if len(repr(v)) >= 8}
    assert secrets_  # distinctive values to look for
    payload = pickle.dumps(search)
    for value in secrets_:
        assert struct.pack(">d", value) not in payload  # pickled Python float
        assert struct.pack("<d", value) not in payload  # numpy array data


def test_an_absent_class_never_wins_even_with_a_degenerate_placeholder():
    # var_smoothing=0 can leave an absent class's placeholder variance at 0: its score is
    # -inf + inf = NaN there, which argmax would pick.
    theta = np.zeros((1, 2, 1))
    var = np.array([[[1.0], [0.0]]])
    counts = np.array([[5.0, 0.0]])
    X = np.array([[0.0], [3.0]])
    jll = gaussian_nb._joint_log_likelihood(theta, var, counts, X, np.zeros(2, dtype=int))
    np.testing.assert_array_equal(np.argmax(jll, axis=1), [0, 0])


# --- skdptune's GaussianNB: every declared class on every partition ----------------------------


def _declared(classes=(0, 1, 2), **params):
    return DeclaredGaussianNB(bounds=(-1, 1), classes=list(classes), **params)


def test_declared_classes_take_the_batched_path(binary_data, paths):
    X, y = binary_data
    _search(DeclaredGaussianNB(bounds=(0, 1), classes=[0, 1, 2]),
            {"var_smoothing": [1e-9, 1e-3]}).fit(X, y)
    assert paths == {"per_fit": 0, "batched": 2 * 4}


@pytest.mark.parametrize("params", [{"classes": [0]}, {"classes": [0, 1], "priors": [1.0]},
                                    {"classes": [[0, 1], [2, 3]]}])
def test_declared_classes_the_fit_refuses_take_the_per_fit_path(params):
    assert gaussian_nb.plan(DeclaredGaussianNB(bounds=(0, 1), **params), 2) is None
    plan = gaussian_nb.plan(DeclaredGaussianNB(bounds=(0, 1), classes=[0, 1]), 2)
    assert gaussian_nb.bind_labels(plan, np.array([0, 1])) is not None
    assert gaussian_nb.bind_labels(plan, np.array([0, 2])) is None  # 2 not declared
    assert gaussian_nb.bind_labels(plan, np.array(["0", "1"])) is None  # not comparable


def _declared_parameters(X, y, classes, epsilon, repetitions, seed):
    """The batched fitted parameters of one partition, repeated (each copy its own stream)."""
    labels, codes = np.unique(y, return_inverse=True)
    part = np.repeat(np.arange(repetitions), len(y))
    rngs = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(p,)))
            for p in range(repetitions)]
    plan = gaussian_nb.bind_labels(gaussian_nb.plan(
        _declared(classes, epsilon=epsilon), X.shape[1]), labels)
    return gaussian_nb.fit_partitions(plan, np.tile(X, (repetitions, 1)),
                                      np.tile(codes, repetitions), part, repetitions,
                                      len(labels), rngs)


@pytest.mark.parametrize("classes, labels", [((0, 1, 2), (0, 1)), ((1, 4, 9), (1, 9))],
                         ids=["absent_last", "absent_middle"])
def test_declared_fitted_parameters_have_the_law_of_its_own_fits(classes, labels):
    # A partition that lacks a declared class: every class still gets a noisy count, mean
    # and variance, with the law of skdptune's own fit. 3 classes x (1 count + 2 features x 2):
    # 15 KS comparisons at ALPHA / 15 each.
    X, codes = class_blobs(60, n_classes=2, n_features=2, shift=2.0, seed=3)
    y = np.array(labels)[codes]
    rng = np.random.RandomState(4)
    theirs = [(model.theta_, model.var_, model.class_count_) for model in (
        _declared(classes, epsilon=3.0, random_state=rng,
                  accountant=BudgetAccountant()).fit(X, y) for _ in range(400))]
    theirs = [np.array(values) for values in zip(*theirs)]
    ours = _declared_parameters(X, y, classes, 3.0, 400, seed=4)
    assert ours[2].shape == (400, 3) and np.all(ours[2] >= 1)
    p_value, n = column_ks((got.reshape(400, -1), expected.reshape(400, -1))
                           for got, expected in zip(ours, theirs))
    assert n == 15 and p_value > ALPHA / n


def test_declared_partition_utilities_have_the_law_of_its_own_fits():
    # A partition without class 2, declared: the batched utilities against skdptune's own
    # fits of it (seeded, so that the test is reproducible), one KS comparison.
    X, y = class_blobs(400, n_classes=3, n_features=3, shift=1.5, seed=6)
    y[:100][y[:100] == 2] = 0
    train, validation = np.arange(100), np.arange(100, 400)
    ours = _values([{"epsilon": 2.0}], X, y, [(train, validation)] * 300, entropy=6,
                   estimator=_declared())[0]
    rng = np.random.RandomState(6)
    theirs = [_declared(epsilon=2.0, random_state=rng, accountant=BudgetAccountant())
              .fit(X[train], y[train]).score(X[validation], y[validation]) for _ in range(300)]
    assert stats.ks_2samp(ours, theirs).pvalue > ALPHA, (ours.mean(), np.mean(theirs))


def test_a_partition_with_fewer_rows_than_declared_classes_scores_error_score():
    X, y = class_blobs(200, n_classes=2, seed=2)
    splits = _splits(len(y), 4)
    splits[1] = (splits[1][0][:2], splits[1][1])  # 2 training rows, 3 declared classes
    estimator = _declared()
    _, utility = make_utility(estimator, "accuracy", None)
    (family, ids, plans, data), = batched_groups(estimator, [{}], X, y, utility)
    values = batched_values(family, ids, plans, data, splits, utility, error_score=0.123)[0]
    assert values[1] == 0.123 and np.all(values[[0, 2, 3]] != 0.123)
    with pytest.raises(ValueError, match="fewer than the 3 declared classes"):
        estimator.fit(X[splits[1][0]], y[splits[1][0]])


def test_the_record_of_a_rare_class_moves_only_its_partition():
    # The neighbouring pair of issue 34, item 8, on the batched path: one record has the rare
    # declared class 2 on one dataset and class 0 on the other. The labels of y (and so the
    # codes the engine gives them) differ; no other partition's utility moves, and every
    # partition's model holds the same declared classes on both.
    X, y = class_blobs(600, n_classes=2, n_features=3, shift=2.0, seed=8)
    splits = _splits(len(y), 6)
    candidates = [{"epsilon": 2.0}, {"epsilon": 50.0}]
    before = _values(candidates, X, y, splits, estimator=_declared())
    for p in range(6):
        y2 = y.copy()
        y2[splits[p][0][0]] = 2
        after = _values(candidates, X, y2, splits, estimator=_declared())
        rest = np.arange(6) != p
        np.testing.assert_array_equal(after[:, rest], before[:, rest])
