"""skdptune.cluster.KMeans: Su et al.'s DPLloyd, private under replace-one adjacency.

What is checked: every release is calibrated (counts: L1 sensitivity 2; sums about the
box's middle: the feature's width) and the releases of all iterations add up to ``epsilon``
with Su et al.'s split (diffprivlib 0.6.6 swaps it and spends up to 1.52 times what it
records); every centre is released whether or not a record is in it, and an empty one is
redrawn on the noisy count alone; the model keeps no labels and no inertia; it spends
``epsilon`` once, after checking; the seeds depend on the bounds alone; unseeded fits draw
nothing from numpy's global generator; scikit-learn's conventions hold; on separated blobs
it finds the centres.
"""

import pickle

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import KMeans as DPKMeans
from diffprivlib.utils import BudgetError
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from skdptune._models import cluster
from skdptune._models.cluster import EMPTY_SCALES, KMeans, budget_split, initial_centres


def _blobs(n=3000, centres=((0.2, 0.2), (0.8, 0.8), (0.2, 0.8)), scale=0.03, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(len(centres), size=n)
    return np.clip(np.asarray(centres)[labels] + rng.normal(0, scale, (n, 2)), 0, 1)


def _kmeans(**params):
    return KMeans(**{"bounds": (0.0, 1.0), "accountant": BudgetAccountant(), **params})


class _Recorder:
    """Stands in for diffprivlib's ``Laplace``: records each mechanism's epsilon and
    sensitivity and how many values it noised, and adds no noise."""

    def __init__(self, log):
        self.log = log

    def __call__(self, *, epsilon, sensitivity, random_state):
        entry = {"epsilon": epsilon, "sensitivity": sensitivity, "values": 0}
        self.log.append(entry)

        class Mechanism:
            def randomise(self, value):
                entry["values"] += 1
                return value

        return Mechanism()


@pytest.mark.parametrize("n_features", [1, 3, 20])
def test_every_release_is_calibrated_and_the_iterations_add_up_to_epsilon(monkeypatch,
                                                                          n_features):
    log = []
    monkeypatch.setattr(cluster, "Laplace", _Recorder(log))
    rng = np.random.default_rng(1)
    X = rng.random((500, n_features)) * 4 - 1
    lower, upper = np.full(n_features, -1.0), np.linspace(3.0, 5.0, n_features)
    model = _kmeans(n_clusters=3, epsilon=0.9, bounds=(lower, upper), oversampling=2).fit(X)
    counts, *sums = log  # one count mechanism, then one per feature
    assert counts["sensitivity"] == 2.0  # replace one record: two counts move by 1
    assert [entry["sensitivity"] for entry in sums] == pytest.approx(upper - lower)
    per_iteration = counts["epsilon"] + sum(entry["epsilon"] for entry in sums)
    assert per_iteration * model.n_iter_ == pytest.approx(0.9)
    weight = np.cbrt(4 * n_features * 0.225 ** 2)
    assert counts["epsilon"] / sums[0]["epsilon"] == pytest.approx(weight)  # Su et al.
    # Every centre of every iteration is released, empty or not: 3 * 2 seeds first.
    released = 3 * 2 + 3 * (model.n_iter_ - 1)
    assert counts["values"] == released
    assert all(entry["values"] == released for entry in sums)


def test_diffprivlib_swaps_the_split_and_spends_half_as_much_again_at_20_features():
    # Its _update_centers unpacks (counts, coordinate) from a (coordinate, counts) pair.
    d, iterations, epsilon = 20, 4, 1.0
    swapped = DPKMeans(epsilon=epsilon)._split_epsilon(d, iterations)
    spent = iterations * (swapped[0] + d * swapped[1])
    assert spent / epsilon == pytest.approx(1.52, abs=0.01)
    counts, coordinate = budget_split(epsilon, d, iterations)
    assert iterations * (counts + d * coordinate) == pytest.approx(epsilon)
    assert (counts, coordinate) == pytest.approx(swapped[::-1])


def test_an_empty_cluster_is_noised_and_redrawn_on_its_noisy_count_alone(monkeypatch):
    # diffprivlib 0.6.6 skips a cluster no record is nearest to, leaving its centre exact.
    # Here every centre's count and sums are released; one whose noisy count is below
    # EMPTY_SCALES noise scales is redrawn from the box, whatever its true count.
    X = np.full((200, 2), 0.1)
    lloyd = cluster._Iteration(lambda centres: cluster.cluster_sums(X, centres, 0.5),
                               np.zeros(2), np.ones(2), 1.0, 1.0, None,
                               np.random.RandomState(0))
    centres = np.array([[0.1, 0.1], [0.9, 0.9]])
    noisy = iter([200.0, EMPTY_SCALES * 2.0 - 1e-9] + [0.0] * 4)
    monkeypatch.setattr(lloyd.count_noise, "randomise", lambda value: next(noisy))
    monkeypatch.setattr(lloyd.sum_noise[0], "randomise", lambda value: value)
    monkeypatch.setattr(lloyd.sum_noise[1], "randomise", lambda value: value)
    new, empty = lloyd(centres)
    assert list(empty) == [False, True]
    np.testing.assert_allclose(new[0], [0.1, 0.1])
    # A centre with enough (noisy) records is a noisy mean, even with no record at all.
    noisy = iter([200.0, EMPTY_SCALES * 2.0])
    monkeypatch.setattr(lloyd.count_noise, "randomise", lambda value: next(noisy))
    new, empty = lloyd(centres)
    assert list(empty) == [False, False]
    np.testing.assert_allclose(new[1], [0.5, 0.5])  # the middle: its noiseless sum is 0


def test_the_model_keeps_no_labels_and_no_inertia():
    model = _kmeans(n_clusters=3, random_state=0).fit(_blobs())
    assert not hasattr(model, "labels_") and not hasattr(model, "inertia_")
    assert model.cluster_centers_.shape == (3, 2)
    assert np.all((model.cluster_centers_ >= 0) & (model.cluster_centers_ <= 1))
    assert model.empty_clusters_.dtype == bool and model.empty_clusters_.shape == (3,)
    labels = model.fit_predict(_blobs())  # computed from the caller's X, not kept
    assert labels.shape == (3000,) and not hasattr(model, "labels_")


def test_it_finds_separated_clusters():
    # At epsilon 1 a fit finds the three centres within 0.05 in about 3 fits of 4 (91 of 120
    # seeds, over two generations of the streams): at least 10 of 20 seeded fits, which a
    # success rate of 0.7 misses with probability 0.017 (binomial), 0.75 with 0.004.
    X = _blobs()
    found = 0
    for seed in range(20):
        model = _kmeans(n_clusters=3, epsilon=1.0, random_state=seed).fit(X)
        centres = np.sort(model.cluster_centers_, axis=0)
        found += bool(np.allclose(centres, [[0.2, 0.2], [0.2, 0.8], [0.8, 0.8]], atol=0.05)
                      and not model.empty_clusters_.any())
    assert found >= 10


def test_it_spends_epsilon_once_and_checks_before_fitting():
    accountant = BudgetAccountant()
    _kmeans(n_clusters=2, epsilon=0.7, accountant=accountant).fit(_blobs())
    assert accountant.spent_budget == [(0.7, 0)]
    small = BudgetAccountant(epsilon=1.0)
    with pytest.raises(BudgetError):
        _kmeans(epsilon=2.0, accountant=small).fit(_blobs())
    assert small.spent_budget == []


def test_missing_or_infinite_bounds_are_refused_before_anything_is_spent():
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match="bounds=None"):
        _kmeans(bounds=None, accountant=accountant).fit(_blobs())
    with pytest.raises(ValueError, match="not finite"):
        _kmeans(bounds=(0.0, np.inf), accountant=accountant).fit(_blobs())
    assert accountant.spent_budget == []


