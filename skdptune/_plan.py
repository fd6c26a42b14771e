"""The grid search's plan: every stage decided before the data are touched, in one place.

``PrivateGridSearchCV.fit`` (through :func:`grid_plan`) and ``PrivateGridSearchCV.forecast``
(through :func:`grid_forecast`, the data-free subset) run the same stages in the same order, so the
two cannot decide differently:

1. validate the parameters and build the candidates and the default (:func:`_candidates`);
2. the refit gate on every candidate (:func:`_check_candidates`; ``fit`` only);
3. the decision (:func:`_decide`): the tuning policy, the budget split (:func:`grid_budget`)
   and ``n_partitions``, from public quantities only;
4. each candidate's refit and partition parameters (:func:`_candidate_parameters`), the
   scorer (:func:`_scoring`), the input's public shape (:func:`_check_data`) and the
   rehearsal on public rows (``fit`` only: the forecast sees no data).

Nothing here is charged, and nothing data-dependent is stored.
"""

import dataclasses
import math
import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from scipy.sparse import issparse
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils import get_tags
from sklearn.utils.validation import _num_samples, check_consistent_length

from ._accounting import add_costs, refit_reservation, selector_reservation
from ._base import Plan
from ._batched.engine import candidate_paths
from ._default_policy import SHARE_WITHOUT_DEFAULT, choose, refit_noise
from ._dp_fit import configuration_key, with_params
from ._forecast import Forecast, forecast_selection
from ._gate import check_budget_not_tuned, check_candidate, split_budget, zero_out_epsilon
from ._partition import auto_n_partitions
from ._partition_scaling import check_user_rules, partition_ratio, rescaled_params
from ._rehearsal import check_categories, final_width, rehearse, schema_of
from ._stack import user_stacklevel
from ._trivial import lead_kind
from .exceptions import NoisySelectionWarning, SelectionDeclinedWarning
from ._tuning_evidence import evidence_for, partition_floor
from ._utility import (
    BoundedR2Scorer,
    SimplifiedSilhouetteScorer,
    default_kmeans_range,
    make_utility,
    selection_metric,
)
from ._validation import (
    check_input_data,
    check_scorer_applies,
    collect_refusals,
    input_shape,
    min_samples,
    route_fit_params,
)
from .selection import SELECTORS, OneShotSelector, _as_selector
from .selection._base import default_offsets

#: The whole fit's epsilon when neither ``epsilon`` nor ``selection_epsilon`` is given.
DEFAULT_EPSILON = 1.0


# ---------------------------------------------------------------------------------------------
# The grid search's budget: how one total epsilon is split between its releases.
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GridBudget:
    """How :class:`~skdptune.PrivateGridSearchCV` splits its budget, fixed before the data.

    Four releases compose sequentially (basic composition,
    ``skdptune._accounting.add_costs``): the selector,
    the Laplace estimate released as ``best_score_``, the refit and the Laplace estimate of the
    released model's lead over a trivial one (``trivial_lead_``). Built by
    :func:`grid_budget` from the search's parameters only.

    Attributes
    ----------
    selection_epsilon : float
        The selection's budget: ``selector_epsilon + score_epsilon``.
    selector_epsilon : float
        What the selector is handed.
    score_epsilon : float
        The ``best_score_`` estimate's epsilon (Laplace, sensitivity ``1 / k``).
    refit_epsilon : float or None
        The refit's share of the total, given to every candidate (``split_budget`` of the
        gate); None: the refit spends what its estimator declares.
    rule : str
        How the budget was split, as the privacy report states it.
    check_epsilon : float, default=0.0
        The ``trivial_lead_`` estimate's epsilon (0: none), taken from the refit's share of
        the total, or with ``selection_epsilon`` from the selection's budget.
    selection_share : float or None, default=None
        The share of the total the selection got (``"auto"`` resolved); None when the total
        was not split (``selection_epsilon``, or no refit).
    single_candidate : bool, default=False
        Whether the grid holds one candidate (duplicates merged, the default included): there
        is nothing to select, and the selection gets nothing.
    """

    selection_epsilon: float
    selector_epsilon: float
    score_epsilon: float
    refit_epsilon: object
    rule: str
    check_epsilon: float = 0.0
    selection_share: object = None
    single_candidate: bool = False

    @property
    def declined(self):
        """Whether the search declines to select among several candidates
        (``skdptune/_default_policy.py``) and refits its default with all of ``epsilon``."""
        return self.selection_share == 0 and not self.single_candidate

    @property
    def selects(self):
        """Whether a selection runs (and is charged): neither declined nor a single
        candidate."""
        return not (self.declined or self.single_candidate)


