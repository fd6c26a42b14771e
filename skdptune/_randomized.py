"""PrivateRandomizedSearchCV: the best of a random number of private trials.

Liu & Talwar (2019) and Papernot & Steinke (2022): run a pure-DP trial (sample hyperparameters,
fit a DP model, score it with a DP mechanism) a random number ``K`` of times and release only the
best trial. Data flows one way: validate -> draw ``K`` and the hyperparameters (no data) -> split
-> trials (fit, raw held-out sum) -> noise -> select -> (optional final fit) -> account. The raw
held-out sums stay in local variables; only the selected trial reaches the user. What touches
the data or draws the trials is in ``skdptune/_trials.py``; this module holds the estimator, its
plan and its strategy.
"""

import itertools
import math
import secrets
from dataclasses import dataclass
from functools import lru_cache
from numbers import Real

import numpy as np
from diffprivlib.mechanisms import Laplace
from diffprivlib.utils import check_random_state as dp_check_random_state
from scipy.sparse import issparse
from scipy.stats import rv_discrete
from sklearn.base import clone, is_classifier
from sklearn.metrics import check_scoring
from sklearn.model_selection import ParameterSampler
from sklearn.utils.validation import _num_samples, check_consistent_length

from ._sklearn_compat import Interval, StrOptions, _check_method_params, _safe_indexing
from ._accounting import (
    ALL_RECORDS,
    REMAINDER,
    REPEAT_AND_SELECT_BOUNDS,
    SUBSAMPLE,
    Charge,
    Ledger,
    calibrate_trial_epsilon,
    compose_charges,
    named_epsilon,
    repeat_and_select_bounds,
    truncated_negative_binomial_gamma,
)
from ._base import BasePrivateSearch, Plan
from ._dp_fit import with_params
from ._gate import (
    check_budget_not_tuned,
    check_candidate,
    check_released_fit,
    exceeds,
    keep_released,
    split_budget,
    zero_out_epsilon,
)
from ._rehearsal import check_categories, rehearse, schema_of
from ._trials import PER_RECORD_SCORES, draw_settings, run_trials, split_records
from ._trivial import trials_test
from ._utility import BoundedSquaredErrorScorer, declared_bounds_y, make_utility
from ._validation import (
    check_input_data,
    collect_refusals,
    input_shape,
    min_samples,
    route_fit_params,
)

#: Laws of the number of trials, by name: their ``shape`` (Papernot & Steinke's ``eta``;
#: infinite for Poisson). ``"truncated_negative_binomial"`` takes the ``shape`` parameter.
DISTRIBUTIONS = {"poisson": math.inf, "geometric": 1.0, "logarithmic": 0.0,
                 "truncated_negative_binomial": None}

#: The mean number of trials when ``n_iter`` is not given.
DEFAULT_N_ITER = 10.0

#: The whole search's epsilon when neither ``epsilon`` nor ``trial_epsilon`` is given.
DEFAULT_EPSILON = 1.0

# Why there is no ``cv`` (see refuse_keywords), and what to use instead.
_SPLITTING = (
    "Every trial fits on a training part and is scored on a held-out part, each record "
    "drawing its label independently, which the privacy guarantee needs (one record changes "
    "one part only). Use validation_fraction (the share held out) instead; there are no "
    "folds to count."
)

@dataclass(frozen=True)
class RandomizedPlan(Plan):
    """The random search's ``skdptune._base.Plan``: its trial law and budget.

    Its ``a_priori_cost`` is the whole charge, the composition of ``charges`` (one entry,
    whatever happens once the data are touched).

    Attributes
    ----------
    scoring : str or callable
        The per-record scoring of the held-out sums.
    n_iter, shape : float
        The law of the number of trials: mean and shape.
    trial_epsilon : float
        Each trial's budget.
    transferred : callable
        ``transferred(params)``: the final fit's parameters (with ``subsample``).
    charges : tuple of skdptune._accounting.Charge
        The releases charged, one entry: a function of the parameters only.
    details : dict
        The search's own figures of ``privacy_report_``.
    sparse_input : bool
        Whether X is sparse.
    """

    scoring: object
    n_iter: float
    shape: float
    trial_epsilon: float
    transferred: object
    charges: tuple
    details: dict
    sparse_input: bool


