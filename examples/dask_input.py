"""
Tuning on a dask cluster, the data never gathered
=================================================

:class:`~skdptune.PrivateGridSearchCV` takes dask collections as ``X`` and ``y``: a dask array
chunked by rows (or a dask data frame, e.g. from ``dask.dataframe.read_parquet``) and a dask
array or series of labels with the same rows. The rows then stay in their chunks on the
workers: each record draws its partition where it lives, the rows move once so that each block
of partitions meets in one task, the candidates are fitted there, and only each candidate's sum
of partition utilities comes back. The refit of the selected candidate adds up per-chunk
statistics (class counts and moments, leaf counts, k-means' counts and sums, the least-squares
monomials, or the logistic loss's gradient at each step of the solver) and draws its noise in
this process, with the same mechanism and the same charge as a fit in memory.

Here a small cluster in this process stands in for a real one (``Client("tcp://...")``),
and the data are generated on the workers, chunk by chunk: this process never holds them.
"""

# %%
# A cluster and data that live on it
# ----------------------------------
# 200,000 records of 5 features in ``[-1, 1]`` (declared bounds), in chunks of 20,000 rows,
# with a binary label.
import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                       dashboard_address=None)
client = Client(cluster)

rng = da.random.default_rng(0)
X = da.clip(rng.normal(0.0, 0.4, size=(200_000, 5), chunks=(20_000, 5)), -1.0, 1.0)
w = np.array([1.0, -1.0, 0.5, 0.0, 0.0])
y = (X @ w + rng.normal(0.0, 0.5, size=200_000, chunks=20_000) > 0).astype(np.int64)

# %%
# The search
# ----------
# The estimator must have a refit from statistics summed over chunks (naive Bayes, the linear
# models, forests, trees and k-means of :mod:`skdptune`); anything else, a pipeline, fit
# parameters or another scoring is refused before anything is read or charged.
from diffprivlib import BudgetAccountant

from skdptune import PrivateGridSearchCV
from skdptune.naive_bayes import GaussianNB

accountant = BudgetAccountant()
search = PrivateGridSearchCV(
    GaussianNB(bounds=(-1.0, 1.0), classes=[0, 1]),
    {"var_smoothing": [1e-9, 1e-3, 1e-2, 1e-1]},
    epsilon=1.0, accountant=accountant,
    random_state=0,  # reproducible for the docs; None on private data
)
search.fit(X, y)
print("chosen:", search.best_params_, "with", search.n_partitions_, "partitions")
print("privacy_spent_:", search.privacy_spent_, "accountant:", accountant.total())

# %%
# The released model is an ordinary in-memory model: score it on public rows, or apply it to
# the chunks with ``X.map_blocks(search.predict, drop_axis=1)``.
test = np.clip(np.random.default_rng(1).normal(0.0, 0.4, (10_000, 5)), -1.0, 1.0)
test_labels = (test @ w + np.random.default_rng(2).normal(0.0, 0.5, 10_000) > 0).astype(int)
print(f"test accuracy: {search.score(test, test_labels):.3f}")
predictions = X.map_blocks(search.predict, drop_axis=1, dtype=np.int64)
print("share predicted positive, on the workers:", float(predictions.mean().compute()))

client.close()
cluster.close()
