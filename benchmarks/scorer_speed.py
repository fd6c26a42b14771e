"""CPU time of a private search scored by ``roc_auc`` against the same search scored by
``accuracy`` (issue 40, item 6; issue 42, item 3: target within 3 times).

Data: ``make_classification(n_samples=20_000, n_features=8, n_informative=5,
random_state=0)``, clipped to [-4, 4] and divided by 4 (every bound a declared constant).
Searches: ``PrivateGridSearchCV(estimator, grid, epsilon=1.0, default=None,
accountant=BudgetAccountant(), random_state=0, scoring=...)``, every other parameter at its
default (``n_partitions="auto"``, one core); ``default=None`` so that the selection's
partition fits run (with the estimator as its default, the tuning policy may decline to
select, and then there is nothing to compare).

- LogisticRegression: skdptune's ``LogisticRegression(data_norm=sqrt(8), classes=[0, 1])``,
  grid ``C`` in {0.01, 0.1, 1, 10} x ``data_norm`` in {1, sqrt(8) / 2, sqrt(8), 2 sqrt(8)}
  (16 candidates);
- GaussianNB: skdptune's ``GaussianNB(bounds=(-1, 1), classes=[0, 1])``, grid
  ``var_smoothing`` in {1e-9, 1e-3, 1e-1} x ``bounds`` in {(-1, 1), (-2, 2)} (6 candidates).

Each search is timed by ``time.process_time()`` (this process's CPU; the searches run on
one core, so there are no workers to miss), ``--repetitions`` times interleaved (accuracy,
roc_auc, accuracy, ...); printed: the machine line, the median seconds per scorer and the
ratio of the medians, as Markdown.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=. \\
        python benchmarks/scorer_speed.py          # about a minute with the batched roc_auc

The figures before the batched ``roc_auc`` (``benchmarks/RESULTS.md``, "Probability scorers in
the batched engine") are this command at commit ``c19d41a`` (the search's ``roc_auc`` then ran
every partition fit on the per-fit path): ``git worktree add /tmp/before c19d41a``, copy this
file there, and run it from that directory (``--repetitions 1`` keeps it under 3 minutes).
"""

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from sklearn.datasets import make_classification

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib.runs import machine  # noqa: E402
from skdptune import PrivateGridSearchCV  # noqa: E402
from skdptune.linear_model import LogisticRegression  # noqa: E402
from skdptune.naive_bayes import GaussianNB  # noqa: E402

N_SAMPLES, N_FEATURES = 20_000, 8
DATA_NORM = float(np.sqrt(N_FEATURES))

#: (estimator, grid) per model.
MODELS = {
    "LogisticRegression": (
        lambda: LogisticRegression(data_norm=DATA_NORM, classes=[0, 1]),
        {"C": [0.01, 0.1, 1.0, 10.0],
         "data_norm": [1.0, DATA_NORM / 2, DATA_NORM, 2 * DATA_NORM]}),
    "GaussianNB": (
        lambda: GaussianNB(bounds=(-1.0, 1.0), classes=[0, 1]),
        {"var_smoothing": [1e-9, 1e-3, 1e-1], "bounds": [(-1.0, 1.0), (-2.0, 2.0)]}),
}
SCORERS = ("accuracy", "roc_auc")


def make_data():
    X, y = make_classification(n_samples=N_SAMPLES, n_features=N_FEATURES, n_informative=5,
                               random_state=0)
    return np.clip(X, -4, 4) / 4, y


def cpu_seconds(name, scoring, X, y):
    """CPU seconds of one search's ``fit``."""
    make, grid = MODELS[name]
    search = PrivateGridSearchCV(make(), grid, epsilon=1.0, default=None, scoring=scoring,
                                 accountant=BudgetAccountant(), random_state=0)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    return time.process_time() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--models", nargs="+", choices=sorted(MODELS), default=list(MODELS))
    args = parser.parse_args(argv)
    X, y = make_data()
    print(f"Machine: {machine()}\n")
    print("| model | accuracy (s CPU) | roc_auc (s CPU) | roc_auc / accuracy |")
    print("|---|---|---|---|")
    for name in args.models:
        seconds = {scoring: [] for scoring in SCORERS}
        for _ in range(args.repetitions):
            for scoring in SCORERS:
                seconds[scoring].append(cpu_seconds(name, scoring, X, y))
        median = {scoring: statistics.median(values) for scoring, values in seconds.items()}
        print(f"| {name} | {median['accuracy']:.2f} | {median['roc_auc']:.2f} | "
              f"{median['roc_auc'] / median['accuracy']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
