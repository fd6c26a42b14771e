"""The DP models' shared fit prologue (issue 41, item 4): ``skdptune/_models/base.py``.

What is checked, over every room: the refusal of each undeclared public parameter in the one
wording (before the accountant and the data, and the refit gate's refusal in the same words),
the one resolution of the accountant (``accountant=None`` is diffprivlib's default, checked and
recorded alike), and the sources of randomness (fresh entropy and ``secrets`` without a seed,
numpy's global generator untouched; under a seed, a structure stream that no noise draw moves).

Deterministic throughout: fixed seeds, and fresh-entropy draws compared on 2 ** -512 events
(treated as impossible, stated where used).
"""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.utils import BudgetError

from skdptune._gate import check_candidate
from skdptune._models import cluster, tree
from skdptune._models.base import random_sources, undeclared_reason
from skdptune.cluster import KMeans
from skdptune.decomposition import PCA
from skdptune.ensemble import RandomForestClassifier
from skdptune.exceptions import GateError
from skdptune.linear_model import LogisticRegression, Ridge
from skdptune.naive_bayes import GaussianNB
from skdptune.tree import DecisionTreeClassifier

#: Every room's model, declared as a released fit needs, and the data it fits.
DECLARED = {
    GaussianNB: (dict(bounds=(0.0, 1.0), classes=[0, 1]), "classes"),
    LogisticRegression: (dict(data_norm=1.0, classes=[0, 1]), "classes"),
    Ridge: (dict(bounds_X=(0.0, 1.0), bounds_y=(0.0, 1.0)), "target"),
    DecisionTreeClassifier: (dict(bounds=(0.0, 1.0), classes=[0, 1], max_depth=3), "classes"),
    RandomForestClassifier: (dict(bounds=(0.0, 1.0), classes=[0, 1], n_estimators=3,
                                  max_depth=3), "classes"),
    KMeans: (dict(bounds=(0.0, 1.0), n_clusters=2), None),
    PCA: (dict(data_norm=2.0, bounds=(0.0, 1.0), n_components=2), None),
}

#: ``(class, parameter left None, other fix)``: every public parameter a room's fit refuses
#: to read from the data.
UNDECLARED = [
    (GaussianNB, "bounds", None),
    (LogisticRegression, "data_norm", None),
    (Ridge, "bounds_X", None),
    (Ridge, "bounds_y", None),
    (DecisionTreeClassifier, "bounds", None),
    (DecisionTreeClassifier, "classes", None),
    (RandomForestClassifier, "bounds", None),
    (RandomForestClassifier, "classes", None),
    (KMeans, "bounds", None),
    (PCA, "data_norm", None),
    (PCA, "bounds", "centered=True for data centred by public knowledge"),
]


def _model(cls, **params):
    return cls(**{**DECLARED[cls][0], "accountant": BudgetAccountant(), **params})


def _data(cls, n=300):
    rng = np.random.default_rng(0)
    X = rng.random((n, 3))
    kind = DECLARED[cls][1]
    if kind is None:
        return (X,)
    return X, (X[:, 0] > 0.5).astype(int) if kind == "classes" else X[:, 0]


def _ids(case):
    return f"{case[0].__name__}-{case[1]}"


# --- The refusal -------------------------------------------------------------------------------


@pytest.mark.parametrize("cls, name, alternative", UNDECLARED, ids=map(_ids, UNDECLARED))
def test_every_room_refuses_an_undeclared_parameter_in_the_one_wording(cls, name, alternative):
    # An accountant with no budget left (checking it would raise BudgetError) and no data
    # (reading them would raise another error): the refusal comes first.
    spent = BudgetAccountant(epsilon=1.0)
    spent.spend(1.0, 0)
    model = _model(cls, **{name: None, "accountant": spent})
    with pytest.raises(ValueError) as refused:
        model.fit(*[None] * len(_data(cls)))
    assert not isinstance(refused.value, BudgetError)
    reason = undeclared_reason(name, alternative=alternative)
    assert str(refused.value) == f"{cls.__name__}: {reason}."
    # The wording names the parameter, why it must be declared, and the fix.
    for said in (f"{name}=None would be read from the private data",
                 "diffprivlib warns PrivacyLeakWarning", f"declare {name}=",
                 "from public knowledge"):
        assert said in reason
    assert spent.spent_budget == [(1.0, 0)]


def test_several_undeclared_parameters_are_named_in_one_refusal():
    with pytest.raises(ValueError) as refused:
        Ridge(accountant=BudgetAccountant()).fit(None, None)
    assert str(refused.value) == ("Ridge: " + undeclared_reason("bounds_X") + "; "
                                  + undeclared_reason("bounds_y") + ".")


@pytest.mark.parametrize("cls, name, alternative",
                         [case for case in UNDECLARED if case[2] is None],
                         ids=map(_ids, [case for case in UNDECLARED if case[2] is None]))
def test_the_gate_refuses_an_undeclared_parameter_in_the_same_words(cls, name, alternative):
    with pytest.raises(GateError) as refused:
        check_candidate(_model(cls, **{name: None}), "the estimator")
    assert undeclared_reason(name) in str(refused.value)


def test_pcas_centring_condition_gives_the_other_fix_in_the_same_words():
    with pytest.raises(GateError) as refused:
        check_candidate(_model(PCA, bounds=None), "the estimator")
    assert undeclared_reason(
        "bounds", alternative="centered=True for data centred by public knowledge"
    ) in str(refused.value)


# --- The accountant ----------------------------------------------------------------------------