class PrivateRandomizedSearchCV(BasePrivateSearch):
    """Best of a random number of differentially private trials (random search).

    Each trial samples hyperparameters from ``param_distributions`` (as
    :class:`~sklearn.model_selection.RandomizedSearchCV` does), fits the DP estimator on the
    training part of a random split and scores it on the held-out part with the Laplace
    mechanism. The number of trials ``K`` is random (Poisson or truncated negative binomial,
    drawn secretly and never released), and only the best trial is released: its model is
    :attr:`best_estimator_` (no refit), with its parameters and its noisy score.

    Privacy unit: one record (a row of ``X`` with its ``y``); adjacency: replace one record,
    the number of records being public (:data:`skdptune.accounting.ADJACENCY`). Every trial
    is pure ``trial_epsilon``-DP (see Notes); releasing the best of ``K`` trials costs the
    smallest of Papernot & Steinke's bounds on it (``repeat_and_select_epsilon`` and
    ``repeat_and_select_bounds`` in ``skdptune/_accounting.py``).
    ``epsilon`` is the whole search's budget: the per-trial epsilon is solved from it (with
    the defaults, a geometric ``K`` of mean ``n_iter=10`` and ``epsilon=1``, each trial gets
    1/3: the best of a geometric number of pure trials is ``3 * trial_epsilon``-DP, pure DP,
    whatever the mean). The explicit per-trial form is ``trial_epsilon``: with
    ``trial_epsilon=1`` the search spends epsilon 3.0 (a logarithmic ``K`` 2.0, a Poisson
    ``K`` of the same mean 5.62 with ``delta=1e-6``). The total is in :attr:`privacy_spent_`
    and is charged once to the ``accountant``.

    ``RandomizedSearchCV``'s ``n_iter`` is the *mean* number of trials here: the number itself
    is random (its randomness is part of the guarantee), secret, and never shown.

    Parameters
    ----------
    estimator : estimator object
        A pure-DP estimator: a diffprivlib model or a pipeline of them, every fitted step
        taking a diffprivlib ``accountant``. Every setting ``param_distributions`` can give it
        must pass the refit gate (bounds such as ``data_norm`` may be declared by the
        distributions rather than by the estimator). With ``epsilon``, its diffprivlib steps
        are given the per-trial budget; with ``trial_epsilon``, its declared budget must be
        at most ``trial_epsilon`` for every sampled setting (and record no ``delta``).
    param_distributions : dict or list of dicts
        As for :class:`~sklearn.model_selection.RandomizedSearchCV`: lists are sampled
        uniformly, objects with ``rvs`` (scipy distributions) are sampled. Every trial draws
        one setting independently (with replacement, also for lists), as the accounting
        requires. Before the data, every listed value and every end of a frozen scipy
        distribution's ``support()`` is checked as the grid search checks a candidate, so a
        distribution that can give an invalid value (``scipy.stats.norm(3, 2)`` over
        ``data_norm``, whose support holds negative values) is refused every time, naming
        its support, not only in the runs that happen to sample such a value.
    epsilon : float or None, default=None
        The whole search's epsilon, per record under replace-one adjacency; positive and
        finite, as for :class:`~skdptune.PrivateGridSearchCV`. The per-trial epsilon is
        solved with ``skdptune._accounting.calibrate_trial_epsilon`` (the largest whose
        total, with ``subsample`` if given, is at most ``epsilon``), and every sampled
        setting's diffprivlib steps are given that budget (each step's epsilon scaled by a
        common factor, keeping their proportions: ``skdptune._gate.split_budget``; the
        estimator's own ``epsilon`` is overridden). Then :attr:`privacy_spent_`'s epsilon is
        exactly ``epsilon`` (the composed bound lands within a relative ``1e-9`` below it,
        and the named figure is an upper bound too:
        ``skdptune._accounting.named_epsilon``), never above it; its delta is 0 or
        ``delta`` (see ``delta``). None means 1.0, unless ``trial_epsilon`` is given (then
        it must be None).
    trial_epsilon : float or None, default=None
        The explicit per-trial form: pure epsilon of one trial, positive and finite. It is
        the budget of the held-out scoring noise and the cap on the estimator's own epsilon
        (and, with ``subsample``, on the final fit's), which the estimator keeps as written.
        The total follows from the law of the number of trials: see :attr:`privacy_spent_`.
        Give either ``epsilon`` or ``trial_epsilon``, not both.
    delta : float, default=1e-6
        Delta at which the Rényi DP bounds of the repeat-and-select are converted into
        ``(epsilon, delta)``, in ``(0, 1)``. Where :attr:`privacy_spent_`'s delta comes
        from: the pure bound of a geometric, logarithmic or truncated negative binomial
        count (``(2 + shape) * trial_epsilon``) needs none, and when it is the smallest
        bound the search is pure DP and reports delta 0: with the geometric law of mean 10,
        for every total epsilon up to about 7 (at the default delta; up to about 2.5 at
        mean 3, 0.4 at mean 2). Otherwise, and always for a Poisson count (``K = 0``
        possible), whose bounds are all Rényi bounds, the search reports this delta.
        ``verbose`` says which.
    distribution : {"geometric", "poisson", "logarithmic", "truncated_negative_binomial"}, \
            default="geometric"
        Law of the number of trials ``K``. ``"geometric"`` and ``"logarithmic"`` are Papernot
        & Steinke's truncated negative binomial with shape 1 and 0 (``K >= 1``; pure bounds
        ``3 * trial_epsilon`` and ``2 * trial_epsilon``); ``"truncated_negative_binomial"``
        takes ``shape``. Poisson allows ``K = 0`` (probability ``exp(-n_iter)``), in which
        case nothing is released and ``fit`` raises; it costs the most and needs ``delta``
        (see above). The default is the geometric law: pure DP, at least one trial, and
        twice Poisson's per-trial budget at the defaults (how the laws compared in the
        benchmark: :ref:`the guide <choosing-randomized-law>`); its number of trials has a
        heavier tail (more than 30 trials with probability ``0.9**30``, about 0.04, at mean
        10), so a fit's time and result vary more.
    n_iter : float or None, default=None
        Mean number of trials (``RandomizedSearchCV``'s ``n_iter``, here the mean of the
        random ``K``): at least 1 for Poisson, above 1 for the other laws. None means 10.
    shape : float, default=1.0
        Shape ``eta >= 0`` of the truncated negative binomial (``1`` geometric, ``0``
        logarithmic; Papernot & Steinke's Definition 1). Used only with
        ``distribution="truncated_negative_binomial"``.
    validation_fraction : float, default=0.2
        Probability, in ``(0, 1)``, that a record is held out for scoring rather than used for
        training. Each record's label is drawn independently (stable under adjacency); the
        split is shared by all trials.
    scoring : str, callable or None, default=None
        A score that is a mean of per-record scores: ``"accuracy"`` (the default for
        classifiers), ``"neg_mean_squared_error"``, ``"neg_mean_absolute_error"``, or a
        callable ``scorer(estimator, X, y)`` that is applied to one record at a time. For
        diffprivlib's ``LinearRegression`` with ``bounds_y`` (also at the end of a pipeline)
        None means :class:`skdptune.utility.BoundedSquaredErrorScorer`: each record scores
        ``1 - (clip(pred) - clip(y))**2 / (high - low)**2``, in ``[0, 1]`` from the declared
        bounds (no ``utility_range`` needed); :meth:`score` and :attr:`best_score_` use it.
    utility_range : (float, float) or None, default=None
        Declared range ``(low, high)`` of the per-record score: per-record scores are rescaled
        to ``[0, 1]`` and clipped. Required for every scorer but accuracy and the default
        score of ``LinearRegression(bounds_y=...)``.
    subsample : float or None, default=None
        ``q`` in ``(0, 1)``: tune on a Poisson subsample (each record independently with
        probability ``q``) and fit the final model on the remaining records with the chosen
        hyperparameters (Koskela & Kulkarni 2023). Under the library's replace-one adjacency
        this costs the larger of the tuning's and the final fit's epsilon, with the tuning's
        delta times ``q`` (``skdptune._accounting.subsampled_tuning_cost``): it lowers
        delta, not epsilon. None tunes on all the data and releases the best trial's model.
    transfer : callable or None, default=None
        With ``subsample``: ``transfer(params, q) -> params`` maps the tuned hyperparameters to
        the final fit (for those that scale with the data size). None keeps them. It must not
        look at data; it is applied to every sampled setting before the data are touched.
    error_score : "raise" or float, default=0.0
        Per-record utility, in ``[0, 1]``, credited on the held-out records to a trial whose fit
        or scoring fails; such a trial competes with its noisy score but has no model to
        release, so ``fit`` raises if it wins. ``"raise"`` re-raises the error (for debugging
        on non-sensitive data). The guarantee assumes fits do not fail depending on the data
        (true of diffprivlib's models with declared bounds).
    n_jobs : int, default=None
        Number of trials fitted in parallel (``joblib.Parallel``, backend not forced).
    pre_dispatch : int or str, default="2*n_jobs"
        As for ``joblib.Parallel``.
    verbose : int, default=0
        Above 0, prints one line before the trials (the law and mean of their number, the
        per-trial epsilon) and one after (the released parameters, the charge, and
        :attr:`best_score_` with :attr:`best_score_std_`). The number
        of trials is secret, so ``joblib.Parallel``'s progress (which counts them) is never
        shown.
    accountant : diffprivlib.BudgetAccountant or None, default=None
        Checked for the whole cost before the data are touched and charged once after the
        fit (also when the fit fails after touching the data). None uses diffprivlib's
        default accountant. The same object survives ``clone``.
    random_state : None, int or numpy.random.RandomState, default=None
        None (the default) draws ``K``, the hyperparameters, the subsample and the noise from
        :mod:`secrets`-based sources: the only setting with a privacy guarantee (``K`` and the
        subsample must stay secret). A seed makes everything reproducible, for tests and
        examples, and the guarantee no longer holds.
    **kwargs
        No other keyword is accepted: one raises ``TypeError`` naming the closest parameter.
        ``RandomizedSearchCV``'s ``cv`` and ``n_splits`` get the reason there are none (no
        splitter: each record draws its held-out label independently, which the guarantee
        needs; use ``validation_fraction``), and so does ``return_train_score`` (no score per
        trial is released).

    Attributes
    ----------
    best_estimator_ : estimator
        The best trial's model, or, with ``subsample``, the final model fitted on the records
        outside the tuning subsample.
    best_params_ : dict
        Hyperparameters of the best trial (before ``transfer``).
    best_score_ : float
        The best trial's noisy held-out sum divided by the expected number of held-out
        records (``validation_fraction * n_samples``, times ``subsample`` if set), clipped to
        ``[0, 1]`` and mapped back to the scorer's units. The data set size is treated as
        public, as everywhere in this library. It is a noisy score of the trial's model on
        its held-out records, not an unbiased estimate of the released model's test score:
        it is the largest of several noisy scores, so it tends to be optimistic.
    best_score_std_ : float
        Standard deviation of the noise in :attr:`best_score_`, in the scorer's units:
        ``sqrt(2) / trial_epsilon / expected held-out count * (high - low)`` (Laplace noise
        of scale ``1 / trial_epsilon`` on the held-out sum). A function of public quantities
        only, so it costs no privacy. It covers one trial's noise, not the optimism of taking
        the best trial, nor the variation of the held-out count around its expectation
        (relative std ``sqrt((1 - validation_fraction) / (validation_fraction * n))``, 2.6 %
        at 6,000 records). ``fit``'s ``UselessModelWarning`` counts all three
        (``skdptune._trivial.trials_test``).
    best_index_ : int
        Always 0: the index of the released trial in ``cv_results_``.
    selected_ : bool
        Always True: the released trial was selected, the best of the trials by its noisy
        score (their number is secret, so a single trial is not told apart). As
        :attr:`PrivateGridSearchCV.selected_ <skdptune.PrivateGridSearchCV.selected_>`, which
        is False when that search releases a candidate without a selection.
    cv_results_ : dict of numpy arrays
        One row, the released trial: ``params`` and ``param_<name>`` masked arrays. The other
        trials, their number and their scores are not released (repeat-and-select covers only
        the best).
    scorer_ : callable
        The scikit-learn scorer, used by :meth:`score`.
    privacy_spent_ : skdptune.accounting.PrivacySpent
        ``(epsilon, delta)`` of the whole fit, a named pair (``privacy_spent_.epsilon``,
        ``privacy_spent_.delta``).
    privacy_report_ : dict
        How ``privacy_spent_`` was obtained, in the schema both searches share
        (``skdptune._accounting.Ledger.report``): privacy unit and adjacency, guarantee,
        ``charges`` (one record per release: the best of K trials and, with ``subsample``,
        the final fit, each with its epsilon, delta, mechanism and composition rule),
        ``entries`` (one accountant entry), the total and its composition; then this search's
        own figures: trial epsilon and its derivation, distribution, mean, shape, subsample,
        and ``budget_rule``: whether the per-trial budget was solved from ``epsilon`` or given
        as ``trial_epsilon``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of str
        Feature names seen during fit, when ``X`` has them.
    classes_ : ndarray
        Class labels of the released classifier.

    Notes
    -----
    One trial is ``epsilon``-DP under replace-one adjacency (the number of records is public).
    Its output is (hyperparameters, model, noisy score); hyperparameters are sampled without
    data. Labels are drawn per position, so the replaced record keeps its label; fix the other
    records' labels. The record is either in the training part (then the model is
    ``eps_train``-DP with ``eps_train <= epsilon``, and the score on the unchanged held-out
    part is post-processing of the model plus fresh noise) or in the held-out part (then the
    model's law is unchanged, and the sum of per-record utilities in ``[0, 1]`` moves by at
    most 1, so ``Laplace(1 / epsilon)`` noise makes the score ``epsilon``-DP). Either way the
    trial is ``max(eps_train, epsilon) = epsilon``-DP (parallel composition over disjoint
    parts; no amplification from the unknown label is claimed, so the split need not be
    secret). ``best_score_`` divides the noisy sum by the expected held-out count, a public
    number.

    The trials share the split: given the labels, they are independent runs, so Papernot &
    Steinke's bound holds for each value of the labels, and Rényi divergence is jointly
    quasi-convex, so it survives averaging over them.
    """

    _splitting = _SPLITTING

    _parameter_constraints = {
        **BasePrivateSearch._parameter_constraints,
        "param_distributions": [dict, list],
        "trial_epsilon": [Interval(Real, 0, None, closed="neither"), None],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "distribution": [StrOptions(set(DISTRIBUTIONS))],
        "n_iter": [Interval(Real, 1, None, closed="left"), None],
        "shape": [Interval(Real, 0, None, closed="left")],
        "scoring": [StrOptions(set(PER_RECORD_SCORES)), callable, None],
        "subsample": [Interval(Real, 0, 1, closed="neither"), None],
        "transfer": [callable, None],
    }

    def __init__(
        self,
        estimator,
        param_distributions,
        *,
        epsilon=None,
        delta=1e-6,
        trial_epsilon=None,
        distribution="geometric",
        n_iter=None,
        shape=1.0,
        validation_fraction=0.2,
        scoring=None,
        utility_range=None,
        subsample=None,
        transfer=None,
        error_score=0.0,
        n_jobs=None,
        pre_dispatch="2*n_jobs",
        verbose=0,
        accountant=None,
        random_state=None,
        **kwargs,
    ):
        super().__init__(
            estimator, epsilon=epsilon, delta=delta, validation_fraction=validation_fraction,
            scoring=scoring, utility_range=utility_range, error_score=error_score,
            n_jobs=n_jobs, pre_dispatch=pre_dispatch, verbose=verbose, accountant=accountant,
            random_state=random_state, **kwargs)
        self.param_distributions = param_distributions
        self.trial_epsilon = trial_epsilon
        self.distribution = distribution
        self.n_iter = n_iter
        self.shape = shape
        self.subsample = subsample
        self.transfer = transfer

    def _run_search(self, X, y, plan, accountant):
        """Draw K, run the trials, release the best (one charge, even on failure); return
        the report, read from the fit's ledger."""
        # 1. Validated and checked in _fit: no data has been looked at yet.
        fit_params = plan.fit_params  # routed, as in scikit-learn's searches
        states = self._random_states()

        # 2. K and the trials' hyperparameters, without data. K stays in this function: the
        # guarantee covers the best trial only, not how many trials ran.
        settings = draw_settings(self.param_distributions, plan.n_iter, plan.shape,
                                 states["count"], states["params"])
        # The parameters each trial (and the final fit) is fitted with: the setting, with the
        # per-trial budget in the one-budget form. best_params_ stays the sampled setting.
        fitted = [self._check_setting(plan, params) for params in settings]

        self._say(f"Running a random number of trials ({self.distribution}, mean "
                  f"{plan.n_iter:g}), each {plan.trial_epsilon:g}-DP; their number is "
                  f"secret and not shown. {_delta_line(plan.a_priori_cost, plan.details)}")
        ledger = Ledger(accountant, on_refusal=self._withdraw, subsample=self.subsample)
        try:
            self._run(X, y, fit_params, plan, settings, fitted, states)
        except BaseException:
            # The data were touched: the failure can depend on them. Charge the whole cost.
            ledger.spend(*plan.charges)
            raise
        ledger.spend(*plan.charges)
        self._say(f"Released the best trial, {self.best_params_}; charged "
                  f"epsilon={plan.a_priori_cost[0]:g}, delta={plan.a_priori_cost[1]:g}; "
                  f"best_score_={self.best_score_:.4g} +/- {self.best_score_std_:.2g} (noisy "
                  "held-out score of the best trial, noise std; not a test score)")
        return ledger.report(self.random_state, plan.details)

    def _run(self, X, y, fit_params, plan, settings, fitted, states):
        """Everything that touches the data; sets the released attributes."""
        n_samples = plan.n_samples
        train, holdout, final = split_records(n_samples, self.validation_fraction,
                                              self.subsample, states["subsample"],
                                              states["split"])
        outcomes = run_trials(plan.estimator, fitted, X, y, train, holdout, fit_params,
                              plan.scoring, plan.utility, self.error_score,
                              n_jobs=self.n_jobs, pre_dispatch=self.pre_dispatch)
        if not outcomes:
            raise RuntimeError(
                "The random number of trials came out 0 (Poisson, probability "
                f"exp(-{plan.n_iter:g}) = {math.exp(-plan.n_iter):.3g}): nothing is "
                "released. The "
                "budget of this run has been charged; fit again to draw a new number."
            )
        for outcome in outcomes:
            self._check_outcome(outcome, plan.trial_epsilon)

        # 3. Noise every trial's held-out sum. Each per-record utility is in [0, 1] and the
        # model never sees held-out records, so the sum has sensitivity 1 (replace one record):
        # Laplace(1 / epsilon) makes the score epsilon-DP (the trial's whole budget, in
        # parallel with the training, which sees the other records).
        noise = Laplace(epsilon=plan.trial_epsilon, sensitivity=1.0,
                        random_state=states["noise"])
        noisy = [noise.randomise(outcome["sum"]) for outcome in outcomes]
        # ``best`` indexes this call's trials and never leaves it (it would bound K).
        best = int(np.argmax(noisy))
        chosen, best_noisy, model = settings[best], noisy[best], outcomes[best]["model"]
        del outcomes, noisy  # raw sums and non-selected models are not kept
        model = self._released_model(model, chosen, fitted[best][1], X, y, fit_params, plan,
                                     final)

        # 4. Release: post-processing of the best trial's (params, model, noisy score).
        expected_holdout = self.validation_fraction * n_samples * (self.subsample or 1.0)
        # Public: Laplace(1 / trial_epsilon) has std sqrt(2) / trial_epsilon; divided by the
        # expected held-out count (n is public), in utility units.
        self._store_released([chosen], 0, float(np.clip(best_noisy / expected_holdout, 0.0, 1.0)),
                             math.sqrt(2.0) / plan.trial_epsilon / expected_holdout, plan)
        self.best_estimator_ = model  # only what its mechanisms cover
        self.selected_ = True  # the best of the trials, however many (a secret) ran

    def _released_model(self, model, chosen, final_params, X, y, fit_params, plan, final):
        """The model to release, with only what its mechanisms cover: the best trial's, or
        the final fit on the remainder (with ``final_params``, the transferred setting;
        the release step of ``skdptune._base``)."""
        if model is None:
            raise RuntimeError(
                f"The best trial, with {chosen}, failed to fit or score, so there is no model "
                "to release (error_score credited it the best noisy score). The budget has "
                "been charged. Check the estimator on non-sensitive data."
            )
        if final is None:
            return keep_released(model)
        estimator = with_params(plan.estimator, final_params, source="transferred setting")
        released, failure, _ = self._fit_for_release(
            estimator, _safe_indexing(X, final), _safe_indexing(y, final),
            _check_method_params(X, params=fit_params, indices=final),
            (plan.trial_epsilon, 0.0), _PER_TRIAL_ALLOWS)
        if failure is not None:
            raise ValueError(_not_pure(final_params, failure))
        return released

    def _check_outcome(self, outcome, trial_epsilon):
        """A fit whose model may be released must be pure ``trial_epsilon``-DP and leak
        nothing."""
        if outcome["model"] is None and outcome["leak"] is None:
            return  # a failed fit releases no model (error_score stands in for its score)
        failure = check_released_fit(outcome["leak"], outcome["spent"], (trial_epsilon, 0.0),
                                     _PER_TRIAL_ALLOWS)
        if failure is not None:
            raise ValueError(_not_pure(outcome["params"], failure))

    def _trivial_test(self, plan):
        # The best trial's noisy held-out score (skdptune._trivial.trials_test); with
        # subsample the released model is a final fit that no trial scored: nothing to say.
        if self.subsample is not None:
            return None
        return trials_test(self.best_score_, self.scorer_, self.best_estimator_,
                           n_samples=plan.n_samples,
                           validation_fraction=self.validation_fraction,
                           trial_epsilon=plan.trial_epsilon, n_iter=plan.n_iter,
                           utility=plan.utility)

    def _routing_scorer(self):
        # scoring=None means accuracy here (the held-out sum needs a per-record score).
        return check_scoring(self.estimator, "accuracy" if self.scoring is None else self.scoring)

    def _plan(self, X, y, fit_params):
        """Everything decided before the data are touched, as a RandomizedPlan; raises on any
        invalid input."""
        estimator = clone(self.estimator)
        # Every trial's model may be released, so every setting must pass the refit gate.
        # Each sampled setting is checked in _check_setting, before any data; here, whatever
        # no setting can fix is refused whichever settings are sampled: the estimator is
        # checked as the distributions leave it (a parameter they set, a missing data_norm
        # or a placeholder step, is theirs to fix), as the grid search checks its candidates.
        def check(setting, context):
            candidate = with_params(estimator, setting, source="param_distributions setting")
            check_candidate(candidate, context, sparse_input=issparse(X),
                            seeded_search=self.random_state is not None)
            if self.trial_epsilon is None:  # epsilon is the total: it replaces the steps'
                check_budget_not_tuned(
                    split_budget(candidate, 1.0), setting, source="param_distributions",
                    remedy="trial_epsilon",
                    total=DEFAULT_EPSILON if self.epsilon is None else self.epsilon,
                )

        settings = _representative_settings(self.param_distributions)
        contexts = [f"param_distributions setting {setting}{note}" if setting
                    else "the estimator" for setting, note in settings]
        # Every setting's problems, raised together.
        collect_refusals([lambda setting=setting, context=context: check(setting, context)
                          for (setting, _), context in zip(settings, contexts)], contexts)
        if y is None:
            raise ValueError(
                "y=None was passed to fit, but PrivateRandomizedSearchCV scores every trial on "
                "held-out labelled records: pass y."
            )
        scoring = self.scoring
        if scoring is None and declared_bounds_y(estimator, required=False) is not None:
            # A mean of per-record scores in [0, 1] from the declared bounds_y (R², the
            # regressor's own score, is neither).
            scoring = BoundedSquaredErrorScorer()
        elif scoring is None:
            if not is_classifier(estimator):
                raise ValueError(
                    f"scoring=None means accuracy, which needs a classifier, but "
                    f"{type(estimator).__name__} is not one (nor diffprivlib's "
                    "LinearRegression with bounds_y, scored with "
                    "skdptune.utility.BoundedSquaredErrorScorer). Pass scoring= one of "
                    f"{sorted(PER_RECORD_SCORES)} (with utility_range) or a per-record "
                    "callable."
                )
            scoring = "accuracy"
        scorer, utility = make_utility(estimator, scoring, self.utility_range)
        fit_params, _ = route_fit_params(self, estimator, scorer, fit_params,
                                         weighted_scoring=False)
        if self.transfer is not None and self.subsample is None:
            raise ValueError(
                f"transfer={self.transfer!r} is only used with subsample=q; pass a subsample "
                "rate in (0, 1) or transfer=None."
            )
        n_iter, shape = self._trial_count_law()
        n_samples = _num_samples(X)
        check_consistent_length(X, y)
        check_input_data(X, y, estimator, check_sparse=False)  # the gate followed sparse input
        # Every representative setting on public rows of X's schema, after the checks whose
        # refusals say more: a configuration that fails every fit is refused in full.
        # Not the ends of a distribution's support (a data_norm of 1.8e308 is a value the
        # gate must judge, not one a fit will meet): the medians and the lists' values.
        typical = [(setting, context) for (setting, note), context in zip(settings, contexts)
                   if "of the support" not in note]
        built = [with_params(estimator, setting, source="param_distributions setting")
                 for setting, _ in typical]
        rehearse(built, [context for _, context in typical], schema_of(X, y))
        check_categories(X, built)
        rate = (self.subsample or 1.0) * min(self.validation_fraction,
                                             1 - self.validation_fraction)
        needed = min_samples(1, min(rate, 1 - (self.subsample or 0.0)))
        if n_samples < needed:
            raise ValueError(
                f"{n_samples} samples are too few for validation_fraction="
                f"{self.validation_fraction} and subsample={self.subsample}: every part should "
                f"expect at least one record, which needs at least {needed} samples."
            )

        trial_epsilon = self._trial_epsilon(n_iter, shape)
        # Papernot & Steinke: the best of K pure epsilon-DP trials (see the class Notes). Every
        # bound is valid on its own; the smallest (repeat_and_select_epsilon) is charged. The
        # pure bound of a truncated negative binomial count holds at delta = 0 (Corollary 3):
        # then no delta is charged; the others are converted to (epsilon, delta) at delta.
        tuning_bounds = repeat_and_select_bounds(trial_epsilon, self.delta, n_iter, shape)
        bound = min(tuning_bounds, key=tuning_bounds.get)
        tuning_cost = (tuning_bounds[bound], 0.0 if bound == "pure" else float(self.delta))
        if self.trial_epsilon is None:
            # Calibrated to the named total: the bound lands a hair below it (the bisection's
            # tolerance); the named figure is an upper bound too (named_epsilon's proof).
            total = DEFAULT_EPSILON if self.epsilon is None else self.epsilon
            tuning_cost = (named_epsilon(float(total), tuning_cost[0]), tuning_cost[1])
        # With subsample, the tuning (record in the subsample) or the final fit (record in the
        # rest), whose epsilon is capped by the trial epsilon: the larger of the two, delta
        # scaled by the subsample rate (replace-one adjacency; subsampled_tuning_cost).
        zero_out = self._zero_out_fits(estimator, trial_epsilon)
        charges, details = _charges(self, n_iter, shape, trial_epsilon, tuning_bounds,
                                    tuning_cost, zero_out)
        cost = compose_charges(charges, self.subsample)[1]
        transfer = self.transfer
        return RandomizedPlan(
            estimator=estimator,
            scorer=scorer,
            utility=utility,
            fit_params=fit_params,
            n_samples=n_samples,
            input_shape=input_shape(X),
            a_priori_cost=cost,
            scoring=scoring,
            n_iter=n_iter,
            shape=shape,
            trial_epsilon=trial_epsilon,
            transferred=(
                (lambda params: params) if transfer is None
                else (lambda params: _check_transferred(transfer(dict(params), self.subsample),
                                                        params))
            ),
            charges=charges,
            details=details,
            sparse_input=issparse(X),
        )

    def _check_setting(self, plan, params):
        """Before any data: a sampled setting (and its transfer) declares a pure budget within
        the per-trial epsilon.

        Returns
        -------
        trial_params, final_params : dict, dict or None
            The parameters of the trial's fit and (with ``subsample``) of the final fit: the
            setting (transferred for the final fit), with the per-trial budget given to its
            diffprivlib steps in the one-budget form.
        """
        checked = [params]
        if self.subsample is not None:
            checked.append(plan.transferred(params))
        fitted = []
        for setting in checked:
            candidate = with_params(plan.estimator, setting, source="sampled setting")
            context = f"sampled setting {setting}"
            epsilon_declared, delta_declared = check_candidate(
                candidate, context, sparse_input=plan.sparse_input,
                seeded_search=self.random_state is not None,
            )
            if self.trial_epsilon is None:
                # epsilon is the total: the steps share the per-trial epsilon (sequential
                # composition of the steps; each scaled by a common factor).
                setting = {**setting, **split_budget(candidate, plan.trial_epsilon)}
            elif exceeds((epsilon_declared, delta_declared), (plan.trial_epsilon, 0.0)):
                raise ValueError(
                    f"The sampled setting {setting} declares (epsilon={epsilon_declared}, "
                    f"delta={delta_declared}), but every fit must be pure epsilon-DP within the "
                    f"per-trial budget trial_epsilon={plan.trial_epsilon}. Narrow "
                    "param_distributions (or transfer), raise trial_epsilon, or give epsilon "
                    "(the whole search's budget, then split for you) instead."
                )
            fitted.append(setting)
        return fitted[0], (fitted[1] if self.subsample is not None else None)

    def _zero_out_fits(self, estimator, trial_epsilon):
        """The largest epsilon a trial's fit (and, with ``subsample``, the final fit) spends
        under zero-out adjacency, over every setting the distributions can give, for the
        report's comparison figure; None when it is not derived.

        Decided from the parameters: every combination of the lists' values (at most
        :data:`_ZERO_OUT_COMBINATIONS`); a continuous distribution can give settings no finite
        walk covers, and then no figure is stated.
        """
        distributions = (self.param_distributions if isinstance(self.param_distributions, list)
                         else [self.param_distributions])
        settings = []
        for distribution in distributions:
            if any(hasattr(values, "rvs") for values in distribution.values()):
                return None
            names = sorted(distribution)
            values = [list(distribution[name]) for name in names]
            if math.prod(len(value) for value in values) > _ZERO_OUT_COMBINATIONS:
                return None
            settings += [dict(zip(names, combination))
                         for combination in itertools.product(*values)]
        fits = []
        for setting in settings or [{}]:
            for params in [setting] + ([self.transfer(dict(setting), self.subsample)]
                                       if self.transfer is not None else []):
                candidate = with_params(estimator, params, source="param_distributions setting")
                if self.trial_epsilon is None:  # the one-budget form gives the steps their share
                    candidate.set_params(**split_budget(candidate, trial_epsilon))
                fits.append(zero_out_epsilon(candidate))
        return None if None in fits else max(fits)

    def _trial_count_law(self):
        """``(mean, shape)`` of the number of trials, from the parameters alone."""
        n_iter = float(DEFAULT_N_ITER if self.n_iter is None else self.n_iter)
        shape = DISTRIBUTIONS[self.distribution]
        if shape is None:
            shape = float(self.shape)
        if not math.isinf(shape) and n_iter <= 1:
            raise ValueError(
                f"n_iter={self.n_iter} is invalid for distribution="
                f"{self.distribution!r}: its number of trials is at least 1, so its mean must "
                "be above 1."
            )
        return n_iter, shape

    def _trial_epsilon(self, n_iter, shape):
        """The per-trial epsilon: ``trial_epsilon``, or solved from ``epsilon`` (the total)."""
        trial_epsilon = self._explicit_budget(
            "trial_epsilon",
            "the whole search's budget, from which the per-trial epsilon is solved",
            "the budget of one trial, the total following from the law of the number of trials",
        )
        if trial_epsilon is not None:
            return float(trial_epsilon)
        total = DEFAULT_EPSILON if self.epsilon is None else self.epsilon
        return _calibrated_trial_epsilon(float(total), float(self.delta), n_iter, shape,
                                         self.subsample)

    def _random_states(self):
        """Independent sources for K, the hyperparameters, the subsample, the split and the
        noise. With ``random_state=None``: :mod:`secrets` for K, the subsample and the noise,
        and a generator seeded with 128 secret bits for the hyperparameters (a released
        setting must not reveal its position in the sequence, which would bound K)."""
        if self.random_state is None:
            return {
                "count": dp_check_random_state(None, secure=True),
                "params": np.random.RandomState(
                    np.random.MT19937(np.random.SeedSequence(secrets.randbits(128)))
                ),
                "subsample": None,
                "split": None,
                "noise": None,
            }
        seeds = self._seeds(5)
        return {
            "count": np.random.RandomState(seeds[0]),
            "params": np.random.RandomState(seeds[1]),
            "subsample": np.random.default_rng(seeds[2]),
            "split": seeds[3],
            "noise": np.random.RandomState(seeds[4]),
        }


