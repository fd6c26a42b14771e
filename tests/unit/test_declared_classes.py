"""Declared classes (issue 34, item 8): skdptune's GaussianNB is diffprivlib's fit when every
declared class is present, the declaration is validated naming the parameter, and a search
refuses labels outside it before the accountant (a continuous target first says so)."""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import GaussianNB as DPGaussianNB

from skdptune import PrivateGridSearchCV
from skdptune.linear_model import LogisticRegression
from skdptune.naive_bayes import GaussianNB


def _data(n=200, n_classes=3, seed=0):
    rng = np.random.RandomState(seed)
    y = np.arange(n) % n_classes
    return np.clip(rng.normal(y[:, None] / n_classes, 0.3, (n, 2)), 0, 1), y


@pytest.mark.parametrize("priors", [None, [0.2, 0.3, 0.5]])
def test_with_every_class_present_it_is_diffprivlibs_fit(priors):
    # The same seed, the same draws in the same order: the same model (the arithmetic is the
    # same, so only rounding could differ).
    X, y = _data()
    ours = GaussianNB(bounds=(0, 1), classes=[0, 1, 2], priors=priors, epsilon=2.0,
                      random_state=4, accountant=BudgetAccountant()).fit(X, y)
    theirs = DPGaussianNB(bounds=(0, 1), priors=priors, epsilon=2.0, random_state=4,
                          accountant=BudgetAccountant()).fit(X, y)
    for name in ("class_count_", "class_prior_", "theta_", "var_"):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-12,
                                   err_msg=name)
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)


@pytest.mark.parametrize("make", [
    lambda classes: GaussianNB(bounds=(0, 1), classes=classes),
    lambda classes: LogisticRegression(data_norm=2.0, classes=classes),
], ids=["GaussianNB", "LogisticRegression"])
@pytest.mark.parametrize("classes, match", [
    ([0], r"classes=\[0\] declares fewer than two labels"),
    ([[0, 1], [2, 3]], r"classes=\[\[0, 1\], \[2, 3\]\] is not a flat list"),
])
def test_a_declaration_the_fit_cannot_take_is_refused_naming_it(make, classes, match):
    X, y = _data(n_classes=2)
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match=match):
        make(classes).set_params(accountant=accountant).fit(X, y)


def test_the_search_refuses_labels_outside_the_declared_classes_before_the_accountant():
    X, y = _data()
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(GaussianNB(bounds=(0, 1), classes=[0, 1]),
                                 {"var_smoothing": [1e-9]}, n_partitions=5,
                                 accountant=accountant)
    with pytest.raises(ValueError, match=r"not among the declared classes=\[0, 1\]"):
        search.fit(X, y)
    # A continuous target is named as such first (scikit-learn's message), not as labels
    # outside the declaration.
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        search.fit(X, y + 0.5)
    assert accountant.spent_budget == []
