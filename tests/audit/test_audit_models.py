"""Statistical privacy audits of skdptune's KMeans, PCA and Ridge, and what their fitted models
keep.

Each model is fitted many times, with secure noise (``random_state=None``), on two datasets
that differ in one record (replaced: the library's adjacency); :mod:`.harness` turns the
counts of events fixed in advance into a lower confidence bound on epsilon, and the test
fails when it exceeds the epsilon the model records. False failures: at most
``harness.ALPHA = 1e-3`` per audit (Clopper-Pearson with Bonferroni).

The events see one release of each fit, so they can show at most part of its epsilon:

- KMeans, one cluster of 100 records on ``[0, 1]``: one record at 0 in ``D``, at 1 in ``D'``
  (the others at 0.5). The count is the same on both; the last iteration's noisy sum moves by
  the width, 1, and the released centre is ``0.5 + noisy sum / noisy count``, so the tail
  events ``{centre - 0.5 >= t / 100}`` have probability ratio ``exp(e_s)``, ``e_s`` the sum's
  share, ``epsilon / 2 / (1 + cbrt(4 * 0.225**2))`` (0.315 epsilon: two iterations at this
  size; the first cannot move a single cluster's labels).
- PCA, two features, one component, ``centered=True``, ``data_norm=1``: ``D`` has the record
  ``e1``, ``D'`` has ``e2`` (three rows of zeros beside it). The eigenvalues are the same on
  both; the component's law is ``exp((s / 2) u1^2)`` against ``exp((s / 2) u2^2)``, ``s =
  epsilon / 2``, and the event "the component within 15 degrees of ``e1``" has ratio about
  ``exp(0.87 s / 2)``.
- Ridge without an intercept, one feature, one target, boxes ``[-1, 1]``, ``alpha=30``: ``D``
  holds the record ``(x, y) = (1, -1)``, ``D'`` the record ``(1, 1)`` (three rows of zeros
  beside it). ``sum(x**2)`` and ``sum(y**2)`` are the same on both; ``sum(x y)`` moves by its
  sensitivity, 2 (the corner range), and gets a third of epsilon. The coefficient is
  ``b / (Q + 30)`` with ``Q >= 0`` of the same law on both, so the tail events of the
  coefficient have probability ratio at most ``exp(epsilon / 3)``.

Teeth: a copy that spends 8 times what it records (KMeans: each iteration's shares times 8;
PCA: ``epsilon`` 8 against a claim of 1; Ridge: every monomial's share times 8) must be
flagged. With 2,000 runs per side it was flagged in each of 200 audits simulated from the
events' exact probabilities (numerical integration; smallest bound 1.31 for KMeans, 1.36 for
PCA, whose exact log-ratios are 2.52 and 1.91; ``python
benchmarks/privacy_audit/model_audit_power.py``). Ridge's tooth (not simulated): the event
"coefficient at least 2 / 31" is about ``b >= 2`` (``Q + 30`` is near 31), of probability
about 0.009 on ``D`` and 0.13 on ``D'`` with the noise 8 times smaller (a log-ratio near
2.7); one audit of 2,000 runs per side counted 13 and 275, a bound of 1.87, and the real
model's bound was 0.12.
"""

import pickle
import secrets

import numpy as np
import pandas as pd
import pytest
from diffprivlib.accountant import BudgetAccountant

from skdptune._models import cluster, linear_model
from skdptune.cluster import KMeans
from skdptune.decomposition import PCA
from skdptune.linear_model import Ridge

from .harness import audit

EPSILON = 1.0
MISCALIBRATION = 8.0
N_RUNS = 2000

KMEANS_D = np.array([[0.0]] + [[0.5]] * 99)
KMEANS_D_PRIME = np.array([[1.0]] + [[0.5]] * 99)
# The centre's offset from 0.5 in units of 1 / 100, in halves: the tails above 1, 1.5, 2 and
# below -1, -1.5, -2.
KMEANS_EVENTS = [frozenset(range(j, 41)) for j in (2, 3, 4)] + [
    frozenset(range(-40, -j)) for j in (2, 3, 4)]