def _representative_settings(param_distributions):
    """Settings, drawn without data, that stand for what ``param_distributions`` can give.

    Per distribution (a dict): every value of every list, one list at a time; every end of
    the support of every frozen scipy distribution (its ``support()``), one at a time; the
    other parameters at a fixed value (a list's first, a scipy distribution's median). Each
    is a value the search can sample (:func:`_support_ends`), so refusing one refuses what
    a fit could meet, the same way every time whichever settings it happens to sample (as
    the grid search refuses a grid with one bad candidate); a parameter no distribution sets
    stays as the estimator has it, so what no setting fixes is refused too. An object with
    ``rvs`` but no ``support`` is represented by one draw from a fixed seed. Sampled
    settings are still checked one by one before the data (two parameters at once at their
    ends, or such an object's other draws).

    Returns
    -------
    list of (dict, str)
        Each setting, and what it stands for (for messages).
    """
    ParameterSampler(param_distributions, 1)  # scikit-learn's checks of the distributions
    distributions = (param_distributions if isinstance(param_distributions, list)
                     else [param_distributions])
    settings = []
    for distribution in distributions:
        items = sorted(distribution.items())
        base = {name: (_typical_value(values) if hasattr(values, "rvs") else values[0])
                for name, values in items}
        drawn = [f"{name} from {_describe_distribution(values)}" for name, values in items
                 if _is_frozen_scipy(values)]
        settings.append((base, f" (the median of {', '.join(drawn)})" if drawn else ""))
        for name, values in items:
            if not hasattr(values, "rvs"):
                settings.extend(({**base, name: value}, "") for value in list(values)[1:])
                continue
            for where, value, support in _support_ends(values):
                settings.append((
                    {**base, name: value},
                    f", {name} {where} of the support {support} of its distribution "
                    f"{_describe_distribution(values)} (decided from the support, the same "
                    "way every time: the search can sample values there)"))
    return settings or [({}, "")]  # no distribution at all: the estimator as it is


