"""The refit gate: which estimators may be fitted on the private data and released.

A search releases a model fitted on all the private data (``PrivateGridSearchCV``'s refit, a
trial of ``PrivateRandomizedSearchCV``). That model is differentially private only if every
step that reads the data is, and the library can only know that for estimators whose privacy
is understood. So the gate is an **allowlist**, :data:`ALLOWED`: one line per class (matched
exactly: a subclass may override ``fit``), saying why the class is allowed, what it spends and
what it needs declared. Everything else is refused with a message naming the step and the
remedy. The gate runs on every candidate of the grid (a grid can swap steps) before the data
are touched, and gives the budget each candidate spends (what its steps declare, times their
entries' charges), which is what the search reserves
and charges.

Kinds of entries:

- ``"dp"``: a diffprivlib model. It records ``epsilon`` (pure DP, ``delta = 0``) once per fit:
  diffprivlib 0.6.6 calls ``accountant.spend(self.epsilon, 0)`` at the end of every model's
  ``fit``. Where its calibration falls short of that under the library's replace-one adjacency,
  the entry's ``charge`` says how many times ``epsilon`` a fit really spends, and the search
  charges (and, given a total, budgets) that; where no factor is known, the entry refuses the
  release. Its public bounds (``bounds``, ``data_norm``, ...) must be declared, or diffprivlib
  would read them from the data (a ``PrivacyLeakWarning``). A user's own DP estimator joins
  this kind with :func:`register_dp_estimator`, on the user's responsibility.
  skdptune's own DP models keep their entries' facts in their rooms, ``skdptune/_models/``:
  beside the mechanism, ``FACTS`` (what a fit releases and really spends, its zero-out
  factor, why, its noise dimension), each with its proof; their rows here read ``FACTS``.
  diffprivlib's own models are audited in ``skdptune/_gate_audit.py``: all but
  ``StandardScaler`` are refused in a released fit, each with why (its row's ``condition``),
  and their public parameters are checked wherever they are given.
- ``"composition"``: ``Pipeline``, ``ColumnTransformer``, ``FeatureUnion``. They add nothing
  of their own; every branch (and ``remainder``) must be allowed. Their steps see the same
  records, so their budgets add up (sequential composition; columns are not records).
- ``"public"``: steps that read nothing private when fitted: encoders whose categories are
  declared, transformers that are stateless and row-wise (each output row depends on its own
  input row and on public constants only), or that learn only the number of features (public:
  the shape of ``X``). They spend nothing.

Sparse input is followed through the steps: a diffprivlib model needs dense input, and a
sparse matrix reaching one is refused from the parameters (``sparse_output`` of an encoder,
``sparse_threshold`` of a ``ColumnTransformer``) before any data are read. A
``ColumnTransformer`` whose output density is the same on any rows (:func:`density_fixed`)
is left to the rehearsal, which fits it on public rows of ``X``'s schema and refuses its
output there if sparse (``skdptune._rehearsal``): the real rows give the same density.
"""

import inspect
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Callable, Optional

import numpy as np
from diffprivlib import models as dp
from scipy.sparse import issparse
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer, TfidfVectorizer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    Normalizer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
)

from . import _gate_audit as audit
from ._models import cluster, decomposition, ensemble, linear_model, naive_bayes, tree
from ._models.base import LEAK, undeclared_reason
from ._partition_scaling import RULES as SCALING_RULES
from ._partition_scaling import ScalingRule
from ._preprocessing import RowWiseFunctionTransformer
from .exceptions import GateError
from ._validation import (
    check_record_wise,
    collect_refusals,
    is_diffprivlib_model,
    raise_refusals,
    validate_candidate,
)

#: How a step's output sparsity follows its input: always dense, as its input, always sparse.
DENSE, SAME, SPARSE = "dense", "same", "sparse"


@dataclass(frozen=True)
class Rule:
    """One line of the allowlist.

    Attributes
    ----------
    kind : {"dp", "composition", "public"}
        See the module docstring.
    why : str
        Why the class may be fitted on private data and released.
    declared : tuple of str
        Parameters that must not be None: the public bounds a diffprivlib model would otherwise
        read from the data.
    condition : callable or None
        ``condition(step) -> str or None``: a reason to refuse this configuration of the class
        (with its remedy), or None.
    accepts_sparse : bool
        Whether the step accepts a sparse ``X``.
    output : {"dense", "same", "sparse"} or callable
        Sparsity of the output: ``output(step)`` may return one of the three.
    spends : str
        For ``"dp"`` entries: the parameter holding the pure epsilon the step records once per
        fit, which the search reads to reserve and charge (and scales in the one-budget form).
    charge : callable or None
        For ``"dp"`` entries: ``charge(step) -> float >= 1``, the epsilon a fit really spends
        per unit of ``spends`` (a diffprivlib calibration that falls short under replace-one
        adjacency, with the proof in the function's docstring); None: 1.
    zero_out : callable or None
        For ``"dp"`` entries: ``zero_out(step) -> float``, what a fit spends per unit of
        ``spends`` under zero-out adjacency (a record replaced by a null one,
        :data:`skdptune.accounting.ZERO_OUT_ADJACENCY`), with the derivation in the function's
        docstring: the comparison figure of the privacy report, never charged. None: not
        derived (the report then states no zero-out figure).
    releases : dict or None
        For ``"dp"`` entries: the attributes a released fit keeps, each with why its
        mechanism covers it (besides ``PUBLIC_SHAPE``). ``keep_released`` removes every
        other attribute the fit set, so a value outside the proof (a solver's iteration count)
        is never released. None (a registered class): kept as the class sets them, on the
        registration's word.
    noise_dimension : callable or None
        For ``"dp"`` entries: ``noise_dimension(step, width) -> int``, the quantities the
        mechanism perturbs for an input of ``width`` columns, which the tuning policy weighs
        (``skdptune._default_policy.refit_noise``); None: the policy's own table, or ``width +
        1`` for a class that is not the library's.
    """

    kind: str
    why: str
    declared: tuple = ()
    condition: Optional[Callable] = None
    accepts_sparse: bool = False
    output: object = DENSE
    spends: str = "epsilon"
    charge: Optional[Callable] = None
    zero_out: Optional[Callable] = None
    releases: Optional[dict] = None
    noise_dimension: Optional[Callable] = None

    def factor(self, step):
        """What a fit of ``step`` spends per unit of its ``spends`` parameter (1 unless the
        entry's ``charge`` says more)."""
        return 1.0 if self.charge is None else float(self.charge(step))


