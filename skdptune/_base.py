"""What every private search shares: the life cycle of ``fit`` and the scikit-learn surface.

The life cycle, as scikit-learn's ``BaseSearchCV.fit`` with ``_run_search``: validate and plan
(a frozen :class:`Plan`, before the data are touched), check the whole a-priori cost on the
accountant, run the subclass's strategy (which touches the data and charges the accountant as
its protocol says), release. Around it: delegation of ``predict`` and friends to
:attr:`best_estimator_`, the tags copied from the tuned estimator, and a ``clone`` that keeps
the very same accountant object.
"""

import copyreg
import functools
import gc
import os
import secrets
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from sklearn.base import BaseEstimator, MetaEstimatorMixin
from sklearn.metrics import check_scoring
from sklearn.utils import check_random_state, get_tags, indexable
from sklearn.utils.metadata_routing import MetadataRouter, MethodMapping, process_routing
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _raise_for_params,
    _routing_enabled,
    _VisualBlock,
    _fit_context,
    _yield_masked_array_for_each_param,
)
from ._accounting import PrivacySpent
from ._distributed._input import stand_ins
from ._dp_fit import MeasuringAccountant, fit_for_release, withheld_notice
from .exceptions import AccountantCopyError
from ._gate import check_released_fit, keep_released
from ._trivial import warn_if_useless
from ._validation import refuse_keywords

_PARALLEL_ADVICE = (
    "Run the outer loop with n_jobs=None (the search's own n_jobs parallelises its fits, also "
    "on a dask cluster through joblib.parallel_backend('dask'))."
)

# Which accountants a search may charge: only one whose construction skdptune witnessed in
# this very process, or that the user affirmed here with set_params(accountant=...).
#
# Why this does not depend on what any process imported: every diffprivlib BudgetAccountant
# constructed in a process where skdptune is imported gets this process's token (a random
# value drawn at import and redrawn in every forked child) from the wrapped __init__ below,
# and a copy never runs __init__: unpickling (whatever pickled it: pickle, cloudpickle,
# multiprocessing, dask; with or without skdptune in the sending process, which pickles by
# diffprivlib's own reduce when it has not imported skdptune) and deep copies rebuild the
# object from its state, and the reducer below strips the token from that state; a forked
# child inherits the parent's token, which is no longer its own. So a copy never carries the
# token of the process it is charged in, whether skdptune was imported in the receiving
# process before or after it arrived. (Marking accountants as they are unpickled would miss
# one unpickled before skdptune is imported there.) The price: an accountant constructed
# before `import skdptune` in the same process cannot be told from a copy either, and is
# refused until affirmed.
_ORIGIN = "_skdptune_origin"
_PROCESS_TOKEN = secrets.token_hex(16)


def _witnessing(init):
    """``BudgetAccountant.__init__`` that also records this process's token on the new
    accountant (once per process: a reload of this module does not wrap it again)."""
    if getattr(init, "_skdptune_witness", False):
        return init

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.__dict__[_ORIGIN] = _PROCESS_TOKEN

    __init__._skdptune_witness = True
    return __init__


BudgetAccountant.__init__ = _witnessing(BudgetAccountant.__init__)

# Other accountants (any object with check and spend, which a search also takes) carry no
# token: those that arrived as copies inside a search (unpickled, deep-copied, inherited by a
# fork) are listed here. Weak references where the accountant allows them, else strong ones.
_COPIED_ACCOUNTANTS = weakref.WeakSet()
_COPIED_STRONG = []


def _mark_copied(accountant):
    if isinstance(accountant, BudgetAccountant):
        accountant.__dict__.pop(_ORIGIN, None)
        return
    try:
        _COPIED_ACCOUNTANTS.add(accountant)
    except TypeError:
        _COPIED_STRONG.append(accountant)


def _unmark_copied(accountant):
    """Affirm ``accountant`` as this process's own (``set_params(accountant=...)``)."""
    if isinstance(accountant, BudgetAccountant):
        accountant.__dict__[_ORIGIN] = _PROCESS_TOKEN
        return
    try:
        _COPIED_ACCOUNTANTS.discard(accountant)
    except TypeError:
        _COPIED_STRONG[:] = [copied for copied in _COPIED_STRONG if copied is not accountant]


