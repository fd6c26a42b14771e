"""Labels taken from the data (issue 34, item 8): a class held by a single record.

Neighbouring datasets that differ in the one record of a rare class: on ``D`` one record has
label 2, on ``D'`` it has label 0. A released classifier whose ``classes_`` (or the shape of
its statistics) follows the labels present shows class 2 on ``D`` and never on ``D'``: no
finite epsilon. With declared classes, every released classifier has the same classes and the
same mechanisms on both, and an audit of its outputs stays within the charged epsilon.

False failures: each audit's bound exceeds its claim with probability at most
``harness.ALPHA`` (1e-3) when the mechanism keeps its claim.
"""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import GaussianNB as DPGaussianNB

from skdptune._models.naive_bayes import gaussian_nb_charge
from skdptune.linear_model import LogisticRegression
from skdptune.naive_bayes import GaussianNB

from .harness import audit, singletons

EPSILON = 1.0
N = 40


def _pair():
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, (N, 2))
    y = (X[:, 0] > 0.5).astype(int)
    y[0] = 2  # the one record of a rare class
    y_prime = y.copy()
    y_prime[0] = 0  # replaced: the rare class is gone
    return (X, y), (X, y_prime)


D, D_PRIME = _pair()
PROBE = np.array([[0.9, 0.9], [0.1, 0.1]])


def _gaussian_nb(model):
    def mechanism(data):
        fitted = model().set_params(accountant=BudgetAccountant()).fit(*data)
        return (tuple(fitted.classes_.tolist()),) + tuple(fitted.predict(PROBE).tolist())
    return mechanism


def test_a_rare_class_shows_in_diffprivlibs_model():
    # Before: the classes follow the labels present; the audit flags it at any claim.
    result = audit(_gaussian_nb(lambda: DPGaussianNB(bounds=(0.0, 1.0), epsilon=EPSILON)),
                   D, D_PRIME, 150, events=[frozenset(o for o in _outputs(3) if len(o[0]) == 3)])
    # Above what a release is charged: the audit proves the fault (up to alpha).
    assert result.epsilon_lower_bound > EPSILON * gaussian_nb_charge(
        DPGaussianNB(bounds=(0.0, 1.0))), result.summary()


def _outputs(n_classes):
    labels = list(range(n_classes))
    return [(classes, a, b) for classes in ((0, 1), (0, 2), (0, 1, 2))
            for a in labels for b in labels]


def test_declared_classes_make_gaussian_nb_keep_its_charge_on_the_rare_class_pair():
    model = lambda: GaussianNB(bounds=(0.0, 1.0), classes=[0, 1, 2], epsilon=EPSILON)  # noqa
    fitted = model().set_params(accountant=BudgetAccountant())
    for data in (D, D_PRIME):
        np.testing.assert_array_equal(fitted.fit(*data).classes_, [0, 1, 2])
    charged = EPSILON * gaussian_nb_charge(model())
    result = audit(_gaussian_nb(model), D, D_PRIME, 200, events=singletons(_outputs(3)))
    assert result.epsilon_lower_bound <= charged, result.summary()


def test_declared_classes_make_logistic_regression_keep_its_charge_on_the_rare_class_pair():
    def mechanism(data):
        fitted = LogisticRegression(data_norm=1.5, classes=[0, 1, 2], epsilon=EPSILON,
                                    accountant=BudgetAccountant()).fit(*data)
        assert fitted.coef_.shape == (3, 2)  # one problem per declared class on both
        return (tuple(fitted.classes_.tolist()),) + tuple(fitted.predict(PROBE).tolist())

    result = audit(mechanism, D, D_PRIME, 150, events=singletons(_outputs(3)))
    assert result.epsilon_lower_bound <= EPSILON, result.summary()


def test_undeclared_classes_warn_and_a_label_outside_the_declared_ones_is_refused():
    from diffprivlib.utils import PrivacyLeakWarning

    with pytest.warns(PrivacyLeakWarning, match="classes have not been specified"):
        LogisticRegression(data_norm=1.5, accountant=BudgetAccountant()).fit(*D)
    with pytest.raises(ValueError, match="not among the declared classes"):
        GaussianNB(bounds=(0.0, 1.0), classes=[0, 1],
                   accountant=BudgetAccountant()).fit(*D)
