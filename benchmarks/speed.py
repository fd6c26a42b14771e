"""Speed of PrivateGridSearchCV against scikit-learn's GridSearchCV(cv=5), and its scale-out.

Prints, as Markdown:

1. ``ratio``: wall time of PrivateGridSearchCV over GridSearchCV(cv=5) on the same data, grid and
   ``n_jobs``, for LogisticRegression, GaussianNB and RandomForestClassifier (the models the
   refit gate releases: skdptune's LogisticRegression and forest, diffprivlib's GaussianNB) at
   k = 10 and k = 100 (interleaved repetitions; min / median / max of the per-repetition
   ratios);
2. ``scale``: 1,000,000 x 20 rows, 50 candidates, k = 100, LogisticRegression, n_jobs=2: wall
   time and the peak resident memory of the whole process tree (this process and its joblib
   workers, sampled every 50 ms), against the size of X;
3. ``speed-up``: n_jobs=2 over n_jobs=1 on the 100,000-row LogisticRegression case;
4. ``overhead``: the selection and its accounting (an uncached eps0 calibration and the
   selector) as a share of a default fit's wall time;
5. with ``--scaling-cost`` only: the same searches with ``partition_scaling="auto"`` and
   ``None``, what partition fidelity costs in time;
6. with ``--defaults`` only (issue 17): every search parameter at its default
   (``n_partitions="auto"``, ``epsilon=1``, one core) on UCI Adult's 26,048 training rows as a
   DataFrame, through the mixed-type pipeline (diffprivlib ``StandardScaler`` with declared
   bounds on the 5 numeric columns, ``OneHotEncoder`` with declared categories on the 8
   categorical ones) and LogisticRegression (2 x 2 and 4 x 4 grids), GaussianNB (2 x 2),
   RandomForestClassifier (2 x 2), skdptune's Ridge (2 x 2, on the 0/1 label, scored by its
   default bounded R²); and 1,000,000 generated rows, LogisticRegression, 20 candidates. Each
   row: the private search with the batched engine (whatever families are registered when it
   runs), the same search on the per-fit path (the registry emptied; not run, and reported as
   skipped, when predicted to take more than ``--per-fit-cap`` seconds, 600 by default, from
   three timed partition fits per candidate; ``--rows`` picks rows), and ``GridSearchCV(cv=5)``
   on the same pipeline and grid; interleaved repetitions (``--repetitions``, 3), medians,
   BLAS pinned to one thread (threadpoolctl), ratio columns. ``--defaults --smoke`` runs it
   at tiny sizes (200 rows, the first two candidates of each grid, one repetition) to check the
   script, in a few seconds (``tests/integration/test_benchmarks.py``);
7. with ``--ratio-only REPETITIONS`` only: the ratio table, with ``--partitions`` (10 and 100
   by default) and ``--models`` (all three by default);
8. with ``--memory`` only: the peak resident memory of a private search (defaults, one core)
   and of ``GridSearchCV(cv=5)`` on the same pipeline and grid (``--memory-row``, a row of the
   default-settings table on Adult, 0 by default: LogisticRegression 2 x 2) over 1,000,000
   rows drawn with replacement from Adult's training part, each in a fresh process (its
   ``ru_maxrss``), against a process that only loads the data and the size of the encoded
   input (rows x 104 x 8 bytes). ``--memory --smoke`` checks the script on 2,000 rows.

The issue-31 targets and the command that measures each (ratios to GridSearchCV(cv=5) on the
same pipeline; run each alone on a quiet machine):

- every family batched at its defaults on Adult's 104-feature pipeline <= 0.5, and
  LogisticRegression 4 x 4 <= 0.4: ``--defaults --rows 0 1 2 3 5 --per-fit-cap 0`` (rows 0, 1,
  3, 5: LogisticRegression, GaussianNB, the forest and Ridge 2 x 2; row 2: LogisticRegression
  4 x 4);
- LogisticRegression at k = 1,000 <= 0.6: ``--ratio-only 3 --partitions 1000 --models
  LogisticRegression GaussianNB`` (the ratio table's data and 24-candidate grids, ``n_jobs=2``);
- peak memory at 1,000,000 rows <= 1.0 x scikit-learn's: ``--memory``.

Run on a quiet machine with BLAS pinned to one thread (small diffprivlib fits run 4 to 12
times slower with threaded BLAS on shared cores)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python benchmarks/speed.py

``--quick`` runs one repetition of a smaller table (for checking the script). Data:
``make_classification`` (20 features, 10 informative), clipped to [-4, 4] and divided by 4:
every bound is a declared constant.
"""

