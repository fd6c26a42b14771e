"""PrivateGridSearchCV: a differentially private drop-in for scikit-learn's GridSearchCV.

Data flows one way: validate -> partition -> evaluate -> select -> refit -> account. Only the
selection and the refit see private data in a way that reaches the user, and both are DP; the
partition utilities are kept in local variables and never stored.
"""

import dataclasses
import math
import time
import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import ParameterGrid
from sklearn.utils import get_tags
from sklearn.utils.validation import _num_samples, check_consistent_length

from ._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
)
from ._accounting import (
    Charge,
    add_costs,
    at_least,
    grid_budget,
    privacy_report,
    refit_reservation,
    selector_reservation,
)
from ._base import BasePrivateSearch, Plan
from ._stack import user_stacklevel
from ._distributed._stand_in import OnWorkers
from ._dp_fit import (
    MeasuringAccountant,
    fit_for_release,
    revealing,
    with_params,
)
from ._batched.engine import candidate_paths
from ._evaluate import partition_utilities
from .exceptions import NoisySelectionWarning, SelectionDeclinedWarning
from ._partition_scaling import check_user_rules, partition_ratio, rescaled_params
from ._forecast import Forecast, forecast_selection, paths_line
from ._gate import (
    check_budget_not_tuned,
    check_candidate,
    check_released_fit,
    keep_released,
    split_budget,
    zero_out_epsilon,
)
from ._rehearsal import check_categories, final_width, rehearse, schema_of
from ._partition import auto_n_partitions, partition_labels, split_indices
from ._default_policy import SHARE_WITHOUT_DEFAULT, choose, refit_noise
from ._tuning_evidence import evidence_for, partition_floor
from .selection import SELECTORS, OneShotSelector, SelectionResult, _as_selector
from .selection._base import default_offsets
from .selection._score import estimate_std, estimate_utility
from ._trivial import estimate_lead, lead_kind, lead_test, lead_zero_out_factor
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
    refuse_keywords,
    route_fit_params,
)

#: The whole fit's epsilon when neither ``epsilon`` nor ``selection_epsilon`` is given.
DEFAULT_EPSILON = 1.0

# Why there is no ``cv`` (see refuse_keywords), and what to use instead.
# The fold count is not carried over: the selection's noise scales as 1 / (n_partitions *
# epsilon), so cross-validation's 5 or 10 folds leave it unable to tell candidates apart
# (at the defaults' selector epsilon of 0.45, permute-and-flip picks the better of two
# candidates with 90 % probability only for a lead of 0.72 utility units at k = 10, and for
# no lead within [0, 1] at k = 5: forecast_selection), while "auto" takes hundreds for
# thousands of records.
_SPLITTING = (
    "The data are cut into n_partitions random disjoint partitions, each record drawing its "
    "partition (and its validation label) independently, which the privacy guarantee needs: "
    "one record then changes one partition only, whereas a splitter's folds are cut from "
    "the data's order or labels. Keep the default n_partitions='auto' rather than a fold "
    "count: the selection's noise scales as 1 / (n_partitions * epsilon), so the 5 or 10 "
    "partitions of a cross-validation leave it unable to tell candidates apart, while "
    "'auto' chooses the number from the number of records, the candidates and the "
    "selection's budget (hundreds for thousands of records). search.forecast(X) says how "
    "large a lead the best candidate needs at a given n_partitions; validation_fraction is "
    "the share of each partition held out for scoring."
)


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


