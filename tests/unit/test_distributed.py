"""Dask collections as input (skdptune/_distributed): the search on a small LocalCluster, the
labels' law per chunk, the distributed refit against the in-memory one, and the refusals.

False-failure rates are stated at each statistical test; every other assertion is exact or
within float tolerance.
"""

from types import SimpleNamespace

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import GaussianNB as DPGaussianNB
from scipy import stats
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer

from skdptune import PrivateGridSearchCV, PrivateRandomizedSearchCV
from skdptune.ensemble import RandomForestClassifier
from skdptune.tree import DecisionTreeClassifier
from skdptune.cluster import KMeans
from skdptune.linear_model import LogisticRegression, Ridge
from skdptune.naive_bayes import GaussianNB
from skdptune._distributed import _evaluate as evaluate_module
from skdptune._distributed._evaluate import _deal, chunk_labels
from skdptune._distributed._evaluate import distributed_utilities
from skdptune._evaluate import partition_utilities as in_memory_utilities
from skdptune._partition import split_indices
from skdptune._utility import make_utility
from skdptune._distributed._refit import _class_sums, _moments, _reduce, refit
from skdptune._distributed._stand_in import stand_in

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("dask.distributed")

N, D, CHUNK = 6000, 4, 1000


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as dask_client:
            yield dask_client


def lazy_data(n=N, chunk=CHUNK, seed=0):
    """X in [-1, 1] and binary labels, generated chunk by chunk: never in the client."""
    X = da.clip(da.random.default_rng(seed).normal(0, 0.5, size=(n, D), chunks=(chunk, D)),
                -1, 1)
    return X, (X[:, 0] + X[:, 1] > 0).astype(np.int64)


def in_memory_data(n=N, seed=0):
    X = np.clip(np.random.default_rng(seed).normal(0, 0.5, (n, D)), -1, 1)
    return X, (X[:, 0] + X[:, 1] > 0).astype(np.int64), X @ [1.0, 2.0, 0.0, 0.5]


@pytest.fixture
def gathered(monkeypatch):
    """The sizes in bytes of everything the client receives from the cluster."""
    sizes = []
    original = distributed.Client.gather

    def spy(self, futures, *args, **kwargs):
        result = original(self, futures, *args, **kwargs)
        sizes.append(dask.sizeof.sizeof(result))
        return result

    monkeypatch.setattr(distributed.Client, "gather", spy)
    return sizes


@pytest.mark.parametrize("estimator, grid", [
    (GaussianNB(bounds=(-1, 1), classes=[0, 1]), {"var_smoothing": [1e-9, 1e-3, 1e-2]}),
    (Ridge(bounds_X=(-1, 1), bounds_y=(-4, 4)), {"noise_alpha": [0.5, 2.0, 8.0]}),
    (LogisticRegression(data_norm=2.0, classes=[0, 1]), {"C": [0.1, 1.0, 10.0]}),
    (RandomForestClassifier(bounds=(-1, 1), classes=[0, 1], n_estimators=5),
     {"max_depth": [2, 3, 4]}),
], ids=["GaussianNB", "Ridge", "LogisticRegression", "RandomForestClassifier"])
def test_a_search_on_a_cluster_charges_the_total_and_never_gathers(
        client, gathered, capsys, estimator, grid):
    X, labels = lazy_data()
    y = X @ np.array([1.0, 2.0, 0.0, 0.5]) if isinstance(estimator, Ridge) else labels
    accountant = BudgetAccountant()
    # Seeded (the refit's noise too), so that the released model's quality below is one
    # fixed draw, not a flaky one: seeds give no guarantee, on public test data.
    search = PrivateGridSearchCV(estimator.set_params(random_state=0), grid, epsilon=1.0,
                                 n_partitions=20, default=None, accountant=accountant,
                                 random_state=0, verbose=1).fit(X, y)
    assert tuple(search.privacy_spent_) == pytest.approx((1.0, 0.0))
    assert accountant.total()[0] == pytest.approx(1.0)
    assert search.n_features_in_ == D and np.isfinite(search.trivial_lead_)
    # The client received small results only: utilities, statistics, flags.
    assert gathered and max(gathered) < N * D * 8 / 20
    assert "Partition fits: 60/60 done (100%)" in capsys.readouterr().out
    # The released model predicts (on rows brought here by the test, not by the search).
    X_here = X[:500].compute()
    prediction = search.predict(X_here)
    if isinstance(estimator, Ridge):
        assert np.corrcoef(prediction, y[:500].compute())[0, 1] > 0.8
    else:
        assert np.mean(prediction == labels[:500].compute()) > 0.65  # a constant: 0.5


