"""The evaluate stage: batching, the fast accuracy path, what a task carries, when the work is
spread over workers, and its progress lines."""

import re

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import GaussianNB
from joblib import delayed
from skdptune.linear_model import LogisticRegression
from skdptune.naive_bayes import GaussianNB as DeclaredGaussianNB
from sklearn.tree import DecisionTreeClassifier

from skdptune import PrivateGridSearchCV
from skdptune import _evaluate as evaluate
from skdptune._evaluate import _batches, _score
from skdptune._utility import is_plain_accuracy, make_utility


@pytest.mark.parametrize("n_candidates, n_partitions, n_jobs", [
    (1, 2, 1), (24, 10, 1), (24, 10, 2), (24, 100, 2), (5000, 2, 2), (7, 3, 4),
])
def test_batches_cover_every_candidate_once_with_enough_tasks(n_candidates, n_partitions,
                                                              n_jobs):
    batches = _batches(n_candidates, n_partitions, n_jobs)
    covered = np.concatenate(batches)
    np.testing.assert_array_equal(np.sort(covered), np.arange(n_candidates))
    n_tasks = n_partitions * len(batches)
    assert n_tasks >= min(4 * n_jobs, n_candidates * n_partitions)
    assert len(batches) <= n_candidates


@pytest.mark.parametrize(
    "estimator, labels",
    [
        (LogisticRegression(data_norm=2.0, classes=[0, 1], epsilon=5.0, random_state=0), None),
        (GaussianNB(bounds=(0, 1), random_state=0), None),
        (DecisionTreeClassifier(max_depth=2, random_state=0), ["no", "yes"]),
    ],
)
@pytest.mark.parametrize("utility_range", [None, (-1.0, 3.0)])
def test_fast_accuracy_equals_the_scorer(binary_data, estimator, labels, utility_range):
    X, y = binary_data
    if labels is not None:
        y = np.array(labels)[y]
    estimator.set_params(**({"accountant": BudgetAccountant()}
                            if "accountant" in estimator.get_params() else {}))
    estimator.fit(X[:200], y[:200])
    _, utility = make_utility(estimator, "accuracy", utility_range)
    assert is_plain_accuracy(utility)
    fast = _score(utility, estimator, X[200:], y[200:])
    assert fast == utility(estimator, X[200:], y[200:])


def test_other_scorers_take_the_scorer_path(binary_data):
    _, utility = make_utility(GaussianNB(), "balanced_accuracy", None)
    assert not is_plain_accuracy(utility)


def test_a_task_carries_its_partitions_labels_not_all_of_y(binary_data, monkeypatch):
    X, y = binary_data
    weights = np.linspace(1.0, 2.0, len(y))
    parts, original = [], evaluate._evaluate_batch

    def spy(estimator, batch, X_task, part, *args):
        parts.append(part)
        return original(estimator, batch, X_task, part, *args)

    monkeypatch.setattr(evaluate, "_evaluate_batch", spy)
    PrivateGridSearchCV(GaussianNB(bounds=(0, 1)), {"var_smoothing": [1e-9, 1e-3]},
                        n_partitions=4, accountant=BudgetAccountant(), random_state=0,
                        refit=False, default=None).fit(X, y, sample_weight=weights)
    assert len(parts) == 4  # one task per partition: both candidates in one batch
    for train, validation, y_train, y_validation, train_params, validation_params in parts:
        np.testing.assert_array_equal(y_train, y[train])
        np.testing.assert_array_equal(y_validation, y[validation])
        np.testing.assert_array_equal(train_params["sample_weight"], weights[train])
        np.testing.assert_array_equal(validation_params["sample_weight"], weights[validation])


def test_joblibs_memory_mapping_threshold_is_left_alone(binary_data, monkeypatch, spread_work):
    # Another max_nbytes than the one joblib's previous call used makes loky replace its
    # reusable workers: about a second lost whenever a search follows another joblib call.
    calls = []

    class Recording(evaluate.Parallel):
        def __init__(self, *args, **kwargs):
            calls.append(kwargs)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(evaluate, "Parallel", Recording)
    X, y = binary_data
    PrivateGridSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 2]},
                        n_partitions=3, accountant=BudgetAccountant(), random_state=0,
                        refit=False, n_jobs=2, default=None).fit(X, y)
    assert calls and all("max_nbytes" not in kwargs for kwargs in calls)


def test_batching_does_not_change_the_result(binary_data, spread_work):
    X, y = binary_data
    grid = {"var_smoothing": [1e-9, 1e-6, 1e-3, 1e-2, 1e-1]}
    results = [
        PrivateGridSearchCV(DeclaredGaussianNB(bounds=(0, 1), classes=[0, 1], random_state=0),
                            grid, n_partitions=3, accountant=BudgetAccountant(), random_state=0,
                            n_jobs=n_jobs, selector="report_noisy_max", default=None).fit(X, y)
        for n_jobs in (1, 4)  # 3 tasks of 5 candidates, or 15 tasks of 1 or 2
    ]
    assert results[0].best_index_ == results[1].best_index_
    assert results[0].best_score_ == results[1].best_score_


