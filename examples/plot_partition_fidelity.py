"""
Partition fidelity: ranking candidates as the refit would
=========================================================

:class:`~skdptune.PrivateGridSearchCV` scores every candidate on ``n_partitions`` disjoint
partitions, each fit training on about ``n * (1 - validation_fraction) / n_partitions``
records, and then refits the winner on all ``n``. A partition fit is a ``ratio =
n_partitions / (1 - validation_fraction)`` times smaller problem: with the refit's own
parameters a diffprivlib model is about ``ratio`` times noisier relative to its data (DP
noise scales as ``1 / (n * epsilon)``), and scikit-learn's ``C``, which multiplies a *sum* of
per-record losses, regularises ``ratio`` times harder. The partitions then rank the candidates
by how they behave at the wrong scale.

``partition_scaling="auto"`` (see :mod:`skdptune.partition_scaling`) rescales such parameters by
``ratio`` for the partition fits only. It costs no privacy: partition fits are never
charged, and the refit always uses the candidate as written.

This example shows the effect on generated, public data, with a diffprivlib logistic
regression tuned over ``C`` and ``epsilon``. It calls the search's internal stages directly,
from the library's private modules (``skdptune._partition``, ``skdptune._evaluate``: not API,
they may change in any release), which handle raw, non-private utilities: a demonstration on
public data, never something to print for private data.
"""

# %%
# Data and grid
# -------------
import matplotlib.pyplot as plt
import numpy as np
from skdptune.linear_model import LogisticRegression
from scipy.stats import spearmanr
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import ParameterGrid, train_test_split

from skdptune._evaluate import partition_utilities
from skdptune.partition_scaling import partition_ratio, rescaled_params
from skdptune._partition import partition_labels, split_indices
from skdptune._utility import make_utility

N_FEATURES = 10
X, y = make_classification(n_samples=10_000, n_features=N_FEATURES, n_informative=6,
                           n_redundant=0, flip_y=0.05, class_sep=1.5, random_state=0)
X = np.clip(X / 4, -1, 1)  # public bounds: every row has norm at most sqrt(N_FEATURES)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

estimator = LogisticRegression(data_norm=np.sqrt(N_FEATURES), classes=[0, 1])
candidates = list(ParameterGrid({"C": [0.01, 0.1, 1.0, 10.0], "epsilon": [0.1, 0.3, 1.0]}))
labels = [f"C={p['C']:g}, ε={p['epsilon']:g}" for p in candidates]

# %%
# What the refit would do
# -----------------------
# The "full-data" utility of a candidate: its test accuracy when fitted on all the training
# data, as the refit would be, averaged over a few fits (the refit's own DP noise varies).
rng = np.random.RandomState(0)
full = np.array([
    np.mean([clone(estimator).set_params(**params, random_state=rng.randint(2**31))
             .fit(X_train, y_train).score(X_test, y_test) for _ in range(4)])
    for params in candidates
])

# %%
# What the partitions see, before and after rescaling
# ---------------------------------------------------
# The same partitions for both: every record draws its partition and holdout labels
# independently (what keeps one record's influence to one partition).
N_PARTITIONS, VALIDATION_FRACTION = 10, 0.2
partition, is_validation = partition_labels(len(X_train), N_PARTITIONS,
                                            VALIDATION_FRACTION, random_state=0)
splits = split_indices(partition, is_validation, N_PARTITIONS)
_, utility = make_utility(estimator, "accuracy", None)
ratio = partition_ratio(N_PARTITIONS, VALIDATION_FRACTION)
print(f"a partition fit trains on {ratio:.1f} times fewer records than the refit")

rescaled = [{**params, **rescaled_params(clone(estimator).set_params(**params), ratio, None)}
            for params in candidates]
print("first candidate as written:", candidates[0])
print("first candidate on a partition, rescaled:", rescaled[0])


def partition_means(settings):
    return partition_utilities(clone(estimator).set_params(random_state=0), settings,
                               X_train, y_train, splits, {}, utility, error_score=0.0)


as_written = partition_means(candidates)
after = partition_means(rescaled)

# %%
# Ranks
# -----
# Each point is a candidate: its rank by the refit's utility against its rank by the
# partitions' mean utility (rank 1 = best). Points on the diagonal are candidates the
# partitions rank as the refit would. Spearman's rho summarises the agreement.
def ranks(values):
    return np.argsort(np.argsort(-np.asarray(values))) + 1


fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), sharey=True, constrained_layout=True)
for ax, values, title in ((axes[0], as_written, "partition fits as written"),
                          (axes[1], after, 'partition_scaling="auto"')):
    rho = spearmanr(full, values).statistic
    ax.plot([1, len(candidates)], [1, len(candidates)], color="grey", linestyle=":")
    ax.scatter(ranks(full), ranks(values), c=[p["epsilon"] for p in candidates],
               cmap="viridis", norm=plt.matplotlib.colors.LogNorm(), s=40, zorder=3)
    for x_rank, y_rank, label in zip(ranks(full), ranks(values), labels):
        ax.annotate(label, (x_rank, y_rank), textcoords="offset points", xytext=(4, 3),
                    fontsize="x-small")
    ax.set_title(f"{title}: Spearman rho = {rho:.2f}", fontsize="medium")
    ax.set_xlabel("rank by the refit's test accuracy")
axes[0].set_ylabel("rank by the partitions' mean accuracy")
axes[0].invert_yaxis()
plt.show()

# %%
# Utilities
# ---------
# The same comparison in accuracy units. As written, every partition fit is noisier and more
# regularised than the refit, by amounts that differ between candidates, so the partitions'
# accuracies sit well below the refit's. Rescaled, they sit closer to it on average, though
# not on the diagonal: the rules are first-order corrections (a model's noise need not scale
# exactly as ``1 / (n * epsilon)``), and a partition fit still sees few records.
fig, ax = plt.subplots(figsize=(6, 4.4), constrained_layout=True)
ax.scatter(full, as_written, label="as written", marker="x")
ax.scatter(full, after, label='partition_scaling="auto"', marker="o")
low = min(full.min(), as_written.min(), after.min())
high = max(full.max(), as_written.max(), after.max())
ax.plot([low, high], [low, high], color="grey", linestyle=":")
ax.set_xlabel("refit's test accuracy")
ax.set_ylabel("partitions' mean accuracy")
ax.legend(fontsize="small")
plt.show()
print(f"mean |partition - refit| accuracy: as written {np.abs(as_written - full).mean():.3f}, "
      f"rescaled {np.abs(after - full).mean():.3f}")

# %%
# How much rescaling matters depends on the grid: most where candidates differ in how
# strongly they depend on the training-set size, as ``epsilon`` and ``C`` do here. The
# scaling rules, one per (class, parameter), are listed in
# :data:`skdptune.partition_scaling.RULES` and in the :ref:`user guide <fidelity>`;
# ``partition_scaling`` also takes your own rules for parameters it does not know, and
# ``partition_scaling=None`` turns rescaling off.
