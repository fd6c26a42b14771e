"""Batched pipeline steps (skdptune._batched): public steps from the gate's table, diffprivlib's
StandardScaler as a partition step, ColumnTransformer stages on DataFrames.

What is checked: which pipelines take the batched path; that the public steps are the gate's
"public" entries; that a ColumnTransformer stage gives ColumnTransformer's own columns in its
order; that the scaler's emulated mean and scale have diffprivlib's law; that a partition's
utility depends on its own records and streams only (replace one record: only its partition
moves); that the batched pipeline's partition utilities have the law of the per-fit path's; and
that every step gets its partition-rescaled epsilon, as on the per-fit path.

Statistical tests use alpha = 1e-3 per comparison, Bonferroni over the comparisons a test
function makes (its count is stated): the false-failure rate of a test is at most 1e-3. Seeds
are fixed, so a run is reproducible either way.
"""

import numpy as np
import pandas as pd
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import GaussianNB
from diffprivlib.models import StandardScaler as DPStandardScaler
from scipy import stats
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Binarizer, OneHotEncoder, OrdinalEncoder

from conftest import batched_groups, batched_values, column_ks, per_fit_values
from skdptune import PrivateGridSearchCV, _evaluate as evaluate, _gate as gate
from skdptune._batched import engine, standard_scaler
from skdptune._batched import pipeline as batched_pipeline
from skdptune._batched.contract import Block
from skdptune.naive_bayes import GaussianNB as DeclaredGaussianNB
from skdptune._partition import partition_labels, split_indices
from skdptune._partition_scaling import partition_ratio
from skdptune._utility import make_utility

ALPHA = 1e-3
NUMERIC = ["age", "hours", "gain"]
CATEGORIES = {"education": ["bachelors", "hs-grad", "masters", "some-college"],
              "sex": ["female", "male"], "workclass": ["gov", "private", "self"]}
BOUNDS = ([17.0, 1.0, 0.0], [90.0, 99.0, 10.0])


