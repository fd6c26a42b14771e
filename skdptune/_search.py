"""PrivateGridSearchCV: a differentially private drop-in for scikit-learn's GridSearchCV.

Data flows one way: plan (``skdptune/_plan.py``) -> partition -> evaluate -> select -> refit
-> account. Only the selection and the refit see private data in a way that reaches the user,
and both are DP; the partition utilities are kept in local variables and never stored. Each
release is recorded in the fit's ``skdptune._accounting.Ledger`` as it is charged, and the
report reads the ledger.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.metrics import check_scoring

from ._sklearn_compat import HasMethods, Interval, StrOptions
from ._accounting import Charge, Ledger, at_least
from ._base import BasePrivateSearch
from ._distributed._stand_in import OnWorkers
from ._dp_fit import revealing, with_params
from ._batched.engine import candidate_paths
from ._evaluate import partition_utilities
from ._forecast import paths_line
from ._partition import partition_labels, split_indices
from ._plan import grid_forecast, grid_plan, policy_line, warn_if_swamped
from ._select import (
    SCORE_MECHANISM,
    no_selection,
    select,
    selection_charges,
    store_selection,
)
from .selection import SELECTORS
from ._trivial import estimate_lead, lead_test, lead_zero_out_factor
from ._utility import selection_metric

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
        (the grid's largest declared budget is reserved and charged), on top of it;
        ``check_share`` of it buys :attr:`trivial_lead_` (the rest is the selector's and
        ``best_score_``'s). Give either ``epsilon`` or ``selection_epsilon``, not both.
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
        Share of the refit's part of ``epsilon`` (of ``selection_epsilon`` when given: the
        total is unchanged) spent on a Laplace estimate of the released model's lead over
        the best constant on the training data (the most frequent class under accuracy, the
        targets' mean under a squared error of a regressor with ``bounds_y``), released as
        :attr:`trivial_lead_`; in ``[0, 0.5]``. A lead below the useful margin less two
        noise stds raises ``UselessModelWarning`` (rates: ``skdptune._trivial.lead_test``).
        Spent with a refit and one of those scores, also when the search declines to
        select; nothing is spent or said for a single candidate, no refit or another score.
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
        (``check_share=0``, a single candidate, no refit, another score, or a model that
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
        (``skdptune._accounting.Ledger.report``): privacy unit and adjacency, guarantee,
        ``charges`` (one record per release: the selection, the ``best_score_`` estimate and
        the refit, each with its epsilon, delta, mechanism and composition rule), ``entries``
        (what each accountant entry was charged), the total and its composition; then this
        search's own figures: per-iteration epsilon, iteration cap, iterations run, refit cost
        and rule, partitions, ``budget_rule``: how the budget was split (``"epsilon split
        by selection_share"`` or ``"selection_epsilon; refit as declared"``, with the
        check's share when one is bought), and
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

    # The partition scores receive fit's metadata too (sample_weight, or routed metadata).
    _scorer_callers = ("score", "fit")
    _splitting = _SPLITTING

    def __init__(self, estimator, param_grid, *, epsilon=None, delta=1e-6,
                 selection_epsilon=None, selection_share="auto", score_share=0.1,
                 check_share=0.05, selector="permute_and_flip", default="estimator",
                 default_margin="auto", n_partitions="auto", validation_fraction=0.2,
                 partition_scaling="auto", scoring=None, utility_range=None, refit=True,
                 error_score=0.0, n_jobs=None, pre_dispatch="2*n_jobs", verbose=0,
                 accountant=None, random_state=None, **kwargs):
        super().__init__(estimator, epsilon=epsilon, delta=delta, scoring=scoring,
                         validation_fraction=validation_fraction, utility_range=utility_range,
                         error_score=error_score, n_jobs=n_jobs, pre_dispatch=pre_dispatch,
                         verbose=verbose, accountant=accountant, random_state=random_state,
                         **kwargs)
        self.param_grid = param_grid
        self.selection_epsilon = selection_epsilon
        self.selection_share = selection_share
        self.score_share = score_share
        self.check_share = check_share
        self.selector = selector
        self.default = default
        self.default_margin = default_margin
        self.n_partitions = n_partitions
        self.partition_scaling = partition_scaling
        self.refit = refit

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

    def _trivial_test(self, plan):
        # The released model's lead over the best constant (skdptune._trivial.lead_test), not
        # best_score_: partition fits, which a useful refit can outscore by far.
        return lead_test(getattr(self, "trivial_lead_", None),
                         getattr(self, "trivial_lead_std_", None), plan.lead)

    def _plan(self, X, y, fit_params):  # every stage before the data, as forecast's
        return grid_plan(self, X, y, fit_params)

    def forecast(self, X=None, confidence=0.9, n_features=None, *, n_samples=None):
        """What this search's selection can resolve, and what its fit will cost, before any
        data are touched.

        Uses only public quantities: the number of candidates, ``n_partitions``, the
        selector and its share of the budget (``selection_share`` of ``epsilon``, or
        ``selection_epsilon`` less ``check_share``, less ``score_share``), and the candidates'
        parameters and the scorer for the paths of the partition fits.

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

        No time estimate: a fit's time depends on the machine, its load and the data (a
        figure before the data would not be honest); ``verbose`` shows progress as it runs.

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
        return grid_forecast(self, X, confidence, n_features, n_samples)

    def _run_search(self, X, y, plan, accountant):
        # Partition, evaluate, select (charged), refit (charged), check; read the ledger.
        ledger = Ledger(accountant, on_refusal=self._withdraw)
        if plan.policy is not None:
            self._say(policy_line(plan))
        partition_seed, noise_state = _random_states(self)
        if plan.budget.selects:
            outcome = select(plan, _utilities(self, X, y, plan, partition_seed), self.delta,
                             self.error_score, noise_state)
            # Charged before anything is released or refit, in its own entry.
            ledger.spend(*selection_charges(plan, outcome[0]))
        else:
            outcome = no_selection(plan)
        store_selection(self, *outcome, plan, ledger.cost("selection"))
        _refit(self, X, y, plan, ledger)
        _check_release(self, X, y, plan, noise_state)
        self.n_partitions_ = plan.n_partitions
        return ledger.report(self.random_state, _report_details(ledger, outcome[0], plan))