def _dp(*declared, releases, zero_out=None, condition=None, charge=None, noise_dimension=None,
        why="a diffprivlib model: pure epsilon-DP given declared bounds; spends `epsilon` once "
            "per fit"):
    return Rule("dp", why, declared=declared, condition=condition, charge=charge,
                zero_out=zero_out, releases=releases, noise_dimension=noise_dimension)


def _dp_from(facts):
    """The row of one of skdptune's own DP models: every fact from its room's ``FACTS``
    (:class:`skdptune._models.facts.ModelFacts`), the proofs beside them there."""
    return Rule("dp", facts.why, declared=facts.declared, condition=facts.condition,
                charge=facts.charge, zero_out=facts.zero_out, releases=facts.releases,
                noise_dimension=facts.noise_dimension)


#: Fitted attributes every released step may keep: the number and names of the columns of the
#: ``X`` it received, public (the shape and schema of ``X``, as for every scikit-learn model).
PUBLIC_SHAPE = ("n_features_in_", "feature_names_in_")


def _sparse_if(attribute):
    return lambda step: SPARSE if getattr(step, attribute) else DENSE


#: The allowlist. Adding a class is one line here, with its reason; one of skdptune's own DP
#: models reads its facts from its room (``skdptune/_models/``), another library's class cites
#: the gate's audit of it (``skdptune/_gate_audit.py``). diffprivlib's own models are refused
#: in a released fit (each with why, its row's ``condition``), their charge, zero-out factor
#: and noise dimension those of skdptune's model of the same law.
ALLOWED = {
    naive_bayes.GaussianNB: _dp_from(naive_bayes.FACTS),
    dp.GaussianNB: _dp("bounds", charge=naive_bayes.gaussian_nb_charge,
                       zero_out=naive_bayes.gaussian_nb_zero_out,
                       noise_dimension=naive_bayes.gaussian_nb_noise_dimension,
                       condition=audit.gaussian_nb_release, releases={},
                       why="refused in a released fit: its classes come from the data "
                           "(_gate_audit.gaussian_nb_release); partition fits only"),
    dp.LogisticRegression: _dp("data_norm", condition=audit.logistic_regression_release,
                               zero_out=linear_model.logistic_zero_out, releases={},
                               noise_dimension=linear_model.logistic_noise_dimension,
                               why="refused in a released fit: its classes come from the "
                                   "data, and a calibration that holds only without an "
                                   "intercept and with data_norm <= 1 "
                                   "(_gate_audit.logistic_regression_release); partition "
                                   "fits only"),
    linear_model.LogisticRegression: _dp_from(linear_model.LOGISTIC_FACTS),
    dp.LinearRegression: _dp("bounds_X", "bounds_y",
                             condition=audit.linear_regression_calibration, releases={},
                             noise_dimension=linear_model.ridge_noise_dimension,
                             why="refused in a released fit: diffprivlib 0.6.6's calibration is "
                                 "not epsilon-DP (skdptune.linear_model.Ridge makes the same "
                                 "releases correctly calibrated); partition fits only"),
    linear_model.Ridge: _dp_from(linear_model.RIDGE_FACTS),
    dp.KMeans: _dp("bounds", condition=audit.kmeans_release, releases={},
                   noise_dimension=cluster.kmeans_noise_dimension,
                   why="refused in a released fit: diffprivlib 0.6.6's KMeans is not DP "
                       "(_gate_audit.kmeans_release says why); partition fits only"),
    dp.PCA: _dp("data_norm", condition=audit.pca_release, releases={},
                noise_dimension=decomposition.pca_noise_dimension,
                why="refused in a released fit: diffprivlib 0.6.6's PCA overspends "
                    "(_gate_audit.pca_release says why); partition fits only"),
    cluster.KMeans: _dp_from(cluster.FACTS),
    decomposition.PCA: _dp_from(decomposition.FACTS),
    dp.StandardScaler: _dp("bounds", releases=audit.SCALER_RELEASES),
    dp.RandomForestClassifier: _dp("bounds", "classes", charge=ensemble.forest_charge,
                                   condition=audit.diffprivlib_tree_release,
                                   zero_out=ensemble.forest_zero_out, releases={},
                                   noise_dimension=ensemble.forest_noise_dimension,
                                   why=audit.DIFFPRIVLIB_TREE_WHY),
    dp.DecisionTreeClassifier: _dp("bounds", "classes", charge=tree.tree_charge,
                                   condition=audit.diffprivlib_tree_release,
                                   zero_out=tree.tree_zero_out, releases={},
                                   noise_dimension=tree.tree_noise_dimension,
                                   why=audit.DIFFPRIVLIB_TREE_WHY),
    ensemble.RandomForestClassifier: _dp_from(ensemble.FACTS),
    tree.DecisionTreeClassifier: _dp_from(tree.FACTS),
    # Pure compositions: every branch is checked; budgets add up.
    Pipeline: Rule("composition", "runs its steps in sequence", condition=audit.no_memory,
                   accepts_sparse=True),
    ColumnTransformer: Rule("composition", "applies its branches to column subsets",
                            condition=audit.public_columns, accepts_sparse=True),
    FeatureUnion: Rule("composition", "concatenates its branches", accepts_sparse=True),
    # Encoders with declared categories learn nothing from the data.
    OneHotEncoder: Rule("public", "categories declared: fitting reads nothing private",
                        condition=audit.declared_categories,
                        output=_sparse_if("sparse_output")),
    OrdinalEncoder: Rule("public", "categories declared: fitting reads nothing private",
                         condition=audit.declared_categories),
    # Stateless, row-wise transformers.
    Normalizer: Rule("public", audit.PUBLIC_ROW_WISE, accepts_sparse=True, output=SAME),
    Binarizer: Rule("public", audit.PUBLIC_ROW_WISE, accepts_sparse=True, output=SAME),
    # Its output's sparsity is the user's func's business (e.g. a densifying `Z.toarray()`): the
    # sparse check, a guard against failures rather than leaks, trusts it.
    RowWiseFunctionTransformer: Rule(
        "public", "declared row-wise by the user (see its docstring)", accepts_sparse=True),
    FunctionTransformer: Rule("public", "the identity (func=None)",
                              condition=audit.identity_only, accepts_sparse=True, output=SAME),
    SimpleImputer: Rule("public", "a constant fill value: row-wise",
                        condition=audit.constant_imputer, accepts_sparse=True, output=SAME),
    PolynomialFeatures: Rule("public", "row-wise; fitting reads only the number of features "
                             "(the public shape of X)", accepts_sparse=True, output=SAME),
    HashingVectorizer: Rule("public", audit.PUBLIC_ROW_WISE, output=SPARSE),
    CountVectorizer: Rule("public", "a declared vocabulary: row-wise",
                          condition=audit.fixed_vocabulary, output=SPARSE),
    TfidfVectorizer: Rule("public", "a declared vocabulary without idf: row-wise",
                          condition=audit.fixed_vocabulary, output=SPARSE),
}