class PrivateGridSearchCV(BasePrivateSearch):
    """Exhaustive search over a parameter grid with a differentially private selection.

    The data are split into ``n_partitions`` disjoint random partitions. Every candidate of the
    grid is fitted on the training part of every partition and scored on that partition's
    held-out part; its utility is the mean score, bounded in ``[0, 1]``. A DP selector (by
    default permute-and-flip) chooses a candidate from these utilities, the
    chosen candidate is refit on all the data with its own DP estimator, and the whole cost is
    reported in :attr:`privacy_spent_` and charged once to the ``accountant``.

    Privacy unit: one record (a row of ``X`` with its ``y``); adjacency: replace one record,
    the number of records being public (:data:`skdptune.accounting.ADJACENCY`; the number of
    partitions, the checks of the number of records and diffprivlib's noise scales use it).
    Each record's partition and holdout labels are drawn independently, by position, so
    replacing one record changes one partition and every candidate's mean utility by at most
    ``1 / n_partitions``
    (partition fits need not be private for this). The selection and the refit compose
    sequentially (basic composition): ``epsilon`` is their total, split by
    ``selection_share``; with ``selection_epsilon`` the refit spends what its DP estimator
    declares, on top.

    Parameters
    ----------
    estimator : estimator object
        The estimator to tune: a diffprivlib model, a pipeline of them, or (with
        ``refit=False``) any scikit-learn estimator.
    param_grid : dict or list of dicts
        As for :class:`~sklearn.model_selection.GridSearchCV`. Candidates that configure the
        same estimator (``{'C': 1}`` and ``{'C': 1.0}``, or the estimator as given, added as
        the ``default``, and a candidate equal to it once its other parameters are filled
        in) are fitted once, with a warning naming them: the first in ``ParameterGrid``
        order is kept, and is the one ``cv_results_["params"]`` lists. With one candidate
        left there is nothing to select: no selection runs or is charged, no
        :attr:`best_score_` is released, and the candidate is refit with the whole
        ``epsilon`` (:attr:`selected_` is False).
    epsilon : float or None, default=None
        The whole fit's epsilon, selection and refit together, per record under
        replace-one adjacency; positive and finite. The selection gets ``selection_share``
        of it and the refit the rest, which is given to every candidate's diffprivlib steps
        (each candidate's steps are scaled by a common factor, keeping their proportions, so
        that they sum to the refit's share: ``skdptune._gate.split_budget``); the
        estimator's own ``epsilon`` (and any ``epsilon`` in ``param_grid``) is overridden.
        Then :attr:`privacy_spent_` is ``(epsilon, delta)`` whichever candidate is selected.
        With ``refit=False`` the selection gets all of it. None means 1.0, unless
        ``selection_epsilon`` is given (then it must be None).
    delta : float, default=1e-6
        Delta of the selection, in ``[0, 1)``. ``0`` composes the selector's iterations with
        basic composition; a positive value lets the exact optimal composition (Kairouz, Oh &
        Viswanath) give each iteration more budget. One-shot selectors are pure DP.
    selector : str or selector instance, default="permute_and_flip"
        The DP selection mechanism: a name from :data:`skdptune.selection.SELECTORS`
        (``"permute_and_flip"``, ``"exponential"``, ``"report_noisy_max"``, ``"doubling"``) or
        an instance such as :class:`~skdptune.selection.ProposeTestDoubling` (whose
        parameters are then reachable as ``selector__granularity``). One-shot selectors are
        pure ``epsilon``-DP and report a selection delta of 0 (the a-priori check still
        reserves ``delta``). ``"doubling"`` is Ding & Wu's Algorithm 1. Why the default, and
        how the selectors compared in the benchmark: :ref:`the guide <choosing-selector>`.
    default : "estimator", dict or None, default="estimator"
        The untuned candidate you would release without tuning. ``"estimator"`` (the
        default): ``estimator`` as given, that is the candidate whose values of the grid's
        parameters are the estimator's own; when no candidate of the grid has them, it is
        added to the candidates (last, with those values). A dict: one candidate's
        parameters (equal to one of ``ParameterGrid(param_grid)``). The selection's share of
        ``epsilon`` and the default's ``default_margin`` are then chosen to maximise the
        released model's expected utility from public quantities
        (``skdptune/_default_policy.py``; the derivation: :ref:`the guide <tune-or-release>`):
        another candidate is released only when its partition utility leads the default's
        by about the margin, and when no share pays for what it takes from the refit, the
        search declines to select and refits the default with the whole budget but
        ``check_share``, which checks it as any release
        (:class:`~skdptune.exceptions.SelectionDeclinedWarning`). The margin is a public
        constant added to the default's utility, so the guarantee and the charge are
        unchanged (``skdptune.selection._base.default_offsets``). Needs a one-shot selector:
        with ``"doubling"``, pass ``default=None``. None: every candidate is treated alike,
        and ``selection_share="auto"`` is 0.5.
    default_margin : float in [0, 1] or "auto", default="auto"
        The default's bonus, in utility units (``[0, 1]``: accuracy for the default scorer).
        ``"auto"``: the policy's (see ``default``), about the selection's noise scale ``2 /
        (k * epsilon_s)``, ``epsilon_s`` the selector's epsilon. Only with ``default``.
    selection_epsilon : float or None, default=None
        The explicit split: epsilon of the selection alone (the tuning overhead), positive
        and finite. The refit then spends what the selected candidate's estimator declares
        (the grid's largest declared budget is reserved and charged), on top of it. Give
        either ``epsilon`` or ``selection_epsilon``, not both.
    selection_share : float or "auto", default="auto"
        Share of ``epsilon`` spent on the selection, in ``(0, 1)``; ignored with
        ``selection_epsilon``. ``"auto"``: with a ``default``, the policy's (0 to 0.5, 0
        when declining: ``skdptune/_default_policy.py``); without one, 0.5
        (``skdptune._default_policy.SHARE_WITHOUT_DEFAULT``; :ref:`why
        <choosing-selection-share>`). The share used is ``privacy_report_["selection_share"]``.
    score_share : float, default=0.1
        Share of the selection's epsilon spent on a Laplace estimate of the selected
        candidate's utility (sensitivity ``1 / n_partitions``), released as
        :attr:`best_score_`, with its noise std in :attr:`best_score_std_`; in ``[0, 1)``.
        The selector gets the rest. 0 releases no estimate; with a callable ``refit`` the
        selector gets it all.
    check_share : float, default=0.05
        Share of the refit's part of ``epsilon`` spent on a Laplace estimate of how much
        better the released model scores on the training data than the best constant (the
        most frequent class under accuracy; the targets' mean under a squared error of a
        regressor with ``bounds_y``: ``scoring=None``, ``"r2"``, ``"neg_mean_squared_error"``),
        released as :attr:`trivial_lead_`; in ``[0, 0.5]``. A lead below the useful margin
        less two noise stds raises ``UselessModelWarning``, right both ways with the rates
        ``skdptune/_trivial.py`` states (see ``skdptune._trivial.lead_test``). Spent only
        with ``epsilon`` (not ``selection_epsilon``), a refit, one of those scores, and a
        selection (a search that declines to select refits the estimator as given with the
        whole budget); otherwise the refit gets it all, and nothing is said.
    n_partitions : int or "auto", default="auto"
        Number ``k >= 2`` of disjoint partitions. Larger ``k`` lowers the sensitivity
        ``1 / k`` of the utilities but leaves less data per partition fit. ``"auto"`` chooses
        it from public quantities (the number of records and candidates and the selector's
        budget) with ``skdptune._partition.auto_n_partitions``; the number of records is
        public under the library's replace-one adjacency.
    validation_fraction : float, default=0.2
        Probability, in ``(0, 1)``, that a record is held out for scoring inside its partition.
    partition_scaling : "auto", dict or None, default="auto"
        How partition fits emulate the refit (see :mod:`skdptune.partition_scaling`). A partition fit
        trains on ``ratio = n_partitions / (1 - validation_fraction)`` times fewer records than
        the refit, so ``"auto"`` rescales each candidate's data-size-dependent parameters by
        that ratio for the partition fits only, with the built-in rules of
        :data:`skdptune.partition_scaling.RULES` (every diffprivlib model's ``epsilon``, ``C`` where it
        multiplies a sum of losses, record counts such as ``min_samples_leaf``...). A dict
        ``{parameter: rule}`` (parameters named as in ``param_grid``) adds rules or overrides
        built-in ones: ``"proportional"``, ``"inverse"``, ``"inverse_count"``, ``"none"`` or
        a callable ``rule(value, ratio)``. None fits partitions with the candidates as
        written. The refit always uses the candidate as written, and the charge never
        depends on this setting: partition fits are not charged.
    scoring : str, callable, list, tuple, set, dict or None, default=None
        Anything :func:`~sklearn.metrics.get_scorer` takes. None means ``estimator.score``,
        as in ``GridSearchCV``; it needs no ``utility_range`` when it is scikit-learn's
        accuracy (``ClassifierMixin.score``), and the estimator must have one (refused before
        the data otherwise). Without a ``utility_range``, None has a bounded default for
        three models (also at the end of a pipeline), and ``verbose`` says so: for ``LinearRegression(bounds_y=(low, high))`` (and
        :class:`skdptune.linear_model.Ridge`) it means
        :class:`skdptune.utility.BoundedR2Scorer`, the R² of predictions and targets clipped
        to the bounds, each partition's clipped to ``[-1, 1]``
        (``skdptune._utility.R2_RANGE``; 0: no better than the held-out mean), which
        :meth:`score` and :attr:`best_score_` then report too;
        :class:`skdptune.utility.BoundedSquaredErrorScorer` is the alternative whose every
        value is in ``[0, 1]`` before any clip, but it resolves R² far more coarsely (see
        its class). ``"r2"`` means the same bounded R² for such an estimator (mapped from
        ``utility_range`` when one is given), and ``verbose`` says so: :meth:`score` then
        clips the predictions to ``bounds_y`` too, so it can exceed
        ``r2_score(y, search.predict(X))``; for :class:`skdptune.cluster.KMeans` it means
        :class:`skdptune.utility.SimplifiedSilhouetteScorer`, the simplified silhouette of each
        partition's held-out rows under the fitted centres, discounted by the share of empty
        centres (in ``[0, 1]``, which :meth:`score` and :attr:`best_score_` then report too);
        for diffprivlib's ``KMeans(bounds=...)`` it is
        ``KMeans.score`` with the range :func:`skdptune.utility.kmeans_score_range` gives for
        ``n_samples * validation_fraction / n_partitions`` records (after ``n_partitions`` is
        resolved, ``"auto"`` included). A callable is called ``scoring(estimator, X, y)``, or
        ``scoring(estimator, X)`` when ``y`` is None. Several metrics (a list, tuple, set or
        dict, as for ``GridSearchCV``) need ``refit=<metric name>``: the selection uses that
        metric only, and the others are not computed (a per-candidate score of each would not
        be private). A callable that returns a dict of metrics needs the same
        ``refit=<key>``; without it, or without that key, fit raises
        :class:`~skdptune.exceptions.ScorerOutputError` (never ``error_score``).
    utility_range : (float, float) or None, default=None
        Declared range ``(low, high)`` of the scorer, from public knowledge; scores are
        rescaled to ``[0, 1]`` and clipped. Required for scorers not known to be bounded (R²,
        negative errors, callables), and used whenever given (``scoring=None`` then means
        ``estimator.score`` whatever the estimator, R² for a regressor). Not needed for
        ``scoring=None`` or ``"r2"`` on diffprivlib's ``LinearRegression`` with ``bounds_y``
        (or :class:`skdptune.linear_model.Ridge`), nor for ``scoring=None`` on ``KMeans``
        with ``bounds`` (see ``scoring``).
    refit : bool, str or callable, default=True
        Refit the selected candidate privately on all the data. The refit must be DP: every
        fitted step of the estimator must take a diffprivlib ``accountant`` and record a spend.
        With ``refit=False`` only the selection is run and charged. A metric name (for
        multi-metric ``scoring``) names the metric the selection uses, and refits. A callable
        ``refit(cv_results_) -> index``, as for ``GridSearchCV``, chooses the candidate to refit
        from the released :attr:`cv_results_` (``params``, ``n_passes``, ``selected``): private
        post-processing, provided it reads nothing else of the private data. It sets
        :attr:`best_index_`; there is then no :attr:`best_score_` (and ``score_share`` is not
        spent).
    error_score : "raise" or float, default=0.0
        Utility, in ``[0, 1]``, of a partition whose fit or score fails (or gives NaN).
        ``"raise"`` re-raises the error instead (a NaN score raises ``ValueError``): for
        debugging on non-sensitive data only, since an exception depends on the data without
        any privacy protection. Failures are not reported one by one, because which
        partitions fail depends on the private data. A training or validation part that the
        random split left empty is not a failure: where the fit or the score cannot handle
        it, the partition scores ``skdptune._utility.EMPTY_PART_UTILITY`` (0.0), whatever
        ``error_score``.
    n_jobs : int, default=None
        The most workers the partition fits may use (``joblib.Parallel``; the backend is not
        forced, so ``joblib.parallel_backend("dask")`` distributes the fits). Parallelism is
        used only where it pays: the fits start in this process, and the remaining ones are
        spread over the workers only once the pace of those done says that saves more than
        starting the workers costs (``skdptune._evaluate.PARALLEL_MIN_SAVING`` seconds);
        batched work is cut into no more tasks than it has work for. A small search with
        ``n_jobs=2`` therefore runs as with ``n_jobs=1``. See :ref:`parallel`.
    pre_dispatch : int or str, default="2*n_jobs"
        Number of tasks dispatched ahead, as for ``joblib.Parallel``.
    verbose : int, default=0
        Above 0, prints what ``GridSearchCV`` prints ("Fitting k partitions for each of m
        candidates, totalling N fits") and how many of those fits run batched (an array
        program over all partitions, ``skdptune/_batched/``) or one by one, decided from
        the parameters as :meth:`forecast` decides, before they run; then, as the fits
        complete, how many are done and an estimate of the time left (from the pace of those
        done, after the first task and at every tenth of the work); then one line for the
        selection and one for the refit: counts, budgets, the selected parameters, and
        :attr:`best_score_` with :attr:`best_score_std_` (DP outputs), nothing else private
        (no per-fit score). Above 1, also ``joblib.Parallel``'s own messages. Times, like
        :attr:`refit_time_`, are a side channel outside the guarantee.
    accountant : diffprivlib.BudgetAccountant or None, default=None
        Accountant checked for the whole a-priori cost before the data are touched and charged
        once with :attr:`privacy_spent_` after the fit. None uses diffprivlib's default
        accountant. The same object survives ``clone``.
    random_state : None, int or numpy.random.RandomState, default=None
        None (the default) draws the selection noise from :mod:`secrets`: the only setting
        with a privacy guarantee. A seed makes partitions and noise reproducible, for tests and
        examples, and the guarantee no longer holds (the noise is predictable). As in
        ``GridSearchCV``, it does not seed the estimator's own noise: set the estimator's
        ``random_state`` too for fully reproducible fits.
    **kwargs
        No other keyword is accepted: one raises ``TypeError`` naming the closest parameter.
        ``GridSearchCV``'s ``cv`` and ``n_splits`` get the reason there are none (no splitter:
        each record draws its partition independently, which the guarantee needs; use
        ``n_partitions``), and so does ``return_train_score`` (no score per candidate is
        released).

    Attributes
    ----------
    best_index_ : int
        Index (into ``cv_results_["params"]``) of the selected candidate; the first candidate,
        with a warning, when the selector selected none; with a callable ``refit``, what it
        returned.
    best_params_ : dict
        Parameters of the released candidate: the selected one when :attr:`selected_`, else
        the default (a declined selection), the only candidate, or the first (no candidate
        passed).
    selected_ : bool
        Whether a DP selection chose :attr:`best_params_`. False when the search declined
        to select (the default refit with the whole budget,
        :class:`~skdptune.exceptions.SelectionDeclinedWarning`), when the grid holds a single
        candidate (nothing to select), and when the selector selected none (the first
        candidate is released, with a warning); ``privacy_report_["declined"]`` and
        ``privacy_report_["single_candidate"]`` say which.
    best_score_ : float
        A *partition score*: a DP estimate of the selected candidate's mean partition
        utility, in the scorer's units (mapped back from ``[0, 1]`` through
        ``utility_range``): the mean, over the
        ``n_partitions`` partitions, of the candidate fitted (with ``partition_scaling``) on
        about ``n * (1 - validation_fraction) / n_partitions`` records and scored on its
        partition's held-out records, plus Laplace noise of standard deviation
        :attr:`best_score_std_` (bought with ``score_share``). It is not a cross-validation
        estimate of :attr:`best_estimator_`'s test score: the refit trains on all the data
        with the candidate as written, the noise can move it either way, and the selection
        favours candidates whose noise was favourable. With ``score_share=0`` and the
        doubling selector it is the selector's final threshold ``u`` (capped at 1); NaN
        when no estimate is released (also when :attr:`selected_` is False without a
        selection run). Not set with a callable ``refit``.
    best_score_std_ : float
        Standard deviation of the noise in :attr:`best_score_`, in the scorer's units:
        ``sqrt(2) * (1 / n_partitions) / (score_share * selection epsilon) * (high - low)``
        (Laplace noise of scale ``sensitivity / epsilon``, ``(low, high)`` the utility
        range). A function of public quantities only, so it costs no privacy. It covers the
        noise alone (the clip to the range only shrinks it), not the gap between partition
        fits and the refit. NaN when :attr:`best_score_` is not a Laplace estimate: no
        estimate, or the doubling selector's own (its final threshold comes out of a
        sequence of noisy tests and has no closed-form standard deviation; its precision is
        about ``granularity`` when the noise is small, and it can overshoot when it is
        large). Not set with a callable ``refit``.
    best_estimator_ : estimator
        The selected candidate refit privately on all the data (only with ``refit=True``).
    trivial_lead_ : float
        A DP estimate (bought with ``check_share``) of how much better
        :attr:`best_estimator_` scores on the training data than the best constant: its
        accuracy minus the most frequent class's share, or the targets' sum of squares about
        their mean minus its sum of squared errors, over ``n (high - low)**2`` (targets and
        predictions clipped to ``bounds_y``: the training R² times ``var(y) / (high -
        low)**2``). Below ``skdptune._trivial.USEFUL_MARGIN`` less ``2 *
        trivial_lead_std_``, ``fit`` warns ``UselessModelWarning``. NaN when not estimated
        (``check_share=0``, ``selection_epsilon``, no refit, another score, or a model that
        cannot predict its training records).
    trivial_lead_std_ : float
        Standard deviation of the noise in :attr:`trivial_lead_`, ``sqrt(2) * 2 / (n *
        epsilon_check)``: public.
    cv_results_ : dict of numpy arrays
        ``params``, ``param_<name>`` masked arrays, ``n_passes`` (how many iterations each
        candidate passed) and ``selected``. No per-candidate score or rank: they are not DP.
    selection_ : SelectionResult
        The selector's output (index, DP score, trace, guarantee).
    default_index_ : int or None
        Index of the ``default`` candidate, None without one.
    default_margin_ : float
        The default's bonus in utility units (``"auto"`` resolved); 0.0 without a default.
    privacy_spent_ : skdptune.accounting.PrivacySpent
        ``(epsilon, delta)`` of the whole fit, a named pair (``privacy_spent_.epsilon``,
        ``privacy_spent_.delta``): selection plus refit.
    privacy_report_ : dict
        How ``privacy_spent_`` was obtained, in the schema both searches share
        (``skdptune._accounting.privacy_report``): privacy unit and adjacency, guarantee,
        ``charges`` (one record per release: the selection, the ``best_score_`` estimate and
        the refit, each with its epsilon, delta, mechanism and composition rule), ``entries``
        (what each accountant entry was charged), the total and its composition; then this
        search's own figures: per-iteration epsilon, iteration cap, iterations run, refit cost
        and rule, partitions, ``budget_rule``: how the budget was split (``"epsilon split
        by selection_share"`` or ``"selection_epsilon; refit as declared"``), and
        ``selection_share``: the share used (``"auto"`` resolved; None when not split).
    n_partitions_ : int
        Number of partitions used.
    refit_time_ : float
        Seconds spent refitting (0 with ``refit=False``). Like every wall-clock time, it is a
        side channel outside the DP guarantee (as in diffprivlib).
    scorer_ : callable
        The scorer used on partitions and by :meth:`score`: with several metrics, the one
        ``refit`` names; :class:`skdptune.utility.BoundedR2Scorer` for
        ``scoring=None`` or ``"r2"`` on ``LinearRegression(bounds_y=...)`` (see ``scoring``).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of str
        Feature names seen during fit, when ``X`` has them.
    classes_ : ndarray
        Class labels of the refit classifier.

    Notes
    -----
    Nothing data-dependent is stored besides DP outputs: no partition utilities, ranks,
    partition sizes or partition models. The number of records is public (neighbouring
    datasets share it under replace-one adjacency): ``n_partitions="auto"``, the check of
    the number of records against ``n_partitions`` and diffprivlib's noise scales use it.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skdptune import PrivateGridSearchCV
    >>> from skdptune.naive_bayes import GaussianNB
    >>> X, y = load_iris(return_X_y=True)
    >>> search = PrivateGridSearchCV(
    ...     GaussianNB(bounds=([4, 2, 1, 0], [8, 4.5, 7, 2.5]), classes=[0, 1, 2]),
    ...     {"var_smoothing": [1e-9, 1e-3]}, epsilon=1.0, n_partitions=5, random_state=0,
    ... ).fit(X, y)
    >>> sorted(search.best_params_)
    ['var_smoothing']
    >>> float(search.privacy_spent_[0])  # selection and refit together
    1.0
    """

    _parameter_constraints = {
        **BasePrivateSearch._parameter_constraints,
        "param_grid": [dict, list],
        "epsilon": [Interval(Real, 0, None, closed="neither"), None],
        "selection_epsilon": [Interval(Real, 0, None, closed="neither"), None],
        "selection_share": [Interval(Real, 0, 1, closed="neither"), StrOptions({"auto"})],
        "score_share": [Interval(Real, 0, 1, closed="left")],
        "check_share": [Interval(Real, 0, 0.5, closed="both")],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "selector": [StrOptions(set(SELECTORS)), HasMethods(["select", "validate_parameters"])],
        "default": [dict, StrOptions({"estimator"}), None],
        "default_margin": [Interval(Real, 0, 1, closed="both"), StrOptions({"auto"})],
        "n_partitions": [Interval(Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "scoring": [str, callable, list, tuple, set, dict, None],
        "refit": ["boolean", str, callable],
        "partition_scaling": [StrOptions({"auto"}), dict, None],
    }

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        epsilon=None,
        delta=1e-6,
        selection_epsilon=None,
        selection_share="auto",
        score_share=0.1,
        check_share=0.05,
        selector="permute_and_flip",
        default="estimator",
        default_margin="auto",
        n_partitions="auto",
        validation_fraction=0.2,
        partition_scaling="auto",
        scoring=None,
        utility_range=None,
        refit=True,
        error_score=0.0,
        n_jobs=None,
        pre_dispatch="2*n_jobs",
        verbose=0,
        accountant=None,
        random_state=None,
        **kwargs,
    ):
        refuse_keywords(self, kwargs, _SPLITTING)
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.selection_epsilon = selection_epsilon
        self.selection_share = selection_share
        self.score_share = score_share
        self.check_share = check_share
        self.selector = selector
        self.default = default
        self.default_margin = default_margin
        self.n_partitions = n_partitions
        self.validation_fraction = validation_fraction
        self.partition_scaling = partition_scaling
        self.scoring = scoring
        self.utility_range = utility_range
        self.refit = refit
        self.error_score = error_score
        self.n_jobs = n_jobs
        self.pre_dispatch = pre_dispatch
        self.verbose = verbose
        self.accountant = accountant
        self.random_state = random_state

    # The partition scores receive fit's metadata too (sample_weight, or routed metadata).
    _scorer_callers = ("score", "fit")

    def _routing_scorer(self):
        # The scorer of the one metric the selection uses (multi-metric: the one refit names).
        return check_scoring(self.estimator,
                             selection_metric(self.estimator, self.scoring, self.refit)[0])

    def _metric_key(self):
        return self.refit if isinstance(self.refit, str) else None

    def _check_releases_model(self, attr):
        if not self.refit:
            raise AttributeError(
                f"This {type(self).__name__} instance was initialized with `refit=False`. "
                f"{attr} is available only after refitting on the best parameters (as in "
                "GridSearchCV)."
            )

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, **fit_params):
        """Tune on ``X``, select privately, refit privately and charge the accountant.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,), default=None
            Target; required for supervised estimators.
        **fit_params : dict
            Passed to the estimator's ``fit``; sample-aligned ones (``sample_weight``) are
            sliced to each partition's training part, and passed whole to the refit. Every
            name must be accepted by the estimator's ``fit``; ``groups`` is refused (the
            guarantee is per record).

        Returns
        -------
        self : PrivateGridSearchCV

        Raises
        ------
        ValueError or TypeError
            On invalid parameters or input, before the accountant is checked: nothing is
            charged. This covers every candidate the refit gate refuses
            (:class:`~skdptune.exceptions.GateError`).
        AccountantCopyError
            When the accountant is a copy made by pickling (the search was sent to another
            process); nothing is charged.
        PrivateFitError
            When the refit fails; its message is withheld (see
            :func:`skdptune.reveal_fit_messages`).

        Notes
        -----
        Charges (see the "Faults" page of the docs): the selection is charged, in its own
        accountant entry, as soon as it has run and before anything is stored or refit; the
        refit is charged its a-priori reservation (the grid's maximum declared budget) once it
        has started, whether it succeeds or fails. A failure before the selection (invalid
        input, a dying worker, ``KeyboardInterrupt``, ``error_score="raise"``) charges nothing.
        If a charge is refused, every fitted attribute is removed before the error propagates.
        """
        # The life cycle (skdptune._base): validate and plan (_plan), check the budget, then
        # this search's strategy (_run_search), release.
        return self._fit(X, y, fit_params)

    def _run_search(self, X, y, plan, accountant):
        """Partition, evaluate, select (charged), refit (charged); return the report. When the
        policy declines to select, the default is refit with the whole budget but the check's
        share; the only candidate of a grid of one, with the whole budget."""
        fit_params = plan.fit_params  # routed, as in scikit-learn's searches
        if plan.policy is not None:
            self._say(_policy_line(plan))
        partition_seed, noise_state = self._random_states()
        if not plan.budget.selects:
            if plan.budget.declined:
                _warn_declined(plan)
                selection = _declined_selection(plan.default_index)
            else:
                selection = _declined_selection(0, composition="single candidate")
            index = selection.index
            score = score_std = None
            selection_cost = (0.0, 0.0)  # nothing selected, nothing charged for it
        else:
            selection, index, score, score_std, selection_cost = self._select(
                X, y, plan, accountant, partition_seed, noise_state)
        self._store_selection(selection, index, score, score_std, plan)
        self._say(_selection_line(selection, self.best_index_, plan, selection_cost,
                                  getattr(self, "best_score_", None),
                                  getattr(self, "best_score_std_", None)))

        # 6. Refit: charged its a-priori reservation once it starts.
        refit_cost, refit_rule = (0.0, 0.0), "no refit"
        self.refit_time_ = 0.0
        if self.refit:
            refit_cost, refit_rule = self._refit(X, y, fit_params, plan, accountant,
                                                 selection_cost)

        # 7. Check the released model against a trivial one: a Laplace estimate of its lead
        # (sensitivity LEAD_SENSITIVITY / n), check_epsilon, charged with the refit.
        self.trivial_lead_ = self.trivial_lead_std_ = float("nan")
        if plan.lead is not None:
            self.trivial_lead_, self.trivial_lead_std_ = estimate_lead(
                plan.lead, self.best_estimator_, X, y, epsilon=plan.budget.check_epsilon,
                random_state=noise_state)
            self._say(f"trivial_lead_={self.trivial_lead_:.4g} +/- "
                      f"{self.trivial_lead_std_:.2g} (DP estimate of the released model's "
                      "lead over a trivial one on the training data)")

        # 8. Report: selection, refit and check compose sequentially (basic composition).
        self.n_partitions_ = plan.n_partitions
        return _privacy_report(selection, plan, refit_cost, refit_rule, self.random_state)

    def _select(self, X, y, plan, accountant, partition_seed, noise_state):
        """Partition, evaluate and select, and charge the selection (its own accountant
        entry, before anything is released or refit).

        Returns
        -------
        selection : SelectionResult
        index : int
            The selected candidate (:meth:`_selected_index`).
        score, score_std : float or None
            The ``best_score_`` estimate and its noise std (None without one).
        selection_cost : (float, float)
        """
        # 1. Validated and checked in _fit: no data has been looked at yet.
        fit_params = plan.fit_params
        self._warn_if_swamped(plan)
        k, m = plan.n_partitions, len(plan.candidates)
        self._say(f"Fitting {k} partitions for each of {m} candidates, totalling {k * m} fits")
        if self.verbose > 0:
            # Decided from the parameters and public shapes, as the forecast decides: the data
            # can still send a batched candidate to the per-fit path, which is not reported.
            self._say(paths_line(candidate_paths(
                plan.estimator, plan.partition_candidates, plan.utility,
                plan.input_shape["n_features_in_"], fit_params=fit_params,
                score_params=plan.score_params, y_ndim=None if y is None else np.ndim(y),
            ), k))
        if plan.scoring_note is not None:
            self._say(plan.scoring_note)

        if isinstance(X, OnWorkers):
            # 2-3. Dask input: the same labels' law and utilities, computed where the chunks
            # live; only the per-candidate sums reach this process (skdptune._distributed).
            utilities = X.partition_utilities(y, plan, self, partition_seed)
        else:
            # 2. Partition: independent labels per record (see skdptune._partition).
            partition, is_validation = partition_labels(
                plan.n_samples, plan.n_partitions, self.validation_fraction, partition_seed
            )
            splits = split_indices(partition, is_validation, plan.n_partitions)

            # 3. Evaluate every candidate on every partition. These utilities are raw, non-private
            # values (sensitivity 1 / k each, all candidates at once): they stay in this local
            # variable and reach the user only through the selector.
            utilities = partition_utilities(
                plan.estimator, plan.partition_candidates, X, y, splits, fit_params,
                plan.utility,
                self.error_score, n_jobs=self.n_jobs, pre_dispatch=self.pre_dispatch,
                verbose=self.verbose, reveal=revealing(), score_params=plan.score_params,
                random_state=partition_seed,  # batched families' emulation noise
            )

        # 4. Select: the selector gets (1 - score_share) of the selection budget, a Laplace
        # estimate of the selected candidate's utility the rest; they compose sequentially.
        # Everything below is post-processing of them, plus the refit's own DP spend.
        sensitivity = 1.0 / plan.n_partitions
        selector_epsilon, score_epsilon = plan.budget.selector_epsilon, plan.budget.score_epsilon
        # The default's margin: public offsets (skdptune.selection._base.default_offsets).
        offsets = {} if plan.offsets is None else {"offsets": plan.offsets}
        selection = plan.selector.select(
            utilities,
            sensitivity=sensitivity,
            epsilon=selector_epsilon,
            delta=self.delta,
            random_state=noise_state,
            **offsets,
        )
        index = self._selected_index(selection)
        score = score_std = None
        if score_epsilon > 0:
            score = estimate_utility(utilities, index, sensitivity=sensitivity,
                                     epsilon=score_epsilon, random_state=noise_state)
            # Public: a function of k and score_epsilon only, released beside the estimate.
            score_std = estimate_std(sensitivity, score_epsilon)
        del utilities
        # Charged: what the selector reports, and never less than what it was handed.
        selector_cost = at_least(plan.selector_cost, (selection.epsilon, selection.delta))
        selection_cost = add_costs(selector_cost, (score_epsilon, 0.0))

        # 5. Account for the selection before anything is released or refit.
        self._charge(accountant, selection_cost)
        return selection, index, score, score_std, selection_cost

    def _trivial_test(self, plan):
        # The released model's lead over the best constant (skdptune._trivial.lead_test);
        # best_score_ measures partition fits, which a useful refit can outscore by far.
        return lead_test(getattr(self, "trivial_lead_", None),
                         getattr(self, "trivial_lead_std_", None), plan.lead)

    def _plan(self, X, y, fit_params):
        """Everything decided before the data are touched, as a GridPlan; raises on any invalid
        input. Four stages: the candidates and the default, the budget (the tuning policy),
        the candidates' refit and partition parameters (through the gate), the scoring; then
        the checks of the input's public shape."""
        selector = clone(_as_selector(self.selector))
        selector.validate_parameters()
        candidates = list(ParameterGrid(self.param_grid))
        if not candidates:
            raise ValueError(
                f"param_grid={self.param_grid!r} has no candidates; give at least one "
                "parameter setting (an empty dict {} tunes the estimator as it is)."
            )
        estimator = clone(self.estimator)
        metric, key = selection_metric(estimator, self.scoring, self.refit)
        lead = lead_kind(estimator, metric, self.utility_range)
        n_samples = _num_samples(X)  # public: the guarantee is for replace-one adjacency
        n_features = input_shape(X)["n_features_in_"]
        candidates, default_index, added = self._default(selector, estimator, candidates)
        declared = self._check_candidates(estimator, candidates, sparse_input=issparse(X),
                                          n_features=n_features, added=added)
        schema = schema_of(X, y)
        # The candidates as written, for the checks below (none changes them).
        built = [with_params(estimator, params) for params in candidates]
        floor = partition_floor(built)
        single = len(candidates) == 1  # nothing to select: no policy, no selection
        policy = None if single else self._policy(estimator, candidates, default_index,
                                                  n_samples, schema, floor)
        budget = self._budget(lead, policy, single_candidate=single)
        n_partitions = None if not budget.selects else self._n_partitions(
            n_samples, len(candidates), budget.selector_epsilon, floor)
        refit_candidates, partition_candidates, declared_costs, zero_out_costs = (
            self._candidate_parameters(
                estimator, candidates, declared, budget,
                1.0 if not budget.selects else partition_ratio(n_partitions,
                                                             self.validation_fraction),
            ))
        # After the gate, whose refusal of a step says more than a scorer's.
        scorer, utility, scoring_note = self._scoring(estimator, candidates, built, metric, key,
                                                      n_samples, n_partitions or 1, n_features)
        fit_params, score_params = route_fit_params(
            self, estimator, scorer, fit_params,
            scorer_name=self.refit if isinstance(self.scoring, (list, tuple, set, dict)) else None,
        )
        self._check_data(X, y, estimator, n_samples, n_partitions)
        # Last, after the checks whose refusals say more: on public rows of X's schema, a
        # configuration that fails every fit is refused in full, nothing charged.
        rehearse(built, [f"param_grid candidate {params}" for params in candidates], schema)
        check_categories(X, built)
        offsets = None
        if default_index is not None and budget.selects:
            margin = policy.margin if self.default_margin == "auto" else self.default_margin
            offsets = default_offsets(selector, len(candidates), default_index, margin,
                                      sensitivity=1.0 / n_partitions,
                                      epsilon=budget.selector_epsilon)

        # Reserved before the data (skdptune.accounting): the selector's a-priori cost, the
        # best_score_ estimate, and the refit whichever candidate the selection picks.
        selector_cost = ((0.0, 0.0) if not budget.selects
                         else selector_reservation(selector, budget.selector_epsilon, self.delta))
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

    def _default(self, selector, estimator, candidates):
        """The candidates (the estimator as given added when ``default="estimator"`` finds no
        candidate with its values), candidates of equal effect merged
        (:func:`_unique_candidates`), the default's index and the added default's, from the
        parameters only; an index is None without a default, or when none was added (or it
        equals a candidate of the grid)."""
        given, (candidates, default_index) = len(candidates), self._with_default(
            selector, estimator, candidates)
        return _unique_candidates(estimator, candidates, default_index,
                                  added=default_index if len(candidates) > given else None)

    def _with_default(self, selector, estimator, candidates):
        """:meth:`_default` before candidates of equal effect are merged."""
        if self.default is None:
            if self.default_margin != "auto":
                raise ValueError(
                    f"default_margin={self.default_margin!r} has no effect without default; "
                    "name the untuned candidate with default='estimator' (the estimator as "
                    "given) or default=<its parameters>, or leave default_margin='auto'."
                )
            return candidates, None
        if not isinstance(selector, OneShotSelector):
            raise ValueError(
                f"default={self.default!r} needs a one-shot selector (one of "
                f"{sorted(name for name, cls in SELECTORS.items() if issubclass(cls, OneShotSelector))}"
                f"), got selector={self.selector!r}: the margin is a bonus on one utility "
                "before a single noisy choice. Pass default=None to tune with this selector."
            )
        if self.default == "estimator":
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
                   if params.keys() == self.default.keys()
                   and all(_same(self.default[key], value) for key, value in params.items())]
        if not matches:
            raise ValueError(
                f"default={self.default!r}: no candidate of param_grid has those parameters; "
                f"give one of the {len(candidates)} candidates' parameter dicts (the first is "
                f"{candidates[0]!r}), add the default to param_grid, or pass "
                "default='estimator' (the estimator as given, added when it is not a candidate)."
            )
        return candidates, matches[0]

    def _policy(self, estimator, candidates, default_index, n_samples, schema, floor):
        """The tuning policy (``skdptune._default_policy.choose``) of a search with a
        default: the selection's share (with ``selection_share="auto"``, ``epsilon`` the
        total and a refit) and the default's margin; None without a default. Public
        quantities only: ``epsilon``, ``n``, the candidates, and the default's family and
        input width, from ``schema`` (``skdptune._rehearsal.final_width``: the pipeline's
        parameters and the schema of ``X``, never its values). The prior is the default's
        family's (``skdptune._tuning_evidence``), its partition floor ``floor``, every
        candidate's (:func:`~skdptune._tuning_evidence.partition_floor`)."""
        if default_index is None:
            return None
        selection_epsilon = self._explicit_budget(
            "selection_epsilon",
            "the whole fit's budget, selection and refit, split by selection_share",
            "the selection's alone, the refit spending what its estimator declares",
        )
        total = DEFAULT_EPSILON if self.epsilon is None else self.epsilon
        score_share = 0.0 if callable(self.refit) else self.score_share
        default = with_params(estimator, candidates[default_index])
        evidence = dataclasses.replace(evidence_for(default), min_partition_rows=floor)
        common = dict(n_samples=n_samples, n_candidates=len(candidates),
                      score_share=score_share, validation_fraction=self.validation_fraction,
                      n_partitions=self.n_partitions, evidence=evidence)
        if selection_epsilon is not None or not self.refit:
            # The selection's budget is fixed (selection_epsilon, or all of epsilon without a
            # refit), and the refit's does not depend on it: the margin only.
            return choose(total if selection_epsilon is None else selection_epsilon,
                          refit_noise=0.0, share=1.0, **common)
        width = final_width(default, schema)
        noise = refit_noise(default, n_samples, width)
        share = None if self.selection_share == "auto" else self.selection_share
        return choose(total, refit_noise=noise, share=share, **common)

    def _check_candidates(self, estimator, candidates, *, sparse_input, n_features,
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
                with_params(estimator, params), context, release=bool(self.refit),
                sparse_input=sparse_input, seeded_search=self.random_state is not None,
                n_features=n_features)
            for params, context in zip(candidates, contexts)
        ], contexts)

    def _candidate_parameters(self, estimator, candidates, declared_by_gate, budget, ratio):
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
        user_rules = self.partition_scaling if isinstance(self.partition_scaling, dict) else {}
        built = [with_params(estimator, params) for params in candidates]
        check_user_rules(user_rules, {key for b in built for key in b.get_params(deep=True)})
        declared_costs, zero_out_costs, refit_candidates, partition_candidates = [], [], [], []
        for params, candidate, declared in zip(candidates, built, declared_by_gate):
            context = f"param_grid candidate {params}"
            refit_params = dict(params)
            if self.refit:
                if budget.refit_epsilon is not None:  # epsilon is the total: the refit's share
                    # The gate's figure for the candidate as written is its charge, computed
                    # once: the share scales its steps to the refit's epsilon.
                    share = split_budget(candidate, budget.refit_epsilon, spent=declared[0])
                    check_budget_not_tuned(
                        share, params, source="param_grid", remedy="selection_epsilon",
                        total=DEFAULT_EPSILON if self.epsilon is None else self.epsilon,
                    )
                    candidate.set_params(**share)
                    refit_params.update(share)
                    declared = (budget.refit_epsilon, 0.0)
                declared_costs.append(declared)
                zero_out_costs.append(zero_out_epsilon(candidate))
            refit_candidates.append(refit_params)
            # Partition fits only (never charged): the refit uses ``refit_params`` as written.
            rescaled = {}
            if self.partition_scaling is not None:
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

    def _scoring(self, estimator, candidates, built, metric, key, n_samples, n_partitions,
                 n_features):
        """The scorer, its bounded utility and a verbose note on a default scoring, checked to
        apply to every candidate (``built``: each candidate's estimator)."""
        utility_range, scoring_note = self.utility_range, None
        if metric is None and utility_range is None:
            # KMeans.score over the records one partition is expected to score, bounded by
            # the declared bounds: public figures only (n_samples is public, n_partitions is
            # resolved, "auto" included).
            n_records = n_samples * self.validation_fraction / n_partitions
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

    def _check_data(self, X, y, estimator, n_samples, n_partitions):
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
        check_input_data(X, y, estimator, check_sparse=not self.refit)
        if n_partitions is None:
            return  # no selection (the search declines to select): no partitions to fill
        fraction = min(self.validation_fraction, 1 - self.validation_fraction)
        needed = min_samples(n_partitions, fraction)
        if n_samples < needed:
            raise ValueError(
                f"n_partitions={n_partitions} is too many for {n_samples} samples: with "
                f"validation_fraction={self.validation_fraction} each partition should expect "
                f"at least one training and one validation record, which needs at least "
                f"{needed} samples. Use fewer partitions (at most "
                f"{max(int(n_samples * fraction), 1)})."
            )

    def forecast(self, X=None, confidence=0.9, n_features=None, *, n_samples=None):
        """What this search's selection can resolve, and what its fit will cost, before any
        data are touched.

        Uses only public quantities: the number of candidates, ``n_partitions``, the
        selector and its share of the budget (``selection_share`` of ``epsilon``, or
        ``selection_epsilon``, less ``score_share``), and the candidates' parameters and the
        scorer for the paths of the partition fits.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), (n_samples, n_features) or int, \
                default=None
            The data the search will fit, or its shape, or its number of records: only the
            numbers of rows and columns are read (public under the library's replace-one
            adjacency), never the values, so ``search.forecast(X)`` costs no privacy. The
            number of records is needed with ``n_partitions="auto"`` only (the default); the
            number of columns, when known, lets a batched family check its declared bounds
            against it, as in ``fit``.
        confidence : float, default=0.9
            Probability of selecting the best candidate that the forecast's gaps refer to.
        n_features : int or None, default=None
            Columns of the ``X`` the search will fit, when ``X`` does not say. Without it the
            family decides from the parameters alone.
        n_samples : int or None, default=None
            The number of records, when ``X`` is not given.

        Returns
        -------
        skdptune.forecast.Forecast
            ``pairwise_gap``: the utility lead over one close rival that the best candidate
            needs to be selected with probability ``confidence``; ``uniform_gap``: the lead
            over every other candidate, all tied. In ``[0, 1]`` utility units (accuracy for
            ``scoring="accuracy"``). ``n_fits``: the partition fits ``fit`` will run
            (``n_partitions`` times the number of candidates); ``paths``: which candidates
            are fitted on all partitions at once by a batched family, and which one fit per
            partition (None when the scorer is refused: ``fit`` would raise);
            ``refit_epsilon``: the epsilon the released model's refit receives when the search
            is charged ``epsilon`` (the baseline to compare with is that estimator fitted
            with all of ``epsilon``).

        Notes
        -----
        The paths are decided as the evaluate stage decides them, from the candidates as
        written (partition scaling and the budget split change values, not the route),
        assuming ``fit`` gets no fit parameters and a 1-d ``y``. The data can still send a
        batched candidate to the per-fit path (values a stateless step or the conversion to a
        float array rejects, more classes than the family handles); ``fit`` does not report
        it, since it depends on the data.

        There is no time estimate: a partition fit's time depends on the machine, its load,
        the data's width and, for iterative solvers, on the data; a figure computed before
        the data would not be honest. ``verbose`` shows joblib's progress with elapsed times
        while the fits run.

        Examples
        --------
        >>> import numpy as np
        >>> from skdptune import PrivateGridSearchCV
        >>> from skdptune.naive_bayes import GaussianNB
        >>> search = PrivateGridSearchCV(GaussianNB(bounds=(0, 1), classes=[0, 1]),
        ...                              {"var_smoothing": [1e-9, 1e-6, 1e-3]},
        ...                              selector="permute_and_flip", n_partitions=200)
        >>> round(search.forecast().pairwise_gap, 3)  # the selection's half of epsilon=1
        0.036
        >>> X = np.zeros((20_000, 4))  # only its shape is read
        >>> search.set_params(n_partitions="auto").forecast(X).n_partitions
        162
        """
        self._validate_params()
        selector = _as_selector(self.selector)
        estimator = clone(self.estimator)
        candidates, default_index, _ = self._default(selector, estimator,
                                                     list(ParameterGrid(self.param_grid)))
        n_samples, n_features = _forecast_shape(X, n_samples, n_features)
        if n_samples is None and (self.n_partitions == "auto" or default_index is not None):
            raise ValueError(
                "n_partitions='auto' and the tuning policy of a default candidate are chosen "
                "from the number of records: pass the data you will fit, search.forecast(X) "
                "(only its shape and schema are read), or its "
                "size, search.forecast(n_samples=...)."
            )
        schema = schema_of(X) if _has_rows(X) else schema_of(None, n_features=n_features)
        single = len(candidates) == 1
        floor = partition_floor([with_params(estimator, params) for params in candidates])
        policy = None if single else self._policy(estimator, candidates, default_index,
                                                  n_samples, schema, floor)
        try:  # the trivial_lead_ check, whose share the refit gives up (refit_epsilon)
            lead = lead_kind(estimator, selection_metric(estimator, self.scoring,
                                                         self.refit)[0], self.utility_range)
        except (ValueError, TypeError):
            lead = None  # fit raises it, with its message
        budget = self._budget(lead, policy=policy, single_candidate=single)
        if not budget.selects:  # declined, or a single candidate: no selection, no fits
            return Forecast(selector=type(selector).__name__, n_candidates=len(candidates),
                            n_partitions=0, epsilon=0.0, delta=self.delta,
                            confidence=confidence, pairwise_gap=math.inf,
                            uniform_gap=math.inf, max_confidence=0.0, n_fits=0, paths=None,
                            policy=policy, refit_epsilon=budget.refit_epsilon)
        n_partitions = self._n_partitions(n_samples, len(candidates), budget.selector_epsilon,
                                          floor)
        selection = forecast_selection(
            len(candidates), n_partitions=n_partitions,
            epsilon=budget.selector_epsilon, delta=self.delta,
            selector=selector, confidence=confidence,
        )
        return dataclasses.replace(selection, n_fits=n_partitions * len(candidates),
                                   paths=self._forecast_paths(candidates, n_features),
                                   policy=policy, refit_epsilon=budget.refit_epsilon)

    def _forecast_paths(self, candidates, n_features):
        """The candidates' paths for the forecast, or None when the scorer is refused."""
        estimator = clone(self.estimator)
        try:
            metric, key = selection_metric(estimator, self.scoring, self.refit)
            _, utility = make_utility(estimator, metric, self.utility_range, key)
        except (ValueError, TypeError):
            return None  # fit raises it, with its message
        return candidate_paths(estimator, candidates, utility, n_features)

    def _n_partitions(self, n_samples, n_candidates, selector_epsilon, floor):
        """``n_partitions``, with ``"auto"`` resolved from public quantities only: never
        fewer than ``floor`` training records per partition (the candidates' families',
        :func:`~skdptune._tuning_evidence.partition_floor`)."""
        if self.n_partitions != "auto":
            return self.n_partitions
        return auto_n_partitions(
            n_samples, n_candidates=n_candidates, epsilon=selector_epsilon,
            validation_fraction=self.validation_fraction, min_training_records=floor,
        )

    def _warn_if_swamped(self, plan):
        """Warn, before the data, when the selection noise swamps any plausible gap."""
        if len(plan.candidates) < 2:
            return
        try:
            forecast = forecast_selection(
                2, n_partitions=plan.n_partitions,
                epsilon=plan.budget.selector_epsilon, delta=self.delta,
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

    def _budget(self, lead=None, policy=None, single_candidate=False):
        """The ``skdptune._accounting.GridBudget`` of ``epsilon`` or
        ``selection_epsilon`` (both given is refused), from the parameters only: the
        selection's share is the ``policy``'s (with a default), else ``selection_share``
        (``"auto"``: ``skdptune._default_policy.SHARE_WITHOUT_DEFAULT``); ``lead``, the
        ``skdptune._trivial.lead_kind`` of the scoring, or None (no ``check_share``);
        ``single_candidate``: nothing to select, the selection gets nothing."""
        selection_epsilon = self._explicit_budget(
            "selection_epsilon",
            "the whole fit's budget, selection and refit, split by selection_share",
            "the selection's alone, the refit spending what its estimator declares",
        )
        if policy is not None:
            share = policy.share
        elif self.selection_share == "auto":
            share = SHARE_WITHOUT_DEFAULT
        else:
            share = self.selection_share
        return grid_budget(
            total=DEFAULT_EPSILON if self.epsilon is None else self.epsilon,
            selection_epsilon=selection_epsilon, selection_share=share,
            # A callable refit releases no best_score_ (as GridSearchCV): no score share.
            score_share=0.0 if callable(self.refit) else self.score_share,
            refit=bool(self.refit),
            check_share=0.0 if lead is None else self.check_share,
            single_candidate=single_candidate,
        )

    def _random_states(self):
        """Seeds for the partition labels and for the selection noise.

        With ``random_state=None`` the labels use fresh OS entropy and the noise uses
        ``secrets`` (diffprivlib's secure sampling). The noise generator is built here, kept
        local and never stored on ``self`` or sent to joblib workers.
        """
        seeds = self._seeds(2)
        if seeds is None:
            return None, None
        return seeds[0], np.random.RandomState(seeds[1])

    def _selected_index(self, selection):
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
            f"failed: each failure scores error_score={self.error_score!r}, and which "
            "partitions fail is private, so it is not reported. To check for failing fits, "
            "run the search on non-sensitive data of the same shape with error_score='raise', "
            "inside skdptune.reveal_fit_messages() to see the fits' warnings.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        return 0

    def _store_selection(self, selection, index, score, score_std, plan):
        """Fitted attributes computed from the DP selection and score estimate only.

        ``score_std`` is the standard deviation of the Laplace estimate's noise in utility
        units (public), None when ``score`` is not a Laplace estimate.
        """
        candidates = plan.candidates
        self.selection_ = selection
        # A DP selection chose best_index_: not when declined, with a single candidate, or
        # when no candidate passed (the first is then released as a fallback).
        self.selected_ = plan.budget.selects and selection.index is not None
        self.default_index_ = plan.default_index
        self.default_margin_ = 0.0 if plan.offsets is None else float(plan.offsets.max())
        if score is None and selection.index is not None and selection.score is not None:
            score = min(selection.score, 1.0)  # the doubling's own estimate (post-processing)
        n_passes = np.zeros(len(candidates), dtype=int)
        for iteration in selection.trace:
            if iteration.passed is not None:
                n_passes[iteration.passed] += 1
        # The doubling's own estimate (the final threshold u) has no closed-form noise std:
        # score_std None, best_score_std_ NaN.
        self._store_released(candidates, index, score, score_std, plan, n_passes=n_passes,
                             selected=np.arange(len(candidates)) == index)
        if callable(self.refit):
            self._choose_with_refit_callable(candidates)

    def _choose_with_refit_callable(self, candidates):
        """``refit=callable``: the candidate to refit, chosen from the released cv_results_.

        The callable sees only DP outputs (params, ``n_passes``, ``selected``): its choice is
        post-processing, and the refit's charge (the grid's maximum) does not depend on it.
        As in ``GridSearchCV``, it sets ``best_index_`` and there is no ``best_score_``.
        """
        index = self.refit(self.cv_results_)
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, Integral):
            raise TypeError("best_index_ returned is not an integer")
        if not 0 <= index < len(candidates):
            raise IndexError("best_index_ index out of range")
        self.best_index_ = int(index)
        self.best_params_ = candidates[self.best_index_]
        del self.best_score_, self.best_score_std_

    def _refit(self, X, y, fit_params, plan, accountant, selection_cost):
        """Refit the selected candidate on all the data, charge it, and release it.

        The charge is the a-priori reservation, the largest budget any candidate of the grid
        declares (which candidate is refit depends on the data, so charging its own budget
        would reveal it), and never less than what the refit was measured to spend. It is
        charged once the refit has started, whether it succeeds or fails: a failure can
        depend on the data and on the selected candidate.

        Returns
        -------
        cost : (float, float)
            The refit's charged ``(epsilon, delta)``.
        rule : str
            How the cost was obtained.
        """
        best = with_params(plan.estimator, plan.refit_candidates[self.best_index_])
        measuring = MeasuringAccountant()
        reservation = plan.max_refit_cost
        # The check of the released model (trivial_lead_) is charged in the refit's entry,
        # with it: reserved whether or not the refit succeeds.
        check = (plan.budget.check_epsilon, 0.0)
        start = time.perf_counter()
        try:
            leak = fit_for_release(best, X, y, fit_params, measuring)
        except BaseException:
            self._charge(accountant, add_costs(at_least(reservation, measuring.total()), check))
            raise
        self.refit_time_ = time.perf_counter() - start
        measured = tuple(map(float, measuring.total()))
        cost = at_least(reservation, measured)
        failure = check_released_fit(leak, measured, plan.declared_costs[self.best_index_],
                                     "its parameters declare")
        self._charge(accountant, add_costs(cost, check))
        self._say(f"Refit {self.best_params_} on all the data, privately; charged "
                  f"epsilon={cost[0]:g}, delta={cost[1]:g}"
                  + (f", and epsilon={check[0]:g} for trivial_lead_" if check[0] else ""))
        if failure is not None:
            raise ValueError(
                f"The refit of {type(best).__name__} with {self.best_params_} {failure}; no "
                f"model is released. Charged: the selection {selection_cost} and the refit "
                f"{cost}."
            )
        self.best_estimator_ = keep_released(best)  # only what its mechanisms cover
        rule = "a-priori reservation: the largest budget a candidate of the grid declares"
        return cost, rule


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