def test_default_scoring_of_a_plain_classifier_takes_the_fast_path(binary_data):
    # scoring=None is estimator.score (scikit-learn's passthrough scorer): scikit-learn's
    # accuracy for these, decided per fitted candidate.
    from sklearn.dummy import DummyClassifier

    class CustomScore(DummyClassifier):
        def score(self, X, y, sample_weight=None):
            return 0.5

    X, y = binary_data
    for estimator, fast in [(GaussianNB(bounds=(0, 1), random_state=0), True),
                            (CustomScore(), False)]:
        estimator.fit(X[:200], y[:200])
        _, utility = make_utility(estimator, None, (0, 1))
        assert is_plain_accuracy(utility, estimator) is fast
        assert _score(utility, estimator, X[200:], y[200:]) == utility(estimator, X[200:],
                                                                      y[200:])


# --- Parallelism that pays, and progress (issue 33, items 3 and 7) ---------------------------


class _Clock:
    """A clock that moves ``step`` seconds at every reading: no test reads a real one."""

    def __init__(self, step):
        self.now, self.step = 0.0, step

    def __call__(self):
        self.now += self.step
        return self.now


@pytest.fixture
def spread(monkeypatch):
    """Records the tasks handed to joblib (run here, in order)."""
    handed = []

    class Recording:
        def __init__(self, **kwargs):
            assert kwargs["return_as"] == "generator"

        def __call__(self, tasks):
            tasks = list(tasks)
            handed.append(len(tasks))
            return (function(*args, **kwargs) for function, args, kwargs in tasks)

    monkeypatch.setattr(evaluate, "Parallel", Recording)
    return handed


def _run(n_tasks, step, n_jobs):
    tasks = [delayed(int)(i) for i in range(n_tasks)]
    progress = evaluate._Progress(n_tasks, 0, _Clock(step))
    return evaluate._run(tasks, [1] * n_tasks, n_jobs=n_jobs, pre_dispatch="2*n_jobs",
                         verbose=0, progress=progress)


def test_work_worth_spreading_is_spread_after_its_first_task(spread):
    # 10 s a fit, 9 tasks left: spreading them over 2 workers saves about 45 s.
    assert _run(10, 10.0, n_jobs=2) == list(range(10))
    assert spread == [9]


@pytest.mark.parametrize("n_tasks, step, n_jobs", [
    (10, 1e-3, 2),  # about 5 ms of work left: starting workers costs more
    (10, 10.0, 1),  # one worker
    (2, 100.0, 2),  # a single task left: nothing to spread
])
def test_work_not_worth_spreading_stays_in_this_process(spread, n_tasks, step, n_jobs):
    assert _run(n_tasks, step, n_jobs) == list(range(n_tasks))
    assert spread == []


def test_the_threshold_is_what_spreading_must_save(spread, monkeypatch):
    # 1 s a fit, 9 tasks left over 2 workers: a saving of 4.5 s, against the threshold.
    monkeypatch.setattr(evaluate, "PARALLEL_MIN_SAVING", 4.4)
    _run(10, 1.0, n_jobs=2)
    monkeypatch.setattr(evaluate, "PARALLEL_MIN_SAVING", 4.6)
    _run(10, 1.0, n_jobs=2)
    assert spread == [9]


def test_progress_counts_fits_and_estimates_the_time_left(capsys):
    progress = evaluate._Progress(20, 1, _Clock(1.0))
    for n_fits in [2] * 10:
        progress.add(n_fits)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("Partition fits: 2/20 done (10%) in 1.0 s; about 9 s left (estimated "
                        "from the fits so far)")
    assert lines[4] == ("Partition fits: 10/20 done (50%) in 5.0 s; about 5 s left (estimated "
                        "from the fits so far)")
    assert lines[-1] == "Partition fits: 20/20 done (100%) in 10.0 s"
    assert len(lines) == 10
    silent = evaluate._Progress(20, 0, _Clock(1.0))
    silent.add(20)
    assert capsys.readouterr().out == ""


def test_a_verbose_search_prints_its_progress(binary_data, capsys):
    X, y = binary_data
    PrivateGridSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 2, 3]},
                        n_partitions=5, accountant=BudgetAccountant(), random_state=0,
                        refit=False, verbose=1, default=None).fit(X, y)
    lines = [line for line in capsys.readouterr().out.splitlines()
             if line.startswith("Partition fits:")]
    form = re.compile(r"Partition fits: (\d+)/15 done \((\d+)%\) in \d+\.\d s"
                      r"(; about \d+ s left \(estimated from the fits so far\))?")
    done = [int(form.fullmatch(line).group(1)) for line in lines]
    assert done == sorted(set(done)) and done[-1] == 15 and len(done) >= 2
    assert "s left" not in lines[-1]