def grid_budget(*, total, selection_epsilon, selection_share, score_share, refit,
                check_share=0.0, single_candidate=False):
    """The grid search's :class:`GridBudget` from its public parameters.

    Parameters
    ----------
    total : float or None
        ``epsilon``, the whole fit's budget; None when ``selection_epsilon`` is given.
    selection_epsilon : float or None
        The selection's budget, explicit, the check's share of it included; the refit then
        spends what its estimator declares.
    selection_share : float
        The selection's share of ``total`` when the search refits, in ``[0, 1)``; 0: the
        search declines to select, and the refit gets all of ``total`` but the check's share
        (a declined search checks its release as a selecting one does: issue 39).
    score_share : float
        The ``best_score_`` estimate's share of the selection budget (0 with a callable refit,
        which releases no ``best_score_``, as ``GridSearchCV``).
    refit : bool
        Whether the search refits (without a refit the selection gets all of ``total``).
    check_share : float, default=0.0
        The ``trivial_lead_`` estimate's share of the refit's part of ``total``, in ``[0,
        0.5]``; 0 when the search has no trivial model to compare with. With
        ``selection_epsilon`` and a refit (which spends what it declares), its share of
        ``selection_epsilon`` instead (issue 40), so what is charged in all is unchanged.
    single_candidate : bool, default=False
        Whether there is one candidate: no selection then, whatever ``selection_epsilon`` and
        ``selection_share`` say; with ``total`` and a refit, the refit gets all of it.

    Returns
    -------
    budget : GridBudget
    """
    check_epsilon, share = 0.0, None
    if single_candidate:
        # Nothing to select: no selection runs or is charged (issue 40). As for a declined
        # selection, no check is bought: the candidate is refit with the whole budget.
        refit_epsilon = total if refit and selection_epsilon is None else None
        share = None if refit_epsilon is None else 0.0
        selection_epsilon = 0.0
        rule = "a single candidate, nothing to select: " + (
            "epsilon to the refit" if refit_epsilon is not None
            else "refit as declared" if refit else "no refit, nothing charged")
    elif selection_epsilon is not None:
        refit_epsilon, rule = None, "selection_epsilon; refit as declared"
        if refit and check_share:
            # The check composes sequentially with the selection and the refit; taken from
            # the selection's budget, the selection, the check and the refit add up to
            # selection_epsilon plus what the refit declares, as without a check.
            given = selection_epsilon
            selection_epsilon = (1 - check_share) * given
            check_epsilon = given - selection_epsilon  # exact (Sterbenz, check_share <= 0.5)
            rule = "selection_epsilon, check_share of it for trivial_lead_; refit as declared"
    elif not refit:
        selection_epsilon, refit_epsilon = total, None
        rule = "epsilon, all to the selection (refit=False)"
    else:
        # Selection, refit and check compose sequentially: the shares add up to the total.
        share = selection_share
        selection_epsilon = share * total
        release_epsilon = total - selection_epsilon
        refit_epsilon = (1 - check_share) * release_epsilon
        # Exact for check_share <= 0.5 (Sterbenz): refit and check add up to the release's
        # share bit for bit, so the charges add up to the total.
        check_epsilon = release_epsilon - refit_epsilon
        rule = ("epsilon to the refit: the selection declined (the tuning policy of default),"
                if share == 0 else "epsilon split by selection_share")
        rule += " and check_share" if check_share else ""
    selector_epsilon = (1 - score_share) * selection_epsilon
    # Exact in floating point for score_share <= 0.5 (Sterbenz): selector and estimate add up
    # to the selection epsilon, bit for bit.
    score_epsilon = selection_epsilon - selector_epsilon
    return GridBudget(selection_epsilon, selector_epsilon, score_epsilon, refit_epsilon, rule,
                      check_epsilon, share, single_candidate)


@dataclass(frozen=True)
class GridPlan(Plan):
    """The grid search's ``skdptune._base.Plan``: its candidates and budgets.

    Attributes
    ----------
    selector : selector
        A validated clone of ``selector``.
    n_partitions : int or None
        ``n_partitions`` resolved (``"auto"`` included); None when the search declines to
        select.
    candidates : list of dict
        ``ParameterGrid(param_grid)``: the released ``params``.
    partition_candidates : list of dict
        The parameters of each candidate's partition fits (with ``partition_scaling``).
    refit_candidates : list of dict
        The parameters of each candidate's refit (with the refit's share of ``epsilon``).
    declared_costs : list of (float, float)
        What each candidate's refit declares (empty with ``refit=False``).
    max_refit_cost : (float, float)
        The refit's reservation: the largest declared cost.
    zero_out_refit : float or None
        The largest epsilon a candidate's refit spends under zero-out adjacency
        (``skdptune._gate.zero_out_epsilon``), for the report's comparison figure; None
        when a candidate's is not derived, or without a refit.
    budget : skdptune._accounting.GridBudget
        How the budget is split between the selector, ``best_score_`` and the refit.
    selector_cost : (float, float)
        What the selector may spend, from its parameters: reserved, and the least charged.
    scoring_note : str or None
        A verbose line on a default scoring.
    score_params : dict
        ``fit``'s metadata routed to the partition scorer.
    default_index : int or None
        The untuned default candidate's index (``default``), None without one.
    offsets : ndarray or None
        The public offsets handed to the selector (the default's margin), None without a
        default or a selection.
    policy : skdptune._default_policy.Policy or None
        The tuning policy (the selection's share, the default's margin), None without a
        default.
    lead : str or None
        The trivial model ``trivial_lead_`` compares with
        (``skdptune._trivial.lead_kind``); None: no estimate (``budget.check_epsilon``
        is then 0).
    """

    selector: object
    n_partitions: int
    candidates: list
    partition_candidates: list
    refit_candidates: list
    declared_costs: list
    max_refit_cost: tuple
    zero_out_refit: object
    budget: object
    selector_cost: tuple
    scoring_note: object
    score_params: dict
    default_index: object
    offsets: object
    policy: object
    lead: object


