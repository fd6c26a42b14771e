"""Scale-out on dask.distributed: the same seeded result as n_jobs=1, and no deadlock.

A real LocalCluster (2 worker processes, 1 thread each) runs the partition fits through
joblib's dask backend. diffprivlib's LogisticRegression calls joblib itself inside fit; under
the dask backend that nested call used to wait on dask while the next task blocked on the
warnings lock. Fits now run their nested joblib calls sequentially. The batched families'
blocks of partitions go through the same backend.
"""

import threading

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from skdptune.naive_bayes import GaussianNB
from skdptune.linear_model import LogisticRegression
from diffprivlib.models import StandardScaler as DPStandardScaler
from joblib import parallel_backend
from sklearn.datasets import make_classification
from sklearn.pipeline import make_pipeline

from skdptune import PrivateGridSearchCV
from skdptune.ensemble import RandomForestClassifier

CLASSES = [0, 1]  # the labels of the tests' data, declared

distributed = pytest.importorskip("dask.distributed")

# A generous bound: the fits take about a second; a deadlock never ends.
DEADLINE_SECONDS = 300


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as dask_client:
            yield dask_client


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(2000, 4, n_informative=3, n_redundant=0, random_state=0)
    return np.clip(X / 4, -1, 1), y  # public bounds [-1, 1]


def search(estimator, grid, **params):
    return PrivateGridSearchCV(estimator, grid, n_partitions=10, selector="permute_and_flip",
                               accountant=BudgetAccountant(), random_state=0,
                               **{"default": None, **params})


def fit_within_deadline(search_, X, y):
    """Fit under the dask backend in a thread; fail (not hang) if it does not finish."""
    outcome = {}

    def run():
        try:
            with parallel_backend("dask"):
                search_.fit(X, y)
            outcome["done"] = True
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(DEADLINE_SECONDS)
    assert not thread.is_alive(), f"the search did not finish in {DEADLINE_SECONDS} s"
    if "error" in outcome:
        raise outcome["error"]
    return search_


@pytest.mark.parametrize(
    "estimator, grid",
    [
        (LogisticRegression(classes=CLASSES, data_norm=2.0, random_state=0),
         {"C": [0.1, 1.0, 10.0]}),
        # max_iter below the batched family's floor: the per-fit path, whose nested joblib call
        # inside diffprivlib's fit is the deadlock this module guards against.
        (LogisticRegression(classes=CLASSES, data_norm=2.0, max_iter=50, random_state=0),
         {"C": [0.1, 1.0]}),
        (GaussianNB(classes=CLASSES, bounds=(-1, 1), random_state=0),
         {"var_smoothing": [1e-9, 1e-3]}),
        (make_pipeline(DPStandardScaler(bounds=(-1, 1), epsilon=0.5, random_state=0),
                       LogisticRegression(classes=CLASSES, data_norm=2.0, random_state=0)),
         {"logisticregression__C": [0.1, 1.0]}),
        (RandomForestClassifier(bounds=(-1, 1), classes=[0, 1], n_estimators=3,
                                random_state=0), {"max_depth": [2, 4]}),
    ],
    ids=["LogisticRegression", "LogisticRegression-per-fit", "GaussianNB", "Pipeline",
         "RandomForestClassifier"],
)
def test_dask_gives_the_sequential_result(client, data, estimator, grid, spread_work):
    X, y = data
    on_dask = fit_within_deadline(search(estimator, grid, n_jobs=-1), X, y)
    sequential = search(estimator, grid, n_jobs=1).fit(X, y)
    assert on_dask.best_index_ == sequential.best_index_
    assert on_dask.selection_.trace == sequential.selection_.trace
    assert on_dask.best_score_ == sequential.best_score_  # same utilities, same noise
    assert tuple(on_dask.privacy_spent_) == tuple(sequential.privacy_spent_)
    np.testing.assert_array_equal(on_dask.predict(X), sequential.predict(X))