def _is_copied(accountant):
    if isinstance(accountant, BudgetAccountant):
        return accountant.__dict__.get(_ORIGIN) != _PROCESS_TOKEN
    try:
        return accountant in _COPIED_ACCOUNTANTS
    except TypeError:
        return any(accountant is copied for copied in _COPIED_STRONG)


def _reduce_accountant(accountant):
    """How :mod:`pickle` (and :func:`copy.deepcopy`) copy a diffprivlib ``BudgetAccountant``
    where skdptune is imported: as the class itself would be copied, without this process's
    token, so that the copy (here or in another process) is refused until affirmed.

    Registered with :func:`copyreg.pickle`, which every pickler consults (pickle, cloudpickle
    under joblib's loky backend, multiprocessing's spawn and forkserver, dask).
    """
    constructor, arguments, state = accountant.__reduce_ex__(2)[:3]
    state = {name: value for name, value in (state or {}).items() if name != _ORIGIN}
    return constructor, arguments, state


copyreg.pickle(BudgetAccountant, _reduce_accountant)


# Set in a process forked from another (multiprocessing's "fork" start method, Linux's default
# before Python 3.14): every object it inherited is a copy, made without pickling, so
# __setstate__ never ran.
_FORKED = False


def _after_fork_in_child():
    """Make every accountant the child inherited a copy (``os.register_at_fork``).

    A new token for this process: the diffprivlib accountants inherited carry the parent's.
    Other accountants: one pass over the objects the garbage collector tracks, marking the
    accountant of every search.
    """
    global _FORKED, _PROCESS_TOKEN
    _FORKED = True
    _PROCESS_TOKEN = secrets.token_hex(16)
    for obj in gc.get_objects():
        if isinstance(obj, BasePrivateSearch) and obj.__dict__.get("accountant") is not None:
            _mark_copied(obj.accountant)


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _estimator_has(attr):
    """``available_if`` check: delegate ``attr`` to the released estimator (or, before fit,
    the unfitted one), and only when the search releases a model."""

    def check(self):
        self._check_releases_model(attr)
        getattr(getattr(self, "best_estimator_", self.estimator), attr)
        return True

    return check


@dataclass(frozen=True)
class Plan:
    """What a search decides from its parameters and the public shape of the data, before
    touching them. Each search extends it with its own fields.

    Attributes
    ----------
    estimator : estimator
        A clone of the search's ``estimator``.
    scorer : callable
        The scikit-learn scorer (``scorer_``).
    utility : skdptune._utility.Utility
        Maps scores into ``[0, 1]`` and back.
    fit_params : dict
        ``fit``'s metadata, routed to the estimator's ``fit``.
    n_samples : int
        The number of records (public: replace-one adjacency).
    input_shape : dict
        ``n_features_in_`` and ``feature_names_in_`` (public: the shape and columns of X).
    a_priori_cost : (float, float)
        The most the fit can be charged: checked on the accountant before the data.
    """

    estimator: object
    scorer: object
    utility: object
    fit_params: dict
    n_samples: int
    input_shape: dict
    a_priori_cost: tuple