def grid_plan(search, X, y, fit_params):
    """``fit``'s door: every stage, as a :class:`GridPlan`; raises on any invalid input
    before the data are touched, in the stages' order (the gate's refusal of a step says
    more than a scorer's; the rehearsal comes last, after the checks whose refusals say
    more)."""
    selector = clone(_as_selector(search.selector))
    selector.validate_parameters()
    candidates = list(ParameterGrid(search.param_grid))
    if not candidates:
        raise ValueError(
            f"param_grid={search.param_grid!r} has no candidates; give at least one "
            "parameter setting (an empty dict {} tunes the estimator as it is)."
        )
    estimator = clone(search.estimator)
    metric, key = selection_metric(estimator, search.scoring, search.refit)
    lead = lead_kind(estimator, metric, search.utility_range)
    n_samples = _num_samples(X)  # public: the guarantee is for replace-one adjacency
    n_features = input_shape(X)["n_features_in_"]
    candidates, default_index, added = _candidates(search, selector, estimator, candidates)
    declared = _check_candidates(search, estimator, candidates, sparse_input=issparse(X),
                                 n_features=n_features, added=added)
    schema = schema_of(X, y)
    # The candidates as written, for the checks below (none changes them).
    built = [with_params(estimator, params) for params in candidates]
    policy, budget, n_partitions = _decide(search, candidates, built,
                                           default_index, n_samples, schema, lead)
    refit_candidates, partition_candidates, declared_costs, zero_out_costs = (
        _candidate_parameters(
            search, estimator, candidates, declared, budget,
            1.0 if not budget.selects else partition_ratio(n_partitions,
                                                         search.validation_fraction),
        ))
    # After the gate, whose refusal of a step says more than a scorer's.
    scorer, utility, scoring_note = _scoring(search, estimator, candidates, built, metric, key,
                                             n_samples, n_partitions or 1, n_features)
    fit_params, score_params = route_fit_params(
        search, estimator, scorer, fit_params,
        scorer_name=(search.refit if isinstance(search.scoring, (list, tuple, set, dict))
                     else None),
    )
    _check_data(search, X, y, estimator, n_samples, n_partitions)
    # Last, after the checks whose refusals say more: on public rows of X's schema, a
    # configuration that fails every fit is refused in full, nothing charged.
    rehearse(built, [f"param_grid candidate {params}" for params in candidates], schema)
    check_categories(X, built)
    offsets = None
    if default_index is not None and budget.selects:
        margin = policy.margin if search.default_margin == "auto" else search.default_margin
        offsets = default_offsets(selector, len(candidates), default_index, margin,
                                  sensitivity=1.0 / n_partitions,
                                  epsilon=budget.selector_epsilon)

    # Reserved before the data (skdptune.accounting): the selector's a-priori cost, the
    # best_score_ estimate, and the refit whichever candidate the selection picks.
    selector_cost = ((0.0, 0.0) if not budget.selects
                     else selector_reservation(selector, budget.selector_epsilon, search.delta))
    max_refit_cost = refit_reservation(declared_costs)
    return GridPlan(
        estimator=estimator,
        scorer=scorer,
        utility=utility,
        fit_params=fit_params,
        n_samples=n_samples,
        input_shape=input_shape(X),
        a_priori_cost=add_costs(selector_cost, (budget.score_epsilon, 0.0), max_refit_cost,
                                (budget.check_epsilon, 0.0)),
        selector=selector,
        n_partitions=n_partitions,
        candidates=candidates,
        partition_candidates=partition_candidates,
        refit_candidates=refit_candidates,
        declared_costs=declared_costs,
        max_refit_cost=max_refit_cost,
        zero_out_refit=(None if not zero_out_costs or None in zero_out_costs
                        else max(zero_out_costs)),
        budget=budget,
        selector_cost=selector_cost,
        scoring_note=scoring_note,
        score_params=score_params,
        default_index=default_index,
        offsets=offsets,
        policy=policy,
        lead=lead if budget.check_epsilon > 0 else None,
    )