# User registrations: class -> (arguments of the registration, scaling rules it replaced).
_REGISTERED = {}
_NO_RULES = object()

#: Why a registered class's undeclared parameter is refused (``LEAK`` for the others).
REGISTERED_LEAK = "not private: the registration of this class requires it declared"


def register_dp_estimator(cls, *, why, epsilon="epsilon", requires=(), partition_scaling=False):
    """Admit a differentially private estimator class to the refit gate, **on your word**.

    .. warning::

       The library cannot check that ``cls`` is differentially private. Registering it is
       **your claim, on your responsibility**, that every fit of ``cls`` on the private data
       is ``epsilon``-DP (pure, ``delta = 0``) under replace-one adjacency of one record,
       given the public values of ``requires``, where ``epsilon`` is the value of its
       parameter named by ``epsilon``. ``privacy_spent_`` and your accountant are only as
       right as that claim. A wrong claim (a bound read from the data, noise too small for the
       spend it records) releases a model without the guarantee that the search reports.

    What the search does with a registered class: the gate accepts it (matched exactly: a
    subclass is not covered, as it may change what ``fit`` reads and spends) when every
    parameter of ``requires`` is declared (not None) and its budget parameter is a positive
    finite number; the search reserves (checks your accountant for) and charges the budget it
    declares, as for a diffprivlib model; the one-budget form (``epsilon`` of the search, see
    ``split_budget``) rescales that parameter. Its spend is also **measured**: like a
    diffprivlib model, ``cls`` must take an ``accountant`` parameter (a
    ``diffprivlib.BudgetAccountant``) and call ``accountant.spend(epsilon, 0)`` during
    ``fit``. The search gives each released fit a fresh accountant
    (``skdptune._dp_fit.set_accountants``) and, after the fit, refuses to release a model
    that recorded no spend ("recorded no privacy spend") or spent more than it declared (the
    larger measured spend is still charged). Partition fits are given a throw-away
    accountant and are never charged.

    Parameters
    ----------
    cls : type
        The estimator class (a scikit-learn estimator: ``get_params``, ``set_params``,
        ``fit``). Its constructor must take ``accountant`` and the parameters named below.
    why : str
        Why ``cls`` is differentially private (the mechanism and its sensitivity, or a
        reference): shown in refusals and kept in :data:`ALLOWED`.
    epsilon : str, default="epsilon"
        Name of the parameter holding the pure epsilon one fit spends.
    requires : tuple of str, default=()
        Parameters that must be declared (not None) from public knowledge, such as
        ``bounds`` or ``data_norm``: the values ``cls`` would otherwise read from the data.
    partition_scaling : bool, default=False
        Also add the partition-scaling rule of :mod:`skdptune.partition_scaling` for the budget
        parameter (``"proportional"``, as for diffprivlib models: DP noise scales as
        ``1 / (n * epsilon)``), so that partition fits emulate the refit's noise. Only when
        that holds for ``cls``; it costs no privacy either way.

    Returns
    -------
    cls : type
        The class, registered.

    Raises
    ------
    ValueError or TypeError
        When ``cls`` is already allowed (a built-in entry, or registered with other
        arguments; registering again with the same arguments does nothing), is not a class,
        lacks ``accountant`` or a named parameter, or ``why`` is empty.

    See Also
    --------
    unregister_dp_estimator : Remove a registration.

    Examples
    --------
    >>> from sklearn.base import BaseEstimator, ClassifierMixin
    >>> from skdptune.gate import register_dp_estimator, unregister_dp_estimator
    >>> class MyDPModel(ClassifierMixin, BaseEstimator):
    ...     def __init__(self, epsilon=1.0, bounds=None, accountant=None):
    ...         self.epsilon, self.bounds, self.accountant = epsilon, bounds, accountant
    >>> registered = register_dp_estimator(
    ...     MyDPModel, requires=("bounds",),
    ...     why="Laplace noise on clipped sums, sensitivity from bounds")
    >>> registered is MyDPModel
    True
    >>> unregister_dp_estimator(MyDPModel)
    """
    if not isinstance(cls, type):
        raise TypeError(f"cls must be an estimator class, got {cls!r} ({type(cls).__name__}).")
    if not isinstance(why, str) or not why.strip():
        raise ValueError(f"why={why!r}: say why {cls.__name__} is differentially private (its "
                         "mechanism and sensitivity, or a reference); it is kept with the entry.")
    if not isinstance(epsilon, str):
        raise TypeError(f"epsilon={epsilon!r} must be the name of {cls.__name__}'s budget "
                        "parameter, e.g. 'epsilon'.")
    if isinstance(requires, str) or not all(isinstance(name, str) for name in requires):
        raise TypeError(f"requires={requires!r} must be a tuple of parameter names, e.g. "
                        "('bounds',).")
    requires = tuple(requires)
    arguments = (why, epsilon, requires, bool(partition_scaling))
    if cls in _REGISTERED:
        if _REGISTERED[cls][0] == arguments:
            return cls  # the same registration again (e.g. a notebook cell run twice)
        raise ValueError(f"{cls.__name__} is already registered with other arguments; call "
                         "skdptune.gate.unregister_dp_estimator first.")
    if cls in ALLOWED:
        raise ValueError(f"{cls.__name__} is a built-in entry of the gate's allowlist "
                         f"({ALLOWED[cls].kind!r}: {ALLOWED[cls].why}); it cannot be registered "
                         "again or replaced.")
    params = _constructor_params(cls)
    missing = [name for name in ("accountant", epsilon, *requires) if name not in params]
    if missing:
        raise ValueError(
            f"{cls.__name__} has no constructor parameter {missing}; its parameters are "
            f"{sorted(params)}. A registered class must take epsilon={epsilon!r} (its budget), "
            "every name of requires, and 'accountant' (a diffprivlib BudgetAccountant it "
            "spends its budget on: that is how a released fit's spend is measured)."
        )
    previous = _NO_RULES
    if partition_scaling:
        previous = SCALING_RULES.get(cls, _NO_RULES)
        SCALING_RULES[cls] = {
            **({} if previous is _NO_RULES else previous),
            epsilon: ScalingRule(
                "proportional",
                "registered DP estimator: DP noise scales as 1 / (n * epsilon) (the user's word)",
            ),
        }
    ALLOWED[cls] = Rule(
        "dp", f"registered by the user, on the user's responsibility: {why.strip()}",
        declared=requires, spends=epsilon,
    )
    _REGISTERED[cls] = (arguments, previous)
    return cls