def _utilities(search, X, y, plan, partition_seed):
    """Partition and evaluate: every candidate's mean utility over the partitions.

    These utilities are raw, non-private values (sensitivity ``1 / k`` each, all candidates
    at once): the caller hands them to the selector only, and they are never stored.
    """
    warn_if_swamped(plan, search.delta)
    k, m = plan.n_partitions, len(plan.candidates)
    search._say(f"Fitting {k} partitions for each of {m} candidates, totalling {k * m} fits")
    if search.verbose > 0:
        # Decided from the parameters and public shapes, as the forecast decides: the data
        # can still send a batched candidate to the per-fit path, which is not reported.
        search._say(paths_line(candidate_paths(
            plan.estimator, plan.partition_candidates, plan.utility,
            plan.input_shape["n_features_in_"], fit_params=plan.fit_params,
            score_params=plan.score_params, y_ndim=None if y is None else np.ndim(y),
        ), k))
    if plan.scoring_note is not None:
        search._say(plan.scoring_note)
    if isinstance(X, OnWorkers):
        # Dask input: the same labels' law and utilities, computed where the chunks live;
        # only the per-candidate sums reach this process (skdptune._distributed).
        return X.partition_utilities(y, plan, search, partition_seed)
    # Partition: independent labels per record (see skdptune._partition).
    partition, is_validation = partition_labels(
        plan.n_samples, plan.n_partitions, search.validation_fraction, partition_seed)
    splits = split_indices(partition, is_validation, plan.n_partitions)
    return partition_utilities(
        plan.estimator, plan.partition_candidates, X, y, splits, plan.fit_params,
        plan.utility, search.error_score, n_jobs=search.n_jobs,
        pre_dispatch=search.pre_dispatch, verbose=search.verbose, reveal=revealing(),
        score_params=plan.score_params,
        random_state=partition_seed,  # batched families' emulation noise
    )


def _refit(search, X, y, plan, ledger):
    """Refit the selected candidate on all the data, charge it, and release it (the
    release step of ``skdptune._base``); without a refit, record that nothing is released.

    The charge is the a-priori reservation, the largest budget any candidate of the grid
    declares (which candidate is refit depends on the data, so charging its own budget
    would reveal it), and never less than what the refit was measured to spend. It is
    charged once the refit has started, whether it succeeds or fails: a failure can depend
    on the data and on the selected candidate. The check of the released model
    (``trivial_lead_``) is charged in the refit's entry, with it.
    """
    search.refit_time_ = 0.0
    if not search.refit:
        ledger.note(Charge("refit", 0.0, 0.0, "none", "no refit", entry="refit",
                           zero_out_epsilon=0.0, zero_out="no refit: nothing released"))
        return
    best = with_params(plan.estimator, plan.refit_candidates[search.best_index_])
    released, failure, search.refit_time_ = search._fit_for_release(
        best, X, y, plan.fit_params, plan.declared_costs[search.best_index_],
        "its parameters declare",
        charge=lambda measured: ledger.spend(*_refit_charges(plan, measured)))
    cost, check = ledger.charged("refit").cost, plan.budget.check_epsilon
    search._say(f"Refit {search.best_params_} on all the data, privately; charged "
                f"epsilon={cost[0]:g}, delta={cost[1]:g}"
                + (f", and epsilon={check:g} for trivial_lead_" if check else ""))
    if failure is not None:
        raise ValueError(
            f"The refit of {type(best).__name__} with {search.best_params_} {failure}; no "
            f"model is released. Charged: the selection {ledger.cost('selection')} and the "
            f"refit {cost}"
            # Charged with the refit's entry as it started, though nothing is checked.
            + (f", with epsilon={check:g} for trivial_lead_" if check else "") + "."
        )
    search.best_estimator_ = released  # only what its mechanisms cover


