"""A DP model is one room (issue 41, item 1): its module holds its mechanism and its facts.

The gate's row of each of skdptune's own DP models reads the ``FACTS`` its module exports, and
the tuning policy reads the noise dimension from that row, refusing to guess one for a model
of the library that declares none.
"""

import dataclasses
import sys

import pytest
from diffprivlib import models as dp

from skdptune import _default_policy as default_policy
from skdptune._gate import ALLOWED
from skdptune._models import cluster, decomposition, ensemble, linear_model, naive_bayes, tree
from skdptune._models.facts import ModelFacts

#: Every DP model of the library and the facts its room exports (``FACTS``, or one per class
#: where a room holds two).
MODELS = {
    naive_bayes.GaussianNB: naive_bayes.FACTS,
    tree.DecisionTreeClassifier: tree.FACTS,
    ensemble.RandomForestClassifier: ensemble.FACTS,
    cluster.KMeans: cluster.FACTS,
    decomposition.PCA: decomposition.FACTS,
    linear_model.LogisticRegression: linear_model.LOGISTIC_FACTS,
    linear_model.Ridge: linear_model.RIDGE_FACTS,
}
FACT_FUNCTIONS = ("charge", "zero_out", "noise_dimension", "condition")


@pytest.mark.parametrize("cls", MODELS, ids=lambda cls: cls.__name__)
def test_a_models_gate_row_is_its_rooms_facts(cls):
    facts, rule = MODELS[cls], ALLOWED[cls]
    assert facts in vars(sys.modules[cls.__module__]).values()  # exported by its own room
    assert isinstance(facts, ModelFacts)
    assert rule.kind == "dp"
    assert (rule.why, rule.declared, rule.releases) == (facts.why, facts.declared,
                                                         facts.releases)
    for name in FACT_FUNCTIONS:
        assert getattr(rule, name) is getattr(facts, name), name
        function = getattr(facts, name)
        # The proof sits beside the mechanism: in the model's own room, not in the gate.
        assert function is None or function.__module__ == cls.__module__, (name, function)
        assert function is None or function.__doc__, (name, "has no docstring (its proof)")


def test_diffprivlibs_classes_take_the_law_of_skdptunes_twin():
    # The same mechanisms, the same charge and noise dimension; refused in a released fit.
    twins = {dp.GaussianNB: naive_bayes.FACTS, dp.DecisionTreeClassifier: tree.FACTS,
             dp.RandomForestClassifier: ensemble.FACTS,
             dp.LogisticRegression: linear_model.LOGISTIC_FACTS}
    for cls, facts in twins.items():
        rule = ALLOWED[cls]
        assert (rule.charge, rule.zero_out, rule.noise_dimension) == (
            facts.charge, facts.zero_out, facts.noise_dimension), cls
        assert rule.condition is not None and rule.releases == {}, cls
    # diffprivlib's LinearRegression makes Ridge's releases, miscalibrated: Ridge's noise
    # dimension, and no zero-out figure (Ridge's is derived for its own calibration only).
    rule = ALLOWED[dp.LinearRegression]
    assert rule.noise_dimension is linear_model.RIDGE_FACTS.noise_dimension
    assert rule.zero_out is None and rule.condition is not None and rule.releases == {}


