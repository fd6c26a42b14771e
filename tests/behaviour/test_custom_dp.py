"""A user's own DP estimator in the refit gate: skdptune.gate.register_dp_estimator (issue 19,
item 9). Before it, any class outside the built-in allowlist was refused, whatever it spent."""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import GaussianNB
from diffprivlib.utils import BudgetError
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state

from skdptune import (
    PrivateGridSearchCV,
    PrivateRandomizedSearchCV,
    _gate as gate,
    _partition_scaling as partition_scaling,
)
from skdptune.exceptions import GateError

BOUNDS = (0.0, 1.0)  # binary_data lies in [0, 1]^4 by construction (tests/conftest.py)


class NoisyCentroid(ClassifierMixin, BaseEstimator):
    """A toy DP nearest-centroid classifier: Laplace noise on per-class counts and sums.

    A test double: its noise is not calibrated to the library's replace-one adjacency (see
    examples/plot_custom_dp_estimator.py for one that is); the tests only need its spends. Spends ``eps * overspend``
    on its accountant (``overspend`` lets a test make it lie).
    """

    overspend = 1.0

    def __init__(self, eps=1.0, bounds=None, classes=None, accountant=None,
                 random_state=None):
        self.eps = eps
        self.bounds = bounds
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state

    def fit(self, X, y):
        accountant = BudgetAccountant.load_default(self.accountant)
        rng = check_random_state(self.random_state)
        lower, upper = self.bounds
        X = np.clip(np.asarray(X, dtype=float), lower, upper)
        sensitivity = X.shape[1] * (upper - lower)
        self.classes_ = np.asarray(self.classes)
        centroids = []
        for label in self.classes_:
            rows = X[np.asarray(y) == label]
            count = len(rows) + rng.laplace(scale=2 / self.eps)
            total = rows.sum(axis=0) + rng.laplace(scale=2 * sensitivity / self.eps,
                                                   size=X.shape[1])
            centroids.append(np.clip(total / max(count, 1.0), lower, upper))
        self.centroids_ = np.array(centroids)
        if self.overspend:
            accountant.spend(self.eps * self.overspend, 0)
        return self

    def predict(self, X):
        distances = ((np.asarray(X)[:, None, :] - self.centroids_[None]) ** 2).sum(axis=2)
        return self.classes_[np.argmin(distances, axis=1)]


class Overspending(NoisyCentroid):
    overspend = 2.0


class Silent(NoisyCentroid):
    overspend = 0.0


class NoAccountant(ClassifierMixin, BaseEstimator):
    def __init__(self, eps=1.0):
        self.eps = eps


WHY = "Laplace noise on per-class counts and clipped sums (a test double)"


@pytest.fixture
def register():
    """Register classes for one test; unregistered afterwards, whatever happens."""
    registered = []

    def add(cls, **kwargs):
        kwargs.setdefault("why", WHY)
        kwargs.setdefault("epsilon", "eps")
        kwargs.setdefault("requires", ("bounds", "classes"))
        gate.register_dp_estimator(cls, **kwargs)
        registered.append(cls)
        return cls

    yield add
    for cls in registered:
        if cls in gate.ALLOWED:
            gate.unregister_dp_estimator(cls)


def model(cls=NoisyCentroid, **params):
    params.setdefault("bounds", BOUNDS)
    params.setdefault("classes", [0, 1])
    return cls(**params)


def grid_search(estimator, **params):
    if "epsilon" not in params:  # the grid varies eps: the explicit split keeps it tunable
        params.setdefault("selection_epsilon", 1.0)
    params.setdefault("n_partitions", 5)
    params.setdefault("random_state", 0)
    params.setdefault("default", None)  # the selection's mechanics, every candidate alike
    return PrivateGridSearchCV(estimator, {"eps": [0.5, 2.0]}, **params)


def test_an_unregistered_class_is_refused_before_the_data(binary_data, partition_fits):
    X, y = binary_data
    accountant = BudgetAccountant()
    with pytest.raises(GateError, match="register_dp_estimator"):
        grid_search(model(), accountant=accountant).fit(X, y)
    assert partition_fits == [] and accountant.spent_budget == []


