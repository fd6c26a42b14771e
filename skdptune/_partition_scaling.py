"""The rules of ``partition_scaling``: partition fits that emulate the refit (fidelity).

A partition fit trains on about ``n * (1 - validation_fraction) / k`` records, the refit on all
``n``: a ``ratio = k / (1 - validation_fraction)`` times smaller problem. Fitted with the
refit's own parameters, a partition is a different problem: a diffprivlib model is about
``ratio`` times noisier relative to its data (DP noise scales as ``1 / (n * epsilon)``), and a
penalty weighed against a *sum* of per-record losses (scikit-learn's ``C``) regularises
``ratio`` times harder. Candidates are then ranked by how they behave at the wrong scale.

So partition fits rescale each candidate's data-size-dependent parameters by ``ratio``, with
one rule per (class, parameter) in :data:`RULES`. Where a mechanism's noise depends on
several parameters at once (objective perturbation's on ``epsilon`` and ``C``), their rules
compute the partition's values together from the candidate's own parameters. This costs no
privacy: partition fits are never charged, because the selection's guarantee rests only on
the ``1 / k`` sensitivity of bounded utilities, whatever each partition's fit does with its
own records. The ratio depends
only on ``k`` and ``validation_fraction`` (not on ``n``, which neighbouring datasets do not
share), so each partition's fit stays a function of its own records and public constants.
The refit always uses the candidate as written, and what is charged never depends on the
rescaling.
"""

from dataclasses import dataclass
from numbers import Integral, Real
from typing import Callable, Optional

import numpy as np
from diffprivlib import models as dp
from sklearn import ensemble, kernel_ridge, linear_model, neighbors, svm, tree

from ._models.linear_model import (NOISE_SHARE, LogisticRegression, Ridge, logistic_unit_ball,
                            objective_perturbation)
from ._validation import positive_finite

#: The scalings a rule can apply (``value`` is the candidate's, ``ratio`` > 1).
SCALINGS = {
    "proportional": lambda value, ratio: value * ratio,
    "inverse": lambda value, ratio: value / ratio,
}


@dataclass(frozen=True)
class ScalingRule:
    """How one parameter of a class follows the training-set size, and why.

    Attributes
    ----------
    scaling : {"proportional", "inverse", "inverse_count"} or str
        ``proportional``: ``value * ratio``; ``inverse``: ``value / ratio``;
        ``inverse_count``: an integer count of records becomes ``max(minimum, round(value /
        ratio))`` (a float is a fraction of the records, which needs no rescaling). Any other
        name is a joint rule's (see ``joint``).
    why : str
        The justification, from the estimator's objective or noise scale.
    minimum : int, default=1
        Smallest valid count, for ``inverse_count``.
    joint : callable or None, default=None
        ``joint(owner, ratio, given) -> {parameter: value}``: the partition's values of
        several parameters of ``owner`` (the step that has them) computed together, ``given``
        the partition's values of those the user's rules decide; None where it does not
        apply, and then the parameter is scaled ``proportional``.
    """

    scaling: str
    why: str
    minimum: int = 1
    joint: Optional[Callable] = None

    def apply(self, value, ratio, owner=None, name=None, given=None):
        """The partition fit's value of the parameter ``name`` of ``owner`` (``given``: the
        partition's values of ``owner``'s parameters that the user's rules decide); non-numbers
        are left as they are."""
        if isinstance(value, bool) or not isinstance(value, Real):
            return value
        if self.joint is not None:
            values = self.joint(owner, ratio, given or {})
            return value * ratio if values is None else values[name]
        if self.scaling == "inverse_count":
            if not isinstance(value, Integral):
                return value  # a fraction of the records: scale-free
            return max(self.minimum, int(round(value / ratio)))
        return SCALINGS[self.scaling](value, ratio)


_DP_NOISE = ScalingRule(
    "proportional", "DP noise scales as 1 / (n * epsilon): epsilon * ratio on n / ratio records "
                    "matches the refit's noise-to-signal ratio")
_SUM_LOSS_C = ScalingRule(
    "proportional", "C multiplies the sum of per-record losses against a fixed penalty: "
                    "C * ratio keeps the refit's regularisation per record")
_SUM_LOSS_ALPHA = ScalingRule(
    "inverse", "alpha is a penalty against the sum (not the mean) of squared errors: "
               "alpha / ratio keeps it per record")
_LEAF_COUNT = ScalingRule(
    "inverse_count", "a count of records per leaf: the same share of n / ratio records")