def _check_release(search, X, y, plan, noise_state):
    """Check the released model against a trivial one: a Laplace estimate of its lead
    (sensitivity ``LEAD_SENSITIVITY / n``) bought with ``check_epsilon``, charged with the
    refit; NaN when none is bought."""
    search.trivial_lead_ = search.trivial_lead_std_ = float("nan")
    if plan.lead is not None:
        search.trivial_lead_, search.trivial_lead_std_ = estimate_lead(
            plan.lead, search.best_estimator_, X, y, epsilon=plan.budget.check_epsilon,
            random_state=noise_state)
        search._say(f"trivial_lead_={search.trivial_lead_:.4g} +/- "
                    f"{search.trivial_lead_std_:.2g} (DP estimate of the released model's "
                    "lead over a trivial one on the training data)")


def _random_states(search):
    """Seeds for the partition labels and for the selection noise.

    With ``random_state=None`` the labels use fresh OS entropy and the noise uses
    ``secrets`` (diffprivlib's secure sampling). The noise generator is built here, kept
    local and never stored on the search or sent to joblib workers.
    """
    seeds = search._seeds(2)
    if seeds is None:
        return None, None
    return seeds[0], np.random.RandomState(seeds[1])


def _refit_charges(plan, measured):
    """The refit entry's records: the refit, charged its a-priori reservation (the grid's
    largest declared cost) and never less than ``measured``, what it recorded; then the
    ``trivial_lead_`` estimate (Laplace, sensitivity ``LEAD_SENSITIVITY / n``), when bought.
    They compose sequentially (basic)."""
    cost = at_least(plan.max_refit_cost, measured)
    charges = [Charge(
        "refit", cost[0], cost[1],
        "the estimator's own mechanisms (its steps compose sequentially), measured on a "
        "fresh accountant",
        "a-priori reservation: the largest budget a candidate of the grid declares",
        entry="refit", zero_out_epsilon=plan.zero_out_refit,
        zero_out=("each DP step's budget times its gate entry's zero-out factor "
                  "(skdptune._gate.zero_out_epsilon), summed over the steps, the largest "
                  "over the grid's candidates as for the charge"
                  if plan.zero_out_refit is not None else
                  "not derived for a step of some candidate (its gate entry has no "
                  "zero_out factor)"))]
    if plan.budget.check_epsilon:
        charges.append(Charge(
            "trivial_lead_ estimate", plan.budget.check_epsilon, 0.0,
            "Laplace on the released model's mean per-record lead over a trivial model "
            "(sensitivity skdptune._trivial.LEAD_SENSITIVITY / n, replace-one)",
            "one pure-DP step, after the refit (adaptive sequential composition)",
            entry="refit",
            zero_out_epsilon=plan.budget.check_epsilon * lead_zero_out_factor(plan.lead),
            zero_out="a null record's lead (skdptune._trivial.LEAD_ZERO_OUT) against the "
                     "replaced record's range (LEAD_SENSITIVITY)"))
    return charges


def _report_details(ledger, selection, plan):
    """The grid search's own figures of ``privacy_report_``, beside the ledger's records:
    every charged figure read from the ledger (up to four releases in two accountant
    entries, the selection's and the refit's; none for a selection when the search declines
    or has a single candidate), the rest public."""
    budget, policy = plan.budget, plan.policy
    selector = ledger.charged("selection")
    selector_cost = (0.0, 0.0) if selector is None else selector.cost
    selection_cost, refit = ledger.cost("selection"), ledger.charged("refit")
    return {
        "n_partitions": plan.n_partitions,
        "sensitivity": None if not budget.selects else 1.0 / plan.n_partitions,
        "selector_epsilon": selector_cost[0],
        "selector_delta": selector_cost[1],
        "selector_composition": selection.composition,
        "epsilon_per_iteration": selection.epsilon_per_iteration,
        "max_iter": selection.max_iter,
        "n_iterations": selection.n_iterations,
        "score_epsilon": budget.score_epsilon,
        "score_mechanism": SCORE_MECHANISM,
        "selection_epsilon": selection_cost[0],
        "selection_delta": selection_cost[1],
        "refit_epsilon": refit.epsilon,
        "refit_delta": refit.delta,
        "refit_rule": refit.composition,
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
    }