def test_k_means_without_labels_on_a_cluster(client, gathered):
    X, _ = lazy_data()
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(KMeans(bounds=(-1, 1), random_state=0),
                                 {"n_clusters": [2, 3, 4]}, epsilon=2.0, n_partitions=10,
                                 default=None, accountant=accountant, random_state=0).fit(X)
    assert accountant.total()[0] == pytest.approx(2.0)
    assert search.best_estimator_.cluster_centers_.shape[1] == D
    assert gathered and max(gathered) < N * D * 8 / 20


def test_the_data_frames_columns_name_the_features(client):
    dd = pytest.importorskip("dask.dataframe")
    X, y = in_memory_data()[:2]
    import pandas as pd
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), npartitions=4)
    target = dd.from_pandas(pd.Series(y), npartitions=4)
    search = PrivateGridSearchCV(GaussianNB(bounds=(-1, 1), classes=[0, 1]),
                                 {"var_smoothing": [1e-9, 0.5]}, epsilon=1.0, n_partitions=10,
                                 accountant=BudgetAccountant(), random_state=0).fit(frame, target)
    assert list(search.feature_names_in_) == list("abcd")
    assert list(search.best_estimator_.feature_names_in_) == list("abcd")


def test_labels_per_chunk_are_uniform_and_independent():
    # Chi-square tests at 1e-3 each (four tests: false-failure rate at most 0.4%).
    k, fraction, entropy = 7, 0.3, 12345
    sizes = [4000, 1, 2999, 5000]
    drawn = [chunk_labels(size, chunk, entropy, k, fraction) for chunk, size in enumerate(sizes)]
    partition = np.concatenate([d[0] for d in drawn])
    validation = np.concatenate([d[1] for d in drawn])
    assert stats.chisquare(np.bincount(partition, minlength=k)).pvalue > 1e-3
    assert stats.binomtest(int(validation.sum()), len(validation), fraction).pvalue > 1e-3
    # Neighbouring records (across chunk boundaries too) draw independent partitions.
    pairs = np.zeros((k, k))
    np.add.at(pairs, (partition[:-1], partition[1:]), 1)
    assert stats.chi2_contingency(pairs).pvalue > 1e-3
    # The first records of two chunks are independent over many searches' entropies.
    firsts = np.array([[chunk_labels(1, chunk, seed, k, fraction)[0][0] for chunk in (0, 1)]
                       for seed in range(1500)])
    table = np.zeros((k, k))
    np.add.at(table, (firsts[:, 0], firsts[:, 1]), 1)
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_a_records_labels_do_not_depend_on_any_value_and_rows_move_once():
    X, y, _ = in_memory_data(n=500)
    edges = np.array([0, 3, 6, 10])
    dealt = _deal(X, y, 4, 99, 10, 0.25, edges)
    changed = X.copy()
    changed[17] = [5.0, -5.0, 5.0, -5.0]  # a replaced record
    again = _deal(changed, y, 4, 99, 10, 0.25, edges)
    partition, validation = chunk_labels(len(X), 4, 99, 10, 0.25)
    rows = np.concatenate([piece[0] for piece in dealt])
    assert len(rows) == len(X)
    np.testing.assert_array_equal(np.sort(rows, axis=0), np.sort(X, axis=0))
    for block, (piece, other) in enumerate(zip(dealt, again)):
        in_block = (partition >= edges[block]) & (partition < edges[block + 1])
        np.testing.assert_array_equal(piece[2], partition[in_block] - edges[block])
        np.testing.assert_array_equal(piece[3], validation[in_block])
        np.testing.assert_array_equal(piece[2], other[2])
        np.testing.assert_array_equal(piece[3], other[3])


