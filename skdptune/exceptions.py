"""Exceptions and warnings of skdptune."""

__all__ = [
    "AccountantCopyError",
    "FitWarningsWithheld",
    "GateError",
    "NoisySelectionWarning",
    "PrivateFitError",
    "ScorerOutputError",
    "SelectionDeclinedWarning",
    "UselessModelWarning",
]


class GateError(ValueError):
    """A configuration that cannot be released privately, refused before any data are read.

    Raised by the refit gate (:mod:`skdptune.gate`) with the step, the reason and the remedy.
    """


class ScorerOutputError(ValueError):
    """A scorer returned something other than one number for the selection's metric.

    For example a dict of metrics when no ``refit=<metric name>`` says which one to select on,
    or a dict without that key. It is a misconfiguration, not a failure of the estimator on a
    partition, so it is raised (before the selection: nothing is charged) even with a numeric
    ``error_score``, which would otherwise turn every partition into ``error_score`` and the
    selection into noise. A ``ValueError``, as scikit-learn's own "scoring must return a
    number".
    """


class PrivateFitError(RuntimeError):
    """A fit on the private data failed; its original message is withheld.

    Exception messages can quote the data (``Found unknown categories ['ssn=123-45-6789']``),
    so the search re-raises a failed refit with the step and the exception type only. To see
    the original, reproduce the failure on non-sensitive data inside
    :func:`skdptune.reveal_fit_messages`.
    """


class AccountantCopyError(RuntimeError):
    """The search's accountant is a copy, so charging it would not charge the user's.

    A search pickled into another process (``cross_val_score(search, ..., n_jobs=2)``),
    deep-copied, or inherited by a process forked from the user's (``multiprocessing`` with the
    ``fork`` start method, where no unpickling runs) arrives with a copy of its accountant; so
    does a diffprivlib ``BudgetAccountant`` sent to another process on its own and handed to a
    search built there, whichever process pickled it and whether or not it had imported
    skdptune: a search charges only an accountant constructed in its own process after
    skdptune was imported there (or affirmed, below), so one constructed before that import
    is refused too. Charging the copy would leave the user's accountant short of what was spent, silently. A
    shallow ``copy.copy`` shares the accountant and is not a copy of it. To charge a copy on
    purpose (it is that process's own accountant), set it again with
    ``search.set_params(accountant=...)``.
    """


class FitWarningsWithheld(UserWarning):
    """Notice that warnings raised while fitting on the private data were not shown.

    It is issued by every fit, whether or not any warning was raised: whether one was can
    depend on a single record, so even its existence is not shown. An ordinary warning:
    Python's default filters show it once per line that calls ``fit``,
    ``warnings.simplefilter("always", FitWarningsWithheld)`` at every fit.
    """


class NoisySelectionWarning(UserWarning):
    """The selection's noise will swamp any plausible gap between candidates.

    Issued before the data are touched, from public quantities (see
    :meth:`skdptune.PrivateGridSearchCV.forecast`).
    """


class SelectionDeclinedWarning(UserWarning):
    """The search releases its default candidate without selecting.

    Decided before the data from public quantities (``skdptune/_default_policy.py``): no share
    of the budget would let the selection resolve a lead worth what it takes from the refit,
    so the default (by default the estimator as given) is refit with the whole budget. More
    records, a larger epsilon or a smaller grid let it select; ``selection_share=`` forces a
    share.
    """


class UselessModelWarning(UserWarning):
    """The released outputs show the model is no better than a trivial one.

    Issued at the end of ``fit`` by both searches, decided from DP outputs and public
    parameters only (the grid search's ``trivial_lead_``, the randomized search's
    ``best_score_``, the released ``best_estimator_`` and its ``classes_``, declared bounds,
    the number of records): post-processing, it costs no privacy. A model useful by the
    rule's margin is warned with probability at most 2.96 %, and the message states how
    often a useless one goes unwarned; where the library knows no trivial model for the
    score, it says nothing. See ``skdptune/_trivial.py`` for the rules and their rates.

    A grid search given ``selection_epsilon`` buys ``trivial_lead_`` with ``check_share``
    of ``selection_epsilon`` (its refit spends what its estimator declares), so a poor
    model found that way is warned as one found with ``epsilon``; ``check_share=0`` buys
    no estimate, and then only a constant linear classifier is reported.
    """

