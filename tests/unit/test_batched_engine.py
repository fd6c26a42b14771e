"""The batched engine's door (skdptune._batched.engine): the family contract kept by every
registered family, a family added by a registry row alone, the version pin, and how a group is
cut into tasks.

Nothing here is statistical: each family's law is tested in its own file.
"""

import types
import warnings

import diffprivlib
import numpy as np
import pytest
import scipy
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import (
    PCA,
    DecisionTreeClassifier,
    GaussianNB,
    KMeans,
    LinearRegression,
    StandardScaler,
)
from sklearn.dummy import DummyClassifier
from sklearn.pipeline import Pipeline

from conftest import class_blobs, count_paths, per_fit_values
from skdptune import PrivateGridSearchCV
from skdptune._batched import engine, gaussian_nb, kmeans, registry
from skdptune._batched.contract import (
    ACCURACY,
    CODES,
    NO_TARGET,
    VALUES,
    BindsLabels,
    Block,
    Family,
    PartitionStep,
    Score,
    check_scores,
)
from skdptune.cluster import KMeans as PrivateKMeans
from skdptune.decomposition import PCA as PrivatePCA
from skdptune.linear_model import LogisticRegression, Ridge
from skdptune._partition import partition_labels, split_indices
from skdptune._utility import make_utility

#: One configured estimator per family module (by name), for the contract test: a new family
#: adds its row here.
EXAMPLES = {
    "gaussian_nb": lambda: GaussianNB(bounds=(-1, 1), epsilon=2.0),
    "logistic_regression": lambda: LogisticRegression(data_norm=2.0, epsilon=2.0),
    "forest": lambda: DecisionTreeClassifier(bounds=(-1, 1), classes=[0, 1, 2], max_depth=3),
    "linear_regression": lambda: Ridge(bounds_X=(-1, 1), bounds_y=(-1, 3), epsilon=5.0),
    "kmeans": lambda: KMeans(bounds=(-1, 1), n_clusters=2, epsilon=2.0),
    "dp_lloyd": lambda: PrivateKMeans(bounds=(-1, 1), n_clusters=3, epsilon=2.0),
}

#: Likewise for the partition steps.
STEP_EXAMPLES = {
    "standard_scaler": lambda: StandardScaler(bounds=(-1, 1), epsilon=2.0),
    "pca": lambda: PCA(n_components=2, data_norm=2.0, epsilon=2.0, centered=True),
    "bingham_pca": lambda: PrivatePCA(n_components=2, data_norm=2.0, epsilon=2.0,
                                      bounds=(-1, 1)),
}


def _name(module):
    return module.__name__.rsplit(".", 1)[-1]


def _modules(registered):
    """The registered modules, sorted by name."""
    return sorted(set(registered.values()), key=_name)


def _block(n_parts=4, n_rows=240, n_classes=3, target=CODES, seed=0):
    """A block of ``n_parts`` partitions; partition 0 without held-out rows (NaN)."""
    X, y = class_blobs(n_rows, n_classes=n_classes, n_features=3, shift=1.5, seed=seed)
    rng = np.random.default_rng([seed, 1])  # not class_blobs' stream
    part = rng.integers(0, n_parts, n_rows)
    validation = (rng.random(n_rows) < 0.3) & (part != 0)
    y = {CODES: y, VALUES: X @ [1.0, 0.5, -0.5] + 1.0, NO_TARGET: np.zeros(n_rows)}[target]
    train = ~validation
    return Block(X[train], y[train], part[train], X[validation], y[validation],
                 part[validation], n_parts, n_classes if target == CODES else 0)


def _rngs(n_plans, n_parts, seed=0):
    return [[np.random.default_rng([seed, j, p]) for p in range(n_parts)]
            for j in range(n_plans)]


def test_every_registered_module_keeps_the_contract():
    families, steps = _modules(registry.FAMILIES), _modules(registry.PARTITION_STEPS)
    assert {_name(family) for family in families} <= set(EXAMPLES), (
        "add the new family's example to EXAMPLES")
    assert {_name(step) for step in steps} <= set(STEP_EXAMPLES), (
        "add the new partition step's example to STEP_EXAMPLES")
    for family in families:
        assert isinstance(family, Family), family.__name__
        assert isinstance(family.SCORE, Score) and family.TARGET in (CODES, VALUES, NO_TARGET)
        assert family.TARGET != CODES or family.MAX_CLASSES >= 2
    for step in steps:
        assert isinstance(step, PartitionStep), step.__name__