@pytest.mark.parametrize("max_pieces", [50_000, 9], ids=["a-block-per-chunk", "one-block"])
def test_each_partition_is_fitted_on_its_own_rows_wherever_they_lived(max_pieces,
                                                                       monkeypatch):
    # The blocks' utilities are the in-memory evaluate stage's on the same labels' splits: a
    # partition's rows meet whole in one task, whatever chunks they came from. Partition fits
    # with a huge epsilon make the emulation noise negligible (a prediction flipped by it
    # moves a mean by at most 1 / (k * ~20), the tolerance).
    X, y, _ = in_memory_data(n=3000)
    k, fraction, entropy, chunk = 12, 0.25, 2024, 700
    candidates = [{"var_smoothing": value, "epsilon": 1e7} for value in (1e-9, 0.3, 3.0)]
    estimator = GaussianNB(bounds=(-1, 1), classes=[0, 1])
    _, utility = make_utility(estimator, None, None)
    labels = [chunk_labels(min(chunk, len(X) - start), c, entropy, k, fraction)
              for c, start in enumerate(range(0, len(X), chunk))]
    splits = split_indices(np.concatenate([part for part, _ in labels]),
                           np.concatenate([flag for _, flag in labels]), k)
    in_memory = in_memory_utilities(estimator, candidates, X, y, splits, {}, utility, 0.0,
                                    n_jobs=1, random_state=0)
    plan = SimpleNamespace(n_partitions=k, partition_candidates=candidates,
                           estimator=estimator, utility=utility)
    search = SimpleNamespace(validation_fraction=fraction, error_score=0.0, verbose=0)
    monkeypatch.setattr(evaluate_module, "MAX_PIECES", max_pieces)  # 5 chunks: 5 or 1 block
    with dask.config.set(scheduler="sync"):
        on_workers = distributed_utilities(*dask_input(X, y, chunk=chunk), plan, search,
                                           entropy)
    np.testing.assert_allclose(on_workers, in_memory, atol=1 / (k * 20))
    assert np.ptp(in_memory) > 0.05  # the candidates differ: the comparison can tell


def dask_input(X, y, chunk=700):
    return (stand_in(da.from_array(X, chunks=(chunk, X.shape[1])), np.float64),
            stand_in(da.from_array(y, chunks=chunk), y.dtype))


def test_the_statistics_are_the_in_memory_ones():
    X, y, target = in_memory_data()
    X = X * 1.3  # some records outside the bounds: clipped on both paths
    Xs, ys = dask_input(X, y)
    lower, upper = -np.ones(D), np.ones(D)
    with dask.config.set(scheduler="sync"):
        counts, sums, squares = _reduce(_class_sums, Xs.source, ys.source, [0, 1], lower, upper)
        moments = _reduce(_moments, Xs.source, stand_in(da.from_array(target, chunks=700),
                                                        float).source,
                          (lower, upper), (np.array([-4.0]), np.array([4.0])))
    clipped = np.clip(X, -1, 1)
    for i, label in enumerate([0, 1]):
        rows = clipped[y == label]
        assert counts[i] == len(rows)
        np.testing.assert_allclose(sums[i], rows.sum(axis=0), rtol=1e-12)
        np.testing.assert_allclose(squares[i], (rows ** 2).sum(axis=0), rtol=1e-12)
    t = np.clip(target, -4, 4)[:, None]
    for got, want in zip(moments, (len(X), clipped.sum(0), t.sum(0), clipped.T @ clipped,
                                   clipped.T @ t, (t * t).sum(0))):
        np.testing.assert_allclose(got, want, rtol=1e-10)


@pytest.mark.parametrize("model", [
    GaussianNB(bounds=(-1, 1), classes=[0, 1, 2], epsilon=0.5),
    Ridge(bounds_X=(-1, 1), bounds_y=(-4, 4), epsilon=0.5),
    Ridge(bounds_X=(-1, 1), bounds_y=(-4, 4), epsilon=0.5, fit_intercept=False),
    LogisticRegression(data_norm=1.5, classes=[0, 1, 2], epsilon=2.0),
    LogisticRegression(data_norm=1.5, classes=[0, 1], epsilon=0.2, C=30.0, fit_intercept=False),
    RandomForestClassifier(bounds=(-1, 1), classes=[0, 1, 2], n_estimators=7, max_depth=3),
    DecisionTreeClassifier(bounds=(-1, 1), classes=[2, 0, 1], max_depth=4),
    KMeans(n_clusters=3, bounds=(-1, 1), epsilon=3.0),
], ids=["GaussianNB", "Ridge", "Ridge-no-intercept", "LogisticRegression-3",
        "LogisticRegression-2", "RandomForestClassifier", "DecisionTreeClassifier", "KMeans"])