_SPLIT_COUNT = ScalingRule(
    "inverse_count", "a count of records needed to split: the same share of n / ratio records",
    minimum=2)
_NEIGHBOURS = ScalingRule(
    "inverse_count", "k neighbours among n records cover the same region as k / ratio among "
                     "n / ratio")
_L2_LEAF = ScalingRule(
    "inverse", "l2_regularization is added to a leaf's sum of hessians: divided by ratio for "
               "n / ratio records")

_TREES = {"min_samples_leaf": _LEAF_COUNT, "min_samples_split": _SPLIT_COUNT}


def objective_perturbation_partition(owner, ratio, given=None):
    """A partition fit's ``epsilon`` and ``C`` for a logistic regression by objective
    perturbation (diffprivlib's, or :class:`skdptune.linear_model.LogisticRegression`).

    The refit minimises the mean loss plus ``a ||w||^2 / (2 n)`` plus ``b . w / n``, with
    ``||b||`` of scale ``2 R / epsilon'`` (``skdptune._models.linear_model.objective_perturbation``:
    ``epsilon'`` and the penalty ``a`` on the sum of losses, ``1 / C`` or the rule's larger
    one: diffprivlib's where ``epsilon' <= 0``, skdptune's where ``epsilon' <
    NOISE_SHARE * epsilon``). On ``n / ratio`` records the partition has the refit's penalty
    and noise per record with ``a / ratio`` and ``ratio * epsilon'``: it is given ``C = ratio /
    a`` and the ``epsilon`` whose ``epsilon'`` that is, ``ratio * epsilon' + 2 log(1 + R C /
    4)``, where the rule keeps ``1 / C``: diffprivlib's, as that ``epsilon'`` is positive;
    skdptune's (``s = NOISE_SHARE``, ``J(a) = 2 log(1 + R / (4 a))``), as ``J(a / ratio) <=
    ratio J(a) <= ratio (1 - s) epsilon`` and ``epsilon' >= s epsilon`` give ``(1 - s) ratio
    epsilon' >= s J(a / ratio)``. Scaling ``epsilon`` and ``C`` by ``ratio`` each gives
    partitions another noise than the refit's (mostly less, the more so the larger ``C``) and
    can put them and the refit on different sides of ``epsilon' <= 0``.

    Where the user's rule decides the partition's ``C`` (``given``), ``epsilon`` is the one
    whose ``epsilon'`` is ``ratio`` times the refit's with that ``C``: the refit's noise per
    record, the user's penalty (for skdptune's class, where its rule raises the penalty at
    that ``epsilon``, the raised one).

    Exact for one problem (two classes). With ``K > 2`` classes diffprivlib gives each
    one-vs-rest problem ``epsilon / K``, so each pays the ``2 log(1 + R C / 4)`` term of a
    partition that the rule budgeted once, and ``K`` is not known before the data. The
    partition then has too little noise, or, where that term exceeds a problem's share,
    diffprivlib's other regime and far more (at ``ratio`` 12.5, ``K = 3``, ``data_norm`` 1,
    ``epsilon`` 1: about 2 times the refit's noise per record at ``C`` = 1, 33 times at
    ``C`` = 100). Partition fits are never charged: this affects the ranking, not the
    guarantee. For diffprivlib's class with ``fit_intercept=True`` the refit's extra ridge
    also penalises the intercept, which the partition's ``C`` does not (that class is only
    released without an intercept).

    Parameters
    ----------
    owner : LogisticRegression
        The candidate step, parameters as written.
    ratio : float
        :func:`partition_ratio`.
    given : dict or None, default=None
        The partition's ``{"C": value}`` when a user's rule decides it.

    Returns
    -------
    params : dict or None
        ``{"epsilon": ..., "C": ...}``; None without a numeric ``data_norm``, ``epsilon`` and
        ``C``.
    """
    params = owner.get_params(deep=False)
    epsilon, C, data_norm = params["epsilon"], params["C"], params["data_norm"]
    C_given = (given or {}).get("C", C)
    if not all(positive_finite(v) for v in (epsilon, C, data_norm, C_given)):
        return None
    fit_intercept = bool(params["fit_intercept"])
    if isinstance(owner, LogisticRegression):  # diffprivlib fits the mapped rows, C * scale**2
        scale, norm = logistic_unit_ball(data_norm, fit_intercept)
        c_factor, share = scale ** 2, NOISE_SHARE
    else:
        norm, c_factor = float(np.sqrt(data_norm ** 2 + fit_intercept)), 1.0
        share = None
    epsilon_p, extra = objective_perturbation(epsilon, norm, C * c_factor, share)
    C_part = ratio / (1.0 / (C * c_factor) + float(extra))
    if given and "C" in given:
        C_part = C_given * c_factor
    # The epsilon whose epsilon' is ratio * epsilon_p: target + J(C_part) where the rule keeps
    # 1 / C (always without `given`, see above); with a given C skdptune's rule may raise the
    # penalty instead, and then epsilon' = share * epsilon. epsilon' = max(share * epsilon,
    # epsilon - J) is increasing in epsilon, and min(target / share, target + J) its inverse.
    target = ratio * float(epsilon_p)
    epsilon_part = target + 2 * np.log1p(0.25 * norm * C_part)
    if share is not None:
        epsilon_part = min(epsilon_part, target / share)
    return {"epsilon": float(epsilon_part), "C": C_part / c_factor}