@pytest.mark.parametrize("family", _modules(registry.FAMILIES), ids=_name)
def test_every_family_returns_its_declared_shape_and_range(family):
    block = _block(target=family.TARGET)
    plan = family.plan(EXAMPLES[_name(family)](), block.X_train.shape[1])
    assert plan is not None
    if isinstance(family, BindsLabels):
        plan = family.bind_labels(plan, np.arange(block.n_classes))
    scores = family.partition_scores([plan, plan], block, _rngs(2, block.n_parts))
    assert check_scores(family, scores, 2, block.n_parts) is None
    assert np.isnan(scores[:, 0]).all()  # no held-out rows
    assert np.isfinite(scores[:, 1:]).all()
    # Two plans, two streams each partition: a plan's scores are its own.
    alone = family.partition_scores([plan], block, _rngs(2, block.n_parts)[1:])
    np.testing.assert_array_equal(alone[0], scores[1])


@pytest.mark.parametrize("step", _modules(registry.PARTITION_STEPS), ids=_name)
def test_every_partition_step_keeps_the_rows_and_its_width(step):
    block = _block()
    plan = step.plan(STEP_EXAMPLES[_name(step)](), block.X_train.shape[1])
    rngs = [np.random.default_rng(p) for p in range(block.n_parts)]
    X_train, X_val = step.transform_partitions(plan, block, rngs)
    assert X_train.shape == (len(block.X_train), plan.n_features_out)
    assert X_val.shape == (len(block.X_val), plan.n_features_out)


def test_check_scores_names_what_breaks_the_contract():
    assert "shape" in check_scores(gaussian_nb, np.zeros((1, 3)), 2, 3)
    assert "outside" in check_scores(gaussian_nb, np.full((1, 3), 1.5), 1, 3)
    assert check_scores(gaussian_nb, np.array([[np.nan, -np.inf, 0.5]]), 1, 3) is None
    assert "outside" in check_scores(kmeans, np.array([[0.5]]), 1, 1)  # inertia is <= 0


# --- A family added by a registry row alone -------------------------------------------------


class MajorityClassifier(DummyClassifier):
    """The most frequent class of the training rows (a test double with a batched family)."""

    def __init__(self, strategy="most_frequent"):
        super().__init__(strategy=strategy)


def _majority_family():
    """A family written here, in the test file: the majority class of each partition's
    training rows, scored by accuracy (the first of tied classes, as scikit-learn's argmax)."""
    family = types.ModuleType("majority_family")
    family.SCORE, family.TARGET, family.MAX_CLASSES = ACCURACY, CODES, 16

    def plan(estimator, n_features):
        return "majority" if estimator.strategy == "most_frequent" else None

    def partition_scores(plans, block, rngs):
        counts = np.zeros((block.n_parts, max(block.n_classes, 1)))
        np.add.at(counts, (block.part_train, block.y_train), 1)
        predicted = np.argmax(counts, axis=1)[block.part_val]
        return np.stack([block.accuracy(predicted == block.y_val) for _ in plans])

    family.plan, family.partition_scores = plan, partition_scores
    return family


def test_a_family_registered_from_a_test_file_is_batched(binary_data, monkeypatch):
    family = _majority_family()
    assert isinstance(family, Family)
    monkeypatch.setitem(registry.FAMILIES, MajorityClassifier, family)
    paths = count_paths(monkeypatch, family=family)
    X, y = binary_data
    grid = {"strategy": ["most_frequent", "prior"]}  # "prior": its plan refuses it
    search = PrivateGridSearchCV(MajorityClassifier(), grid, n_partitions=4, refit=False,
                                 accountant=BudgetAccountant(), random_state=0, default=None)
    assert search.forecast().paths == ("batched", "per-fit")
    search.fit(X, y)
    assert paths == {"per_fit": 4, "batched": 4}
    # Its utilities are the per-fit path's (a deterministic fit: equal, not only in law).
    splits = split_indices(*partition_labels(len(y), 4, 0.2, 0), 4)
    _, utility = make_utility(MajorityClassifier(), None, None)
    work = engine.batched_work(MajorityClassifier(), [{}], X, y, splits, utility, "raise",
                               random_state=0)
    ours, redo = work.collect([function(*args, **kwargs)
                               for function, args, kwargs in work.tasks])
    assert work.ids == [0] and not redo
    np.testing.assert_array_equal(ours, per_fit_values(MajorityClassifier(), [{}], X, y,
                                                       splits, utility))