def unregister_dp_estimator(cls):
    """Remove a class registered with :func:`register_dp_estimator` (and its scaling rule).

    Parameters
    ----------
    cls : type
        A registered class.

    Raises
    ------
    ValueError
        When ``cls`` was not registered (built-in entries cannot be removed).
    """
    if cls not in _REGISTERED:
        kind = "a built-in entry, which cannot be removed" if cls in ALLOWED else "not registered"
        raise ValueError(f"{getattr(cls, '__name__', cls)!s} is {kind}; only classes added with "
                         "skdptune.gate.register_dp_estimator can be unregistered.")
    (_, _, _, scaled), previous = _REGISTERED.pop(cls)
    del ALLOWED[cls]
    if scaled:
        if previous is _NO_RULES:
            del SCALING_RULES[cls]
        else:
            SCALING_RULES[cls] = previous


def is_registered(cls):
    """Whether ``cls`` is in :data:`ALLOWED` by :func:`register_dp_estimator` (on the user's
    word) rather than by a built-in row."""
    return cls in _REGISTERED


def _constructor_params(cls):
    """Names of ``cls``'s constructor parameters (scikit-learn's convention)."""
    if hasattr(cls, "_get_param_names"):
        return set(cls._get_param_names())
    return {name for name, parameter in inspect.signature(cls.__init__).parameters.items()
            if name != "self" and parameter.kind not in (parameter.VAR_POSITIONAL,
                                                         parameter.VAR_KEYWORD)}