def _is_frozen_scipy(distribution):
    return hasattr(distribution, "support") and hasattr(distribution, "dist")


def _typical_value(distribution):
    """A fixed value ``distribution`` can give: a frozen scipy distribution's median (an
    integer for a discrete one), else one draw from a fixed seed."""
    if _is_frozen_scipy(distribution):
        median = distribution.median()
        return int(median) if isinstance(distribution.dist, rv_discrete) else float(median)
    return distribution.rvs(random_state=np.random.RandomState(0))


def _support_ends(distribution):
    """``(where, value, support)`` for both ends of a frozen scipy distribution's support
    (none for another object with ``rvs``): a value it can give there, with probability one
    arbitrarily close to it.

    A discrete distribution gives its finite ends themselves. A continuous one gives its
    ends with probability 0, so the values next to them stand for them: the neighbouring
    float inside the support (``C`` on ``expon()``, whose support starts at 0, is then
    positive, as every value it gives is). An infinite end stands for the arbitrarily large
    values next to it: the largest finite number of its sign (an integer for a discrete
    distribution).
    """
    if not _is_frozen_scipy(distribution):
        return []
    discrete = isinstance(distribution.dist, rv_discrete)
    largest = np.iinfo(np.int64).max if discrete else np.finfo(float).max
    low, high = distribution.support()
    described = f"[{low:g}, {high:g}]".replace("[-inf", "(-inf").replace("inf]", "inf)")
    ends = []
    for end, value, inwards in (("lower", low, 1), ("upper", high, -1)):
        if not np.isfinite(value):
            value = -inwards * (int(largest) if discrete else float(largest))
            where = f"near the {end} end"
        elif discrete:
            value, where = int(value), f"at the {end} end"
        else:
            value = float(np.nextafter(value, inwards * np.inf))
            where = f"next to the {end} end"
        ends.append((where, value, described))
    return ends