@pytest.mark.parametrize("name, value", [("n_clusters", 0), ("epsilon", -1.0),
                                         ("epsilon", "1"), ("oversampling", 0)])
def test_a_bad_parameter_is_refused_naming_it(name, value):
    with pytest.raises(InvalidParameterError, match=f"'{name}'"):
        _kmeans(**{name: value}).fit(_blobs())


def test_the_seeds_come_from_the_bounds_alone_and_spread_over_the_box(monkeypatch):
    rng = np.random.RandomState(0)
    seeds = initial_centres(np.array([0.0, 10.0]), np.array([1.0, 30.0]),
                            rng.random_sample((cluster.POOL * 12, 2)))
    assert np.all((seeds >= [0, 10]) & (seeds <= [1, 30]))
    unit = (seeds - [0.0, 10.0]) / [1.0, 20.0]
    gaps = np.linalg.norm(unit[:, None] - unit[None], axis=2) + np.eye(12)
    assert gaps.min() > 0.15  # 12 uniform points have a closer pair in about 99 % of draws
    # A fit draws them from the bounds before it reads X: with one seed, one set of seeds
    # whatever the data.
    drawn = []

    def recording(*args):
        drawn.append(initial_centres(*args))
        return drawn[-1]

    monkeypatch.setattr(cluster, "initial_centres", recording)
    for seed in (1, 2):
        _kmeans(n_clusters=3, random_state=5).fit(_blobs(seed=seed) ** seed)
    np.testing.assert_array_equal(drawn[0], drawn[1])


