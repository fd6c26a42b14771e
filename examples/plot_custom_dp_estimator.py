"""
Your own DP estimator in the search
===================================

A search releases a model fitted on all the private data, so the refit gate
(:mod:`skdptune.gate`) admits only estimators whose privacy it knows: diffprivlib's models,
with their bounds declared. A differentially private model of your own, or from another
library, is refused until you **register** it with
:func:`skdptune.gate.register_dp_estimator`: you name the parameter holding the epsilon one
fit spends, the public bounds it needs declared, and why it is private.

That registration is **your claim, on your responsibility**: the library cannot check that
the class is private. It can check, and does, that every released fit records on its
accountant a spend no larger than what it declares.
"""

# %%
# A toy DP classifier
# -------------------
# Nearest centroid with Laplace noise: the vector of class counts and the vector of class
# sums of the records (clipped to public ``bounds``) are noised, half of ``epsilon`` each.
# Replacing one record (the library's adjacency: the number of records is public) can move it
# to another class: two counts change by 1 (L1 sensitivity 2) and two sums by at most
# ``d * max(|lower|, |upper|)`` each (L1 sensitivity ``2 * d * max(|lower|, |upper|)``). Laplace
# noise of scale sensitivity / (epsilon / 2) on every coordinate makes each vector
# ``epsilon / 2``-DP, and the two compose sequentially to ``epsilon``.
#
# Like a diffprivlib model, it takes an ``accountant`` and spends its ``epsilon`` on it: that
# is how the search measures what a released fit spent.
import numpy as np
from diffprivlib import BudgetAccountant
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state

from skdptune import PrivateGridSearchCV
from skdptune.exceptions import GateError
from skdptune.gate import register_dp_estimator


class NoisyCentroidClassifier(ClassifierMixin, BaseEstimator):
    """Nearest centroid on Laplace-noised class counts and sums (pure epsilon-DP)."""

    def __init__(self, epsilon=1.0, bounds=None, classes=None, shrink=0.0, accountant=None,
                 random_state=None):
        self.epsilon = epsilon
        self.bounds = bounds
        self.classes = classes
        self.shrink = shrink
        self.accountant = accountant
        self.random_state = random_state

    def fit(self, X, y):
        accountant = BudgetAccountant.load_default(self.accountant)
        rng = check_random_state(self.random_state)
        lower, upper = self.bounds  # public: never computed from X
        X = np.clip(np.asarray(X, dtype=float), lower, upper)
        # L1 change of the class sums when one record is replaced (two classes may change).
        sensitivity = 2 * X.shape[1] * max(abs(lower), abs(upper))
        self.classes_ = np.asarray(self.classes)  # public: declared, not read from y
        centroids = []
        for label in self.classes_:
            rows = X[np.asarray(y) == label]
            count = len(rows) + rng.laplace(scale=2 * 2 / self.epsilon)  # L1 sensitivity 2
            total = rows.sum(axis=0) + rng.laplace(scale=2 * sensitivity / self.epsilon,
                                                   size=X.shape[1])
            centroid = np.clip(total / max(count, 1.0), lower, upper)
            # Post-processing: pull towards the centre of the box (a tunable parameter).
            centroids.append((1 - self.shrink) * centroid + self.shrink * (lower + upper) / 2)
        self.centroids_ = np.array(centroids)
        accountant.spend(self.epsilon, 0)  # what the search measures
        return self

    def predict(self, X):
        distances = ((np.asarray(X)[:, None, :] - self.centroids_[None]) ** 2).sum(axis=2)
        return self.classes_[np.argmin(distances, axis=1)]


# %%
# Public data in a declared box
# -----------------------------
X, y = make_classification(n_samples=20_000, n_features=5, n_informative=4, n_redundant=0,
                           class_sep=1.5, random_state=0)
X = np.clip(X / 4, -1, 1)  # public preprocessing: every feature in [-1, 1]
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

estimator = NoisyCentroidClassifier(bounds=(-1.0, 1.0), classes=[0, 1])
grid = {"epsilon": [0.5, 1.0], "shrink": [0.0, 0.3]}

# %%
# Refused until registered
# ------------------------
# The gate refuses the class before the data are read, and says how to register it.
try:
    PrivateGridSearchCV(estimator, grid, selection_epsilon=1.0).fit(X_train, y_train)
except GateError as error:
    print(error)

# %%
# Register it
# -----------
# ``epsilon`` names the budget parameter (the search reads it to reserve and charge, and
# gives it the refit's share when the search's ``epsilon`` is the total); ``requires`` the public bounds that
# must be declared (a candidate with ``bounds=None`` is refused); ``partition_scaling=True``
# rescales ``epsilon`` for the partition fits as for diffprivlib models (DP noise scales as
# ``1 / (n * epsilon)``). Registering the same class again with the same arguments does
# nothing; :func:`skdptune.gate.unregister_dp_estimator` removes it.
register_dp_estimator(
    NoisyCentroidClassifier,
    epsilon="epsilon",
    requires=("bounds", "classes"),
    why="Laplace noise on the class counts and clipped class sums, calibrated to replacing "
        "one record (L1 sensitivities 2 and 2 * d * max(abs(lower), abs(upper)))",
    partition_scaling=True,
)

# %%
# Tune it privately
# -----------------
accountant = BudgetAccountant()
search = PrivateGridSearchCV(
    estimator, grid, selection_epsilon=1.0, n_partitions=100, accountant=accountant,
    random_state=0,  # reproducible for the docs; leave it None on private data
).fit(X_train, y_train)
print("selected:", search.best_params_)
print(f"best_score_ = {search.best_score_:.3f} +/- {search.best_score_std_:.3f} (noise std)")
print("privacy spent:", search.privacy_spent_)
print("accountant entries (selection, refit):", accountant.spent_budget)
print("test accuracy:", round(search.score(X_test, y_test), 3))

# %%
# ``best_score_`` is the selected candidate's mean partition accuracy plus Laplace noise, and
# ``best_score_std_`` that noise's standard deviation: with ``n_partitions=100`` and the
# default ``score_share=0.1`` of a selection epsilon of 1 less ``check_share`` (0.05, which
# buys ``trivial_lead_``), ``sqrt(2) * 0.01 / 0.095 = 0.15``.
# Read the estimate with it, not as a test score.

# %%
# The refit is charged the largest ``epsilon`` of the grid (1.0) whichever candidate is
# selected, as for diffprivlib models. Its spend is measured on the accountant it is given:
# a class that spends more than it declares is refused after the refit (and the larger
# spend is charged), and one that records no spend is refused as not private.


class Overspending(NoisyCentroidClassifier):
    def fit(self, X, y):
        super().fit(X, y)
        BudgetAccountant.load_default(self.accountant).spend(self.epsilon, 0)  # twice
        return self


register_dp_estimator(Overspending, requires=("bounds", "classes"),
                      why="a deliberately wrong claim, for this example")
try:
    PrivateGridSearchCV(Overspending(bounds=(-1.0, 1.0), classes=[0, 1]), grid,
                        selection_epsilon=1.0, n_partitions=100, random_state=0,
                        accountant=BudgetAccountant()).fit(X_train, y_train)
except ValueError as error:
    print(error)