def _describe_distribution(distribution):
    """``norm(3, 2)``: a frozen scipy distribution as it was made."""
    arguments = [f"{value!r}" for value in distribution.args]
    arguments += [f"{key}={value!r}" for key, value in distribution.kwds.items()]
    return f"{distribution.dist.name}({', '.join(arguments)})"


def _delta_line(cost, details):
    """Where the delta of ``cost``, the whole charge, comes from, for the verbose line."""
    epsilon, delta = cost
    if details["tuning_bound"] == "pure":
        return (f"privacy_spent_ will be ({epsilon:g}, {delta:g}): the pure bound of a "
                f"{details['distribution']} number of pure trials, which needs no delta")
    return (f"privacy_spent_ will be ({epsilon:g}, {delta:g}): a Rényi DP bound of the best "
            f"of the trials, converted to (epsilon, delta) at delta={details['tuning_delta']:g} "
            "(the delta parameter)")


#: Who bounds a released fit of the random search (``skdptune._gate.check_released_fit``).
_PER_TRIAL_ALLOWS = "the per-trial budget (trial_epsilon, pure DP) allows"


def _not_pure(params, failure):
    """The message refusing a fit with ``params`` that may not be released."""
    return (f"The fit with {params} {failure}; the search's guarantee does not hold for it. "
            "Use a pure-DP estimator whose epsilon is at most the per-trial budget.")