def test_unseeded_fits_leave_numpys_global_generator_alone():
    np.random.seed(7)
    expected = np.random.random_sample()
    np.random.seed(7)
    _kmeans(n_clusters=3).fit(_blobs())
    assert np.random.random_sample() == expected


def test_a_seed_reproduces_the_fit():
    fits = [_kmeans(n_clusters=3, random_state=11).fit(_blobs()).cluster_centers_
            for _ in range(2)]
    np.testing.assert_allclose(fits[0], fits[1])


def test_scikit_learn_conventions():
    model = _kmeans(n_clusters=4, epsilon=0.5, bounds=[0.0, 1.0])
    assert model.get_params()["n_clusters"] == 4
    assert model.accountant is not None and KMeans().accountant is None  # stored as given
    assert clone(model).set_params(oversampling=2).oversampling == 2
    fitted = model.fit(_blobs())
    assert fitted.bounds == [0.0, 1.0]  # unchanged (diffprivlib overwrites its own)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict(_blobs()[:50]), fitted.predict(_blobs()[:50]))
    assert fitted.score(_blobs()[:50]) <= 0
    assert fitted.transform(_blobs()[:5]).shape == (5, 4)


def test_more_clusters_than_records_is_refused():
    with pytest.raises(ValueError, match="n_clusters=5"):
        _kmeans(n_clusters=5).fit(np.zeros((4, 2)))


def test_the_shared_steps_batched_over_leading_axes_are_each_problem_on_its_own():
    # The batched engine (batched.dp_lloyd) calls these on every partition at once.
    rng = np.random.default_rng(4)
    lower, upper = np.array([0.0, -1.0]), np.array([1.0, 2.0])
    unit = rng.random((5, cluster.POOL * 6, 2))
    np.testing.assert_array_equal(
        initial_centres(lower, upper, unit),
        [initial_centres(lower, upper, problem) for problem in unit])
    points, weights = rng.random((5, 12, 2)), rng.normal(5.0, 5.0, (5, 12))
    weights[0] = -1.0  # no positive weight: every point weighs the same
    uniforms = rng.random((5, cluster.REDUCTION_STARTS, 3))
    np.testing.assert_allclose(
        cluster.reduce_centres(points, weights, 3, uniforms),
        [cluster.reduce_centres(*problem, 3, draws)
         for problem, draws in zip(zip(points, weights), uniforms)], atol=1e-12)
    counts, sums = rng.normal(3.0, 3.0, (5, 4)), rng.normal(0.0, 2.0, (5, 4, 2))
    redraws = rng.random((5, 4, 2))
    together = cluster.released_centres(counts, sums, lower, upper, 1.0, redraws)
    for p in range(5):
        alone = cluster.released_centres(counts[p], sums[p], lower, upper, 1.0, redraws[p])
        np.testing.assert_array_equal(together[0][p], alone[0])
        np.testing.assert_array_equal(together[1][p], alone[1])
    assert together[1].any() and not together[1].all()


def test_reduction_draws_k_means_plus_plus_seeds_by_their_weights():
    # The inverse-CDF draw is numpy's choice(p=...) for the same uniform (its first draw).
    rng = np.random.default_rng(2)
    weights = rng.random((200, 7)) * (rng.random((200, 7)) > 0.3)
    weights[:, 0] += 0.1
    uniforms = np.array([np.random.RandomState(seed).random_sample() for seed in range(200)])
    ours = cluster._draw(weights, uniforms)
    theirs = [np.random.RandomState(seed).choice(7, p=w / w.sum())
              for seed, w in enumerate(weights)]
    np.testing.assert_array_equal(ours, theirs)