def test_a_registered_class_is_reserved_and_charged_what_it_declares(binary_data, register):
    register(NoisyCentroid)
    X, y = binary_data
    # Reserved: the a-priori check needs the selection (1) and the grid's largest eps (2).
    short = BudgetAccountant(epsilon=2.9)
    with pytest.raises(BudgetError):
        grid_search(model(), selection_epsilon=1.0, accountant=short).fit(X, y)
    assert short.spent_budget == []
    accountant = BudgetAccountant()
    search = grid_search(model(), selection_epsilon=1.0, accountant=accountant).fit(X, y)
    # Charged: the selection, then the refit's reservation (the largest declared eps); a
    # classifier scored by accuracy is checked with check_share (0.05) of the selection's
    # epsilon, charged with the refit (issue 40): the total is unchanged.
    assert accountant.spent_budget == [pytest.approx((0.95, 0.0)), pytest.approx((2.05, 0.0))]
    assert tuple(accountant.total()) == pytest.approx((3.0, 0.0))
    assert tuple(search.privacy_spent_) == pytest.approx((3.0, 0.0))
    assert search.predict(X).shape == (len(X),)
    assert "the user's responsibility" in gate.ALLOWED[NoisyCentroid].why


def test_the_one_budget_form_scales_the_registered_parameter(binary_data, register):
    register(NoisyCentroid)
    X, y = binary_data
    accountant = BudgetAccountant()
    # A grid over the bounds: a grid over `eps` itself is refused with epsilon the total.
    search = PrivateGridSearchCV(model(), {"bounds": [BOUNDS, (-1.0, 2.0)]}, epsilon=2.0,
                                 selection_share=0.25, n_partitions=5, random_state=0,
                                 accountant=accountant).fit(X, y)
    # The refit's share, in `eps`, less the check of the released model (accuracy: checked).
    assert search.best_estimator_.eps == pytest.approx(1.5 * (1 - search.check_share))
    assert tuple(accountant.total()) == pytest.approx((2.0, 0.0))


def test_a_class_that_spends_more_than_it_declares_is_refused_after_the_refit(
        binary_data, register):
    register(Overspending)
    X, y = binary_data
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(model(Overspending), {"eps": [1.5]}, selection_epsilon=1.0,
                                 n_partitions=5, accountant=accountant, random_state=0,
                                 default=None)
    with pytest.raises(ValueError, match=r"spent \(3.0, 0.0\), more than the \(1.5, 0.0\)"):
        search.fit(X, y)
    assert not hasattr(search, "best_estimator_")
    # The refit (one candidate: no selection): the larger measured spend (2 * 1.5), not the
    # 1.5 declared.
    assert accountant.spent_budget == [pytest.approx((3.0, 0.0))]


def test_a_class_that_spends_nothing_is_refused(binary_data, register):
    register(Silent)
    X, y = binary_data
    search = grid_search(model(Silent), accountant=BudgetAccountant())
    with pytest.raises(ValueError, match="recorded no privacy spend"):
        search.fit(X, y)
    assert not hasattr(search, "best_estimator_")


def test_its_declared_bounds_are_required(binary_data, register, partition_fits):
    register(NoisyCentroid)
    X, y = binary_data
    accountant = BudgetAccountant()
    with pytest.raises(GateError, match="bounds=None.*registration of this class requires"):
        grid_search(model(bounds=None), accountant=accountant).fit(X, y)
    with pytest.raises(GateError, match="eps='1' .*not a privacy budget"):
        PrivateGridSearchCV(model(), {"eps": ["1"]}, n_partitions=5,
                            accountant=accountant).fit(X, y)
    assert partition_fits == [] and accountant.spent_budget == []


def test_registration_is_exact_and_refuses_what_it_cannot_honour(register):
    # A subclass of a registered class is not covered (it may change fit).
    register(NoisyCentroid)
    with pytest.raises(GateError, match="not on the gate's allowlist"):
        gate.check_release(model(Overspending))
    # Built-ins cannot be registered again or removed.
    with pytest.raises(ValueError, match="built-in entry"):
        gate.register_dp_estimator(GaussianNB, why="no")
    with pytest.raises(ValueError, match="built-in entry"):
        gate.unregister_dp_estimator(GaussianNB)
    # The same registration again does nothing; another one is refused.
    gate.register_dp_estimator(NoisyCentroid, why=WHY, epsilon="eps",
                               requires=("bounds", "classes"))
    with pytest.raises(ValueError, match="already registered"):
        gate.register_dp_estimator(NoisyCentroid, why="other", epsilon="eps")
    # What a search needs: an accountant to measure the spend, the named parameters, a reason.
    with pytest.raises(ValueError, match=r"no constructor parameter \['accountant'\]"):
        gate.register_dp_estimator(NoAccountant, why=WHY, epsilon="eps")
    with pytest.raises(ValueError, match=r"no constructor parameter \['epsilon'\]"):
        gate.register_dp_estimator(Silent, why=WHY)
    with pytest.raises(ValueError, match=r"no constructor parameter \['norm'\]"):
        gate.register_dp_estimator(Silent, why=WHY, epsilon="eps", requires=("norm",))
    with pytest.raises(ValueError, match="why=''"):
        gate.register_dp_estimator(Silent, why="", epsilon="eps")
    with pytest.raises(TypeError, match="must be an estimator class"):
        gate.register_dp_estimator(model(Silent), why=WHY, epsilon="eps")
    assert Silent not in gate.ALLOWED and NoAccountant not in gate.ALLOWED