def _check_transferred(transferred, params):
    if not isinstance(transferred, dict):
        raise ValueError(
            f"transfer must return a dict of parameters, but transfer({params}, q) returned "
            f"{transferred!r}."
        )
    return transferred


@lru_cache(maxsize=64)
def _calibrated_trial_epsilon(total_epsilon, delta, n_iter, shape, subsample):
    # calibrate_trial_epsilon bisects over the accountant's bounds (about a second): cached,
    # as clones refit with the same parameters (cross-validation).
    return calibrate_trial_epsilon(total_epsilon, delta, n_iter, shape, subsample)


#: The most combinations of the distributions' list values walked for the zero-out figure.
_ZERO_OUT_COMBINATIONS = 1000


def _charges(search, n_iter, shape, trial_epsilon, tuning_bounds, tuning_cost, zero_out_fit):
    """The releases of one fit as :class:`~skdptune._accounting.Charge` records, and the
    search's own figures of ``privacy_report_`` that explain them; both a function of the
    parameters only (the ledger records the charges when they are spent).

    One accountant entry: the best of the trials (and, with ``subsample``, the final fit on
    the rest). ``tuning_bounds`` are all the valid epsilons of the repeat-and-select
    (``skdptune._accounting.repeat_and_select_bounds``); ``tuning_bound`` names the
    smallest, which is the one charged, and ``accounting`` says what it is. ``zero_out_fit``
    (:meth:`PrivateRandomizedSearchCV._zero_out_fits`) gives the zero-out figures beside.
    """
    tuning_bound = min(tuning_bounds, key=tuning_bounds.get)
    total = DEFAULT_EPSILON if search.epsilon is None else search.epsilon
    mechanism = ("best of a random number of trials (Papernot & Steinke 2022), only the best "
                 "trial released")
    composition = REPEAT_AND_SELECT_BOUNDS[tuning_bound]
    if tuning_cost[0] != tuning_bounds[tuning_bound]:
        composition += (f" = {tuning_bounds[tuning_bound]!r}, reported as the named "
                        f"epsilon={total!r} it lies within 1e-9 below (an upper bound too: "
                        "skdptune._accounting.named_epsilon)")
    if tuning_bound == "pure":
        composition += "; pure DP, so no delta is charged"
    # Zero-out: a null record is in the training part (the fit's zero-out figure) or the
    # held-out part (it removes its utility, in [0, 1], from the sum: sensitivity 1, as a
    # replaced record): the trial is max(fit, trial_epsilon)-DP, and the repeat-and-select
    # bounds hold for any relation under which each trial is pure DP.
    trial_zero_out = None if zero_out_fit is None else max(zero_out_fit, trial_epsilon)
    charges = [Charge(
        "best of K trials", tuning_cost[0], tuning_cost[1],
        mechanism + "; each trial scored by Laplace on its held-out sum (sensitivity 1)",
        composition, entry="search",
        records=ALL_RECORDS if search.subsample is None else SUBSAMPLE,
        zero_out_epsilon=(None if trial_zero_out is None else min(repeat_and_select_bounds(
            trial_zero_out, search.delta, n_iter, shape).values())),
        zero_out=("the same bounds at a trial's zero-out epsilon: max(its fit's, under the "
                  "gate's zero-out factors, and its held-out score's, the same sensitivity 1)"
                  if trial_zero_out is not None else
                  "not derived for some setting (a step without a zero-out factor, or a "
                  "continuous distribution)"))]
    if search.subsample is not None:
        charges.append(Charge("final fit", trial_epsilon, 0.0,
                              "the estimator's own mechanisms, at most trial_epsilon",
                              "its steps compose sequentially", entry="search",
                              records=REMAINDER, zero_out_epsilon=zero_out_fit,
                              zero_out="its steps' budgets times their zero-out factors"))
    details = {
        "mechanism": mechanism,
        "trial_epsilon": trial_epsilon,
        "trial_epsilon_rule": (
            "trial_epsilon" if search.trial_epsilon is not None
            else f"solved from epsilon={total} (the whole search's; "
                 "skdptune._accounting.calibrate_trial_epsilon)"
        ),
        "budget_rule": (
            "trial_epsilon; fits as declared" if search.trial_epsilon is not None
            else "epsilon solved into a per-trial budget, split between each setting's steps"
        ),
        "trial_composition": "training and held-out scoring see disjoint records: "
                             "max(training epsilon <= trial_epsilon, scoring epsilon)",
        "score_mechanism": "Laplace on the sum of per-record held-out utilities in [0, 1]",
        "score_sensitivity": 1.0,
        "distribution": search.distribution,
        "mean": n_iter,
        "shape": shape,
        "tuning_bound": tuning_bound,
        "accounting": REPEAT_AND_SELECT_BOUNDS[tuning_bound],
        "tuning_bounds": dict(tuning_bounds),
        "tuning_epsilon": tuning_cost[0],
        "tuning_delta": tuning_cost[1],
        "subsample": search.subsample,
    }
    if not math.isinf(shape):
        details["gamma"] = truncated_negative_binomial_gamma(shape, n_iter)
    if search.subsample is not None:
        details["final_epsilon"] = trial_epsilon
    return tuple(charges), details