import argparse
import contextlib
import multiprocessing
import os
import platform
import resource
import statistics
import threading
import time
import warnings

import numpy as np
import pandas as pd
import psutil
from diffprivlib.accountant import BudgetAccountant
from skdptune.ensemble import RandomForestClassifier
from skdptune.linear_model import LogisticRegression, Ridge
from skdptune.naive_bayes import GaussianNB
from diffprivlib.models import StandardScaler as DPStandardScaler
from lib import datasets
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, ParameterGrid, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder
from threadpoolctl import threadpool_limits

from skdptune import PrivateGridSearchCV
from skdptune._accounting import calibrate_epsilon_per_step
from skdptune.selection import ProposeTestDoubling

N_FEATURES = 20
BOUNDS = (-1.0, 1.0)
DATA_NORM = float(np.sqrt(N_FEATURES))

#: 24 candidates per model.
GRIDS = {
    "LogisticRegression": {"C": [0.01, 0.1, 1.0, 10.0], "fit_intercept": [True, False],
                           "max_iter": [20, 50, 100]},
    "GaussianNB": {"var_smoothing": [1e-9, 1e-6, 1e-3, 1e-2, 1e-1, 1.0],
                   "priors": [None, [0.5, 0.5], [0.6, 0.4], [0.4, 0.6]]},
    "RandomForestClassifier": {"n_estimators": [2, 5, 10, 20], "max_depth": [2, 3, 4, 5, 6, 7]},
}


def make_estimator(name):
    """The DP model with every bound and the classes declared (no PrivacyLeakWarning)."""
    if name == "LogisticRegression":
        return LogisticRegression(data_norm=DATA_NORM, classes=datasets.CLASSES, epsilon=1.0)
    if name == "GaussianNB":
        return GaussianNB(bounds=BOUNDS, classes=datasets.CLASSES, epsilon=1.0)
    return RandomForestClassifier(bounds=BOUNDS, classes=datasets.CLASSES, epsilon=1.0)


def make_data(n_samples, seed=0):
    X, y = make_classification(n_samples=n_samples, n_features=N_FEATURES, n_informative=10,
                               random_state=seed)
    return np.clip(X, -4, 4) / 4, y


def time_private(name, X, y, n_partitions, n_jobs, grid=None, **options):
    search = PrivateGridSearchCV(
        make_estimator(name), grid or GRIDS[name], selection_epsilon=1.0,
        n_partitions=n_partitions,
        selector="permute_and_flip", n_jobs=n_jobs, accountant=BudgetAccountant(),
        random_state=0, **options,
    )
    start = time.perf_counter()
    search.fit(X, y)
    return time.perf_counter() - start


def time_sklearn(name, X, y, n_jobs):
    # An unlimited accountant per fit: GridSearchCV's clones would otherwise share the default.
    search = GridSearchCV(make_estimator(name).set_params(accountant=BudgetAccountant()),
                          GRIDS[name], cv=5, n_jobs=n_jobs, refit=True)
    start = time.perf_counter()
    with np.errstate(all="ignore"):
        search.fit(X, y)
    return time.perf_counter() - start


class PeakMemory:
    """Peak memory of this process and all its children, sampled every 50 ms.

    ``peak`` sums the resident set sizes (RSS), which counts a page shared by several
    processes (the memory-mapped X every worker reads) once per process; ``peak_pss`` sums
    the proportional set sizes (Linux), which split each shared page between its processes:
    the physical memory the tree uses.
    """

    def __init__(self):
        self.peak = 0
        self.peak_pss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _tree_sum(measure):
        """``measure(process)`` summed over this process and all its children now."""
        me = psutil.Process()
        total = 0
        for process in [me] + me.children(recursive=True):
            try:
                total += measure(process)
            except (psutil.Error, AttributeError):  # a process gone, or PSS not on this OS
                pass
        return total

    @classmethod
    def tree_rss(cls):
        """Resident memory of this process and all its children now."""
        return cls._tree_sum(lambda process: process.memory_info().rss)

    @classmethod
    def tree_pss(cls):
        """Proportional set size of this process and all its children now (Linux)."""
        return cls._tree_sum(lambda process: process.memory_full_info().pss)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.tree_rss())
            self.peak_pss = max(self.peak_pss, self.tree_pss())
            time.sleep(0.05)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def interleaved(repetitions, first, second):
    """``([first() ...], [second() ...])``, alternating, so that drifts in load hit both."""
    times = [(first(), second()) for _ in range(repetitions)]
    return [a for a, _ in times], [b for _, b in times]