def grid_forecast(search, X, confidence, n_features, n_samples):
    """``forecast``'s door: the data-free stages of :func:`grid_plan` (the candidates and the
    default, the decision, the paths), from ``X``'s shape alone; see
    ``PrivateGridSearchCV.forecast``."""
    search._validate_params()
    selector = _as_selector(search.selector)
    estimator = clone(search.estimator)
    candidates, default_index, _ = _candidates(search, selector, estimator,
                                               list(ParameterGrid(search.param_grid)))
    n_samples, n_features = _forecast_shape(X, n_samples, n_features)
    if n_samples is None and (search.n_partitions == "auto" or default_index is not None):
        raise ValueError(
            "n_partitions='auto' and the tuning policy of a default candidate are chosen "
            "from the number of records: pass the data you will fit, search.forecast(X) "
            "(only its shape and schema are read), or its "
            "size, search.forecast(n_samples=...)."
        )
    schema = schema_of(X) if _has_rows(X) else schema_of(None, n_features=n_features)
    try:  # the trivial_lead_ check, whose share the refit gives up (refit_epsilon)
        lead = lead_kind(estimator, selection_metric(estimator, search.scoring,
                                                     search.refit)[0], search.utility_range)
    except (ValueError, TypeError):
        lead = None  # fit raises it, with its message
    built = [with_params(estimator, params) for params in candidates]
    policy, budget, n_partitions = _decide(search, candidates, built,
                                           default_index, n_samples, schema, lead)
    if not budget.selects:  # declined, or a single candidate: no selection, no fits
        return Forecast(selector=type(selector).__name__, n_candidates=len(candidates),
                        n_partitions=0, epsilon=0.0, delta=search.delta,
                        confidence=confidence, pairwise_gap=math.inf,
                        uniform_gap=math.inf, max_confidence=0.0, n_fits=0, paths=None,
                        policy=policy, refit_epsilon=budget.refit_epsilon)
    selection = forecast_selection(
        len(candidates), n_partitions=n_partitions,
        epsilon=budget.selector_epsilon, delta=search.delta,
        selector=selector, confidence=confidence,
    )
    return dataclasses.replace(selection, n_fits=n_partitions * len(candidates),
                               paths=_forecast_paths(search, candidates, n_features),
                               policy=policy, refit_epsilon=budget.refit_epsilon)


def _decide(search, candidates, built, default_index, n_samples, schema, lead):
    """The decision both doors share, from public quantities only: the tuning policy (None
    with a single candidate: nothing to select), the budget split and ``n_partitions``
    (None when no selection runs). ``built``: each candidate's estimator, for the partition
    floor (:func:`~skdptune._tuning_evidence.partition_floor`)."""
    floor = partition_floor(built)
    single = len(candidates) == 1  # nothing to select: no policy, no selection
    policy = None if single else _policy(search, built, default_index, n_samples, schema,
                                         floor, lead)
    budget = _budget(search, lead, policy, single_candidate=single)
    n_partitions = None if not budget.selects else _n_partitions(
        search, n_samples, len(candidates), budget.selector_epsilon, floor)
    return policy, budget, n_partitions


def _candidates(search, selector, estimator, candidates):
    """The candidates (the estimator as given added when ``default="estimator"`` finds no
    candidate with its values), candidates of equal effect merged
    (:func:`_unique_candidates`), the default's index and the added default's, from the
    parameters only; an index is None without a default, or when none was added (or it
    equals a candidate of the grid)."""
    given, (candidates, default_index) = len(candidates), _with_default(
        search, selector, estimator, candidates)
    return _unique_candidates(estimator, candidates, default_index,
                              added=default_index if len(candidates) > given else None)


def _with_default(search, selector, estimator, candidates):
    """:func:`_candidates` before candidates of equal effect are merged."""
    if search.default is None:
        if search.default_margin != "auto":
            raise ValueError(
                f"default_margin={search.default_margin!r} has no effect without default; "
                "name the untuned candidate with default='estimator' (the estimator as "
                "given) or default=<its parameters>, or leave default_margin='auto'."
            )
        return candidates, None
    if not isinstance(selector, OneShotSelector):
        raise ValueError(
            f"default={search.default!r} needs a one-shot selector (one of "
            f"{sorted(name for name, cls in SELECTORS.items() if issubclass(cls, OneShotSelector))}"
            f"), got selector={search.selector!r}: the margin is a bonus on one utility "
            "before a single noisy choice. Pass default=None to tune with this selector."
        )
    if search.default == "estimator":
        values = estimator.get_params(deep=True)
        matches = [i for i, params in enumerate(candidates)
                   if all(key in values and _same(values[key], value)
                          for key, value in params.items())]
        if not matches:
            # The estimator as given is the candidate the user would otherwise release:
            # added, with its own values of the grid's parameters.
            names = sorted({name for params in candidates for name in params
                            if name in values})
            return candidates + [{name: values[name] for name in names}], len(candidates)
        return candidates, matches[0]
    matches = [i for i, params in enumerate(candidates)
               if params.keys() == search.default.keys()
               and all(_same(search.default[key], value) for key, value in params.items())]
    if not matches:
        raise ValueError(
            f"default={search.default!r}: no candidate of param_grid has those parameters; "
            f"give one of the {len(candidates)} candidates' parameter dicts (the first is "
            f"{candidates[0]!r}), add the default to param_grid, or pass "
            "default='estimator' (the estimator as given, added when it is not a candidate)."
        )
    return candidates, matches[0]