class BasePrivateSearch(MetaEstimatorMixin, BaseEstimator):
    """Base class of the private searches (not a search itself).

    As scikit-learn's ``BaseSearchCV``: one :meth:`fit` (the life cycle, :meth:`_fit`), the
    parameters every search shares (stored by ``__init__``), the release step
    (:meth:`_fit_for_release`). Subclasses supply :meth:`_plan` and :meth:`_run_search`, and
    set the fitted attributes ``best_estimator_`` and ``scorer_`` when they release a model.
    """

    # Parameters every search has; subclasses add their own.
    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
        "epsilon": [Interval(Real, 0, None, closed="neither"), None],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "utility_range": [tuple, list, None],
        "error_score": [StrOptions({"raise"}), Interval(Real, 0, 1, closed="both")],
        "n_jobs": [Integral, None],
        "pre_dispatch": [Integral, str],
        "verbose": ["verbose"],
        "accountant": [HasMethods(["check", "spend"]), None],
        "random_state": ["random_state"],
    }

    #: Methods of the search whose metadata the scorer receives (see get_metadata_routing).
    _scorer_callers = ("score",)

    #: Why the search has no ``cv``, and what to use instead (``refuse_keywords``).
    _splitting = ""

    def __init__(self, estimator, *, epsilon, delta, validation_fraction, scoring,
                 utility_range, error_score, n_jobs, pre_dispatch, verbose, accountant,
                 random_state, **kwargs):
        # The parameters every search shares, stored unchanged (validated in fit); the
        # subclass stores its own. An unknown keyword is refused here, saying why.
        refuse_keywords(self, kwargs, self._splitting)
        self.estimator = estimator
        self.epsilon = epsilon
        self.delta = delta
        self.validation_fraction = validation_fraction
        self.scoring = scoring
        self.utility_range = utility_range
        self.error_score = error_score
        self.n_jobs = n_jobs
        self.pre_dispatch = pre_dispatch
        self.verbose = verbose
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, **fit_params):
        """Tune on ``X`` privately, release the chosen model and charge the accountant.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,), default=None
            Target; required for supervised estimators, and always by
            :class:`~skdptune.PrivateRandomizedSearchCV` (it scores every trial on held-out
            labelled records).
        **fit_params : dict
            Passed to the estimator's ``fit``; sample-aligned ones (``sample_weight``) are
            sliced to the rows each fit sees (a partition's or a trial's training part), and
            passed whole to :class:`~skdptune.PrivateGridSearchCV`'s refit. Every name must be
            accepted by the estimator's ``fit``; ``groups`` is refused (the guarantee is per
            record).

        Returns
        -------
        self : object
            The fitted search.

        Raises
        ------
        ValueError or TypeError
            On invalid parameters or input, before the accountant is checked: nothing is
            charged. This covers every candidate or setting the refit gate refuses
            (:class:`~skdptune.exceptions.GateError`).
        AccountantCopyError
            When the accountant is a copy made by pickling (the search was sent to another
            process); nothing is charged.
        PrivateFitError
            When a fit to release fails; its message is withheld (see
            :func:`skdptune.reveal_fit_messages`).

        Notes
        -----
        Charges (see the "Faults" page of the docs). :class:`~skdptune.PrivateGridSearchCV`
        charges the selection, in its own accountant entry, as soon as it has run and before
        anything is stored or refit; the refit is charged its a-priori reservation (the
        grid's maximum declared budget) once it has started, whether it succeeds or fails. A
        failure before the selection (invalid input, a dying worker, ``KeyboardInterrupt``,
        ``error_score="raise"``) charges nothing.
        :class:`~skdptune.PrivateRandomizedSearchCV` charges its whole cost in one entry,
        also when the fit fails after touching the data. If a charge is refused, every
        fitted attribute is removed before the error propagates.
        """
        return self._fit(X, y, fit_params)

    def get_metadata_routing(self):
        """Get the metadata routing of this search.

        As scikit-learn's searches: ``fit``'s metadata go to the estimator's ``fit`` (and, for
        :class:`~skdptune.PrivateGridSearchCV`, to the scorer of the partitions), ``score``'s
        to the scorer. Used when metadata routing is enabled
        (``sklearn.set_config(enable_metadata_routing=True)``); there is no splitter.

        Returns
        -------
        routing : sklearn.utils.metadata_routing.MetadataRouter
        """
        router = MetadataRouter(owner=type(self).__name__).add(
            estimator=self.estimator,
            method_mapping=MethodMapping().add(caller="fit", callee="fit"),
        )
        mapping = MethodMapping()
        for caller in self._scorer_callers:
            mapping.add(caller=caller, callee="score")
        return router.add(scorer=self._routing_scorer(), method_mapping=mapping)

    def _routing_scorer(self):
        """The scorer whose metadata requests the router follows."""
        return check_scoring(self.estimator, self.scoring)

    def _user_accountant(self):
        """The accountant to charge; refuses a copy made by pickling.

        A search pickled into another process (``cross_val_score(search, X, y, n_jobs=2)``)
        or deep-copied carries a copy of its accountant (or, with ``accountant=None``,
        would charge another process's default accountant): charging it would leave the
        user's accountant short, silently.
        """
        if self.accountant is None:
            if _FORKED:
                raise AccountantCopyError(
                    f"This {type(self).__name__} runs in a process forked from another (e.g. "
                    "by multiprocessing with the 'fork' start method) with accountant=None: it "
                    "would charge this process's copy of the default accountant, not yours. "
                    f"{_PARALLEL_ADVICE} To tune in this process on purpose, give it an "
                    "accountant made here: accountant=BudgetAccountant(...)."
                )
            origin = getattr(self, "_pickled_in_pid", None)
            if origin is not None and origin != os.getpid():
                raise AccountantCopyError(
                    f"This {type(self).__name__} was pickled into another process (e.g. by "
                    "cross_val_score(search, ..., n_jobs=2) or GridSearchCV(search, n_jobs=2)) "
                    "with accountant=None: it would charge that process's default accountant, "
                    f"not yours. {_PARALLEL_ADVICE}"
                )
            return BudgetAccountant.load_default(None)
        if _is_copied(self.accountant):
            raise AccountantCopyError(
                f"This {type(self).__name__}'s accountant is a copy made when it was "
                "pickled (sent to another process, alone or inside the search, e.g. by "
                "cross_val_score(search, ..., n_jobs=2), GridSearchCV(search, n_jobs=2) or "
                "joblib.Parallel), deep-copied, or inherited by a forked process "
                "(multiprocessing's 'fork' start method): charging it would not charge yours. "
                "(A diffprivlib accountant constructed in this process before skdptune was "
                "imported cannot be told from a copy either.) "
                f"{_PARALLEL_ADVICE} If this copy is the accountant you mean to charge (this "
                "process's own), set it again: search.set_params(accountant=...)."
            )
        return self.accountant

    def _withdraw(self):
        """Remove every fitted attribute: a refused charge leaves nothing released uncharged
        (``skdptune._accounting.Ledger``'s ``on_refusal``).

        The a-priori check makes a refusal rare (another user of the same accountant in
        between, or a fit that spent more than it declared).
        """
        for name in [name for name in vars(self) if name.endswith("_")]:
            delattr(self, name)

    def _fit(self, X, y, fit_params):
        """The life cycle of ``fit``, the same for every search; called by :meth:`fit` (under
        scikit-learn's ``_fit_context``).

        1. Validate and plan (:meth:`_plan`): raises on any invalid parameter or input before
           the data are touched and before anything is charged.
        2. Check the whole a-priori cost on the user's accountant (a copy made by pickling is
           refused): a budget too small is refused before the data are touched.
        3. Run the search's strategy (:meth:`_run_search`): it touches the data, sets the
           released attributes and charges the accountant as its protocol says.
        4. Release the privacy attributes from the strategy's report.
        5. Warn when the released outputs show a model no better than a trivial one
           (``skdptune._trivial.warn_if_useless``: post-processing of DP outputs and public
           parameters, never the data).
        """
        # Dask input: refused from the parameters where it has no distributed path, else
        # public stand-ins whose data stay on the workers (skdptune._distributed).
        X, y = stand_ins(self, X, y, fit_params)
        X, y = indexable(X, y)  # as scikit-learn's searches: row-indexable (COO -> CSR)
        plan = self._plan(X, y, fit_params)
        accountant = self._user_accountant()
        if any(plan.a_priori_cost):  # nothing to spend (one candidate, no refit): no check
            accountant.check(*plan.a_priori_cost)
        # Stack level 4: this method, fit, _fit_context, the user's call.
        withheld_notice()  # data-independent: every fit, filters permitting
        report = self._run_search(X, y, plan, accountant)
        self._release(plan, report)
        # Stack level 4 as above: the user's call of fit.
        warn_if_useless(self, plan)
        return self

    def _trivial_test(self, plan):
        """This search's rule for ``skdptune._trivial.warn_if_useless``: a
        ``skdptune._trivial.TrivialTest`` on a released figure, or None (nothing to
        say). Reads released attributes and the plan's public figures only."""
        return None

    def _plan(self, X, y, fit_params):
        """Everything decided before the data are touched, as a :class:`Plan`; raises on any
        invalid input."""
        raise NotImplementedError

    def _run_search(self, X, y, plan, accountant):
        """The search's strategy: touch the data, set the released attributes, charge
        ``accountant`` through a ``skdptune._accounting.Ledger``; return the
        ``privacy_report_`` the ledger reports."""
        raise NotImplementedError

    def _fit_for_release(self, estimator, X, y, fit_params, declared, allows, charge=None):
        """The release step both searches share: fit ``estimator`` for release on a fresh
        measuring accountant (``skdptune._dp_fit.fit_for_release``), check it, keep only
        what its mechanisms cover.

        ``charge(measured)``, when given, is called once the fit has started, whether it
        succeeds or fails (a failure can depend on the data), with what the fit recorded.
        The fit must leak nothing and spend no more than ``declared``
        (``skdptune._gate.check_released_fit``; ``allows`` says who declared it).

        Returns
        -------
        released : estimator or None
            ``estimator`` with only its released attributes
            (``skdptune._gate.keep_released``); None when the check failed.
        failure : str or None
            Why the fit may not be released, for the search's message; None when it may.
        seconds : float
            The fit's wall-clock time (a side channel outside the guarantee).
        """
        measuring = MeasuringAccountant()
        start = time.perf_counter()
        try:
            leak = fit_for_release(estimator, X, y, fit_params, measuring)
        except BaseException:
            if charge is not None:
                charge(measuring.total())
            raise
        seconds = time.perf_counter() - start
        measured = tuple(map(float, measuring.total()))
        failure = check_released_fit(leak, measured, declared, allows)
        if charge is not None:
            charge(measured)
        return (None if failure is not None else keep_released(estimator)), failure, seconds

    def _release(self, plan, report):
        """Last step of ``fit``: the privacy attributes and the input's shape (already
        charged)."""
        self.privacy_spent_ = PrivacySpent(report["total_epsilon"], report["total_delta"])
        self.privacy_report_ = report
        zero_out = ("not derived for every release (see privacy_report_['charges'])"
                    if report["zero_out_epsilon"] is None else
                    f"epsilon={report['zero_out_epsilon']:g}, "
                    f"delta={report['zero_out_delta']:g}")
        self._say(f"privacy_spent_: epsilon={report['total_epsilon']:g}, "
                  f"delta={report['total_delta']:g} (replace one record: charged); for "
                  f"comparison, under zero-out adjacency (a record replaced by a null one): "
                  f"{zero_out}")
        for name, value in plan.input_shape.items():
            if value is not None:
                setattr(self, name, value)

    def set_params(self, **params):
        """Set parameters (as :meth:`sklearn.base.BaseEstimator.set_params`).

        Setting ``accountant`` explicitly also affirms it as the accountant to charge, even
        if it arrived as a copy (see :class:`~skdptune.exceptions.AccountantCopyError`).
        """
        super().set_params(**params)
        if params.get("accountant") is not None:
            _unmark_copied(params["accountant"])
        return self

    def __copy__(self):
        # A shallow copy shares the very accountant object: it is the user's, not a copy, so
        # neither search is marked (pickling, which __setstate__ covers, would mark it).
        copied = type(self).__new__(type(self))
        copied.__dict__.update(self.__dict__)
        return copied

    def __getstate__(self):
        state = dict(super().__getstate__())
        state["_pickled_in_pid"] = os.getpid()
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        # Unpickling (or deepcopy) made a copy of the accountant: never charge it silently.
        if self.accountant is not None:
            _mark_copied(self.accountant)

    def _check_releases_model(self, attr):
        """Raise AttributeError when this search releases no model to delegate ``attr`` to."""
        return None

    def _explicit_budget(self, name, epsilon_means, name_means):
        """The value of the explicit budget parameter ``name``, or None when the total
        ``epsilon`` (or its default) is the budget; both given is refused, before the data."""
        value = getattr(self, name)
        if value is not None and self.epsilon is not None:
            raise ValueError(
                f"epsilon={self.epsilon} and {name}={value} were both given; give epsilon "
                f"({epsilon_means}) or {name} ({name_means}), not both."
            )
        return value

    def _seeds(self, n):
        """``n`` independent seeds drawn from ``random_state``, or None when it is None.

        None leaves every source to the search's secure default (:mod:`secrets`): seeded
        sources are reproducible and carry no guarantee.
        """
        if self.random_state is None:
            return None
        rng = check_random_state(self.random_state)
        return [int(seed) for seed in rng.randint(np.iinfo(np.int32).max, size=n)]

    def _store_released(self, candidates, index, score, score_std, plan, **results):
        """Set the released attributes both searches share, from DP outputs only.

        ``best_index_`` and ``best_params_`` (``candidates[index]``), ``best_score_`` and
        ``best_score_std_`` (``score`` and its noise std ``score_std`` in ``[0, 1]`` utility
        units, mapped to the scorer's; NaN when None), ``scorer_``, and ``cv_results_``: the
        params, their masked arrays, and the search's own released columns ``results``.
        """
        self.best_index_ = index
        self.best_params_ = candidates[index]
        utility = plan.utility
        # In [0, 1] utility units, mapped back to the scorer's: never outside utility_range.
        self.best_score_ = float("nan") if score is None else utility.to_score(score)
        self.best_score_std_ = (float("nan") if score_std is None
                                else score_std * (utility.high - utility.low))
        self.scorer_ = plan.scorer
        cv_results = {"params": candidates}
        cv_results.update(_yield_masked_array_for_each_param(candidates))
        cv_results.update(results)
        self.cv_results_ = cv_results

    def __sklearn_clone__(self):
        # clone() deep-copies non-estimator parameters, which would charge a copy of the user's
        # accountant: carry the very same accountant object over instead.
        cloned = super().__sklearn_clone__()
        cloned.accountant = self.accountant
        if hasattr(self, "_pickled_in_pid"):
            cloned._pickled_in_pid = self._pickled_in_pid
        return cloned

    def _say(self, message):
        """Print a progress line when verbose, as scikit-learn's searches do (counts, budgets
        and parameters only: nothing private)."""
        if self.verbose > 0:
            print(message)

    def _sk_visual_block_(self):
        # As scikit-learn's searches: the released model once fitted, else the estimator to
        # tune; and the selector when it is an estimator (its parameters are tunable).
        if hasattr(self, "best_estimator_"):
            key, estimator = "best_estimator_", self.best_estimator_
        else:
            key, estimator = "estimator", self.estimator
        blocks = [(f"{key}: {type(estimator).__name__}", estimator)]
        selector = getattr(self, "selector", None)
        if isinstance(selector, BaseEstimator):
            blocks.append((f"selector: {type(selector).__name__}", selector))
        return _VisualBlock(
            "parallel", [block for _, block in blocks], names=[name for name, _ in blocks],
            name_details=[str(block) for _, block in blocks],
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        tags.input_tags.pairwise = inner.input_tags.pairwise
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.input_tags.allow_nan = inner.input_tags.allow_nan
        tags.target_tags.required = inner.target_tags.required
        tags.non_deterministic = True
        return tags

    @property
    def classes_(self):
        """Class labels of the released classifier."""
        _estimator_has("classes_")(self)  # AttributeError unless a classifier is released
        return self.best_estimator_.classes_

    @available_if(_estimator_has("predict"))
    def predict(self, X):
        """Predict with the released best estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities from the released best estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities from the released best estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_log_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the released best estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray
        """
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    @available_if(_estimator_has("score_samples"))
    def score_samples(self, X):
        """``score_samples`` of the released best estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.best_estimator_.score_samples(X)

    @available_if(_estimator_has("transform"))
    def transform(self, X):
        """Transform with the released best estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray
        """
        check_is_fitted(self)
        return self.best_estimator_.transform(X)

    @available_if(_estimator_has("inverse_transform"))
    def inverse_transform(self, X):
        """Inverse transform with the released best estimator.

        Parameters
        ----------
        X : array-like

        Returns
        -------
        X_original : ndarray
        """
        check_is_fitted(self)
        return self.best_estimator_.inverse_transform(X)

    @available_if(_estimator_has("fit"))  # every estimator has fit: checks a model is released
    def score(self, X, y=None, **params):
        """Score of the released best estimator on ``X``, with the search's scorer.

        Not private: call it on data whose privacy does not matter (a public test set).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), default=None
        **params : dict
            Passed to the scorer; only with metadata routing enabled, as in scikit-learn.

        Returns
        -------
        score : float
        """
        check_is_fitted(self)
        _raise_for_params(params, self, "score")
        score_params = (process_routing(self, "score", **params).scorer["score"]
                        if _routing_enabled() else {})
        if y is None:  # scorer(estimator, X) for unsupervised scorers, as in fit
            score = self.scorer_(self.best_estimator_, X, **score_params)
        else:
            score = self.scorer_(self.best_estimator_, X, y, **score_params)
        if isinstance(score, Mapping) and self._metric_key() is not None:
            return score[self._metric_key()]  # a scorer returning several metrics
        return score

    def _metric_key(self):
        """The metric to take from a scorer that returns a dict of them, or None."""
        return None