def test_a_seeded_refit_draws_the_in_memory_fits_noise(model):
    # The same mechanisms in the same order: with the same seed, the same releases up to the
    # rounding of the statistics' additions (for LogisticRegression: the same noise vector,
    # and the same solver's iterates on the same objective, its sums added over chunks).
    X, y, target = in_memory_data()
    if isinstance(model, Ridge):
        y = target
    elif isinstance(model, KMeans):
        y = None  # fitted without labels
    elif len(model.classes) > 2:
        y = y + (X[:, 2] > 0.3)  # three classes
    X_input, y_input = dask_input(X, np.zeros(len(X)) if y is None else y)
    y_input = None if y is None else y_input
    with dask.config.set(scheduler="sync"):
        distributed_fit = refit(model.set_params(random_state=7, accountant=BudgetAccountant()),
                                X_input, y_input)
    in_memory = model.__class__(**model.get_params()).set_params(
        accountant=BudgetAccountant()).fit(X, y)
    if isinstance(model, (RandomForestClassifier, DecisionTreeClassifier)):
        # The same public structure, the same leaf counts (exact), the same labels' draws.
        np.testing.assert_array_equal(distributed_fit.predict_proba(X),
                                      in_memory.predict_proba(X))
    for name in {GaussianNB: ("theta_", "var_", "class_count_"), Ridge: ("coef_", "intercept_"),
                 LogisticRegression: ("coef_", "intercept_"),
                 KMeans: ("cluster_centers_",)}.get(type(model), ()):
        assert np.all(np.isfinite(getattr(distributed_fit, name)))
        np.testing.assert_allclose(getattr(distributed_fit, name), getattr(in_memory, name),
                                   rtol=1e-7, atol=1e-9)
    assert distributed_fit.accountant.total()[0] == pytest.approx(model.epsilon)


def test_the_refit_has_the_in_memory_law():
    # Unseeded (secure) noise on both paths; two-sample Kolmogorov-Smirnov tests at 1e-3 each
    # on two released numbers per model (false-failure rate at most 0.4%).
    X, y, target = in_memory_data(n=1500)
    draws = 80
    samples = {"distributed": [], "in memory": []}
    nb = GaussianNB(bounds=(-1, 1), classes=[0, 1], epsilon=0.3)
    ridge = Ridge(bounds_X=(-1, 1), bounds_y=(-4, 4), epsilon=2.0)
    nb_input, ridge_input = dask_input(X, y, chunk=500), dask_input(X, target, chunk=500)
    with dask.config.set(scheduler="sync"):
        for _ in range(draws):
            a = refit(nb.set_params(accountant=BudgetAccountant()), *nb_input)
            b = refit(ridge.set_params(accountant=BudgetAccountant()), *ridge_input)
            samples["distributed"].append((a.theta_[0, 0], a.var_[1, 2], b.coef_[1],
                                           b.intercept_))
            a = nb.set_params(accountant=BudgetAccountant()).fit(X, y)
            b = ridge.set_params(accountant=BudgetAccountant()).fit(X, target)
            samples["in memory"].append((a.theta_[0, 0], a.var_[1, 2], b.coef_[1],
                                         b.intercept_))
    left, right = np.array(samples["distributed"]), np.array(samples["in memory"])
    for column in range(left.shape[1]):
        assert stats.ks_2samp(left[:, column], right[:, column]).pvalue > 1e-3


def unreadable(n=N):
    """Dask input whose chunks raise if read: a refusal from the parameters reads none."""
    def boom(block):
        raise AssertionError("a chunk was read")
    X = da.zeros((n, D), chunks=(CHUNK, D)).map_blocks(boom, dtype=float)
    return X, da.zeros(n, chunks=CHUNK, dtype=np.int64).map_blocks(boom, dtype=np.int64)


