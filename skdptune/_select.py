"""The grid search's select stage: a DP selector on the partition utilities, the
``best_score_`` estimate, their charge records, and the attributes released from them.

Everything here reads the utilities only through the selector and the Laplace estimate
(``select``); the rest is post-processing of their DP outputs and public parameters.
"""

import math
import warnings
from numbers import Integral

import numpy as np

from ._accounting import Charge, at_least
from ._plan import warn_declined
from ._stack import user_stacklevel
from .selection import SelectionResult
from .selection._score import estimate_std, estimate_utility


def select(plan, utilities, delta, error_score, noise_state):
    """Select a candidate from ``utilities`` (sensitivity ``1 / k`` each, all candidates at
    once) and estimate its utility, as the plan's budget says.

    The selector gets ``(1 - score_share)`` of the selection budget, a Laplace estimate of
    the selected candidate's utility the rest; they compose sequentially
    (:func:`selection_charges`). The raw utilities are not kept.

    Returns
    -------
    selection : SelectionResult
    index : int
        The selected candidate (:func:`_selected_index`).
    score, score_std : float or None
        The ``best_score_`` estimate and its noise std (None without one).
    """
    sensitivity = 1.0 / plan.n_partitions
    # The default's margin: public offsets (skdptune.selection._base.default_offsets).
    offsets = {} if plan.offsets is None else {"offsets": plan.offsets}
    selection = plan.selector.select(utilities, sensitivity=sensitivity,
                                     epsilon=plan.budget.selector_epsilon, delta=delta,
                                     random_state=noise_state, **offsets)
    index = _selected_index(selection, error_score)
    score = score_std = None
    if plan.budget.score_epsilon > 0:
        score = estimate_utility(utilities, index, sensitivity=sensitivity,
                                 epsilon=plan.budget.score_epsilon, random_state=noise_state)
        # Public: a function of k and score_epsilon only, released beside the estimate.
        score_std = estimate_std(sensitivity, plan.budget.score_epsilon)
    del utilities
    return selection, index, score, score_std


def no_selection(plan):
    """What a search that selects nothing releases: the default when it declines (with
    :class:`~skdptune.exceptions.SelectionDeclinedWarning`), the only candidate of a grid of
    one; as :func:`select` returns it."""
    if plan.budget.declined:
        warn_declined(plan)
        selection = _declined_selection(plan.default_index)
    else:
        selection = _declined_selection(0, composition="single candidate")
    return selection, selection.index, None, None


# How a selector's SelectionResult.composition bounds its epsilon, as the report states it.
_SELECTOR_COMPOSITION = {
    "declined": "none: the search declined to select",
    "single candidate": "none: a single candidate, nothing to select",
    "single": "one pure-DP step",
    "basic": "basic composition of max_iter pure steps (max_iter * eps0)",
    "optimal": "exact optimal composition of max_iter pure steps (Kairouz, Oh & Viswanath)",
}


# Zero-out derivations of the selection's releases: a null record changes only its own
# partition's fit or score, so a partition utility (in [0, 1]) moves by at most 1 and every
# mean by at most 1/k, as for a replaced record.
_UTILITY_ZERO_OUT = ("a null record changes only its partition's fits and scores: every mean "
                     "utility moves by at most 1/k, as for a replaced record; the same "
                     "sensitivity, the same figure")


#: What best_score_ is, as the report states it: a partition score, not a test score.
SCORE_MECHANISM = ("Laplace on the selected candidate's partition score (the mean score of "
                    "its fits on 1/k of the records each, not the released model's test "
                    "score; sensitivity 1/k)")