def check_release(estimator, *, sparse_input=False, context="", seeded_search=False):
    """Check that a fit of ``estimator`` is DP and return the budget it spends.

    Parameters
    ----------
    estimator : estimator
        The configuration whose fit on the private data would be released (one candidate).
    sparse_input : bool, default=False
        Whether ``X`` is a sparse matrix.
    context : str, default=""
        Describes the configuration in messages (e.g. the candidate's parameters).
    seeded_search : bool, default=False
        Whether the search itself is seeded (``random_state`` set), so that the run already
        has no guarantee and is reproducible on purpose. Only then may a diffprivlib step be
        seeded too: a seeded step's noise is predictable, so its model is not private, and a
        search with secure noise refuses it.

    Returns
    -------
    budget : (float, float)
        ``(epsilon, delta)`` the fit spends: the sum over its diffprivlib steps (sequential
        composition) of each step's declared budget times its entry's charge
        (:meth:`Rule.factor`). A fit records less (the declared budgets); it may never record
        more: a search treats that as a failure.

    Raises
    ------
    GateError
        Naming the step, what is wrong and the remedy.
    """
    _, (epsilon, _), _ = collect_refusals([
        lambda: check_public_parameters(estimator, context),
        lambda: _walked(estimator, sparse_input, context),
        lambda: seeded_search or _check_unseeded(estimator, context),
    ])
    if epsilon == 0:
        _refuse(estimator, "", context,
                "none of its steps is differentially private, so a fit would spend nothing and "
                "release a model without a guarantee. Add a diffprivlib model, or pass "
                "refit=False")
    return epsilon, 0.0


def _walked(estimator, sparse_input, context):
    """:func:`_walk` from the top, its refusals raised together."""
    errors = []
    walked = _walk(estimator, "", sparse_input, context, errors)
    raise_refusals(errors)
    return walked


def _check_unseeded(estimator, context):
    """Refuse every seeded DP step of a search with secure noise."""
    raise_refusals([
        _refusal(step, path, context,
                 f"random_state={getattr(step, 'random_state')!r} makes its noise predictable, "
                 "so the released model would not be private; set random_state=None (a seeded "
                 "step is accepted only in a seeded search, random_state=..., which is for "
                 "tests and examples and has no guarantee)")
        for path, step in _steps(estimator)
        if (rule := ALLOWED.get(type(step))) is not None and rule.kind == "dp"
        and getattr(step, "random_state", None) is not None
    ])


def check_budget_not_tuned(budget, setting, *, source, total, remedy):
    """Refuse a setting that tunes the only DP step's epsilon when a total budget overrides it.

    With the search's ``epsilon`` the total, ``split_budget`` gives every candidate's DP
    steps the same share: a grid or distribution over the only DP step's ``epsilon`` then
    compares identical models (a pipeline's proportions between its DP steps stay tunable).
    Decided from the parameters, before the data.

    Parameters
    ----------
    budget : dict
        ``split_budget`` of the candidate.
    setting : dict
        The candidate's parameters, as the grid or the distributions give them.
    source : str
        ``"param_grid"`` or ``"param_distributions"``, for the message.
    total : float
        The search's total epsilon, for the message.
    remedy : str
        The parameter that keeps the model's own epsilon (``"selection_epsilon"``,
        ``"trial_epsilon"``).

    Raises
    ------
    ValueError
    """
    if len(budget) == 1 and set(budget) & set(setting):
        (path,) = budget
        raise ValueError(
            f"{source} varies {path!r}, but epsilon={total} is the whole search's budget: its "
            f"share replaces every value of {path!r}, so those candidates are the same. To tune "
            f"the model's own epsilon, give {remedy}=... instead (the explicit form, in which "
            "each candidate spends what it declares)."
        )


def split_budget(candidate, epsilon, spent=None):
    """``{parameter path: epsilon}`` giving ``candidate``'s DP steps ``epsilon`` in all.

    Each step's budget (its rule's ``spends`` parameter: ``epsilon`` for diffprivlib models,
    the registered name for :func:`register_dp_estimator` classes) is scaled by the same
    factor, so the candidate's own proportions between its steps are kept and what they
    really spend (each budget times its entry's charge, :meth:`Rule.factor`), summed by
    sequential composition, is ``epsilon``. Call it on a candidate the gate accepted;
    ``spent``, what it spends as written, is :func:`check_release`'s figure for it (computed
    here when not given), so that a search computes each candidate's charge once.
    """
    steps = [(path, step, ALLOWED[type(step)]) for path, step in _steps(candidate)
             if ALLOWED.get(type(step)) is not None and ALLOWED[type(step)].kind == "dp"]
    if spent is None:
        spent = sum(float(getattr(step, rule.spends)) * rule.factor(step)
                    for _, step, rule in steps)
    return {_child(path, rule.spends): float(getattr(step, rule.spends)) * epsilon / spent
            for path, step, rule in steps}


def zero_out_epsilon(candidate):
    """What a fit of ``candidate`` spends under zero-out adjacency, for comparison, or None.

    The sum over its DP steps (sequential composition) of each step's budget times its
    entry's ``zero_out`` factor (:class:`Rule`); None when a step's entry has none (not
    derived, e.g. a registered class or diffprivlib's ``StandardScaler``, whose variance has
    no null record). Call it on a candidate the gate accepted.

    Parameters
    ----------
    candidate : estimator

    Returns
    -------
    epsilon : float or None
    """
    total = 0.0
    for _, step in _steps(candidate):
        rule = ALLOWED.get(type(step))
        if rule is None or rule.kind != "dp":
            continue
        if rule.zero_out is None:
            return None
        total += float(getattr(step, rule.spends)) * float(rule.zero_out(step))
    return total


