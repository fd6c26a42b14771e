"""
Choosing and releasing a private k-means
========================================

:class:`skdptune.cluster.KMeans` is diffprivlib's k-means (Su et al.'s DPLloyd) made private
under the library's adjacency: every centre's count and sums are noised in every iteration,
and the released model keeps no record's cluster. A private search can tune its
``n_clusters``: with ``scoring=None`` each partition's fit is scored by the simplified
silhouette of that partition's held-out records (near 1 when each record sits at its centre
and far from the others), which peaks at a sensible number of clusters, where held-out
inertia only falls as clusters are added.

The data are real and ship with scikit-learn (no download): the Breast Cancer Wisconsin
table, 569 patients, of which we cluster two measurements of the cell nuclei. 569 records
are few for differential privacy: the budget below is larger than a table of tens of
thousands of records would need, and the released centres are visibly noisy.
"""

# %%
# The records and their public bounds
# ------------------------------------
# Each record is a patient. Clustering needs the two measurements on comparable scales; we
# map each to ``[0, 1]`` with bounds declared from public knowledge of what the measurement
# can be (a row-wise map: each record's values and public constants only), not with the
# data's own minimum and maximum, which would leak them.
import numpy as np
from sklearn.datasets import load_breast_cancer

data = load_breast_cancer()
columns = ["mean radius", "worst concave points"]
X = data.data[:, [list(data.feature_names).index(name) for name in columns]]
LOWER, UPPER = np.array([5.0, 0.0]), np.array([30.0, 0.35])  # declared, not measured


def to_unit_box(Z):
    return (Z - LOWER) / (UPPER - LOWER)


# %%
# The search
# ----------
# A pipeline of the public map and the private k-means, tuned over ``n_clusters`` from 2
# to 6 with a total budget of 6: half for the selection (with its share for ``best_score_``),
# half for the refit of the chosen candidate on all the records.
from diffprivlib import BudgetAccountant
from sklearn.pipeline import make_pipeline

from skdptune import PrivateGridSearchCV
from skdptune.cluster import KMeans
from skdptune.preprocessing import RowWiseFunctionTransformer

pipeline = make_pipeline(RowWiseFunctionTransformer(to_unit_box),
                         KMeans(bounds=(0.0, 1.0)))
accountant = BudgetAccountant()
search = PrivateGridSearchCV(pipeline, {"kmeans__n_clusters": [2, 3, 4, 5, 6]}, epsilon=6.0,
                             accountant=accountant,
                             random_state=0)  # reproducible for the docs; None on private data
search.fit(X)
print("chosen:", search.best_params_)
print(f"best_score_ = {search.best_score_:.2f} +/- {search.best_score_std_:.2f} (noise std), "
      "a DP estimate of the partitions' simplified silhouette")
print("privacy spent:", search.privacy_spent_, "| accountant charged:", accountant.total())

# %%
# ``best_score_std_`` is large here: 569 records make few partitions, and the estimate's
# noise scales with one over their number. The released model holds the centres and which
# of them its last iteration found empty; nothing about any one record.
model = search.best_estimator_[-1]
centres = LOWER + model.cluster_centers_ * (UPPER - LOWER)  # back to the measurements' units
print("released centres:\n", centres.round(3))
print("empty centres:", model.empty_clusters_)
print("attributes:", sorted(name for name in vars(model) if name.endswith("_")))

# %%
# The clusters
# ------------
# Each patient coloured by the released model's nearest centre (computed here, from the data
# we hold, not stored in the model), and, beside it, by the diagnosis the clustering never
# saw.
import matplotlib.pyplot as plt

labels = search.predict(X)
fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharex=True, sharey=True)
axes[0].scatter(X[:, 0], X[:, 1], c=labels, cmap="tab10", s=10, alpha=0.7)
axes[0].scatter(centres[:, 0], centres[:, 1], marker="X", s=200, c="black",
                label="released centres")
axes[0].set_title(f"private k-means, n_clusters={model.n_clusters}, epsilon 6 in all")
axes[0].legend(loc="upper left")
for value, name in enumerate(data.target_names):
    chosen = data.target == value
    axes[1].scatter(X[chosen, 0], X[chosen, 1], s=10, alpha=0.7, label=name)
axes[1].set_title("diagnosis (not used)")
axes[1].legend(loc="upper left")
for axis in axes:
    axis.set_xlabel(columns[0])
axes[0].set_ylabel(columns[1])
fig.tight_layout()
plt.show()