def test_a_family_that_breaks_its_contract_is_an_error(binary_data, monkeypatch):
    family = _majority_family()
    family.partition_scores = lambda plans, block, rngs: np.full((len(plans), 1), 2.0)
    monkeypatch.setitem(registry.FAMILIES, MajorityClassifier, family)
    X, y = binary_data
    with pytest.raises(RuntimeError, match="majority_family broke its contract.*shape"):
        # Two candidates: a grid of one is not fitted on partitions (nothing to select).
        PrivateGridSearchCV(MajorityClassifier(), {"strategy": ["most_frequent", "prior"]},
                            n_partitions=4, refit=False, accountant=BudgetAccountant(),
                            random_state=0, default=None).fit(X, y)


# --- The version pin -------------------------------------------------------------------------


@pytest.fixture
def fresh_notice(monkeypatch):
    """The once-per-process notice, as if not yet given."""
    monkeypatch.setattr(engine, "_noticed", set())


def test_the_pin_in_pyproject_is_the_engines():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    from pathlib import Path

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    table = tomllib.loads(pyproject.read_text())["tool"]["skdptune"]["batched-engine"]
    assert {name: tuple(versions) for name, versions in table.items()} == engine.TESTED_VERSIONS


def test_the_tested_versions_use_the_engine_without_a_notice(fresh_notice, monkeypatch):
    monkeypatch.setattr(diffprivlib, "__version__", "0.6.6")
    monkeypatch.setattr(scipy, "__version__", "1.17.1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert engine.versions_tested()


@pytest.mark.parametrize("module, version", [(diffprivlib, "0.6.7"), (diffprivlib, "0.6"),
                                             (scipy, "1.18.0"), (scipy, "1.1")])
def test_other_versions_take_the_per_fit_path_with_one_notice(binary_data, fresh_notice,
                                                              monkeypatch, module, version):
    monkeypatch.setattr(module, "__version__", version)
    paths = count_paths(monkeypatch)
    X, y = binary_data
    search = PrivateGridSearchCV(GaussianNB(bounds=(0, 1)), {"var_smoothing": [1e-9, 1e-3]},
                                 n_partitions=4, refit=False, accountant=BudgetAccountant(),
                                 random_state=0, default=None)
    with pytest.warns(UserWarning, match=rf"batched engine emulates.*{version} is installed"):
        assert search.forecast().paths == ("per-fit", "per-fit")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y)
    assert not [w for w in caught if "batched engine" in str(w.message)]  # once per process
    assert paths == {"per_fit": 8, "batched": 0}


# --- Tasks -----------------------------------------------------------------------------------


def _group(n_rows, n_features, n_candidates):
    data = types.SimpleNamespace(X=np.zeros((n_rows, n_features)))
    return engine._Group(gaussian_nb, list(range(n_candidates)), [None] * n_candidates, data)


def test_small_work_is_one_task_whatever_the_workers():
    assert engine._n_tasks(_group(26_048, 104, 4), n_workers=2) == 1
    assert engine._n_tasks(_group(26_048, 104, 4), n_workers=1) == 1


def test_large_work_is_cut_for_the_workers_and_no_finer_than_it_pays():
    assert engine._n_tasks(_group(1_000_000, 20, 20), n_workers=1) == 1
    assert engine._n_tasks(_group(1_000_000, 20, 20), n_workers=2) == 2 * engine.TASKS_PER_WORKER
    work = 3 * engine.MIN_TASK_WORK
    assert engine._n_tasks(_group(work, 1, 1), n_workers=8) == 3


def test_a_pipeline_grid_shares_one_laid_out_X_per_preprocessing(binary_data):
    # Candidates that differ in the final step only share one group (one transform of X).
    from sklearn.preprocessing import Binarizer

    X, y = binary_data
    pipeline = Pipeline([("binarize", Binarizer(threshold=0.5)),
                         ("nb", GaussianNB(bounds=(0, 1)))])
    _, utility = make_utility(pipeline, None, None)
    candidates = [{"nb__var_smoothing": 1e-9}, {"nb__var_smoothing": 1e-3},
                  {"binarize__threshold": 0.2}]
    groups = engine._groups(pipeline, candidates, X, y, utility)
    assert sorted(group.ids for group in groups) == [[0, 1], [2]]