#: Relative slack when comparing a spend with a budget: diffprivlib and the gate add the same
#: step budgets as floats, in different orders, so equal budgets can differ in the last bits.
SPEND_RTOL = 1e-9


def exceeds(cost, budget):
    """Whether ``cost`` is above ``budget`` in epsilon or in delta, beyond rounding.

    Parameters
    ----------
    cost, budget : (float, float)
        ``(epsilon, delta)`` pairs.

    Returns
    -------
    above : bool
        True if either component of ``cost`` is above ``budget``'s by more than a relative
        :data:`SPEND_RTOL`; a budget delta of 0 admits no delta at all.
    """
    return any(spent > allowed * (1 + SPEND_RTOL) for spent, allowed in zip(cost, budget))


def check_released_fit(leak, measured, declared, what):
    """Why a completed fit on the private data may not be released, or None.

    The gate admits only steps whose spend is known; a leak, no spend at all, or a spend above
    the budget means that knowledge was wrong, and the model is withheld. Both searches ask
    this of every fit they release (the grid search's refit, a random search's trial or final
    fit); each raises with its own account of what was charged.

    Parameters
    ----------
    leak : str or None
        The message of a ``PrivacyLeakWarning`` the fit raised, or None.
    measured : (float, float)
        ``(epsilon, delta)`` the fit spent on its own accountant.
    declared : (float, float)
        The budget the fit may spend: what its parameters declare, or the search's per-fit cap.
    what : str
        Names ``declared`` in the reason, e.g. ``"its parameters declare"``.

    Returns
    -------
    reason : str or None
        Completes a sentence "The fit ... {reason}"; None if the model may be released.
    """
    if leak is not None:
        return (f"is not private: it warned PrivacyLeakWarning({leak}). Declare the bounds the "
                "estimator asks for (bounds=..., data_norm=...) from public knowledge, not from "
                "the data")
    if measured[0] <= 0:
        return "recorded no privacy spend, so it is not differentially private"
    if exceeds(measured, declared):
        return (f"spent {tuple(measured)}, more than the {tuple(declared)} {what}: the gate's "
                "knowledge of a step is wrong")
    return None


def _steps(estimator):
    """``(path, step)`` of the estimator and every nested estimator, paths as in param_grid."""
    return [("", estimator)] + list(estimator.get_params(deep=True).items())


def _fitted_steps(estimator):
    """Every fitted estimator inside a fitted ``estimator``, itself included: a pipeline's
    steps, a column transformer's fitted branches (``transformers_``: it fits clones), a
    feature union's, an ensemble's ``estimators_``."""
    found = [estimator]
    if isinstance(estimator, Pipeline):
        children = [step for _, step in estimator.steps]
    elif isinstance(estimator, ColumnTransformer):
        children = [step for _, step, _ in getattr(estimator, "transformers_", [])]
    elif isinstance(estimator, FeatureUnion):
        children = [step for _, step in estimator.transformer_list]
    else:
        children = list(getattr(estimator, "estimators_", []))
    for child in children:
        if hasattr(child, "get_params"):
            found += _fitted_steps(child)
    return found


def keep_released(estimator):
    """Remove from a fitted ``estimator`` every attribute outside its steps' proofs.

    For each DP step with a ``releases`` entry (:class:`Rule`), the attributes its fit set
    (scikit-learn's fitted attributes, named with a trailing underscore, and any attribute a
    fresh clone does not have) that are neither in ``releases`` nor in ``PUBLIC_SHAPE``
    are deleted: what a released model keeps is exactly what the gate's table says its
    mechanism covers. Both searches call it on every model they release.

    Parameters
    ----------
    estimator : estimator
        A fitted configuration the gate accepted; changed in place.

    Returns
    -------
    estimator : estimator
    """
    for step in _fitted_steps(estimator):
        rule = ALLOWED.get(type(step))
        if rule is None or rule.kind != "dp" or rule.releases is None:
            continue
        unfitted = set(vars(clone(step)))
        fitted = {name for name in vars(step)
                  if name not in unfitted or (name.endswith("_") and not name.startswith("__"))}
        for name in fitted - set(rule.releases) - set(PUBLIC_SHAPE):
            delattr(step, name)
    return estimator


def check_public_parameters(estimator, context=""):
    """Check every diffprivlib step's budget and declared public parameters, refit or not.

    Decided from the parameters alone, before any data: ``epsilon`` must be a positive finite
    number, and every public parameter of :data:`skdptune._gate_audit.PUBLIC_PARAMETERS` that is
    given (bounds, norms, classes) must be valid. ``epsilon="1.0"``, ``data_norm=-1`` or
    ``bounds=(1, 0)`` would otherwise fail every partition fit (each silently scored
    ``error_score``, so the selection runs on constants), infinite bounds would hang
    diffprivlib's samplers, and NaN bounds would release a model of NaNs. None is left to
    :func:`check_release`, which requires what a released model needs.

    Raises
    ------
    GateError
        Naming the step, the parameter, its value and what is valid.
    """
    errors = []
    for path, step in _steps(estimator):
        rule = ALLOWED.get(type(step))
        if rule is None or rule.kind != "dp":
            continue
        try:
            _budget(step, path, context, rule.spends)
        except GateError as error:
            errors.append(error)
        if type(step) in _REGISTERED or not is_diffprivlib_model(step):
            continue  # a registered class: its parameters mean what its author says
        for name, check in audit.PUBLIC_PARAMETERS.items():
            value = getattr(step, name, None)
            reason = None if value is None else check(value, name)
            if reason is not None:
                errors.append(_refusal(step, path, context, reason))
    raise_refusals(errors)