def _policy(search, built, default_index, n_samples, schema, floor, lead):
    """The tuning policy (``skdptune._default_policy.choose``) of a search with a
    default: the selection's share (with ``selection_share="auto"``, ``epsilon`` the
    total and a refit) and the default's margin; None without a default. Public
    quantities only: ``epsilon``, ``n``, the candidates, and the default's family and
    input width, from ``schema`` (``skdptune._rehearsal.final_width``: the pipeline's
    parameters and the schema of ``X``, never its values). The prior is the default's
    family's (``skdptune._tuning_evidence``), its partition floor ``floor``, every
    candidate's (:func:`~skdptune._tuning_evidence.partition_floor`). ``lead``: the
    scoring's ``skdptune._trivial.lead_kind`` or None, for the ``trivial_lead_`` check's
    share of ``selection_epsilon`` (issue 40)."""
    if default_index is None:
        return None
    selection_epsilon = search._explicit_budget(
        "selection_epsilon",
        "the whole fit's budget, selection and refit, split by selection_share",
        "the selection's alone, the refit spending what its estimator declares",
    )
    total = DEFAULT_EPSILON if search.epsilon is None else search.epsilon
    score_share = 0.0 if callable(search.refit) else search.score_share
    default = built[default_index]
    evidence = dataclasses.replace(evidence_for(default), min_partition_rows=floor)
    common = dict(n_samples=n_samples, n_candidates=len(built),
                  score_share=score_share, validation_fraction=search.validation_fraction,
                  n_partitions=search.n_partitions, evidence=evidence)
    if selection_epsilon is not None or not search.refit:
        # The selection's budget is fixed (selection_epsilon less the check's share, or all
        # of epsilon without a refit), and the refit's does not depend on it: the margin
        # only, at the budget the selector will be handed.
        return choose(_budget(search, lead).selection_epsilon,
                      refit_noise=0.0, share=1.0, **common)
    width = final_width(default, schema)
    noise = refit_noise(default, n_samples, width)
    share = None if search.selection_share == "auto" else search.selection_share
    return choose(total, refit_noise=noise, share=share, **common)


def _check_candidates(search, estimator, candidates, *, sparse_input, n_features,
                      added=None):
    """Every candidate through ``skdptune._gate.check_candidate`` (the gate, with
    refit: the grid can swap steps), every problem of every candidate raised at once (a
    step all candidates share, once); what each refit declares (None with
    ``refit=False``).

    ``added`` is the index of the estimator as given, added by ``default="estimator"``.
    A refusal of it is not completed from the grid (which value would the user release
    untuned? a guess the margin would then favour): its message says that it was added,
    and how to name another default or none.
    """
    contexts = [f"param_grid candidate {params}" for params in candidates]
    if added is not None:
        contexts[added] = (
            f"the default candidate {candidates[added]}: default='estimator' added the "
            "estimator as given to the candidates, as no candidate of param_grid has its "
            f"values. Set {', '.join(sorted(candidates[added]))} on the estimator, pass "
            f"default=<one candidate's params> (e.g. default={candidates[0]!r}), or pass "
            "default=None to tune without a default"
        )
    return collect_refusals([
        lambda params=params, context=context: check_candidate(
            with_params(estimator, params), context, release=bool(search.refit),
            sparse_input=sparse_input, seeded_search=search.random_state is not None,
            n_features=n_features)
        for params, context in zip(candidates, contexts)
    ], contexts)