def ratio_table(n_samples, repetitions, n_jobs, partitions=(10, 100), models=tuple(GRIDS)):
    X, y = make_data(n_samples)
    print(f"\n## Ratio private / GridSearchCV(cv=5): {n_samples:,} x {N_FEATURES}, 24 "
          f"candidates, n_jobs={n_jobs}, {repetitions} interleaved repetitions\n")
    print("| estimator | k | private s (median) | cv=5 s (median) | ratio min / median / max |")
    print("|---|---|---|---|---|")
    for name in models:
        for k in partitions:
            private, sklearn = interleaved(
                repetitions, lambda: time_private(name, X, y, k, n_jobs),
                lambda: time_sklearn(name, X, y, n_jobs))
            ratios = [p / s for p, s in zip(private, sklearn)]
            print(f"| {name} | {k} | {statistics.median(private):.2f} | "
                  f"{statistics.median(sklearn):.2f} | {min(ratios):.2f} / "
                  f"{statistics.median(ratios):.2f} / {max(ratios):.2f} |", flush=True)


def scaling_cost(n_samples, repetitions, n_jobs, models=("LogisticRegression", "GaussianNB")):
    """The same searches with partition_scaling="auto" (the default) and None, interleaved:
    what partition fidelity costs in time (rescaled C and epsilon change the partition fits)."""
    X, y = make_data(n_samples)
    print(f"\n## Cost of partition fidelity: {n_samples:,} x {N_FEATURES}, 24 candidates, "
          f"n_jobs={n_jobs}, {repetitions} interleaved repetitions\n")
    print("| estimator | k | scaling auto s (median) | scaling None s (median) | ratio |")
    print("|---|---|---|---|---|")
    for name in models:
        for k in (10, 100):
            auto, off = interleaved(
                repetitions, lambda: time_private(name, X, y, k, n_jobs),
                lambda: time_private(name, X, y, k, n_jobs, partition_scaling=None))
            print(f"| {name} | {k} | {statistics.median(auto):.2f} | "
                  f"{statistics.median(off):.2f} | "
                  f"{statistics.median(auto) / statistics.median(off):.2f} |", flush=True)