def _selection_line(selection, index, plan, cost, score=None, score_std=None):
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
_SCORE_MECHANISM = ("Laplace on the selected candidate's partition score (the mean score of "
                    "its fits on 1/k of the records each, not the released model's test "
                    "score; sensitivity 1/k)")


def _privacy_report(selection, plan, refit_cost, refit_rule, random_state):
    """A plain dict that explains ``privacy_spent_`` line by line.

    Four releases, charged in two accountant entries: the selection and the ``best_score_``
    estimate together (they compose sequentially, basic composition) before the refit, then
    the refit and the ``trivial_lead_`` estimate; the entries add up (basic composition).
    When the search declines to select, or has a single candidate, there is no selection
    entry. Each release states its zero-out figure beside
    (:data:`skdptune.accounting.ZERO_OUT_ADJACENCY`).
    """
    budget = plan.budget
    charges = []
    if budget.selects:
        # Charged: what the selector reports, and never less than what it was handed.
        selector_cost = at_least(plan.selector_cost, (selection.epsilon, selection.delta))
        charges += [
            Charge("selection", selector_cost[0], selector_cost[1],
                   f"{type(plan.selector).__name__} on the partition utilities (sensitivity "
                   "1/k)", _SELECTOR_COMPOSITION.get(selection.composition,
                                                      selection.composition),
                   entry="selection", zero_out_epsilon=selector_cost[0],
                   zero_out=_UTILITY_ZERO_OUT),
            Charge("best_score_ estimate", budget.score_epsilon, 0.0, _SCORE_MECHANISM,
                   "one pure-DP step", entry="selection", zero_out_epsilon=budget.score_epsilon,
                   zero_out=_UTILITY_ZERO_OUT),
        ]
    if plan.declared_costs:  # a refit
        charges.append(Charge(
            "refit", refit_cost[0], refit_cost[1],
            "the estimator's own mechanisms (its steps compose sequentially), measured on a "
            "fresh accountant", refit_rule, entry="refit",
            zero_out_epsilon=plan.zero_out_refit,
            zero_out=("each DP step's budget times its gate entry's zero-out factor "
                      "(skdptune._gate.zero_out_epsilon), summed over the steps, the largest "
                      "over the grid's candidates as for the charge"
                      if plan.zero_out_refit is not None else
                      "not derived for a step of some candidate (its gate entry has no "
                      "zero_out factor)")))
    else:
        charges.append(Charge("refit", 0.0, 0.0, "none", refit_rule, entry="refit",
                              zero_out_epsilon=0.0, zero_out="no refit: nothing released"))
    if budget.check_epsilon:
        charges.append(Charge(
            "trivial_lead_ estimate", budget.check_epsilon, 0.0,
            "Laplace on the released model's mean per-record lead over a trivial model "
            "(sensitivity skdptune._trivial.LEAD_SENSITIVITY / n, replace-one)",
            "one pure-DP step, after the refit (adaptive sequential composition)",
            entry="refit",
            zero_out_epsilon=budget.check_epsilon * lead_zero_out_factor(plan.lead),
            zero_out="a null record's lead (skdptune._trivial.LEAD_ZERO_OUT) against the "
                     "replaced record's range (LEAD_SENSITIVITY)"))
    selector_cost = ((0.0, 0.0) if not budget.selects
                     else at_least(plan.selector_cost, (selection.epsilon, selection.delta)))
    policy = plan.policy
    return privacy_report(charges, random_state, {
        "n_partitions": plan.n_partitions,
        "sensitivity": None if not budget.selects else 1.0 / plan.n_partitions,
        "selector_epsilon": selector_cost[0],
        "selector_delta": selector_cost[1],
        "selector_composition": selection.composition,
        "epsilon_per_iteration": selection.epsilon_per_iteration,
        "max_iter": selection.max_iter,
        "n_iterations": selection.n_iterations,
        "score_epsilon": budget.score_epsilon,
        "score_mechanism": _SCORE_MECHANISM,
        "selection_epsilon": selector_cost[0] + budget.score_epsilon,
        "selection_delta": selector_cost[1],
        "refit_epsilon": refit_cost[0],
        "refit_delta": refit_cost[1],
        "refit_rule": refit_rule,
        "check_epsilon": budget.check_epsilon,
        "budget_rule": budget.rule,
        "selection_share": budget.selection_share,
        "default_index": plan.default_index,
        "declined": budget.declined,
        "single_candidate": budget.single_candidate,
        "tuning_policy": None if policy is None else {
            "share": policy.share, "margin": policy.margin, "sigma": policy.sigma,
            "refit_loss": policy.refit_loss, "expected_gain": policy.expected_gain,
            "refit_noise": policy.refit_noise,
            "model": "the tuning policy of default (public quantities only)"},
    })


