"""Speed of PrivateGridSearchCV against scikit-learn's GridSearchCV(cv=5), and its scale-out.

Prints, as Markdown:

1. ``ratio``: wall time of PrivateGridSearchCV over GridSearchCV(cv=5) on the same data, grid and
   ``n_jobs``, for diffprivlib's LogisticRegression, GaussianNB and RandomForestClassifier at
   k = 10 and k = 100 (interleaved repetitions; min / median / max of the per-repetition
   ratios);
2. ``scale``: 1,000,000 x 20 rows, 50 candidates, k = 100, LogisticRegression, n_jobs=2: wall
   time and the peak resident memory of the whole process tree (this process and its joblib
   workers, sampled every 50 ms), against the size of X;
3. ``speed-up``: n_jobs=2 over n_jobs=1 on the 100,000-row LogisticRegression case;
4. ``overhead``: the selection and its accounting (an uncached eps0 calibration and the
   selector) as a share of a default fit's wall time;
5. with ``--scaling-cost`` only: the same searches with ``partition_scaling="auto"`` and
   ``None``, what partition fidelity costs in time.

Run on a quiet machine with BLAS pinned to one thread (DESIGN.md section 4)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python benchmarks/speed.py

``--quick`` runs one repetition of a smaller table (for checking the script). Data:
``make_classification`` (20 features, 10 informative), clipped to [-4, 4] and divided by 4:
every bound is a declared constant.
"""

import argparse
import os
import platform
import statistics
import threading
import time

import numpy as np
import psutil
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import GaussianNB, LogisticRegression, RandomForestClassifier
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV

from skdptune import PrivateGridSearchCV
from skdptune.accounting import calibrate_epsilon_per_step
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
    """The diffprivlib model with every bound declared (no PrivacyLeakWarning)."""
    if name == "LogisticRegression":
        return LogisticRegression(data_norm=DATA_NORM, epsilon=1.0)
    if name == "GaussianNB":
        return GaussianNB(bounds=BOUNDS, epsilon=1.0)
    return RandomForestClassifier(bounds=BOUNDS, classes=[0, 1], epsilon=1.0)


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
    import skdptune.batched as batched

    X, y = make_data(n_samples)
    grid = {"var_smoothing": GRIDS["GaussianNB"]["var_smoothing"]}
    print(f"\n## Batched GaussianNB: {n_samples:,} x {N_FEATURES}, {len(grid['var_smoothing'])} "
          f"candidates, n_jobs={n_jobs}\n")
    print("| k | batched s | per-fit s | cv=5 s | ratio batched | ratio per-fit |")
    print("|---|---|---|---|---|---|")
    time_private("GaussianNB", X, y, 10, n_jobs, grid=grid)  # start the workers
    for k in partitions:
        fast = time_private("GaussianNB", X, y, k, n_jobs, grid=grid)
        families = dict(batched.FAMILIES)
        batched.FAMILIES.clear()
        try:
            slow = time_private("GaussianNB", X, y, k, n_jobs, grid=grid)
        finally:
            batched.FAMILIES.update(families)
        search = GridSearchCV(make_estimator("GaussianNB").set_params(
            accountant=BudgetAccountant()), grid, cv=5, n_jobs=n_jobs)
        start = time.perf_counter()
        search.fit(X, y)
        cv5 = time.perf_counter() - start
        print(f"| {k} | {fast:.2f} | {slow:.2f} | {cv5:.2f} | {fast / cv5:.2f} | "
              f"{slow / cv5:.2f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small check of the script")
    parser.add_argument("--scaling-cost", action="store_true",
                        help="only the cost of partition fidelity (scaling auto against None)")
    parser.add_argument("--scale-only", action="store_true", help="only the 1,000,000-row run")
    parser.add_argument("--ratio-only", type=int, metavar="REPETITIONS", default=None,
                        help="only the ratio table, with this many repetitions (interleave "
                             "runs of two versions of the library from a shell loop)")
    parser.add_argument("--batched", action="store_true",
                        help="only the batched GaussianNB family against the per-fit path")
    args = parser.parse_args()
    print(f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform()}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    if args.batched:
        batched_table(100_000, 2)
        return
    if args.ratio_only is not None:
        ratio_table(100_000, args.ratio_only, 2)
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