def _candidate_parameters(search, estimator, candidates, declared_by_gate, budget, ratio):
    """Every candidate's refit parameters (with the refit's share of the budget), its
    partition fits' parameters (with ``partition_scaling``) and what its refit declares
    (``declared_by_gate``: :meth:`_check_candidates`'s).

    Returns
    -------
    refit_candidates, partition_candidates : list of dict
    declared_costs : list of (float, float)
        Empty with ``refit=False``.
    zero_out_costs : list of (float or None)
        Each refit's epsilon under zero-out adjacency (:func:`skdptune.gate.
        zero_out_epsilon`); empty with ``refit=False``.
    """
    user_rules = search.partition_scaling if isinstance(search.partition_scaling, dict) else {}
    # Built afresh: the refit's share is set on them below; the plan's ``built`` stay as
    # written.
    built = [with_params(estimator, params) for params in candidates]
    check_user_rules(user_rules, {key for b in built for key in b.get_params(deep=True)})
    declared_costs, zero_out_costs, refit_candidates, partition_candidates = [], [], [], []
    for params, candidate, declared in zip(candidates, built, declared_by_gate):
        context = f"param_grid candidate {params}"
        refit_params = dict(params)
        if search.refit:
            if budget.refit_epsilon is not None:  # epsilon is the total: the refit's share
                # The gate's figure for the candidate as written is its charge, computed
                # once: the share scales its steps to the refit's epsilon.
                share = split_budget(candidate, budget.refit_epsilon, spent=declared[0])
                check_budget_not_tuned(
                    share, params, source="param_grid", remedy="selection_epsilon",
                    total=DEFAULT_EPSILON if search.epsilon is None else search.epsilon,
                )
                candidate.set_params(**share)
                refit_params.update(share)
                declared = (budget.refit_epsilon, 0.0)
            declared_costs.append(declared)
            zero_out_costs.append(zero_out_epsilon(candidate))
        refit_candidates.append(refit_params)
        # Partition fits only (never charged): the refit uses ``refit_params`` as written.
        rescaled = {}
        if search.partition_scaling is not None:
            rescaled = rescaled_params(candidate, ratio, user_rules)
            if rescaled:
                # The rescaled parameters exist before the data: check them as the
                # candidates are (a rule giving epsilon=-1 would fail every partition fit);
                # partition fits are never released, so not by the refit gate.
                check_candidate(
                    with_params(estimator, {**refit_params, **rescaled}),
                    f"{context}, as partition_scaling rescales it for the partition fits "
                    f"({rescaled})",
                    release=False,
                )
        partition_candidates.append({**refit_params, **rescaled})
    return refit_candidates, partition_candidates, declared_costs, zero_out_costs


def _scoring(search, estimator, candidates, built, metric, key, n_samples, n_partitions,
             n_features):
    """The scorer, its bounded utility and a verbose note on a default scoring, checked to
    apply to every candidate (``built``: each candidate's estimator)."""
    utility_range, scoring_note = search.utility_range, None
    if metric is None and utility_range is None:
        # KMeans.score over the records one partition is expected to score, bounded by
        # the declared bounds: public figures only (n_samples is public, n_partitions is
        # resolved, "auto" included).
        n_records = n_samples * search.validation_fraction / n_partitions
        utility_range = default_kmeans_range(built, n_records, n_features)
        if utility_range is not None:
            scoring_note = (
                f"Scoring with KMeans.score, utility_range=({utility_range[0]:g}, 0) from "
                f"the declared bounds and {n_records:g} validation records per partition"
            )
    scorer, utility = make_utility(estimator, metric, utility_range, key)
    if isinstance(scorer, BoundedR2Scorer) and not isinstance(metric, BoundedR2Scorer):
        low, high = utility.low, utility.high
        scoring_note = (f"Scoring with R² of predictions and targets clipped to the "
                        f"declared bounds_y, each partition's clipped to [{low:g}, "
                        f"{high:g}] (scoring={metric!r}: the bounded R² of a regressor "
                        "with bounds_y)")
    if isinstance(scorer, SimplifiedSilhouetteScorer) and metric is None:
        scoring_note = ("Scoring with the simplified silhouette of each partition's "
                        "held-out rows under the fitted centres, discounted by the share of "
                        "empty centres, in [0, 1] (scoring=None)")
    for params, candidate in zip(candidates, built):
        check_scorer_applies(scorer, candidate, params)
    return scorer, utility, scoring_note


def _check_data(search, X, y, estimator, n_samples, n_partitions):
    """The input's public shape: ``y`` given when needed, consistent lengths, accepted
    types, and enough records for every partition to expect a training and a validation
    record."""
    if y is None and get_tags(estimator).target_tags.required:
        raise ValueError(
            f"{type(estimator).__name__} is supervised: it requires y to be passed, but the "
            "target y is None."
        )
    if y is not None:
        check_consistent_length(X, y)
    # With refit=True the gate has followed sparse input through every step.
    check_input_data(X, y, estimator, check_sparse=not search.refit)
    if n_partitions is None:
        return  # no selection (the search declines to select): no partitions to fill
    fraction = min(search.validation_fraction, 1 - search.validation_fraction)
    needed = min_samples(n_partitions, fraction)
    if n_samples < needed:
        raise ValueError(
            f"n_partitions={n_partitions} is too many for {n_samples} samples: with "
            f"validation_fraction={search.validation_fraction} each partition should expect "
            f"at least one training and one validation record, which needs at least "
            f"{needed} samples. Use fewer partitions (at most "
            f"{max(int(n_samples * fraction), 1)})."
        )