@pytest.mark.parametrize("cls", DECLARED, ids=lambda cls: cls.__name__)
def test_every_room_checks_and_records_on_the_default_accountant_when_given_none(
        cls, monkeypatch):
    # diffprivlib's __init__ resolves accountant=None at construction (five of the rooms
    # inherit it); set_params(accountant=None) leaves None, which a fit resolves when it runs.
    default = BudgetAccountant()
    monkeypatch.setattr(BudgetAccountant, "_default", default)
    model = _model(cls, epsilon=0.6).set_params(accountant=None)
    model.fit(*_data(cls))
    assert default.spent_budget == [(0.6, 0)]
    assert model.accountant is None  # the parameter as set
    # The check reads the same accountant: a default with too little left refuses the fit.
    monkeypatch.setattr(BudgetAccountant, "_default", BudgetAccountant(epsilon=0.5))
    with pytest.raises(BudgetError):
        _model(cls, epsilon=0.6).set_params(accountant=None).fit(*_data(cls))


# --- Randomness --------------------------------------------------------------------------------


def _global_state():
    name, keys, position, has_gauss, cached = np.random.get_state()
    return name, keys.copy(), position, has_gauss, cached


def _same_state(a, b):
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]


def test_without_a_seed_noise_is_secure_and_structure_fresh_entropy():
    np.random.seed(3)
    before = _global_state()
    assert random_sources(None) == (None, None)  # diffprivlib's mechanisms: secrets
    (noise, first), (_, second) = random_sources(None, True), random_sources(None, True)
    assert noise is None and isinstance(first, np.random.Generator)
    # Fresh OS entropy: two sources agree on 8 draws of 2 ** 63 values with probability
    # 2 ** -504 (treated as impossible).
    assert not np.array_equal(first.integers(0, 2 ** 63, 8), second.integers(0, 2 ** 63, 8))
    assert _same_state(before, _global_state())


def test_a_seed_gives_the_noise_alone_as_scikit_learn_would():
    # What NB, Ridge, LogisticRegression and PCA drew before the base: seeded fits unchanged.
    noise, structure = random_sources(7)
    assert structure is None
    np.testing.assert_array_equal(noise.random_sample(6),
                                  np.random.RandomState(7).random_sample(6))
    state = np.random.RandomState(7)
    assert random_sources(state)[0] is state


def test_a_seed_gives_a_structure_stream_no_noise_draw_moves():
    noise, structure = random_sources(7, True)
    again_noise, again_structure = random_sources(7, True)
    noise.random_sample(1000)  # one fit's noise drew more than the other's
    np.testing.assert_array_equal(structure.random(6), again_structure.random(6))
    np.testing.assert_array_equal(noise.random_sample(6), again_noise.random_sample(1006)[-6:])
    fresh_noise, fresh_structure = random_sources(7, True)
    assert not np.array_equal(fresh_noise.random_sample(6), fresh_structure.random(6))
    # A RandomState is drawn from, as scikit-learn does: two calls give two pairs of streams.
    state = np.random.RandomState(7)
    assert not np.array_equal(random_sources(state, True)[1].random(6),
                              random_sources(state, True)[1].random(6))


def _advancing(draws):
    """``random_sources`` whose noise stream has already given ``draws`` values: a
    fit whose noise drew more (another epsilon, other data)."""
    def sources(random_state, structure=False):
        noise, structure_source = random_sources(random_state, structure)
        noise.random_sample(draws)
        return noise, structure_source
    return sources


@pytest.mark.parametrize("cls", [DecisionTreeClassifier, RandomForestClassifier],
                         ids=lambda cls: cls.__name__)
def test_a_seeded_trees_structure_does_not_depend_on_its_noise(cls, monkeypatch):
    splits = []
    for epsilon, draws in ((0.5, 0), (5.0, 17)):
        monkeypatch.setattr(tree, "random_sources", _advancing(draws))
        shuffle = {"shuffle": True} if cls is RandomForestClassifier else {}
        model = _model(cls, epsilon=epsilon, random_state=4, **shuffle).fit(*_data(cls))
        splits.append([(t.tree_.feature.copy(), t.tree_.threshold.copy())
                       for t in getattr(model, "estimators_", [model])])
    for (feature, threshold), (again_feature, again_threshold) in zip(*splits):
        np.testing.assert_array_equal(feature, again_feature)
        np.testing.assert_allclose(threshold, again_threshold, rtol=0, atol=1e-12)


def test_a_seeded_kmeans_draws_its_seeds_and_starts_apart_from_its_noise(monkeypatch):
    # The seeds come before any noise; the reduction's starts after the first iteration's
    # noise: both the same whatever the noise drew.
    recorded = []
    initial, reduce = cluster.initial_centres, cluster.reduce_centres

    def record_initial(lower, upper, unit):
        recorded[-1]["unit"] = unit.copy()
        return initial(lower, upper, unit)

    def record_reduce(points, weights, n_clusters, uniforms):
        recorded[-1]["starts"] = uniforms.copy()
        return reduce(points, weights, n_clusters, uniforms)

    monkeypatch.setattr(cluster, "initial_centres", record_initial)
    monkeypatch.setattr(cluster, "reduce_centres", record_reduce)
    for epsilon, draws in ((0.5, 0), (5.0, 17)):
        monkeypatch.setattr(cluster, "random_sources", _advancing(draws))
        recorded.append({})
        _model(KMeans, epsilon=epsilon, random_state=4).fit(*_data(KMeans))
    np.testing.assert_array_equal(recorded[0]["unit"], recorded[1]["unit"])
    np.testing.assert_array_equal(recorded[0]["starts"], recorded[1]["starts"])