_OBJECTIVE_PERTURBATION = ScalingRule(
    "objective_perturbation",
    "objective perturbation: epsilon and C together give the partition the refit's noise "
    "and penalty per record (objective_perturbation_partition)",
    joint=objective_perturbation_partition)

#: Built-in rules: class -> {parameter: ScalingRule}. Found through the class's MRO, so a
#: subclass inherits its parent's rules and may replace them (diffprivlib's LogisticRegression
#: replaces scikit-learn's rule for C with the joint one; skdptune's inherits it).
#: Checked and deliberately absent: Lasso, ElasticNet, SGD*, MLP* (their penalties are weighed
#: against the mean loss), GaussianNB's var_smoothing (relative to the largest variance),
#: max_depth and n_estimators (not sizes of the training set), skdptune's Ridge's noise_alpha
#: (a multiple of the noise's scale, which follows the rescaled epsilon: noise_alpha *
#: noise_scale(epsilon * ratio) is noise_alpha * noise_scale(epsilon) / ratio already).
RULES = {
    dp.GaussianNB: {"epsilon": _DP_NOISE},
    dp.LogisticRegression: {"epsilon": _OBJECTIVE_PERTURBATION, "C": _OBJECTIVE_PERTURBATION},
    dp.LinearRegression: {"epsilon": _DP_NOISE},
    Ridge: {"alpha": _SUM_LOSS_ALPHA},  # skdptune's; epsilon's rule is dp.LinearRegression's
    dp.KMeans: {"epsilon": _DP_NOISE},
    dp.PCA: {"epsilon": _DP_NOISE},
    dp.StandardScaler: {"epsilon": _DP_NOISE},
    dp.RandomForestClassifier: {"epsilon": _DP_NOISE},
    dp.DecisionTreeClassifier: {"epsilon": _DP_NOISE},
    linear_model.LogisticRegression: {"C": _SUM_LOSS_C},
    svm.SVC: {"C": _SUM_LOSS_C},
    svm.SVR: {"C": _SUM_LOSS_C},
    svm.NuSVR: {"C": _SUM_LOSS_C},
    svm.LinearSVC: {"C": _SUM_LOSS_C},
    svm.LinearSVR: {"C": _SUM_LOSS_C},
    linear_model.Ridge: {"alpha": _SUM_LOSS_ALPHA},
    linear_model.RidgeClassifier: {"alpha": _SUM_LOSS_ALPHA},
    kernel_ridge.KernelRidge: {"alpha": _SUM_LOSS_ALPHA},
    tree.DecisionTreeClassifier: _TREES,
    tree.DecisionTreeRegressor: _TREES,
    ensemble.RandomForestClassifier: _TREES,
    ensemble.RandomForestRegressor: _TREES,
    ensemble.ExtraTreesClassifier: _TREES,
    ensemble.ExtraTreesRegressor: _TREES,
    ensemble.GradientBoostingClassifier: _TREES,
    ensemble.GradientBoostingRegressor: _TREES,
    ensemble.HistGradientBoostingClassifier: {
        "min_samples_leaf": _LEAF_COUNT,
        "l2_regularization": _L2_LEAF,
    },
    ensemble.HistGradientBoostingRegressor: {
        "min_samples_leaf": _LEAF_COUNT,
        "l2_regularization": _L2_LEAF,
    },
    neighbors.KNeighborsClassifier: {"n_neighbors": _NEIGHBOURS},
    neighbors.KNeighborsRegressor: {"n_neighbors": _NEIGHBOURS},
}


