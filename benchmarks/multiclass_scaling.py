"""Partition fits of a multiclass logistic regression: the joint objective-perturbation rule of
``skdptune.partition_scaling`` against the earlier rule (``epsilon * ratio``, ``C * ratio``).

The joint rule gives a partition fit the refit's noise and penalty per record exactly for two
classes. With ``K`` classes diffprivlib splits ``epsilon`` over ``K`` one-vs-rest problems,
which the rule cannot know before the data. This measures how far each rule's partition
utilities are from the refit's accuracy, on generated data (public, nothing private):

- ``make_classification(n_samples=20_000, n_features=10, n_informative=6, n_redundant=0,
  n_classes=K, n_clusters_per_class=1, flip_y=0.05, class_sep=1.5, random_state=0)``, rows
  divided by 4 and clipped to [-1, 1] (``data_norm = sqrt(10)``), 75 / 25 split;
- skdptune's ``LogisticRegression(data_norm=sqrt(10), classes=[0, ..., K - 1])``, grid ``C`` in
  {0.01, 0.1, 1, 10, 100} x ``epsilon`` in {0.3, 1, 3}; the refit's accuracy: mean test
  accuracy of 6 DP fits on the training part;
- 50 partitions, ``validation_fraction`` 0.2, the library's ``partition_utilities``, over
  ``SEEDS`` partitionings (the seed also seeds the partition fits).

Printed per ``K`` in {2, 3, 4} and rule, mean ± standard error over the partitionings: mean
|partition utility - refit accuracy|, Spearman between them, and the refit accuracy lost by
the argmax of the partition utilities.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=. \\
        python benchmarks/multiclass_scaling.py       # about 1 minute
"""

import argparse

import numpy as np
from scipy.stats import spearmanr
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import ParameterGrid, train_test_split

from skdptune._evaluate import partition_utilities
from skdptune.linear_model import LogisticRegression
from skdptune._partition import partition_labels, split_indices
from skdptune._partition_scaling import partition_ratio, rescaled_params
from skdptune._utility import make_utility

N_PARTITIONS, VALIDATION_FRACTION, REFITS, SEEDS = 50, 0.2, 6, 5
GRID = {"C": [0.01, 0.1, 1.0, 10.0, 100.0], "epsilon": [0.3, 1.0, 3.0]}


def measure(n_classes):
    X, y = make_classification(n_samples=20_000, n_features=10, n_informative=6,
                               n_redundant=0, n_classes=n_classes, n_clusters_per_class=1,
                               flip_y=0.05, class_sep=1.5, random_state=0)
    X = np.clip(X / 4, -1, 1)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    estimator = LogisticRegression(data_norm=np.sqrt(10), classes=list(range(n_classes)))
    candidates = list(ParameterGrid(GRID))
    rng = np.random.RandomState(0)
    refit = np.array([
        np.mean([clone(estimator).set_params(**params, random_state=rng.randint(2**31))
                 .fit(X_train, y_train).score(X_test, y_test) for _ in range(REFITS)])
        for params in candidates])
    _, utility = make_utility(estimator, "accuracy", None)
    ratio = partition_ratio(N_PARTITIONS, VALIDATION_FRACTION)
    rules = {
        "earlier rule": [{**p, "epsilon": p["epsilon"] * ratio, "C": p["C"] * ratio}
                         for p in candidates],
        "joint rule": [{**p, **rescaled_params(clone(estimator).set_params(**p), ratio, None)}
                       for p in candidates],
    }
    for name, settings in rules.items():
        found = []
        for seed in range(SEEDS):
            partition, is_validation = partition_labels(len(X_train), N_PARTITIONS,
                                                        VALIDATION_FRACTION, random_state=seed)
            splits = split_indices(partition, is_validation, N_PARTITIONS)
            values = partition_utilities(clone(estimator).set_params(random_state=seed),
                                         settings, X_train, y_train, splits, {}, utility,
                                         error_score=0.0)
            found.append((np.abs(values - refit).mean(), spearmanr(refit, values).statistic,
                          refit.max() - refit[int(np.argmax(values))]))
        mean, se = np.mean(found, axis=0), np.std(found, axis=0, ddof=1) / np.sqrt(SEEDS)
        print(f"K={n_classes} {name}: mean |partition - refit| {mean[0]:.3f} ± {se[0]:.3f}, "
              f"Spearman {mean[1]:.2f} ± {se[1]:.2f}, argmax regret {mean[2]:.3f} ± "
              f"{se[2]:.3f}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", type=int, nargs="+", default=[2, 3, 4])
    args = parser.parse_args(argv)
    for n_classes in args.classes:
        measure(n_classes)


if __name__ == "__main__":
    main()
