"""Shared fixtures of the search tests: small public data with declared bounds, and selectors
that record what the search hands them."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skdptune.selection import BaseSelector, ProposeTestDoubling, SelectionResult

N_FEATURES = 4


@pytest.fixture(scope="session")
def binary_data():
    """300 records, two classes, 4 features in [0, 1]: tests declare bounds=(0, 1) and
    data_norm=2 as constants, never computed from the data inside a private fit. 5% of the
    labels are flipped so that no partition utility is exactly 0 or 1."""
    X, y = make_classification(
        n_samples=300, n_features=N_FEATURES, n_informative=3, n_redundant=0, flip_y=0.05,
        random_state=0,
    )
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))  # public preprocessing
    return X, y


@pytest.fixture
def recording_selector():
    """A selector class whose instances record the utilities passed to ``select``.

    The search clones its selector, so the records go to a list on the class, which is made
    fresh for every test. ``index``/``score`` None delegate to :class:`ProposeTestDoubling`;
    otherwise the fixed result is returned (a stub with no privacy of its own: tests only).
    """

    class RecordingSelector(BaseSelector):
        _parameter_constraints = {}
        calls = []

        def __init__(self, index=None, score=None, delegate=True):
            self.index = index
            self.score = score
            self.delegate = delegate

        def select(self, utilities, *, sensitivity, epsilon, delta, random_state=None):
            type(self).calls.append(
                {"utilities": np.array(utilities, dtype=float), "sensitivity": sensitivity}
            )
            if self.delegate:
                return ProposeTestDoubling().select(
                    utilities, sensitivity=sensitivity, epsilon=epsilon, delta=delta,
                    random_state=random_state,
                )
            return SelectionResult(
                index=self.index, score=self.score,
                trace=(), n_iterations=1, max_iter=1, epsilon_per_iteration=epsilon,
                epsilon=epsilon, delta=delta, composition="single",
            )

    return RecordingSelector


@pytest.fixture
def allow_in_gate(monkeypatch):
    """Admit test doubles of diffprivlib models to the refit gate for one test.

    The doubles "spend" their ``epsilon`` on the accountant they are given, as diffprivlib
    models do; the gate's allowlist (``skdptune.gate.ALLOWED``) is restored after the test.
    """
    from skdptune import _gate as gate

    def allow(*classes):
        for cls in classes:
            monkeypatch.setitem(gate.ALLOWED, cls, gate.Rule("dp", "a test double"))

    return allow


@pytest.fixture
def spread_work(monkeypatch):
    """Partition fits spread over joblib's workers whenever there are two tasks or more, after
    the first (the evaluate stage otherwise keeps work too small to pay for workers in this
    process: ``skdptune.evaluate._run``)."""
    from skdptune import _evaluate as evaluate

    monkeypatch.setattr(evaluate, "PARALLEL_MIN_SAVING", -np.inf)


def grid_charges(search):
    """The accountant entries a fitted PrivateGridSearchCV made: the selection, then the refit
    (charged separately, the selection before the refit starts) with the ``trivial_lead_``
    check, when one is bought (basic composition, in that order: the ledger's sum)."""
    report = search.privacy_report_
    entries = [(report["selection_epsilon"], report["selection_delta"])]
    if search.refit:
        entries.append((report["refit_epsilon"] + report["check_epsilon"],
                        report["refit_delta"]))
    return entries


@pytest.fixture
def partition_fits(monkeypatch):
    """Every partition fit of the searches in a test (n_jobs=1, so in this process).

    Records ``(params, partition, train rows, validation rows, utility)`` per candidate and
    partition: ``params`` as the partition fit got them (rescaled by ``partition_scaling``),
    ``partition`` numbering each search's partitions in the order they are fitted.

    These are the per-fit path's fits: batched families are switched off here (the tests
    that use this fixture read or recompute diffprivlib's own partition fits); the batched
    path has its own tests in ``test_batched.py``.
    """
    from skdptune import _evaluate as evaluate, _search as search
    from skdptune._batched import registry

    monkeypatch.setattr(registry, "FAMILIES", {})

    records, partitions = [], {}
    original, original_stage = evaluate._evaluate_batch, evaluate.partition_utilities

    def stage(*args, **kwargs):
        partitions.clear()  # number each search's partitions from 0
        return original_stage(*args, **kwargs)

    def spy(estimator, batch, X, part, *args):
        values, recorded = original(estimator, batch, X, part, *args)
        train, validation = part[:2]
        key = (tuple(train), tuple(validation))
        number = partitions.setdefault(key, len(partitions))
        records.extend((params, number, key[0], key[1], value)
                       for params, value in zip(batch, values))
        return values, recorded

    monkeypatch.setattr(evaluate, "_evaluate_batch", spy)
    monkeypatch.setattr(search, "partition_utilities", stage)
    return records


def count_paths(monkeypatch, family=None):
    """Count the (candidate, partition) fits that reach each path of the evaluate stage:
    ``{"per_fit": ..., "batched": ...}``, updated as fits run; with ``family``, every batched
    block must be of that family."""
    from skdptune import _evaluate as evaluate
    from skdptune._batched import engine

    seen = {"per_fit": 0, "batched": 0}
    per_fit, blocks = evaluate._evaluate_batch, engine._run_block

    def spy_per_fit(estimator, batch, *args):
        seen["per_fit"] += len(batch)
        return per_fit(estimator, batch, *args)

    def spy_batched(block_family, plans, ids, X, task, *args):
        assert family is None or block_family is family
        seen["batched"] += len(plans) * len(task.partitions)
        return blocks(block_family, plans, ids, X, task, *args)

    monkeypatch.setattr(evaluate, "_evaluate_batch", spy_per_fit)
    monkeypatch.setattr(engine, "_run_block", spy_batched)
    return seen


def batched_groups(estimator, candidates, X, y, utility):
    """The batched engine's groups of candidates (``skdptune._batched.engine._groups``) as
    ``(family, ids, plans, data)``; ``data.steps``: each candidate's partition steps, or None."""
    from types import SimpleNamespace

    from skdptune._batched import engine

    return [(group.family, group.ids, group.plans,
             SimpleNamespace(**vars(group.data), steps=group.steps))
            for group in engine._groups(estimator, candidates, X, y, utility)]


def batched_values(family, ids, plans, data, splits, utility, entropy=0, n_jobs=1,
                   error_score="raise"):
    """``(len(ids), n_partitions)`` partition utilities of one group on the batched path
    (``ids``: the candidates' grid indices, which key the streams), its blocks run by joblib
    with ``n_jobs`` (cut as the engine cuts them for that many workers)."""
    from joblib import Parallel, effective_n_jobs

    from skdptune._batched import engine

    group = engine._Group(family, list(ids), list(plans), data, getattr(data, "steps", None))
    work = engine.BatchedWork([group], splits, utility, error_score, entropy,
                              effective_n_jobs(n_jobs))
    values, redo = work.collect(Parallel(n_jobs=n_jobs)(work.tasks))
    assert not redo, "a partition's real fit would raise under error_score='raise'"
    return values


def per_fit_values(estimator, candidates, X, y, splits, utility, error_score="raise"):
    """``(n_candidates, n_partitions)`` partition utilities on the per-fit path, in this
    process."""
    from skdptune import _evaluate as evaluate

    work = evaluate._PerFitWork(estimator, candidates, X, y, splits, {}, utility, error_score,
                                False, {}, 1)
    return work.collect([function(*args, **kwargs) for function, args, kwargs in work.tasks])


def class_blobs(n, n_classes=2, n_features=3, shift=1.0, seed=0):
    """``n`` rows in ``[-1, 1]``: Gaussian classes whose means are ``shift`` apart (scaled by
    1/3 and clipped), labels ``0 .. n_classes - 1`` drawn uniformly."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    X = np.clip(rng.normal(y[:, None] * shift, 1.0, (n, n_features)) / 3, -1, 1)
    return X, y


def column_ks(pairs):
    """Two-sample KS tests of every column of every ``(got, expected)`` pair of ``(draws,
    columns)`` arrays: ``(smallest p-value, number of tests)``. A column constant in both is
    not tested, but must be the same constant."""
    from scipy import stats

    p_values = []
    for got, expected in pairs:
        for column in range(got.shape[1]):
            if np.ptp(expected[:, column]) == 0 and np.ptp(got[:, column]) == 0:
                assert got[0, column] == pytest.approx(expected[0, column])
                continue
            p_values.append(stats.ks_2samp(got[:, column], expected[:, column]).pvalue)
    return min(p_values), len(p_values)


def partitions_moved(values, X, splits, record, sides=(0, 1)):
    """Replace one record of each partition in turn by ``record`` (its first training row,
    then its first held-out row, as ``sides`` say) and check that only that partition's
    utilities change: ``values(X)`` gives ``(n_candidates, n_partitions)`` utilities.
    Returns how many replacements moved each candidate's utility on their partition."""
    before = values(X)
    moved = np.zeros(len(before), dtype=int)
    for p in range(len(splits)):
        rest = np.arange(len(splits)) != p
        for side in sides:
            X2 = X.copy()
            X2[splits[p][side][0]] = record
            after = values(X2)
            np.testing.assert_array_equal(after[:, rest], before[:, rest])
            moved += after[:, p] != before[:, p]
    return moved


def assert_cut_and_company_change_nothing(values, candidates, monkeypatch, block_cells):
    """``values(candidates, entropy=0, n_jobs=1, ids=None)`` gives the batched path's
    ``(n_candidates, n_partitions)`` utilities: the second candidate alone gets what it gets
    among the others, blocks of about ``block_cells`` cells and two workers change nothing,
    and another entropy changes them."""
    from skdptune._batched import engine

    whole = values(candidates)
    np.testing.assert_array_equal(values(candidates, ids=[1])[0], whole[1])
    monkeypatch.setattr(engine, "BLOCK_CELLS", block_cells)
    np.testing.assert_array_equal(values(candidates), whole)
    np.testing.assert_array_equal(values(candidates, n_jobs=2), whole)
    assert not np.array_equal(values(candidates, entropy=1), whole)


def same_selection_law_p_value(selected, monkeypatch, table, cls, n_searches, fits):
    """Chi-square p-value of searches selecting with one law on both paths: ``selected(seeds)``
    runs one search per seed and returns what each selected; the first ``n_searches`` run on
    the batched path (``fits`` partition fits each, counted), the next with ``cls`` taken out
    of the registry ``table`` (``FAMILIES`` or ``PARTITION_STEPS``), on the per-fit path.
    Asserts that the choices vary, so that the test can fail."""
    from scipy import stats

    paths = count_paths(monkeypatch)
    batched = selected(range(n_searches))
    assert paths == {"per_fit": 0, "batched": n_searches * fits}
    monkeypatch.delitem(table, cls)
    per_fit = selected(range(n_searches, 2 * n_searches))
    assert paths["per_fit"] == n_searches * fits
    values = sorted(set(batched) | set(per_fit))
    assert len(values) > 1, "every search chose the same: the comparison cannot fail"
    table = np.array([[batched.count(v), per_fit.count(v)] for v in values])
    return stats.chi2_contingency(table)[1]