def _selected_index(selection, error_score):
    """The selected index, or the first candidate (with a warning) when none passed.

    The warning is decided by the DP selection only. It names both causes, since which
    one it is cannot be told privately: noise, or low utilities everywhere, for instance
    because fits failed (which partitions fail is private and never reported).
    """
    if selection.index is not None:
        return selection.index
    warnings.warn(
        "The selector selected no candidate (no noisy test passed); falling back to the "
        "first candidate of the grid. Either the noise swamped the utilities (it shrinks "
        "as n_partitions * epsilon grows: consider a larger epsilon, more partitions, or a "
        "lower selector floor; see search.forecast(X) and skdptune.forecast), or every "
        "candidate scored low on every partition, for instance because its fits or scores "
        f"failed: each failure scores error_score={error_score!r}, and which "
        "partitions fail is private, so it is not reported. To check for failing fits, "
        "run the search on non-sensitive data of the same shape with error_score='raise', "
        "inside skdptune.reveal_fit_messages() to see the fits' warnings.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    return 0


def store_selection(search, selection, index, score, score_std, plan, cost):
    """The fitted attributes computed from the DP selection and score estimate only.

    ``score_std`` is the standard deviation of the Laplace estimate's noise in utility
    units (public), None when ``score`` is not a Laplace estimate. With a callable
    ``refit``, the candidate to refit is its choice from the released ``cv_results_``.
    ``cost`` is what the selection was charged (the ledger's), for the verbose line.
    """
    candidates = plan.candidates
    search.selection_ = selection
    # A DP selection chose best_index_: not when declined, with a single candidate, or
    # when no candidate passed (the first is then released as a fallback).
    search.selected_ = plan.budget.selects and selection.index is not None
    search.default_index_ = plan.default_index
    search.default_margin_ = 0.0 if plan.offsets is None else float(plan.offsets.max())
    if score is None and selection.index is not None and selection.score is not None:
        score = min(selection.score, 1.0)  # the doubling's own estimate (post-processing)
    n_passes = np.zeros(len(candidates), dtype=int)
    for iteration in selection.trace:
        if iteration.passed is not None:
            n_passes[iteration.passed] += 1
    # The doubling's own estimate (the final threshold u) has no closed-form noise std:
    # score_std None, best_score_std_ NaN.
    search._store_released(candidates, index, score, score_std, plan, n_passes=n_passes,
                           selected=np.arange(len(candidates)) == index)
    if callable(search.refit):
        _choose_with_refit_callable(search, candidates)
    search._say(selection_line(selection, search.best_index_, plan, cost,
                               getattr(search, "best_score_", None),
                               getattr(search, "best_score_std_", None)))


def _choose_with_refit_callable(search, candidates):
    """``refit=callable``: the candidate to refit, chosen from the released cv_results_.

    The callable sees only DP outputs (params, ``n_passes``, ``selected``): its choice is
    post-processing, and the refit's charge (the grid's maximum) does not depend on it.
    As in ``GridSearchCV``, it sets ``best_index_`` and there is no ``best_score_``.
    """
    index = search.refit(search.cv_results_)
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, Integral):
        raise TypeError("best_index_ returned is not an integer")
    if not 0 <= index < len(candidates):
        raise IndexError("best_index_ index out of range")
    search.best_index_ = int(index)
    search.best_params_ = candidates[search.best_index_]
    del search.best_score_, search.best_score_std_


def selection_line(selection, index, plan, cost, score=None, score_std=None):
    """The verbose line of the selection: DP outputs and public figures only."""
    params = plan.candidates[index]
    if plan.budget.single_candidate:
        return ("Released the only candidate, refit with the whole budget: nothing to select, "
                f"nothing charged for a selection, no best_score_: {params}")
    if plan.budget.declined:
        return (f"Released the default, candidate {index + 1}/{len(plan.candidates)}, without "
                f"a selection (nothing charged for one): {params}")
    how = (f"with {type(plan.selector).__name__}" if selection.index is not None
           else "as the fallback (no candidate passed)")
    if plan.default_index is not None:
        kept = "kept" if index == plan.default_index else "moved off"
        how += (f" ({kept} the default, candidate {plan.default_index + 1}, favoured by "
                f"{plan.offsets.max():.3g})")
    line = (f"Selected candidate {index + 1}/{len(plan.candidates)} {how}, charged "
            f"epsilon={cost[0]:g}, delta={cost[1]:g}: {params}")
    if score is None:  # a callable refit: no best_score_
        return line
    if math.isnan(score):
        return line + "; no best_score_ (score_share=0)"
    # best_score_ measures fits on one partition each, far below what the refit on all the
    # data scores: named a partition score wherever it is shown (issue 40).
    fits = f"fits on 1/{plan.n_partitions} of the records each"
    not_test = "not the released model's test score"
    if math.isnan(score_std):
        return (line + f"; best_score_={score:.4g} (a partition score of {fits}: the doubling "
                f"selector's final threshold u, no closed-form noise std; {not_test})")
    return (line + f"; best_score_={score:.4g} +/- {score_std:.2g} (a partition score: DP "
            f"estimate of the mean score of {fits}, noise std; {not_test})")


def selection_charges(plan, selection):
    """The selection entry's records: the selector, charged what it reports and never less
    than what it was handed (``skdptune._accounting.at_least``), and the ``best_score_``
    estimate (Laplace, sensitivity ``1 / k``); they compose sequentially (basic)."""
    selector_cost = at_least(plan.selector_cost, (selection.epsilon, selection.delta))
    return (
        Charge("selection", selector_cost[0], selector_cost[1],
               f"{type(plan.selector).__name__} on the partition utilities (sensitivity 1/k)",
               _SELECTOR_COMPOSITION.get(selection.composition, selection.composition),
               entry="selection", zero_out_epsilon=selector_cost[0],
               zero_out=_UTILITY_ZERO_OUT),
        Charge("best_score_ estimate", plan.budget.score_epsilon, 0.0, SCORE_MECHANISM,
               "one pure-DP step", entry="selection",
               zero_out_epsilon=plan.budget.score_epsilon, zero_out=_UTILITY_ZERO_OUT),
    )


def _declined_selection(index, composition="declined"):
    """The selection record of a search that selects nothing: the candidate ``index`` (the
    default when it declined, the only one of a single candidate), no mechanism run, nothing
    spent; ``composition`` says why."""
    return SelectionResult(index=index, score=None, trace=(), n_iterations=0,
                           max_iter=0, epsilon_per_iteration=0.0, epsilon=0.0, delta=0.0,
                           composition=composition)