def _kmeans_output(X):
    # oversampling=1: with one cluster the first iteration cannot move the output, and
    # without its reduction a fit is faster.
    centre = KMeans(1, epsilon=EPSILON, bounds=(0.0, 1.0), oversampling=1,
                    accountant=BudgetAccountant()).fit(X).cluster_centers_[0, 0]
    return int(np.clip(np.floor((centre - 0.5) * 100 / 0.5), -40, 40))


PCA_D = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
PCA_D_PRIME = np.array([[0.0, 1.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
# The component's angle from e1, mod 180 degrees, in 15-degree bins: near e1, near e2.
PCA_EVENTS = [frozenset({0, 11}), frozenset({5, 6}), frozenset({0, 1, 10, 11}),
              frozenset({4, 5, 6, 7})]


def _pca_output(epsilon):
    def run(X):
        u = PCA(1, epsilon=epsilon, data_norm=1.0, centered=True,
                accountant=BudgetAccountant()).fit(X).components_[0]
        return int(np.degrees(np.mod(np.arctan2(u[1], u[0]), np.pi)) // 15)
    return run


RIDGE_X = np.array([[1.0], [0.0], [0.0], [0.0]])
RIDGE_D = (RIDGE_X, np.array([-1.0, 0.0, 0.0, 0.0]))
RIDGE_D_PRIME = (RIDGE_X, np.array([1.0, 0.0, 0.0, 0.0]))
RIDGE_ALPHA = 30.0
# The coefficient times (1 + RIDGE_ALPHA), about the noisy sum(x y), in bins of 2: its tails
# from 0, 2 and 4 upwards and from -2, -4 and -6 downwards.
RIDGE_EVENTS = [frozenset(range(j, 21)) for j in (0, 1, 2)] + [
    frozenset(range(-20, -j)) for j in (0, 1, 2)]


def _ridge_output(data):
    X, y = data
    coef = Ridge(epsilon=EPSILON, alpha=RIDGE_ALPHA, noise_alpha=0.0, fit_intercept=False,
                 bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0),
                 accountant=BudgetAccountant()).fit(X, y).coef_[0]
    return int(np.clip(np.floor(coef * (1 + RIDGE_ALPHA) / 2), -20, 20))


def test_kmeans_keeps_its_claim():
    result = audit(_kmeans_output, KMEANS_D, KMEANS_D_PRIME, N_RUNS, events=KMEANS_EVENTS)
    assert result.epsilon_lower_bound <= EPSILON, result.summary()


def test_the_audit_flags_a_kmeans_that_spends_more_than_it_records(monkeypatch):
    real = cluster.budget_split
    monkeypatch.setattr(cluster, "budget_split", lambda epsilon, d, n_iter: tuple(
        MISCALIBRATION * share for share in real(epsilon, d, n_iter)))
    result = audit(_kmeans_output, KMEANS_D, KMEANS_D_PRIME, N_RUNS, events=KMEANS_EVENTS)
    assert result.epsilon_lower_bound > EPSILON, result.summary()


def test_pca_keeps_its_claim():
    result = audit(_pca_output(EPSILON), PCA_D, PCA_D_PRIME, N_RUNS, events=PCA_EVENTS)
    assert result.epsilon_lower_bound <= EPSILON, result.summary()


def test_the_audit_flags_a_pca_that_spends_more_than_it_records():
    result = audit(_pca_output(MISCALIBRATION * EPSILON), PCA_D, PCA_D_PRIME, N_RUNS,
                   events=PCA_EVENTS)
    assert result.epsilon_lower_bound > EPSILON, result.summary()


def test_ridge_keeps_its_claim():
    result = audit(_ridge_output, RIDGE_D, RIDGE_D_PRIME, N_RUNS, events=RIDGE_EVENTS)
    assert result.epsilon_lower_bound <= EPSILON, result.summary()


def test_the_audit_flags_a_ridge_that_spends_more_than_it_records(monkeypatch):
    real = linear_model._n_releases
    monkeypatch.setattr(linear_model, "_n_releases",
                        lambda d, t: real(d, t) / MISCALIBRATION)
    result = audit(_ridge_output, RIDGE_D, RIDGE_D_PRIME, N_RUNS, events=RIDGE_EVENTS)
    assert result.epsilon_lower_bound > EPSILON, result.summary()


@pytest.mark.slow_audit
def test_the_models_keep_their_claims_large_sample():
    for name, result in (
            ("KMeans", audit(_kmeans_output, KMEANS_D, KMEANS_D_PRIME, 200_000,
                             events=KMEANS_EVENTS)),
            ("PCA", audit(_pca_output(EPSILON), PCA_D, PCA_D_PRIME, 200_000,
                          events=PCA_EVENTS)),
            ("Ridge", audit(_ridge_output, RIDGE_D, RIDGE_D_PRIME, 200_000,
                            events=RIDGE_EVENTS))):
        print(f"\n{name}: claimed eps={EPSILON}, {result.summary()}")
        assert result.epsilon_lower_bound <= EPSILON, result.summary()


# --- What the fitted models keep -------------------------------------------------------------

#: Every attribute of a fitted model, and what covers it. Parameters are the user's; the rest
#: are DP releases, their post-processing, or public (the shape of X, constants).
KMEANS_ATTRIBUTES = {
    "n_clusters": "parameter", "epsilon": "parameter", "bounds": "parameter",
    "oversampling": "parameter", "random_state": "parameter", "accountant": "parameter",
    "n_features_in_": "public: the width of X",
    "feature_names_in_": "public: the columns of X",
    "cluster_centers_": "noisy counts and sums of the last iteration (post-processing)",
    "empty_clusters_": "noisy counts of the last iteration (post-processing)",
    "n_iter_": "public: epsilon, n_clusters and the shape of X",
    "_n_threads": "a constant, 1",
}
PCA_ATTRIBUTES = {
    "n_components": "parameter", "epsilon": "parameter", "data_norm": "parameter",
    "centered": "parameter", "bounds": "parameter", "copy": "parameter",
    "whiten": "parameter", "random_state": "parameter", "accountant": "parameter",
    "n_features_in_": "public: the width of X",
    "feature_names_in_": "public: the columns of X",
    "n_samples_": "public: the number of records (replace-one adjacency)",
    "mean_": "the DP mean (zeros when centered)",
    "components_": "the Bingham releases",
    "explained_variance_": "the noisy eigenvalues (post-processing)",
    "explained_variance_ratio_": "the noisy eigenvalues (post-processing)",
    "singular_values_": "the noisy eigenvalues (post-processing)",
    "noise_variance_": "the noisy eigenvalues (post-processing)",
    "n_components_": "the parameter, or the noisy eigenvalues (post-processing)",
}


def _frame(n=500):
    rng = np.random.default_rng(0)
    return pd.DataFrame(rng.uniform(0, 1, (n, 3)), columns=["a", "b", "c"])


@pytest.mark.parametrize("model, covered", [
    (KMeans(3, bounds=(0.0, 1.0), accountant=BudgetAccountant()), KMEANS_ATTRIBUTES),
    (PCA(2, data_norm=2.0, bounds=(0.0, 1.0), accountant=BudgetAccountant()), PCA_ATTRIBUTES),
], ids=["KMeans", "PCA"])
def test_every_attribute_of_a_fitted_model_is_covered(model, covered):
    fitted = model.fit(_frame())
    assert set(vars(fitted)) == set(covered)
    # No generator, seed state or secure source travels with the model or its pickle.
    generators = (np.random.RandomState, np.random.Generator, np.random.BitGenerator,
                  secrets.SystemRandom)
    assert not any(isinstance(value, generators) for value in vars(fitted).values())
    assert b"RandomState" not in pickle.dumps(fitted)
    assert b"SystemRandom" not in pickle.dumps(fitted)