NB = GaussianNB(bounds=(-1, 1), classes=[0, 1])


@pytest.mark.parametrize("make, fit_params, data, match", [
    (lambda acc: PrivateRandomizedSearchCV(NB, {"var_smoothing": [1e-9, 0.1]}, n_iter=2,
                                           accountant=acc), {}, unreadable,
     "PrivateRandomizedSearchCV does not take dask input"),
    (lambda acc: PrivateGridSearchCV(make_pipeline(Normalizer(), NB), {}, accountant=acc), {},
     unreadable, "has no distributed refit"),
    (lambda acc: PrivateGridSearchCV(DPGaussianNB(bounds=(-1, 1)), {}, accountant=acc), {},
     unreadable, "has no distributed refit"),
    (lambda acc: PrivateGridSearchCV(RandomForestClassifier(bounds=(-1, 1), classes=[0, 1]),
                                     {"shuffle": [False, True]}, accountant=acc), {},
     unreadable, r"candidate \{'shuffle': True\}: shuffle=True deals the rows"),
    (lambda acc: PrivateGridSearchCV(RandomForestClassifier(bounds=(-1, 1), classes=[0, 1],
                                                            shuffle=True),
                                     {"max_depth": [2, 3]}, default="estimator",
                                     accountant=acc), {}, unreadable,
     r"(?s)estimator=RandomForestClassifier\(.*\): shuffle=True deals the rows"),
    (lambda acc: PrivateGridSearchCV(NB, {"var_smoothing": [1e-9, 0.1]}, accountant=acc),
     {"sample_weight": np.ones(N)}, unreadable, r"fit parameters \['sample_weight'\]"),
    (lambda acc: PrivateGridSearchCV(NB, {"var_smoothing": [1e-9, 0.1]}, scoring="roc_auc",
                                     accountant=acc), {}, unreadable, "scoring='roc_auc'"),
    (lambda acc: PrivateGridSearchCV(NB, {"var_smoothing": [1e-9, 0.1]},
                                     refit=lambda results: 0, accountant=acc), {}, unreadable,
     "refit=<function"),
    (lambda acc: PrivateGridSearchCV(NB, {"var_smoothing": [1e-9, 0.1]}, accountant=acc), {},
     lambda: (da.zeros((N, D), chunks=(CHUNK, 2)), da.zeros(N, chunks=CHUNK)),
     "chunked along its columns"),
    (lambda acc: PrivateGridSearchCV(NB, {"var_smoothing": [1e-9, 0.1]}, accountant=acc), {},
     lambda: (unreadable()[0], np.zeros(N)), "both must be dask collections"),
    # Read on the workers, before the accountant (messages quote no value):
    (lambda acc: PrivateGridSearchCV(NB, {"var_smoothing": [1e-9, 0.1]}, accountant=acc), {},
     lambda: (lazy_data()[0], lazy_data()[1] * 3), "not among the declared classes"),
    (lambda acc: PrivateGridSearchCV(NB, {"var_smoothing": [1e-9, 0.1]}, accountant=acc), {},
     lambda: (da.where(da.arange(N)[:, None] == 5, np.nan, lazy_data()[0]), lazy_data()[1]),
     "X contains NaN or infinity"),
    (lambda acc: PrivateGridSearchCV(NB, {"var_smoothing": [1e-9, 0.1]}, accountant=acc), {},
     lambda: (lazy_data()[0], da.zeros(N, chunks=CHUNK, dtype=np.int64)), "a single class"),
], ids=["randomized", "pipeline", "no-distributed-refit", "shuffle", "shuffle-default",
        "sample_weight", "scoring",
        "callable-refit", "column-chunks", "y-in-memory", "labels", "nan", "one-class"])
def test_refusals_come_before_any_charge(make, fit_params, data, match):
    accountant = BudgetAccountant()
    X, y = data()
    with pytest.raises((ValueError, TypeError), match=match):
        make(accountant).fit(X, y, **fit_params)
    assert accountant.spent_budget == []
