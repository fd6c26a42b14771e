"""Fitting diffprivlib estimators so that their privacy spend is measured and leaks refused.

Shared by every search: which steps take an ``accountant``, what budget a configuration
declares, whether a configuration can be fitted privately at all, and a fit that records
diffprivlib's ``PrivacyLeakWarning`` instead of letting it pass.
"""

import threading
import warnings
from numbers import Real

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.utils import PrivacyLeakWarning
from sklearn.base import clone
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder
from sklearn.utils import get_tags

# Parameter names whose values are privacy budgets spent by a diffprivlib estimator.
_BUDGET_PARAMETERS = ("epsilon", "delta")

#: warnings.catch_warnings swaps process-wide state and is not thread-safe: a partition fit's
#: "ignore PrivacyLeakWarning" in one thread could hide a leak from a refit in another (two
#: searches in threads, or joblib's threading backend). Every such block holds this lock, which
#: serialises fits under the threading backend (process backends are unaffected).
WARNINGS_LOCK = threading.RLock()


class MeasuringAccountant(BudgetAccountant):
    """A fresh, unlimited accountant that measures a fit's spend and survives ``clone``.

    ``copy`` and ``deepcopy`` return the object itself. scikit-learn's ``clone`` deep-copies
    non-estimator parameters, so a meta-estimator that clones its steps during ``fit``
    (``ColumnTransformer``, ``FeatureUnion``) would otherwise send their spends to copies that
    nobody reads, and the fit would be measured as spending less than it did.
    """

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def with_params(estimator, params, source="param_grid candidate"):
    """A clone of ``estimator`` with ``params`` set; names the setting on a bad parameter."""
    try:
        return clone(estimator).set_params(**params)
    except ValueError as error:
        raise ValueError(f"{source} {params} is invalid: {error}") from error


def set_accountants(estimator, accountant):
    """Give every (nested) step that takes an ``accountant`` the given accountant."""
    keys = [
        key for key in estimator.get_params(deep=True)
        if key == "accountant" or key.endswith("__accountant")
    ]
    estimator.set_params(**{key: accountant for key in keys})


def declared_budget(estimator):
    """``(epsilon, delta)`` that a fit of ``estimator`` declares it will spend.

    The sum over every (nested) ``epsilon``/``delta`` parameter: each diffprivlib step spends
    its own budget and the steps compose sequentially. Used for a-priori budget checks, and as
    a floor and a grid maximum when charging a fit.
    """
    totals = dict.fromkeys(_BUDGET_PARAMETERS, 0.0)
    for key, value in estimator.get_params(deep=True).items():
        name = key.rsplit("__", 1)[-1]
        if name in totals and isinstance(value, Real) and np.isfinite(value):
            totals[name] += float(value)
    return totals["epsilon"], totals["delta"]


def check_fit_is_private(estimator, remedy):
    """Refuse, before any data is touched, an estimator with a fitted step that cannot be DP.

    Every leaf estimator (one with no estimator-valued parameters) must take a diffprivlib
    ``accountant``, be stateless (scikit-learn's ``requires_fit=False`` tag), or be a
    categorical encoder with declared categories (:func:`fits_nothing_from_data`).

    Parameters
    ----------
    estimator : estimator
        The configuration whose fitted model will be released.
    remedy : str
        What the caller can do instead (appended to the error message).
    """
    def nested_estimators(node):
        return [
            value for value in node.get_params(deep=True).values()
            if hasattr(value, "get_params") and hasattr(value, "fit")
            and not isinstance(value, type)
        ]

    for node in [estimator] + nested_estimators(estimator):
        is_leaf = not nested_estimators(node)
        if not is_leaf or "accountant" in node.get_params(deep=False):
            continue
        if get_tags(node).requires_fit and not fits_nothing_from_data(node):
            raise ValueError(
                f"The released model must be differentially private, but "
                f"{type(node).__name__} is fitted on the data without privacy (it takes no "
                f"diffprivlib accountant). Use a diffprivlib estimator for this step{remedy}."
            )


def fits_nothing_from_data(step):
    """Whether a fitted step learns nothing from the data, so it needs no privacy.

    Only categorical encoders whose categories are declared (public) and that do not merge
    categories by their observed frequency qualify.
    """
    if not isinstance(step, (OneHotEncoder, OrdinalEncoder)):
        return False
    params = step.get_params()
    return (
        not isinstance(params["categories"], str)
        and params.get("min_frequency") is None
        and params.get("max_categories") is None
    )


def fit_recording_leaks(estimator, X, y=None, **fit_params):
    """Fit ``estimator``; return the message of its first ``PrivacyLeakWarning``, or None.

    Leak warnings are recorded (not shown), every other warning is re-emitted. The caller
    decides what a leak means: an error for a model that will be released.
    """
    with WARNINGS_LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        if y is None:
            estimator.fit(X, **fit_params)
        else:
            estimator.fit(X, y, **fit_params)
    leak = None
    for warning in caught:
        if issubclass(warning.category, PrivacyLeakWarning):
            leak = leak if leak is not None else str(warning.message)
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return leak