def _n_partitions(search, n_samples, n_candidates, selector_epsilon, floor):
    """``n_partitions``, with ``"auto"`` resolved from public quantities only: never
    fewer than ``floor`` training records per partition (the candidates' families',
    :func:`~skdptune._tuning_evidence.partition_floor`)."""
    if search.n_partitions != "auto":
        return search.n_partitions
    return auto_n_partitions(
        n_samples, n_candidates=n_candidates, epsilon=selector_epsilon,
        validation_fraction=search.validation_fraction, min_training_records=floor,
    )


def _budget(search, lead=None, policy=None, single_candidate=False):
    """The ``skdptune._accounting.GridBudget`` of ``epsilon`` or
    ``selection_epsilon`` (both given is refused), from the parameters only: the
    selection's share is the ``policy``'s (with a default), else ``selection_share``
    (``"auto"``: ``skdptune._default_policy.SHARE_WITHOUT_DEFAULT``); ``lead``, the
    ``skdptune._trivial.lead_kind`` of the scoring, or None (no ``check_share``);
    ``single_candidate``: nothing to select, the selection gets nothing."""
    selection_epsilon = search._explicit_budget(
        "selection_epsilon",
        "the whole fit's budget, selection and refit, split by selection_share",
        "the selection's alone, the refit spending what its estimator declares",
    )
    if policy is not None:
        share = policy.share
    elif search.selection_share == "auto":
        share = SHARE_WITHOUT_DEFAULT
    else:
        share = search.selection_share
    return grid_budget(
        total=DEFAULT_EPSILON if search.epsilon is None else search.epsilon,
        selection_epsilon=selection_epsilon, selection_share=share,
        # A callable refit releases no best_score_ (as GridSearchCV): no score share.
        score_share=0.0 if callable(search.refit) else search.score_share,
        refit=bool(search.refit),
        check_share=0.0 if lead is None else search.check_share,
        single_candidate=single_candidate,
    )


def _forecast_paths(search, candidates, n_features):
    """The candidates' paths for the forecast, or None when the scorer is refused."""
    estimator = clone(search.estimator)
    try:
        metric, key = selection_metric(estimator, search.scoring, search.refit)
        _, utility = make_utility(estimator, metric, search.utility_range, key)
    except (ValueError, TypeError):
        return None  # fit raises it, with its message
    return candidate_paths(estimator, candidates, utility, n_features)


def warn_if_swamped(plan, delta):
    """Warn, before the data, when the selection noise swamps any plausible gap."""
    if len(plan.candidates) < 2:
        return
    try:
        forecast = forecast_selection(
            2, n_partitions=plan.n_partitions,
            epsilon=plan.budget.selector_epsilon, delta=delta,
            selector=plan.selector,
        )
    except TypeError:
        return  # a custom selector: no forecast
    if forecast.swamped:
        warnings.warn(
            f"The selection noise swamps any plausible difference between candidates: "
            f"with n_partitions={plan.n_partitions} and a selection epsilon of "
            f"{plan.budget.selection_epsilon:g}, {forecast.selector} picks the better of two "
            f"candidates with 90% probability only when they differ by "
            f"{forecast.pairwise_gap:.2g} or more in utility ([0, 1]). Use more "
            "partitions, a larger selection budget, or another selector; see "
            "search.forecast(X) and skdptune.forecast.",
            NoisySelectionWarning,
            stacklevel=user_stacklevel(),
        )


def warn_declined(plan):
    """Say, before the refit, that the search declines to select, and why in numbers."""
    warnings.warn(
        f"The search releases the default candidate {plan.candidates[plan.default_index]} "
        "refit with the whole budget, without selecting: no share of the budget lets the "
        "selection resolve a lead worth what it takes from the refit "
        f"({plan.n_samples} records, {len(plan.candidates)} candidates; the tuning policy, "
        f"docs/tune_or_release.rst). {_decline_numbers(plan.policy.reasons)} "
        "search.forecast(X) shows the policy before any fit, and selection_share=... forces "
        "a share.",
        SelectionDeclinedWarning,
        stacklevel=user_stacklevel(),
    )