def test_unregistering_restores_the_gate_and_the_scaling_rules(register):
    register(NoisyCentroid, partition_scaling=True)
    rule = partition_scaling.rules_for(model())["eps"]
    assert rule.apply(1.0, 12.5) == pytest.approx(12.5)  # proportional, as diffprivlib's
    assert gate.check_release(model(eps=0.7)) == (0.7, 0.0)
    gate.unregister_dp_estimator(NoisyCentroid)
    assert "eps" not in partition_scaling.rules_for(model())
    with pytest.raises(GateError):
        gate.check_release(model())
    with pytest.raises(ValueError, match="not registered"):
        gate.unregister_dp_estimator(NoisyCentroid)


def test_partition_scaling_of_a_registered_class_is_opt_in(binary_data, register,
                                                           partition_fits):
    X, y = binary_data
    register(NoisyCentroid)
    search = grid_search(model(), refit=False, n_partitions=4, validation_fraction=0.2,
                         accountant=BudgetAccountant())
    search.fit(X, y)
    assert {params["eps"] for params, *_ in partition_fits} == {0.5, 2.0}  # as written
    partition_fits.clear()
    gate.unregister_dp_estimator(NoisyCentroid)
    register(NoisyCentroid, partition_scaling=True)
    search.fit(X, y)
    # ratio = k / (1 - validation_fraction) = 5: partition fits get eps * 5.
    assert {params["eps"] for params, *_ in partition_fits} == {2.5, 10.0}


def test_a_registered_class_in_a_randomized_search(binary_data, register):
    register(NoisyCentroid)
    X, y = binary_data
    accountant = BudgetAccountant()
    search = PrivateRandomizedSearchCV(
        model(eps=1.0), {"random_state": [0, 1, 2]}, trial_epsilon=1.0, n_iter=3.0,
        accountant=accountant, random_state=0,
    ).fit(X, y)
    assert tuple(accountant.total()) == pytest.approx(tuple(search.privacy_spent_))
    assert search.predict(X).shape == (len(X),)


class SlightlyOverspending(NoisyCentroid):
    overspend = 1 + 5e-7  # far above float rounding, below an absolute 1e-9 at eps=0.001


class RoundingOverspending(NoisyCentroid):
    overspend = 1 + 1e-12  # float rounding of a sum of step budgets


@pytest.mark.parametrize("cls, released", [(SlightlyOverspending, False),
                                           (RoundingOverspending, True)])
def test_both_searches_hold_a_released_fit_to_one_relative_tolerance(binary_data, register,
                                                                     cls, released):
    # One check in the gate for both searches: a spend above the budget by more than a
    # relative 1e-9 is refused, whatever the size of the budget (the grid search used to allow
    # an absolute 1e-9, which at eps=0.001 let a 5e-7 relative overspend through).
    register(cls)
    X, y = binary_data
    searches = [
        PrivateGridSearchCV(model(cls, eps=0.001), {"eps": [0.001]}, selection_epsilon=1.0,
                            n_partitions=5, random_state=0),
        PrivateRandomizedSearchCV(model(cls, eps=0.001), {"random_state": [0, 1]},
                                  trial_epsilon=0.001, n_iter=2.0, random_state=0),
    ]
    for search in searches:
        search.set_params(accountant=BudgetAccountant())
        if released:
            assert search.fit(X, y).predict(X).shape == (len(X),)
        else:
            with pytest.raises(ValueError, match=r"spent \(0\.001000000\d*, 0\.0\), more than "
                                                 r"the \(0\.001, 0\.0\)"):
                search.fit(X, y)
            assert not hasattr(search, "best_estimator_")


@pytest.mark.parametrize("cls, reason", [
    (Silent, "recorded no privacy spend"),
    (Overspending, r"spent \(2\.0, 0\.0\), more than the \(1\.0, 0\.0\) the per-trial budget"),
])
def test_a_randomized_trial_is_checked_as_the_grid_refit_is(binary_data, register, cls,
                                                            reason):
    register(cls)
    X, y = binary_data
    accountant = BudgetAccountant()
    search = PrivateRandomizedSearchCV(
        model(cls, eps=1.0), {"random_state": [0, 1, 2]}, trial_epsilon=1.0, n_iter=3.0,
        accountant=accountant, random_state=0,
    )
    with pytest.raises(ValueError, match=reason):
        search.fit(X, y)
    assert not hasattr(search, "best_estimator_")
    assert accountant.total()[0] > 0  # charged even on failure (one entry)
    assert len(accountant.spent_budget) == 1