def check_input_width(estimator, n_features, context=""):
    """Refuse per-feature bounds whose length is not the number of columns of ``X``.

    Only for a diffprivlib model that receives ``X`` itself (the first step of the
    estimator): after an encoder the width is the encoder's business. The shape of ``X`` is
    public; a mismatch would fail every fit.
    """
    first = estimator
    while isinstance(first, Pipeline):
        steps = [step for _, step in first.steps if step not in (None, "passthrough")]
        if not steps:
            return
        first = steps[0]
    rule = ALLOWED.get(type(first))
    if n_features is None or rule is None or rule.kind != "dp":
        return
    for name in ("bounds", "bounds_X"):
        value = getattr(first, name, None)
        if value is None:
            continue
        widths = {np.size(bound) for bound in value if np.ndim(bound) == 1}
        if widths and widths != {n_features}:
            _refuse(first, "", context,
                    f"{name} gives {widths.pop()} values per bound but X has {n_features} "
                    f"features; declare one (lower, upper) value per feature, or scalars")


def _walk(step, path, sparse_input, context, errors):
    """``(epsilon of the step and everything inside it, whether its output may be sparse)``;
    every refusal found, in this step and the steps inside it, is appended to ``errors``
    (a refused step counts for no epsilon), so that all are raised together."""
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return 0.0, sparse_input
    rule = ALLOWED.get(type(step))
    if rule is None:  # nothing else can be checked on it, nor what it outputs
        errors.append(_refusal(step, path, context, _why_refused(step)))
        return 0.0, False
    reasons = [rule.condition(step) if rule.condition is not None else None,
               _sparse_remedy(step) if sparse_input and not rule.accepts_sparse else None]
    errors.extend(_refusal(step, path, context, reason) for reason in reasons
                  if reason is not None)
    if rule.kind == "composition":
        return _walk_composition(step, path, sparse_input, context, errors)
    if rule.kind == "dp":
        missing = [name for name in rule.declared if getattr(step, name) is None]
        why = REGISTERED_LEAK if type(step) in _REGISTERED else LEAK
        errors.extend(_refusal(step, path, context, undeclared_reason(name, why))
                      for name in missing)
        try:
            budget = _budget(step, path, context, rule.spends)
        except GateError as error:
            errors.append(error)
            return 0.0, False
        # What the fit really spends: the recorded budget times the entry's charge (which may
        # read the declared parameters).
        return (0.0 if missing else budget * rule.factor(step)), False
    output = rule.output(step) if callable(rule.output) else rule.output
    return 0.0, {DENSE: False, SAME: sparse_input, SPARSE: True}[output]


def _walk_composition(step, path, sparse_input, context, errors):
    if isinstance(step, Pipeline):
        total, sparse = 0.0, sparse_input
        for name, child in step.steps:
            epsilon, sparse = _walk(child, _child(path, name), sparse, context, errors)
            total += epsilon
        return total, sparse
    if isinstance(step, ColumnTransformer):
        branches = [(name, child) for name, child, _ in step.transformers]
        branches.append(("remainder", step.remainder))
    else:  # FeatureUnion
        branches = step.transformer_list
    total, sparse_branches = 0.0, []
    for name, child in branches:
        if isinstance(child, str) and child == "drop":
            continue
        epsilon, sparse = _walk(child, _child(path, name), sparse_input, context, errors)
        total += epsilon
        sparse_branches.append((child, sparse))
    any_sparse = any(sparse for _, sparse in sparse_branches)
    if isinstance(step, ColumnTransformer):
        # The output is sparse when some branch is and the density falls below the threshold.
        # A density that is the same on any rows is the rehearsal's to judge, on public rows
        # (skdptune._rehearsal); any other may fall below any positive threshold.
        return total, (any_sparse and step.sparse_threshold > 0
                       and not density_fixed(sparse_branches))
    return total, any_sparse


def density_fixed(branches):
    """Whether a ``ColumnTransformer``'s output density is the same on any rows, decided
    from its branches' parameters: then whether its output is sparse (density below
    ``sparse_threshold``) is too, and its fit on public rows of ``X``'s schema shows it.

    scikit-learn's density is the stored entries of the sparse branches' outputs plus every
    cell of the dense ones, over all cells. It is a per-row constant when every branch that
    may be sparse is a ``OneHotEncoder`` that stores exactly one entry per input column and
    row (declared categories, ``handle_unknown="error"``, ``drop=None``: a value outside the
    categories raises instead of storing none) and every dense branch has a width fixed by
    its parameters (no step keeping a data-dependent number of components).

    Parameters
    ----------
    branches : list of (step, bool)
        The branches that are not dropped, each with whether its output may be sparse.

    Returns
    -------
    bool
    """
    for child, sparse in branches:
        if sparse:
            if not (type(child) is OneHotEncoder and not isinstance(child.categories, str)
                    and child.handle_unknown == "error" and child.drop is None):
                return False
        elif hasattr(child, "get_params") and any(
                key.endswith("n_components") and value is not None
                and not isinstance(value, Integral)
                for key, value in child.get_params(deep=True).items()):
            return False
    return True