def _decline_numbers(reasons):
    """A declined policy's ``skdptune._default_policy.DeclineReasons`` as sentences (public
    quantities only)."""
    if reasons is None:
        return "More records, a larger epsilon or a smaller grid would let it select."
    text = (f"With {reasons.share:.0%} of the budget the selection would find a lead of "
            f"{100 * reasons.resolvable_lead:.3g} points over one rival with probability 0.9, "
            f"and that share would cost the refit about {100 * reasons.refit_loss:.3g} "
            "points.")
    would = [f"{reasons.n_samples:,} records" if reasons.n_samples else None,
             f"epsilon={reasons.total:g}" if reasons.total else None,
             f"{reasons.n_candidates} candidates" if reasons.n_candidates else None]
    would = [what for what in would if what]
    if would:
        text += f" It would select with {' or '.join(would)}, the rest unchanged."
    return text


def policy_line(plan):
    """The verbose line of the tuning policy: public quantities only."""
    params = plan.candidates[plan.default_index]
    policy = plan.policy
    head = f"Default candidate {plan.default_index + 1}/{len(plan.candidates)} {params}"
    if plan.budget.declined:
        return (head + ": declines to select (the selection's expected gain is not "
                "positive at any share); the default is refit with the whole budget. "
                + _decline_numbers(policy.reasons))
    share = plan.budget.selection_share  # None: not split (selection_epsilon, no refit)
    gets = (f"{share:.3g} of epsilon" if share is not None
            else f"epsilon={plan.budget.selection_epsilon:g}")
    return (head + f", favoured by {plan.offsets.max():.3g}; the selection gets {gets} "
            f"(expected net gain {100 * policy.expected_gain:+.2f} points after the refit's "
            f"loss of {100 * policy.refit_loss:.2f}; the tuning policy, "
            "docs/tune_or_release.rst)")


def _has_rows(X):
    """Whether ``X`` is data (rows to fit a pipeline's first steps on), not a shape or a
    count."""
    return X is not None and not isinstance(X, (Integral, tuple)) and hasattr(X, "__len__")


def _forecast_shape(X, n_samples, n_features):
    """``(n_samples, n_features)`` from :meth:`PrivateGridSearchCV.forecast`'s ``X`` (data, a
    shape or a number of records) and its keywords; only shapes are read."""
    if X is None:
        return n_samples, n_features
    if isinstance(X, Integral) and not isinstance(X, (bool, np.bool_)):
        rows, columns = int(X), None
    elif isinstance(X, tuple) and all(isinstance(v, Integral) for v in X) and len(X) in (1, 2):
        rows, columns = int(X[0]), (int(X[1]) if len(X) == 2 else None)
    else:
        rows, columns = _num_samples(X), input_shape(X)["n_features_in_"]
    if n_samples is not None and n_samples != rows:
        raise ValueError(f"forecast got X with {rows} records and n_samples={n_samples}; give "
                         "one of them.")
    return rows, (columns if n_features is None else n_features)


def _same(a, b):
    """Whether two parameter values are equal, as a default candidate is matched: element by
    element for tuples and lists (``bounds=(lower, upper)``), by value for arrays."""
    if a is b:
        return True
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and bool(np.all(np.equal(a, b)))
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # values without a single truth value
        return False


def _unique_candidates(estimator, candidates, default_index, added=None):
    """The candidates without repeats, the default's index among them and the added
    default's (None when it repeats a grid candidate), and one warning naming the repeats.

    Two candidates repeat each other when the estimators they configure are equal
    (:func:`~skdptune._dp_fit.configuration_key` of the whole estimator: ``{'C': 1}`` and
    ``{'C': 1.0}``, a value the grid lists twice, or the estimator as given, added as the
    default, equal to a grid candidate once its parameters are filled in). Fitting both would
    spend the selection's noise on a tie and show one candidate twice in ``cv_results_``: the
    first in ``ParameterGrid`` order is kept, with its parameters as written, and the default's
    index points at it. ``added`` is the index of the default when it was added to the grid.
    """
    kept, same_as, first = [], [], {}  # same_as[i]: the position in kept of i's first equal
    for i, params in enumerate(candidates):
        position = first.setdefault(configuration_key(with_params(estimator, params)),
                                  len(kept))
        if position == len(kept):
            kept.append(i)
        same_as.append(position)
    if len(kept) < len(candidates):
        def name(i):
            return (f"the estimator as given (the default, {candidates[i]})" if i == added
                    else str(candidates[i]))
        again = {}  # each kept candidate: how its repeats were given
        for i in range(len(candidates)):
            if kept[same_as[i]] != i:
                again.setdefault(kept[same_as[i]], []).append(name(i))
        repeats = "; ".join(f"{candidates[first]} also as {', '.join(names)}"
                            for first, names in again.items())
        warnings.warn(
            f"param_grid holds candidates that configure the same estimator: {repeats}. "
            "Each is fitted once, as the first in ParameterGrid order, which "
            "cv_results_['params'] lists; remove the repeats to silence this warning.",
            UserWarning, stacklevel=user_stacklevel(),
        )
    return ([candidates[i] for i in kept],
            None if default_index is None else same_as[default_index],
            None if added is None or kept[same_as[added]] != added else same_as[added])