def partition_ratio(n_partitions, validation_fraction):
    """Refit training size over a partition's expected training size.

    ``n / (n * (1 - validation_fraction) / n_partitions)``: public constants only.

    Parameters
    ----------
    n_partitions : int
        The search's ``n_partitions`` (resolved, when ``"auto"``).
    validation_fraction : float
        The search's ``validation_fraction``.

    Returns
    -------
    ratio : float
        ``n_partitions / (1 - validation_fraction)``.

    Examples
    --------
    >>> from skdptune.partition_scaling import partition_ratio
    >>> partition_ratio(10, 0.2)
    12.5
    """
    return n_partitions / (1.0 - validation_fraction)


def rules_for(step):
    """The built-in rules of ``step``'s class, inherited along its MRO."""
    found = {}
    for cls in reversed(type(step).__mro__):
        found.update(RULES.get(cls, {}))
    return found


def user_rule(rule):
    """A :class:`ScalingRule` from a user's ``partition_scaling`` entry (a name or a callable)."""
    if callable(rule):
        return _CallableScalingRule(rule)
    if rule == "none":
        return None
    return ScalingRule(rule, "declared by the user")


@dataclass(frozen=True)
class _CallableScalingRule:
    function: object

    def apply(self, value, ratio):
        return self.function(value, ratio)


def rescaled_params(candidate, ratio, user_rules):
    """``{parameter path: value}`` of a partition fit of ``candidate``, beyond its own.

    Parameters
    ----------
    candidate : estimator
        One unfitted candidate, parameters as written.
    ratio : float
        :func:`partition_ratio`.
    user_rules : dict or None
        ``{parameter path: rule}`` that add to (and override) the built-in rules; a rule is
        ``"proportional"``, ``"inverse"``, ``"inverse_count"``, ``"none"`` or a callable
        ``rule(value, ratio) -> value``. None uses the built-in rules only.

    Returns
    -------
    changes : dict
        Only the parameters whose value changes.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdptune.partition_scaling import partition_ratio, rescaled_params
    >>> ratio = partition_ratio(10, 0.2)
    >>> rescaled_params(LogisticRegression(C=0.1), ratio, None)
    {'C': 1.25}
    >>> rescaled_params(LogisticRegression(C=0.1), ratio, {"C": "none"})
    {}
    """
    params = candidate.get_params(deep=True)
    owners = {"": candidate}
    # Estimators that do not derive from BaseEstimator (scikit-learn's minimal-compatible
    # ones) own parameters too: anything with get_params.
    owners.update((path, value) for path, value in params.items()
                  if hasattr(value, "get_params") and not isinstance(value, type))
    user_rules = user_rules or {}
    changes, joint = {}, []
    for path, value in params.items():
        owner_path, _, name = path.rpartition("__")
        if path in user_rules:
            rule = user_rule(user_rules[path])
        else:
            rule = rules_for(owners[owner_path]).get(name)
        if rule is None:
            continue
        if getattr(rule, "joint", None) is not None:
            joint.append((path, value, rule, owner_path, name))  # after the user's rules
            continue
        scaled = rule.apply(value, ratio)
        if scaled is not value and scaled != value:
            changes[path] = scaled
    for path, value, rule, owner_path, name in joint:
        prefix = f"{owner_path}__" if owner_path else ""
        given = {other[len(prefix):]: changes.get(other, params[other]) for other in user_rules
                 if other.startswith(prefix) and "__" not in other[len(prefix):]
                 and other in params}
        scaled = rule.apply(value, ratio, owners[owner_path], name, given)
        if scaled is not value and scaled != value:
            changes[path] = scaled
    return changes


def check_user_rules(user_rules, parameters):
    """Refuse, before the data, a rule for a parameter no candidate has.

    ``parameters`` is the set of parameter paths of all the candidates.
    """
    for path, rule in user_rules.items():
        if not callable(rule) and rule not in ("proportional", "inverse", "inverse_count",
                                               "none"):
            raise ValueError(
                f"partition_scaling[{path!r}]={rule!r} is not a rule; use 'proportional', "
                "'inverse', 'inverse_count', 'none' or a callable rule(value, ratio)."
            )
        if path not in parameters:
            raise ValueError(
                f"partition_scaling names {path!r}, which is not a parameter of the estimator "
                f"(parameters are named as in param_grid, e.g. {min(parameters, default='C')!r})."
            )