def _declined_selection(index, composition="declined"):
    """The selection record of a search that selects nothing: the candidate ``index`` (the
    default when it declined, the only one of a single candidate), no mechanism run, nothing
    spent; ``composition`` says why."""
    return SelectionResult(index=index, score=None, trace=(), n_iterations=0,
                           max_iter=0, epsilon_per_iteration=0.0, epsilon=0.0, delta=0.0,
                           composition=composition)


def _warn_declined(plan):
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


def _policy_line(plan):
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


def _effect_key(value):
    """A hashable key of a parameter value: equal keys configure the same fit.

    Keys compare as the values do (``1``, ``1.0`` and ``np.float64(1)`` are one key),
    except that booleans are told from numbers (``True == 1`` in Python); estimators by
    class and parameters, looked into; sequences and arrays element by element (an array as
    the nested lists it holds); dicts by their items. An ``accountant`` is left out: the
    search gives every fit its own (``skdptune._dp_fit.set_accountants``). Any other unhashable value is its own key
    (never merged). Hashing keeps merging linear in the number of candidates.
    """
    if isinstance(value, BaseEstimator):
        params = value.get_params(deep=False)
        return (type(value), tuple(sorted((name, _effect_key(param))
                                          for name, param in params.items()
                                          if name != "accountant")))
    if isinstance(value, (bool, np.bool_)):
        return ("bool", bool(value))
    if isinstance(value, np.ndarray):  # as the nested lists it holds: bounds as either
        return _effect_key(value.tolist())
    if isinstance(value, (tuple, list)):
        return ("sequence", tuple(_effect_key(item) for item in value))
    if isinstance(value, dict):
        return ("dict", frozenset((_effect_key(k), _effect_key(v)) for k, v in value.items()))
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return value


def _unique_candidates(estimator, candidates, default_index, added=None):
    """The candidates without repeats, the default's index among them and the added
    default's (None when it repeats a grid candidate), and one warning naming the repeats.

    Two candidates repeat each other when the estimators they configure are equal
    (:func:`_effect_key` of the whole estimator: ``{'C': 1}`` and ``{'C': 1.0}``, a value
    the grid lists twice, or the estimator as given, added as the default, equal to a grid
    candidate once its parameters are filled in). Fitting both would spend the selection's
    noise on a tie and show one candidate twice in ``cv_results_``: the first in
    ``ParameterGrid`` order is kept, with its parameters as written, and the default's index
    points at it. ``added`` is the index of the default when it was added to the grid.
    """
    kept, same_as, first = [], [], {}  # same_as[i]: the position in kept of i's first equal
    for i, params in enumerate(candidates):
        position = first.setdefault(_effect_key(with_params(estimator, params)), len(kept))
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