def _child(path, name):
    """Step paths as in ``param_grid`` keys: ``columntransformer__num``."""
    return f"{path}__{name}" if path else name


def _budget(step, path, context, name="epsilon"):
    """The step's budget (parameter ``name``), checked to be a positive finite number."""
    epsilon = getattr(step, name)
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, Real) or not (
        np.isfinite(epsilon) and epsilon > 0
    ):
        _refuse(step, path, context,
                f"{name}={epsilon!r} ({type(epsilon).__name__}) is not a privacy budget; give "
                f"a positive finite number, e.g. {name}=1.0")
    return float(epsilon)


def _why_refused(step):
    name = type(step).__name__
    if type(step).__module__.startswith("diffprivlib") or any(
        isinstance(step, allowed) for allowed in ALLOWED
    ):
        return (f"{name} is not on the gate's allowlist (a subclass may change what fit reads "
                "and spends); use the class it derives from, or pass refit=False")
    if name in audit.META_REASONS:
        return f"{audit.META_REASONS[name]}. Use a diffprivlib model, or pass refit=False"
    remedy = audit.REMEDIES.get(name, "a diffprivlib model for this step")
    return (f"{name} is fitted on the private data without differential privacy. Use {remedy}, "
            "or pass refit=False to run the private selection only. If it is a differentially "
            "private estimator of your own or from another library, register it, on your "
            "responsibility, with skdptune.gate.register_dp_estimator")


def _sparse_remedy(step):
    return (f"it receives a sparse matrix, but {type(step).__name__} needs dense input (a "
            "diffprivlib model would densify or fail after the selection was charged). Make the "
            "input dense: OneHotEncoder(sparse_output=False), ColumnTransformer("
            "sparse_threshold=0), or a dense X")


def sparse_refusal(step, path, context, X):
    """The :class:`GateError` refusing ``step`` (at ``path``) because ``X``, what reaches it
    on the rehearsal's public rows, is sparse and it needs dense input; None otherwise."""
    rule = ALLOWED.get(type(step))
    if not issparse(X) or rule is None or rule.accepts_sparse:
        return None
    return _refusal(step, path, context,
                    _sparse_remedy(step) + " (a ColumnTransformer's output on public rows of "
                    "X's schema: its density, the same on any rows, is below its "
                    "sparse_threshold)")


def _refusal(step, path, context, reason):
    """The :class:`GateError` refusing ``step`` (at ``path``) for ``reason``."""
    where = f" ({context})" if context else ""
    step_name = f"step {path!r}" if path else "the estimator"
    error = GateError(
        f"The refit gate refuses {step_name}{where}, {_short_repr(step)}: {reason}. See "
        "skdptune.gate for what a released model may contain."
    )
    error.refusal_key = (path, reason)  # the same step and reason in another candidate
    return error


def _refuse(step, path, context, reason):
    raise _refusal(step, path, context, reason)


def _short_repr(step):
    text = repr(step).replace("\n", " ")
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:77] + "..."


def check_candidate(candidate, context, *, release=True, sparse_input=False,
                    seeded_search=False, n_features=None):
    """Every check of one configuration the search may fit, before any data.

    The one candidate check of both searches (a grid candidate, a sampled setting): scikit-learn's
    parameter validation of every step (``skdptune._validation.validate_candidate``), the
    record as the privacy unit (``skdptune._validation.check_record_wise``), the declared
    public parameters (:func:`check_public_parameters`), the width of per-feature bounds when
    ``n_features`` is given (:func:`check_input_width`), then, when its fit may be released,
    the refit gate (:func:`check_release`). Every problem found (after the parameters are
    valid) is raised at once, in one error of the first problem's class
    (``skdptune._validation.raise_refusals``).

    Parameters
    ----------
    candidate : estimator
        The configuration (the search's estimator with the candidate's parameters).
    context : str
        Names the configuration in messages (e.g. ``"param_grid candidate {...}"``).
    release : bool, default=True
        Whether a fit of ``candidate`` may be released (then the gate decides).
    sparse_input : bool, default=False
        Whether ``X`` is sparse (see :func:`check_release`).
    seeded_search : bool, default=False
        Whether the search is seeded (see :func:`check_release`).
    n_features : int or None, default=None
        Number of columns of ``X``, to check per-feature bounds against; None skips that check.

    Returns
    -------
    budget : (float, float) or None
        What :func:`check_release` returns (the declared ``(epsilon, delta)``), or None when
        ``release`` is False.
    """
    # Valid parameters first (the other checks read them); then every check, and every
    # problem they find raised together (skdptune._validation.raise_refusals).
    validate_candidate(candidate, context)
    *_, budget = collect_refusals([
        lambda: check_record_wise(candidate, context),
        lambda: check_public_parameters(candidate, context),
        lambda: n_features is None or check_input_width(candidate, n_features, context),
        lambda: release and check_release(candidate, sparse_input=sparse_input,
                                          context=context, seeded_search=seeded_search),
    ])
    return budget if release else None