def _adult(n, seed=0):
    """An Adult-shaped DataFrame: numeric and categorical columns, a binary label."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    frame = pd.DataFrame({
        "age": np.round(np.clip(rng.normal(36 + 8 * y, 12), 17, 95)),  # some above the bound
        "workclass": rng.choice(CATEGORIES["workclass"], n),
        "education": np.where(rng.random(n) < 0.3 + 0.3 * y, "masters",
                              rng.choice(CATEGORIES["education"], n)),
        "hours": np.clip(rng.normal(38 + 5 * y, 10), 1, 99),
        "sex": np.where(rng.random(n) < 0.4 + 0.3 * y, "male", "female"),
        "gain": np.clip(rng.exponential(1 + 2 * y), 0, 12),
    })
    return frame, np.array(["<=50K", ">50K"])[y]


def _pipeline(epsilon=1.0, scaler_epsilon=1.0, remainder="drop", final=None):
    pre = ColumnTransformer([
        ("num", DPStandardScaler(epsilon=scaler_epsilon, bounds=BOUNDS), NUMERIC),
        ("cat", OneHotEncoder(categories=[CATEGORIES[c] for c in ("education", "sex")],
                              sparse_output=False), ["education", "sex"]),
    ], remainder=remainder)
    return Pipeline([("pre", pre), ("clf", final if final is not None else GaussianNB(
        epsilon=epsilon, bounds=(-4, 4)))])


def _splits(n, k, validation_fraction=0.3, seed=1):
    return split_indices(*partition_labels(n, k, validation_fraction, seed), k)


def _group(estimator, candidates, X, y):
    _, utility = make_utility(estimator, "accuracy", None)
    groups = batched_groups(estimator, candidates, X, y, utility)
    return groups, utility


def _values(estimator, candidates, X, y, splits, entropy=0, n_jobs=1):
    """Per-partition utilities of the batched path, ``(n_candidates, n_partitions)``."""
    ((family, ids, plans, data),), utility = _group(estimator, candidates, X, y)
    assert ids == list(range(len(candidates)))
    return batched_values(family, ids, plans, data, splits, utility, entropy, n_jobs)


def _per_fit(estimator, candidates, X, y, splits):
    _, utility = make_utility(estimator, "accuracy", None)
    return per_fit_values(estimator, candidates, X, y, splits, utility, "raise")


@pytest.fixture
def paths(monkeypatch):
    """Counts the (candidate, partition) fits that reach each path, and records the plans and
    partition steps the batched tasks receive."""
    seen = {"per_fit": 0, "batched": 0, "plans": [], "steps": []}
    per_fit, blocks = evaluate._evaluate_batch, engine._run_block

    def spy_per_fit(estimator, batch, *args):
        seen["per_fit"] += len(batch)
        return per_fit(estimator, batch, *args)

    def spy_batched(family, plans, ids, X, task, n_classes, entropy, steps=None, score=None):
        seen["batched"] += len(plans) * len(task.partitions)
        seen["plans"].append(plans)
        seen["steps"].append(steps)
        return blocks(family, plans, ids, X, task, n_classes, entropy, steps, score)

    monkeypatch.setattr(evaluate, "_evaluate_batch", spy_per_fit)
    monkeypatch.setattr(engine, "_run_block", spy_batched)
    return seen


# --- Which path ------------------------------------------------------------------------------


def test_the_adult_pipeline_on_a_dataframe_takes_the_batched_path(paths):
    X, y = _adult(1200)
    released = _pipeline(final=DeclaredGaussianNB(bounds=(-4, 4), classes=["<=50K", ">50K"]))
    search = PrivateGridSearchCV(released, {"clf__epsilon": [0.5, 2.0],
                                            "pre__num__epsilon": [0.5, 2.0]},
                                 n_partitions=6, accountant=BudgetAccountant(), random_state=0,
                                 default=None)
    search.fit(X, y)
    assert paths["per_fit"] == 0 and paths["batched"] == 4 * 6  # 4 candidates, 6 partitions
    assert search.predict(X.head()).shape == (5,)  # the refit is the real pipeline


def test_public_steps_are_the_gates_public_entries():
    # Every "public" entry of the gate, configured as its condition asks, is applied once to
    # all rows; the configurations its condition refuses are not.
    from sklearn.feature_extraction.text import (CountVectorizer, HashingVectorizer,
                                                 TfidfVectorizer)
    from sklearn.preprocessing import FunctionTransformer, Normalizer, PolynomialFeatures

    from skdptune.preprocessing import RowWiseFunctionTransformer
    allowed = {
        OneHotEncoder: OneHotEncoder(categories=[[0, 1]]),
        OrdinalEncoder: OrdinalEncoder(categories=[[0, 1]]),
        Normalizer: Normalizer(), Binarizer: Binarizer(),
        RowWiseFunctionTransformer: RowWiseFunctionTransformer(np.log1p),
        FunctionTransformer: FunctionTransformer(),
        SimpleImputer: SimpleImputer(strategy="constant"),
        PolynomialFeatures: PolynomialFeatures(), HashingVectorizer: HashingVectorizer(),
        CountVectorizer: CountVectorizer(vocabulary=["a"]),
        TfidfVectorizer: TfidfVectorizer(vocabulary=["a"], use_idf=False),
    }
    public = {cls for cls, rule in gate.ALLOWED.items() if rule.kind == "public"}
    assert public == set(allowed)  # a new public entry must be checked here
    assert all(batched_pipeline.is_public_step(step) for step in allowed.values())
    for refused in (OneHotEncoder(), OrdinalEncoder(categories=[[0, 1]], min_frequency=2),
                    SimpleImputer(), SimpleImputer(strategy="constant", add_indicator=True),
                    FunctionTransformer(np.log1p), CountVectorizer(),
                    TfidfVectorizer(vocabulary=["a"]), DPStandardScaler(bounds=(0, 1))):
        assert not batched_pipeline.is_public_step(refused), refused


def test_a_public_step_the_old_list_lacked_is_applied_once_to_all_rows():
    # SimpleImputer(strategy="constant") is public in the gate (it was not in the batched
    # engine's own list): the pipeline's utilities are the bare estimator's on the imputed
    # rows, with the same streams.
    X, y = _adult(600)
    X = X[NUMERIC].to_numpy() / 100
    X[::7, 1] = np.nan
    splits = _splits(len(y), 5)
    pipeline = Pipeline([("impute", SimpleImputer(strategy="constant", fill_value=0.5)),
                         ("clf", GaussianNB(bounds=(0, 1)))])
    got = _values(pipeline, [{}], X, y, splits)
    expected = _values(GaussianNB(bounds=(0, 1)), [{}], np.where(np.isnan(X), 0.5, X), y,
                       splits)
    np.testing.assert_array_equal(got, expected)
    learned = Pipeline([("impute", SimpleImputer()), ("clf", GaussianNB(bounds=(0, 1)))])
    assert _group(learned, [{}], X, y)[0] == []


@pytest.mark.parametrize("change", [
    "learned_categories", "sparse_branch", "weights", "remainder_estimator",
    "step_after_stage", "two_stages", "unbounded_scaler",
])
def test_what_the_stage_cannot_batch_takes_the_per_fit_path(change):
    X, y = _adult(300)
    pipeline = _pipeline()
    pre = pipeline.named_steps["pre"]
    if change == "learned_categories":
        pre.set_params(cat=OneHotEncoder(sparse_output=False))
    elif change == "sparse_branch":  # a sparse branch: the output's sparsity depends on data
        pre.set_params(cat=OneHotEncoder(categories=[CATEGORIES["education"],
                                                     CATEGORIES["sex"]]))
    elif change == "weights":
        pre.set_params(transformer_weights={"num": 2.0})
    elif change == "remainder_estimator":
        pre.set_params(remainder=OrdinalEncoder(categories=[CATEGORIES["workclass"]]))
    elif change == "step_after_stage":
        pipeline.steps.insert(1, ("binarize", Binarizer()))
    elif change == "two_stages":
        pipeline.steps.insert(1, ("scale", DPStandardScaler(bounds=(-5, 5))))
    else:
        pre.set_params(num__bounds=None)
    assert _group(pipeline, [{}], X, y)[0] == []


def test_a_lone_scaler_step_and_a_sparse_free_stage_are_batched():
    X, y = _adult(300)
    lone = Pipeline([("scale", DPStandardScaler(bounds=BOUNDS)), ("clf", GaussianNB(
        bounds=(-4, 4)))])
    (_, _, _, data), = _group(lone, [{}], X[NUMERIC], y)[0]
    assert [(s.start, s.stop, s.module) for s in data.steps[0]] == [(0, 3, standard_scaler)]
    sparse_free = _pipeline()
    sparse_free.named_steps["pre"].set_params(
        cat=OneHotEncoder(categories=[CATEGORIES["education"], CATEGORIES["sex"]]),
        sparse_threshold=0)  # the stacked output is then always dense
    assert len(_group(sparse_free, [{}], X, y)[0]) == 1


# --- The stage's output is ColumnTransformer's ----------------------------------------------


@pytest.mark.parametrize("remainder", ["drop", "passthrough"])
def test_stage_columns_are_column_transformers_in_its_order(remainder):
    # With an epsilon so large that the scaler's noise vanishes, each partition's transformed
    # rows are what ColumnTransformer.fit_transform gives on that partition's training rows:
    # the same columns, in the same order (a passthrough and a dropped branch, the DP branch
    # between public ones, the remainder last).
    X, y = _adult(500)
    X = X.assign(extra=np.arange(len(X)) % 5)
    pre = ColumnTransformer([
        ("sex", OneHotEncoder(categories=[CATEGORIES["sex"]], sparse_output=False), ["sex"]),
        ("num", DPStandardScaler(epsilon=1e12, bounds=BOUNDS), NUMERIC),
        ("gone", "drop", ["workclass"]),
        ("keep", "passthrough", ["gain"]),
        ("edu", OrdinalEncoder(categories=[CATEGORIES["education"]]), ["education"]),
    ], remainder=remainder)
    if remainder == "passthrough":
        X = X.drop(columns=["workclass"]).assign(workclass=0.0)  # numeric remainder
        pre.set_params(transformers=[t for t in pre.transformers if t[0] != "gone"])
    pipeline = Pipeline([("pre", pre), ("clf", GaussianNB(bounds=(-4, 4)))])
    ((_, _, _, data),), _ = _group(pipeline, [{}], X, y)
    splits = _splits(len(y), 3)
    task = engine._block_task(splits, np.arange(3), data.codes)
    (train, _, part), (validation, _, part_val) = task.train, task.validation
    block = Block(data.X[train], data.codes[train], part, data.X[validation],
                  data.codes[validation], part_val, 3)
    own, failed = batched_pipeline.apply_partition_steps(data.steps[0], block, task.partitions,
                                                         0, 0)
    Xt = own.X_train
    assert not failed.any()
    for p in range(3):
        rows = X.iloc[splits[p][0]]
        real = clone(pre).set_params(num__accountant=BudgetAccountant()).fit_transform(rows)
        np.testing.assert_allclose(Xt[part == p], real, rtol=1e-6, atol=1e-6)


# --- The scaler's emulation has diffprivlib's law -------------------------------------------


def _scaler_fits(X, epsilon, bounds, repetitions, seed, **options):
    """``(mean_, scale_)`` of ``repetitions`` emulated and diffprivlib fits on ``X``."""
    step = DPStandardScaler(epsilon=epsilon, bounds=bounds, **options)
    plan = standard_scaler.plan(step, X.shape[1])
    rngs = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(p,)))
            for p in range(repetitions)]
    ours = standard_scaler.fit_partitions(plan, np.tile(X, (repetitions, 1)),
                                          np.repeat(np.arange(repetitions), len(X)),
                                          repetitions, rngs)
    random_state = np.random.RandomState(seed)
    fits = [clone(step).set_params(random_state=random_state,
                                   accountant=BudgetAccountant()).fit(X)
            for _ in range(repetitions)]
    theirs = (np.array([f.mean_ for f in fits]),
              np.array([f.scale_ if f.scale_ is not None else np.ones(X.shape[1])
                        for f in fits]))
    return ours, theirs


@pytest.mark.parametrize("n, epsilon, options", [
    (40, 2.0, {}),                   # 4 comparisons (2 features x mean, scale)
    (6, 0.5, {"with_mean": False}),  # the variance near its domain's ends
], ids=["both", "few_rows"])
def test_scaler_mean_and_scale_have_diffprivlibs_law(n, epsilon, options):
    X = np.random.default_rng(n).normal([1.0, 4.0], [1.0, 3.0], (n, 2))  # some out of bounds
    ours, theirs = _scaler_fits(X, epsilon, ([-1.0, 0.0], [3.0, 8.0]), 400, n, **options)
    p_value, count = column_ks(zip(ours, theirs))
    assert p_value > ALPHA / count


@pytest.mark.slow_audit
@pytest.mark.parametrize("n, epsilon, options", [
    (2, 1.0, {}), (30, 0.2, {}), (200, 5.0, {}), (50, 1.0, {"with_std": False}),
])
def test_scaler_mean_and_scale_have_diffprivlibs_law_audit(n, epsilon, options):
    X = np.random.default_rng(n).normal([1.0, 4.0, 0.0], [1.0, 3.0, 0.1], (n, 3))
    ours, theirs = _scaler_fits(X, epsilon, ([-1.0, 0.0, -1.0], [3.0, 8.0, 1.0]), 1500, n,
                                **options)
    p_value, count = column_ks(zip(ours, theirs))
    assert p_value > ALPHA / count


def test_a_partition_with_one_training_row_has_an_exact_zero_variance():
    # diffprivlib's variance sensitivity is 0 for one row: no noise, scale_ 1 (zero variance).
    plan = standard_scaler.plan(DPStandardScaler(bounds=(0, 1)), 2)
    mean, scale = standard_scaler.fit_partitions(plan, np.array([[0.2, 0.9]]), np.array([0]),
                                                 1, [np.random.default_rng(0)])
    np.testing.assert_array_equal(scale, [[1.0, 1.0]])
    assert np.all((mean >= 0) & (mean <= 1))


# --- Privacy: a partition's utility is a function of its own records and streams ------------


def test_replacing_one_record_moves_only_its_partition():
    X, y = _adult(1200, seed=2)
    splits = _splits(len(y), 8)
    pipeline = _pipeline(epsilon=20.0, scaler_epsilon=20.0)
    candidates = [{}, {"pre__num__epsilon": 100.0}]
    before = _values(pipeline, candidates, X, y, splits)
    ((_, _, _, data),), _ = _group(pipeline, candidates, X, y)
    for p in range(8):
        # A training record of partition p, its numeric values moved to the other end of the
        # bounds and its label flipped: no other partition's utilities move. The scaler's
        # fitted mean of partition p moves, no other's.
        row, rest = splits[p][0][0], np.arange(8) != p
        X2, y2 = X.copy(), y.copy()
        X2.loc[row, NUMERIC] = [90.0 if X.loc[row, "age"] < 50 else 17.0, 99.0, 10.0]
        y2[row] = "<=50K" if y[row] == ">50K" else ">50K"
        after = _values(pipeline, candidates, X2, y2, splits)
        np.testing.assert_array_equal(after[:, rest], before[:, rest])
        ((_, _, _, data2),), _ = _group(pipeline, candidates, X2, y2)
        plan = data.steps[0][0].plan
        means = []
        for laid in (data, data2):
            task = engine._block_task(splits, np.arange(8), laid.codes)
            train, _, part = task.train
            rngs = [np.random.default_rng(q) for q in range(8)]
            means.append(standard_scaler.fit_partitions(plan, laid.X[train][:, :3], part, 8,
                                                        rngs)[0])
        np.testing.assert_array_equal(means[1][rest], means[0][rest])
        assert not np.array_equal(means[1][p], means[0][p])


def test_partitions_do_not_depend_on_how_they_are_cut_into_tasks(monkeypatch):
    X, y = _adult(900)
    splits = _splits(len(y), 9)
    candidates = [{}, {"pre__num__epsilon": 5.0}]
    whole = _values(_pipeline(), candidates, X, y, splits)
    monkeypatch.setattr(engine, "BLOCK_CELLS", 300)  # about one partition per block
    np.testing.assert_array_equal(_values(_pipeline(), candidates, X, y, splits), whole)
    np.testing.assert_array_equal(_values(_pipeline(), candidates, X, y, splits, n_jobs=2),
                                  whole)
    assert not np.array_equal(_values(_pipeline(), candidates, X, y, splits, entropy=1), whole)


# --- Partition scaling reaches every step ---------------------------------------------------


def test_every_step_gets_its_partition_rescaled_epsilon(paths):
    X, y = _adult(600)
    grid = {"clf__epsilon": [0.5], "pre__num__epsilon": [0.25, 2.0]}
    PrivateGridSearchCV(_pipeline(), grid, n_partitions=5, validation_fraction=0.2,
                        accountant=BudgetAccountant(), random_state=0, refit=False,
                        default=None).fit(X, y)
    ratio = partition_ratio(5, 0.2)
    (plans,), (steps,) = paths["plans"], paths["steps"]
    assert [plan.epsilon for plan in plans] == pytest.approx([0.5 * ratio] * 2)
    assert [pieces[0].plan.epsilon for pieces in steps] == pytest.approx(
        [0.25 * ratio, 2.0 * ratio])
    paths["steps"].clear()
    PrivateGridSearchCV(_pipeline(), grid, n_partitions=5, validation_fraction=0.2,
                        partition_scaling=None, accountant=BudgetAccountant(), random_state=0,
                        refit=False, default=None).fit(X, y)
    assert [pieces[0].plan.epsilon for pieces in paths["steps"][0]] == [0.25, 2.0]


# --- The batched pipeline has the per-fit path's law -----------------------------------------


def _compare_pipeline_utilities(n_train, epsilon, scaler_epsilon, repetitions, seed):
    X, y = _adult(n_train + 300, seed=seed)
    split = (np.arange(n_train), np.arange(n_train, n_train + 300))
    splits = [split] * repetitions  # the same partition, repeated: independent fits
    pipeline = _pipeline(epsilon=epsilon, scaler_epsilon=scaler_epsilon)
    ours = _values(pipeline, [{}], X, y, splits, entropy=seed)[0]
    np.random.seed(seed)  # diffprivlib's unseeded fits draw from numpy's global generator
    theirs = _per_fit(pipeline, [{}], X, y, splits)[0]
    return stats.ks_2samp(ours, theirs).pvalue, ours.mean(), theirs.mean()


def test_pipeline_partition_utilities_have_the_per_fit_law():
    # One KS comparison at ALPHA.
    p_value, ours, theirs = _compare_pipeline_utilities(80, 2.0, 1.0, 200, seed=5)
    assert p_value > ALPHA, (ours, theirs)


@pytest.mark.slow_audit
@pytest.mark.parametrize("n_train, epsilon, scaler_epsilon", [
    (40, 1.0, 0.5), (150, 5.0, 0.2), (400, 0.5, 5.0),
])
def test_pipeline_partition_utilities_have_the_per_fit_law_audit(n_train, epsilon,
                                                                 scaler_epsilon):
    p_value, ours, theirs = _compare_pipeline_utilities(n_train, epsilon, scaler_epsilon, 1000,
                                                        seed=n_train)
    assert p_value > ALPHA, (ours, theirs)


# --- GaussianNB with declared priors --------------------------------------------------------


def _nb_data(n, n_classes=3, seed=0, frequencies=None):
    rng = np.random.default_rng(seed)
    y = rng.choice(n_classes, n, p=frequencies)
    return np.clip(rng.normal(y[:, None] * 0.8, 1.0, (n, 2)) / 3, -1, 1), y


def test_priors_take_the_batched_path(paths):
    X, y = _nb_data(400, n_classes=2)
    PrivateGridSearchCV(GaussianNB(bounds=(-1, 1), priors=[0.2, 0.8]),
                        {"epsilon": [1.0, 2.0]}, n_partitions=4,
                        accountant=BudgetAccountant(), random_state=0, refit=False,
                        default=None).fit(X, y)
    assert paths["per_fit"] == 0 and paths["batched"] == 2 * 4
    assert paths["plans"][0][0].priors.tolist() == [0.2, 0.8]


def _compare_prior_utilities(priors, n_train, epsilon, repetitions, seed):
    X, y = _nb_data(n_train + 300, seed=seed, frequencies=[0.6, 0.1, 0.3])
    split = (np.arange(n_train), np.arange(n_train, n_train + 300))
    splits = [split] * repetitions  # the same partition, repeated: independent fits
    estimator = GaussianNB(bounds=(-1, 1), priors=priors)
    ours = _values(estimator, [{"epsilon": epsilon}], X, y, splits, entropy=seed)[0]
    np.random.seed(seed)  # diffprivlib's unseeded fits draw from numpy's global generator
    theirs = _per_fit(estimator, [{"epsilon": epsilon}], X, y, splits)[0]
    return stats.ks_2samp(ours, theirs).pvalue, ours.mean(), theirs.mean()


def test_partition_utilities_with_priors_have_diffprivlibs_law():
    # Priors far from the classes' frequencies, in the classes' sorted order: ignoring them or
    # reversing them moves the utilities far. One KS comparison at ALPHA.
    p_value, ours, theirs = _compare_prior_utilities([0.1, 0.6, 0.3], 100, 3.0, 300, seed=6)
    assert p_value > ALPHA, (ours, theirs)


@pytest.mark.slow_audit
@pytest.mark.parametrize("priors, n_train, epsilon", [
    ([0.1, 0.6, 0.3], 40, 0.5), ([0.0, 0.5, 0.5], 150, 5.0), ([0.34, 0.33, 0.33], 400, 30.0),
])
def test_partition_utilities_with_priors_have_diffprivlibs_law_audit(priors, n_train,
                                                                     epsilon):
    p_value, ours, theirs = _compare_prior_utilities(priors, n_train, epsilon, 1500, n_train)
    assert p_value > ALPHA, (ours, theirs)


def test_a_partition_whose_fit_rejects_the_priors_scores_error_score():
    # diffprivlib raises when len(priors) is not the number of classes in the partition's
    # training rows: error_score there, as on the per-fit path; the real error under "raise".
    X, y = _nb_data(600)
    splits = _splits(len(y), 3)
    train, validation = splits[1]
    splits[1] = (train[y[train] != 2], validation)  # partition 1 has seen two classes
    estimator = GaussianNB(bounds=(-1, 1), priors=[0.5, 0.3, 0.2])
    ((family, ids, plans, data),), utility = _group(estimator, [{}], X, y)
    got = batched_values(family, ids, plans, data, splits, utility, 0, 1, error_score=0.125)[0]
    expected = per_fit_values(estimator, [{}], X, y, splits, utility, 0.125)[0]
    assert got[1] == expected[1] == 0.125
    assert 0.125 not in got[[0, 2]]
    with pytest.raises(ValueError, match="Number of priors must match number of classes"):
        evaluate.partition_utilities(estimator, [{}], X, y, splits, {}, utility, "raise")