def scale_run(n_samples, n_candidates=50):
    X, y = make_data(n_samples, seed=1)
    grid = {"C": list(np.logspace(-3, 2, n_candidates // 2)), "fit_intercept": [True, False]}
    # Start the two joblib workers (loky keeps them for the next call) on a small search, so
    # that "idle" counts the three interpreters with their imports, and the data apart.
    time_private("LogisticRegression", X[:2000], y[:2000], 10, 2, grid=grid)
    idle, idle_pss = PeakMemory.tree_rss(), PeakMemory.tree_pss()
    with PeakMemory() as memory:
        seconds = time_private("LogisticRegression", X, y, 100, 2, grid=grid)
    print(f"\n## Scale: {n_samples:,} x {N_FEATURES}, {n_candidates} candidates, k=100, "
          "LogisticRegression, n_jobs=2\n")
    print(f"wall time {seconds:.1f} s; peak memory of the process tree "
          f"{memory.peak / 2**30:.2f} GiB = {memory.peak / X.nbytes:.2f} x the size of X "
          f"({X.nbytes / 2**30:.2f} GiB); the idle tree (3 interpreters, X and y loaded) "
          f"{idle / 2**30:.2f} GiB, so the search itself adds at most "
          f"{(memory.peak - idle) / 2**30:.2f} GiB = {(memory.peak - idle) / X.nbytes:.2f} x "
          "the size of X", flush=True)
    print(f"proportional set size (shared pages counted once): peak "
          f"{memory.peak_pss / 2**30:.2f} GiB = {memory.peak_pss / X.nbytes:.2f} x the size "
          f"of X; idle {idle_pss / 2**30:.2f} GiB; the search adds at most "
          f"{(memory.peak_pss - idle_pss) / 2**30:.2f} GiB = "
          f"{(memory.peak_pss - idle_pss) / X.nbytes:.2f} x", flush=True)


def speed_up(n_samples, repetitions):
    X, y = make_data(n_samples)
    one = [time_private("LogisticRegression", X, y, 100, 1) for _ in range(repetitions)]
    two = [time_private("LogisticRegression", X, y, 100, 2) for _ in range(repetitions)]
    print(f"\n## Speed-up n_jobs=2 / n_jobs=1: {n_samples:,} rows, LogisticRegression, k=100\n")
    print(f"n_jobs=1 median {statistics.median(one):.2f} s, n_jobs=2 median "
          f"{statistics.median(two):.2f} s: speed-up "
          f"{statistics.median(one) / statistics.median(two):.2f}", flush=True)


def overhead(n_samples):
    X, y = make_data(n_samples)
    total = time_private("LogisticRegression", X, y, 10, None)
    calibrate_epsilon_per_step.cache_clear()
    start = time.perf_counter()
    ProposeTestDoubling().select(np.linspace(0.5, 0.9, 24), sensitivity=0.1, epsilon=0.9,
                                 delta=1e-6)
    selection = time.perf_counter() - start
    print("\n## Selection and accounting: doubling over 24 candidates, uncached eps0\n")
    print(f"{selection * 1000:.1f} ms of a {total:.2f} s default fit "
          f"({n_samples:,} rows, LogisticRegression): {100 * selection / total:.2f} %",
          flush=True)


def batched_table(n_samples, n_jobs, partitions=(10, 100, 1000)):
    """GaussianNB over 6 ``var_smoothing`` values: the batched family against the per-fit
    path (the registry emptied) and ``GridSearchCV(cv=5)``, one run each (issue 17)."""
    X, y = make_data(n_samples)
    grid = {"var_smoothing": GRIDS["GaussianNB"]["var_smoothing"]}
    print(f"\n## Batched GaussianNB: {n_samples:,} x {N_FEATURES}, {len(grid['var_smoothing'])} "
          f"candidates, n_jobs={n_jobs}\n")
    print("| k | batched s | per-fit s | cv=5 s | ratio batched | ratio per-fit |")
    print("|---|---|---|---|---|---|")
    time_private("GaussianNB", X, y, 10, n_jobs, grid=grid)  # start the workers
    for k in partitions:
        fast = time_private("GaussianNB", X, y, k, n_jobs, grid=grid)
        with per_fit_path():
            slow = time_private("GaussianNB", X, y, k, n_jobs, grid=grid)
        search = GridSearchCV(make_estimator("GaussianNB").set_params(
            accountant=BudgetAccountant()), grid, cv=5, n_jobs=n_jobs)
        start = time.perf_counter()
        search.fit(X, y)
        cv5 = time.perf_counter() - start
        print(f"| {k} | {fast:.2f} | {slow:.2f} | {cv5:.2f} | {fast / cv5:.2f} | "
              f"{slow / cv5:.2f} |", flush=True)


# --- Default settings (issue 17): mixed-type Adult pipelines and a 1,000,000-row panel -------

#: Adult's numeric columns with their declared ranges, and its categorical columns with their
#: declared categories (lib/datasets.py, from the UCI documentation: public constants).
ADULT_NUMERIC = list(datasets.ADULT_NUMERIC_BOUNDS)
ADULT_CATEGORICAL = list(datasets.ADULT_CATEGORIES)
#: The diffprivlib StandardScaler's declared bounds, one per numeric column.
ADULT_SCALER_BOUNDS = tuple(np.array([datasets.ADULT_NUMERIC_BOUNDS[c][i] for c in ADULT_NUMERIC],
                                     dtype=float) for i in (0, 1))
#: Width the classifier sees: 5 scaled numeric columns, then 99 one-hot indicators.
ADULT_ENCODED = len(ADULT_NUMERIC) + sum(len(c) for c in datasets.ADULT_CATEGORIES.values())
#: Declared bounds of the encoded features for GaussianNB and the forest: three standard
#: deviations for the scaled numeric columns (values beyond are clipped by diffprivlib), [0, 1]
#: for the indicators; and twice as wide, the other candidate of the GaussianNB grid.
_N_INDICATORS = ADULT_ENCODED - len(ADULT_NUMERIC)
ADULT_MODEL_BOUNDS = (np.r_[np.full(len(ADULT_NUMERIC), -3.0), np.zeros(_N_INDICATORS)],
                      np.r_[np.full(len(ADULT_NUMERIC), 3.0), np.ones(_N_INDICATORS)])
ADULT_WIDE_BOUNDS = (2 * ADULT_MODEL_BOUNDS[0], 2 * ADULT_MODEL_BOUNDS[1])
#: Declared row norm for LogisticRegression: three standard deviations per numeric column
#: and one indicator per categorical column, sqrt(5 * 3**2 + 8); longer rows are clipped.
ADULT_ROW_NORM = float(np.sqrt(len(ADULT_NUMERIC) * 3 ** 2 + len(ADULT_CATEGORICAL)))

#: The rows of the default-settings table: (name, data, final estimator, grid). The grids are
#: fixed here; every search parameter is at its default (n_partitions="auto", epsilon=1).
DEFAULT_ROWS = [
    ("Adult pipeline + LogisticRegression, 2 x 2", "adult",
     lambda: LogisticRegression(data_norm=ADULT_ROW_NORM, classes=datasets.CLASSES),
     {"clf__C": [0.1, 1.0], "clf__data_norm": [ADULT_ROW_NORM / 2, ADULT_ROW_NORM]}),
    ("Adult pipeline + GaussianNB, 2 x 2", "adult",
     lambda: GaussianNB(bounds=ADULT_MODEL_BOUNDS, classes=datasets.CLASSES),
     {"clf__var_smoothing": [1e-9, 1e-3], "clf__bounds": [ADULT_MODEL_BOUNDS, ADULT_WIDE_BOUNDS]}),
    ("Adult pipeline + LogisticRegression, 4 x 4", "adult",
     lambda: LogisticRegression(data_norm=ADULT_ROW_NORM, classes=datasets.CLASSES),
     {"clf__C": [0.01, 0.1, 1.0, 10.0],
      "clf__data_norm": [1.0, ADULT_ROW_NORM / 2, ADULT_ROW_NORM, 2 * ADULT_ROW_NORM]}),
    ("Adult pipeline + RandomForestClassifier, 2 x 2", "adult",
     lambda: RandomForestClassifier(bounds=ADULT_MODEL_BOUNDS, classes=datasets.CLASSES),
     {"clf__n_estimators": [5, 10], "clf__max_depth": [3, 5]}),
    ("1,000,000 x 20 generated, LogisticRegression, 20 candidates", "big",
     lambda: LogisticRegression(data_norm=DATA_NORM, classes=datasets.CLASSES),
     {"C": list(np.logspace(-3, 2, 10)), "data_norm": [1.0, DATA_NORM]}),
    # Issue 31: 103 one-hot columns, once past the batched family's 64-feature limit.
    ("Adult pipeline + Ridge, 2 x 2", "adult",
     lambda: Ridge(bounds_X=ADULT_MODEL_BOUNDS, bounds_y=(0.0, 1.0)),
     {"clf__alpha": [1.0, 100.0], "clf__noise_alpha": [1.0, 2.0]}),
]

#: Rows of the --smoke run (the script's own check): Adult's training rows and the panel's.
SMOKE_ROWS = {"adult": 200, "big": 200}
#: Largest predicted time of a per-fit search that is run; above it the cell is skipped.
PER_FIT_CAP = 600.0


def adult_frame(n_rows=None, seed=0):
    """Adult's training part as a DataFrame (numeric and categorical columns as in the file)
    and its labels: the stratified 80 % of an 80 / 20 split (26,048 rows), or ``n_rows`` of
    it for the smoke run.

    Without the file (``lib/datasets.ADULT_PATH``), a generated stand-in with Adult's columns,
    declared ranges and categories, so that ``--smoke`` runs anywhere.
    """
    if datasets.adult_available():
        frame = pd.read_csv(datasets.ADULT_PATH, skipinitialspace=True)
        y = (frame["Salary"].astype(str).str.strip() == datasets.ADULT_POSITIVE).to_numpy(int)
        X = frame[ADULT_NUMERIC + ADULT_CATEGORICAL]
        X, _, y, _ = train_test_split(X, y, test_size=0.2, random_state=seed, stratify=y)
    else:
        rng = np.random.default_rng(seed)
        n = n_rows or 26_048
        X = pd.DataFrame(
            {**{c: rng.integers(low, high + 1, n) for c, (low, high)
                in datasets.ADULT_NUMERIC_BOUNDS.items()},
             **{c: rng.choice(cats, n) for c, cats in datasets.ADULT_CATEGORIES.items()}})
        y = (rng.random(n) < 0.24).astype(int)
    if n_rows is not None:
        X, y = X.iloc[:n_rows], y[:n_rows]
    return X.reset_index(drop=True), y


def adult_pipeline(final):
    """The issue's mixed-type pipeline: diffprivlib's StandardScaler (declared bounds) on the
    numeric columns, OneHotEncoder (declared categories; the file's ``?`` encodes as zeros) on
    the categorical ones, then ``final``."""
    columns = ColumnTransformer([
        ("num", DPStandardScaler(bounds=ADULT_SCALER_BOUNDS), ADULT_NUMERIC),
        ("cat", OneHotEncoder(categories=[datasets.ADULT_CATEGORIES[c] for c in ADULT_CATEGORICAL],
                              handle_unknown="ignore", sparse_output=False), ADULT_CATEGORICAL),
    ])
    return Pipeline([("pre", columns), ("clf", final)])


def _default_search(estimator, grid):
    # Every parameter at its default (n_partitions="auto", epsilon=1, random_state=None: the
    # secure noise a user gets) but default=None: what is timed is the selection's partition
    # fits, every candidate on every partition as GridSearchCV fits them (with the estimator
    # as its default, the tuning policy may decline to select on a table this size, and then
    # there is nothing to time); a fresh accountant only so that runs do not add up.
    return PrivateGridSearchCV(estimator, grid, accountant=BudgetAccountant(), default=None)


@contextlib.contextmanager
def per_fit_path():
    """Every candidate on the per-fit path: the registry of batched families emptied,
    restored on exit."""
    from skdptune._batched import registry

    families = dict(registry.FAMILIES)
    registry.FAMILIES.clear()
    try:
        yield
    finally:
        registry.FAMILIES.update(families)


def predicted_per_fit_seconds(estimator, grid, X, y, samples=3):
    """A prediction of the per-fit search's time, before running it: each candidate fitted
    as a partition fit is (the refit's share of epsilon=1, partition-scaled parameters) on
    ``samples`` random sets of ``n * 0.8 / k`` rows, the mean time times ``k`` (one core:
    ``n_jobs=None``). A prediction: solver iterations vary between partitions."""
    from skdptune._dp_fit import set_accountants, with_params
    from skdptune._gate import split_budget
    from skdptune._partition_scaling import partition_ratio, rescaled_params

    search = _default_search(estimator, grid)
    forecast = search.forecast(n_samples=len(y))
    k = forecast.n_partitions
    ratio = partition_ratio(k, search.validation_fraction)
    rng = np.random.default_rng(0)
    seconds = 0.0
    for params in ParameterGrid(grid):
        candidate = with_params(estimator, params)
        candidate.set_params(**split_budget(candidate, 0.5))  # selection_share=0.5 of 1
        candidate.set_params(**rescaled_params(candidate, ratio, None))
        for _ in range(samples):
            rows = rng.choice(len(y), max(2, int(len(y) * 0.8 / k)), replace=False)
            fitted = clone(candidate)
            set_accountants(fitted, BudgetAccountant())
            start = time.perf_counter()
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                try:
                    fitted.fit(X.iloc[rows] if hasattr(X, "iloc") else X[rows], y[rows])
                except Exception:  # noqa: BLE001 - a failing fit costs what it took
                    pass
            seconds += time.perf_counter() - start
    return seconds / samples * k


def _time(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def time_default_private(estimator, grid, X, y):
    search = _default_search(estimator, grid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NoisySelectionWarning at the smoke run's tiny k
        return _time(lambda: search.fit(X, y))


def time_default_sklearn(estimator, grid, X, y):
    # An unlimited accountant per step: GridSearchCV's clones would otherwise share the default.
    from skdptune._dp_fit import set_accountants

    estimator = clone(estimator)
    set_accountants(estimator, BudgetAccountant())
    search = GridSearchCV(estimator, grid, cv=5, refit=True)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return _time(lambda: search.fit(X, y))


def _smoke_grid(grid):
    """The first two candidates of ``grid``, as a grid (one candidate selects nothing)."""
    return [{key: [value] for key, value in params.items()}
            for params in list(ParameterGrid(grid))[:2]]


def defaults_table(repetitions=3, smoke=False, per_fit_cap=PER_FIT_CAP, rows=None):
    """The issue's default-settings table: the private search with the batched engine (whatever
    families are registered when it runs), the same search on the per-fit path, and
    ``GridSearchCV(cv=5)`` on the same pipeline and grid; interleaved repetitions, medians,
    BLAS pinned to one thread, one core (``n_jobs=None`` everywhere, the default).

    A per-fit search predicted (:func:`predicted_per_fit_seconds`) to take more than
    ``per_fit_cap`` seconds is not run and reported as skipped.
    """
    from skdptune._batched import registry

    data = {"adult": adult_frame(SMOKE_ROWS["adult"] if smoke else None)}
    n_big = SMOKE_ROWS["big"] if smoke else 1_000_000
    data["big"] = make_data(n_big, seed=1)
    size = "smoke run: tiny sizes, first two candidates of each grid" if smoke else "full size"
    families = ", ".join(sorted(cls.__name__ for cls in registry.FAMILIES)) or "none"
    print(f"\n## Default settings ({size}): private search batched / per-fit / "
          f"GridSearchCV(cv=5), one core, BLAS pinned to one thread, {repetitions} interleaved "
          f"repetition(s), medians; batched families: {families}\n")
    print("| search | rows | k | partition fits batched / per-fit | batched s | per-fit s | "
          "cv=5 s | ratio batched / cv=5 | ratio per-fit / cv=5 |")
    print("|---|---|---|---|---|---|---|---|---|")
    with threadpool_limits(limits=1):
        for index, (name, source, final, grid) in enumerate(DEFAULT_ROWS):
            if rows is not None and index not in rows:
                continue
            X, y = data[source]
            estimator = adult_pipeline(final()) if source == "adult" else final()
            grid = _smoke_grid(grid) if smoke else grid
            forecast = _default_search(estimator, grid).forecast(n_samples=len(y))
            predicted = predicted_per_fit_seconds(estimator, grid, X, y)
            run_per_fit = predicted <= per_fit_cap
            fast, slow, cv5 = [], [], []
            for _ in range(repetitions):
                fast.append(time_default_private(estimator, grid, X, y))
                if run_per_fit:
                    with per_fit_path():
                        slow.append(time_default_private(estimator, grid, X, y))
                cv5.append(time_default_sklearn(estimator, grid, X, y))
            fast, cv5 = statistics.median(fast), statistics.median(cv5)
            if run_per_fit:
                slow = statistics.median(slow)
                slow_cells = f"{slow:.3g} | {cv5:.3g} | {fast / cv5:.2f} | {slow / cv5:.2f}"
            else:
                slow_cells = (f"skipped (predicted {predicted:.0f} s > {per_fit_cap:g} s) | "
                              f"{cv5:.3g} | {fast / cv5:.2f} | ")
            print(f"| {name} | {len(y):,} | {forecast.n_partitions} | "
                  f"{forecast.n_batched_fits} / {forecast.n_per_fit_fits} | {fast:.3g} | "
                  f"{slow_cells} |", flush=True)


# --- Peak memory at 1,000,000 rows (issue 31) ------------------------------------------------

#: Rows of the ``--memory`` run, and of its ``--smoke`` check.
MEMORY_ROWS, MEMORY_SMOKE_ROWS = 1_000_000, 2_000


def memory_data(n_rows, seed=0):
    """``n_rows`` rows drawn with replacement from Adult's training part (a DataFrame), and
    their labels."""
    X, y = adult_frame()
    rows = np.random.default_rng(seed).integers(0, len(y), n_rows)
    return X.iloc[rows].reset_index(drop=True), y[rows]


def _memory_run(kind, row, n_rows, smoke):
    """In a fresh process: load the data, run ``kind`` (``"idle"``, ``"private"`` or
    ``"sklearn"``) on row ``row`` of :data:`DEFAULT_ROWS` (its first two candidates only with
    ``smoke``), return the peak resident set size in bytes (``ru_maxrss``, kilobytes on
    Linux)."""
    X, y = memory_data(n_rows)
    _, _, final, grid = DEFAULT_ROWS[row]
    grid = _smoke_grid(grid) if smoke else grid
    estimator = adult_pipeline(final())
    with threadpool_limits(limits=1):
        if kind == "private":
            time_default_private(estimator, grid, X, y)
        elif kind == "sklearn":
            time_default_sklearn(estimator, grid, X, y)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def memory_table(row=0, smoke=False):
    """Peak resident memory of the private search and of ``GridSearchCV(cv=5)`` on the same
    pipeline and grid, each in a fresh process, against one that only loads the data."""
    name, source, _, _ = DEFAULT_ROWS[row]
    if source != "adult":
        raise ValueError(f"--memory-row {row} is not an Adult pipeline row ({name})")
    n_rows = MEMORY_SMOKE_ROWS if smoke else MEMORY_ROWS
    context = multiprocessing.get_context("spawn")
    peaks = {}
    for kind in ("idle", "private", "sklearn"):
        with context.Pool(1) as pool:
            peaks[kind] = pool.apply(_memory_run, (kind, row, n_rows, smoke))
    encoded = n_rows * ADULT_ENCODED * 8
    print(f"\n## Peak memory: {name}, {n_rows:,} rows drawn from Adult, one core, each run "
          "in a fresh process (ru_maxrss)\n")
    print("| run | peak GiB | x encoded input | above idle, x encoded input |")
    print("|---|---|---|---|")
    for kind, label in (("idle", "data loaded, nothing run"), ("private", "PrivateGridSearchCV"),
                        ("sklearn", "GridSearchCV(cv=5)")):
        print(f"| {label} | {peaks[kind] / 2 ** 30:.2f} | {peaks[kind] / encoded:.2f} | "
              f"{(peaks[kind] - peaks['idle']) / encoded:.2f} |", flush=True)
    print(f"\nencoded input {encoded / 2 ** 30:.2f} GiB ({n_rows:,} x {ADULT_ENCODED} x 8 "
          f"bytes); ratio private / GridSearchCV(cv=5): "
          f"{peaks['private'] / peaks['sklearn']:.2f}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small check of the script")
    parser.add_argument("--scaling-cost", action="store_true",
                        help="only the cost of partition fidelity (scaling auto against None)")
    parser.add_argument("--scale-only", action="store_true", help="only the 1,000,000-row run")
    parser.add_argument("--ratio-only", type=int, metavar="REPETITIONS", default=None,
                        help="only the ratio table, with this many repetitions (interleave "
                             "runs of two versions of the library from a shell loop)")
    parser.add_argument("--partitions", type=int, nargs="+", default=(10, 100), metavar="K",
                        help="--ratio-only's numbers of partitions (default 10 100)")
    parser.add_argument("--models", nargs="+", choices=sorted(GRIDS), default=tuple(GRIDS),
                        metavar="MODEL", help="--ratio-only's models (default: all three)")
    parser.add_argument("--batched", action="store_true",
                        help="only the batched GaussianNB family against the per-fit path")
    parser.add_argument("--memory", action="store_true",
                        help="only the peak memory at 1,000,000 rows, private against cv=5")
    parser.add_argument("--memory-row", type=int, default=0, metavar="INDEX",
                        help="--memory's row of the default-settings table (default 0)")
    parser.add_argument("--defaults", action="store_true",
                        help="only the default-settings table (issue 17): Adult pipelines and "
                             "the 1,000,000-row panel, batched / per-fit / GridSearchCV(cv=5)")
    parser.add_argument("--repetitions", type=int, default=3,
                        help="interleaved repetitions of --defaults (default 3)")
    parser.add_argument("--per-fit-cap", type=float, default=PER_FIT_CAP, metavar="SECONDS",
                        help="--defaults skips a per-fit search predicted to take longer "
                             "(default 600)")
    parser.add_argument("--rows", type=int, nargs="+", default=None, metavar="INDEX",
                        help="--defaults runs only these rows (0-based, in table order)")
    parser.add_argument("--smoke", action="store_true",
                        help="with --defaults or --memory: tiny sizes, one repetition (checks "
                             "the script)")
    args = parser.parse_args(argv)
    print(f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform()}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    if args.defaults:
        defaults_table(1 if args.smoke else args.repetitions, smoke=args.smoke,
                       per_fit_cap=args.per_fit_cap, rows=args.rows)
        return
    if args.memory:
        memory_table(args.memory_row, smoke=args.smoke)
        return
    if args.batched:
        batched_table(100_000, 2)
        return
    if args.ratio_only is not None:
        ratio_table(100_000, args.ratio_only, 2, partitions=tuple(args.partitions),
                    models=tuple(args.models))
        return
    if args.scale_only:
        scale_run(1_000_000)
        return
    if args.scaling_cost:
        scaling_cost(100_000, 3, 2)
        return
    if args.quick:
        ratio_table(20_000, 1, 2, partitions=(10,), models=("LogisticRegression",))
        overhead(20_000)
        return
    ratio_table(100_000, 3, 2)
    speed_up(100_000, 3)
    overhead(100_000)
    scale_run(1_000_000)


if __name__ == "__main__":
    main()