@pytest.mark.parametrize("step, width, expected", [
    # A noisy mean and variance per feature and declared class.
    (naive_bayes.GaussianNB(bounds=(0, 1), classes=[0, 1, 2]), 4, 12),
    # A label per leaf; a forest's trees each.
    (tree.DecisionTreeClassifier(max_depth=3), 4, 8),
    (ensemble.RandomForestClassifier(n_estimators=5, max_depth=3), 4, 40),
    # A sum per cluster and feature, and a count.
    (cluster.KMeans(n_clusters=3), 4, 15),
    # Eigenvalues, the released vectors' coordinates, and the mean unless centred; a variance
    # fraction at its public upper bound (every vector).
    (decomposition.PCA(n_components=2), 5, 5 + 10 + 5),
    (decomposition.PCA(n_components=2, centered=True), 5, 5 + 10),
    (decomposition.PCA(n_components=0.9), 5, 5 + 25 + 5),
    # Objective perturbation: the coefficients and the intercept, per one-vs-rest problem
    # (one for two classes, or none declared).
    (linear_model.LogisticRegression(classes=[0, 1]), 4, 5),
    (linear_model.LogisticRegression(classes=["a", "b", "c"]), 4, 15),
    (linear_model.LogisticRegression(classes=[0, 1, 2], fit_intercept=False), 4, 12),
    (linear_model.LogisticRegression(), 4, 5),
    # The functional mechanism's monomials: d (d + 1) / 2 + d + 1.
    (linear_model.Ridge(), 4, 10 + 4 + 1),
    (linear_model.Ridge(fit_intercept=False), 1, 3),
    # Diffprivlib's own classes: their twin's law.
    (dp.GaussianNB(), 4, 8),
    (dp.KMeans(n_clusters=2), 4, 10),
    (dp.LogisticRegression(), 4, 5),
    (dp.LogisticRegression(fit_intercept=False), 4, 4),
    (dp.LinearRegression(), 3, 6 + 3 + 1),
])
def test_the_policy_reads_the_noise_dimension_from_the_room(step, width, expected):
    assert default_policy.noise_dimension(step, width) == expected
    assert default_policy.refit_noise(step, 1000, width) == pytest.approx(
        default_policy.REFIT_NOISE_CONSTANT * expected / 1000, rel=1e-12)


def test_a_subclass_outside_the_library_takes_its_parents_noise_dimension():
    class MyRegression(dp.LinearRegression):
        pass

    class MyLogistic(linear_model.LogisticRegression):
        pass

    assert default_policy.noise_dimension(MyRegression(), 3) == 10  # not width + 1
    assert default_policy.noise_dimension(MyLogistic(classes=[0, 1, 2]), 4) == 15


def test_a_class_outside_the_library_gets_its_width_plus_one():
    from sklearn.naive_bayes import GaussianNB

    assert default_policy.noise_dimension(GaussianNB(), 4) == 5


def test_the_policy_refuses_to_guess_for_a_library_model_without_one(monkeypatch):
    cls = tree.DecisionTreeClassifier
    monkeypatch.setitem(ALLOWED, cls, dataclasses.replace(ALLOWED[cls], noise_dimension=None))
    # Its parent's row (diffprivlib's tree) declares one, and is not taken either.
    assert ALLOWED[dp.DecisionTreeClassifier].noise_dimension is not None
    with pytest.raises(NotImplementedError, match="DecisionTreeClassifier.*noise dimension"):
        default_policy.noise_dimension(cls(max_depth=3), 4)


def test_model_facts_refuse_a_fact_left_out_or_of_the_wrong_kind():
    facts = dict(why="Laplace on clipped sums", declared=("bounds",), charge=None,
                 zero_out=None, releases={"coef_": "post-processing"},
                 noise_dimension=lambda step, width: width)
    ModelFacts(**facts)
    without = {name: value for name, value in facts.items() if name != "noise_dimension"}
    with pytest.raises(TypeError, match="noise_dimension"):
        ModelFacts(**without)
    for name, wrong in [("noise_dimension", None), ("why", " "), ("declared", "bounds"),
                        ("charge", 2.0), ("releases", {"coef_": ""})]:
        with pytest.raises(TypeError, match=name):
            ModelFacts(**{**facts, name: wrong})


def test_another_librarys_row_cites_the_gates_audit():
    # Facts of skdptune's models sit in their rooms; those of diffprivlib's and scikit-learn's
    # classes in skdptune/_gate_audit.py, each condition with its reason in a docstring.
    from skdptune import _gate_audit

    others = {cls: rule for cls, rule in ALLOWED.items()
              if not cls.__module__.startswith("skdptune.")}
    assert dp.LogisticRegression in others and dp.LinearRegression in others
    for cls, rule in others.items():
        if rule.condition is not None:
            assert rule.condition.__module__ == _gate_audit.__name__, cls
            assert rule.condition.__doc__, (cls, "its condition has no docstring")
    assert ALLOWED[dp.StandardScaler].releases is _gate_audit.SCALER_RELEASES
