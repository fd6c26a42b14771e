"""Fitting on the private data: measured spends, captured warnings, scrubbed errors.

Every fit that reads the private data (partition fits, randomized-search trials, the refit)
runs inside :func:`private_fit_context`:

- nested joblib parallelism is made sequential, so a step's spend or ``PrivacyLeakWarning``
  cannot happen in another process, where it would go unseen (the search's own ``n_jobs`` is
  where parallelism goes; the fit itself stays in one process and one thread);
- what it prints, to Python's streams or to the file descriptors, is discarded
  (:func:`silenced_output`): it can quote the data;
- every warning is recorded, never shown: whether a fit warns can depend on one record. A
  released fit's ``PrivacyLeakWarning`` is an error; the rest are withheld, and
  :func:`withheld_notice` says so, whether or not any was raised (an ordinary warning:
  Python's default filters show it once per line that calls ``fit``);
- a failing released fit is re-raised as :class:`~skdptune.exceptions.PrivateFitError`, naming
  the step and the exception type but not its message, which can quote the data.

:func:`reveal_fit_messages` lifts the last three, for debugging on non-sensitive data.
"""

import contextvars
import ctypes
import io
import os
import sys
import threading
import warnings
from contextlib import contextmanager, nullcontext, redirect_stderr, redirect_stdout
from copy import deepcopy

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import PCA as DPPCA
from diffprivlib.utils import PrivacyLeakWarning
from joblib import parallel_config
from sklearn.base import BaseEstimator, clone

from ._distributed._stand_in import OnWorkers
from ._stack import user_stacklevel
from .exceptions import FitWarningsWithheld, PrivateFitError

#: warnings.catch_warnings swaps process-wide state and is not thread-safe: a fit's "record
#: everything" in one thread would otherwise capture (or hide) another thread's refit leak.
#: Every fit on private data holds this lock. Nested joblib calls inside the fit are made
#: sequential, so a fit holding the lock never waits on another task (under joblib's dask
#: backend a nested call would otherwise wait on dask while the next task blocks on the lock).
WARNINGS_LOCK = threading.RLock()

_REVEAL = contextvars.ContextVar("skdptune_reveal_fit_messages", default=False)


class MeasuringAccountant(BudgetAccountant):
    """A fresh, unlimited accountant that measures a fit's spend and survives ``clone``.

    ``copy`` and ``deepcopy`` return the object itself. scikit-learn's ``clone`` deep-copies
    non-estimator parameters, so a meta-estimator that clones its steps during ``fit``
    (``ColumnTransformer``, ``FeatureUnion``) would otherwise send their spends to copies that
    nobody reads, and the fit would be measured as spending less than it did. Copies made by
    pickling (another process) are not covered: fits run in one process
    (:func:`private_fit_context`).
    """

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


@contextmanager
def reveal_fit_messages():
    """Show what fits on the private data would otherwise withhold. Non-sensitive data only.

    Inside this context, a search re-raises a failed refit (or released trial) with its
    original exception, and re-emits the warnings raised by partition fits, trials and the
    refit. Both can quote records of the data, and whether they occur can depend on one
    record, so they are not covered by the privacy guarantee: use this to debug a pipeline on
    public or synthetic data of the same shape, never on the private data.

    Examples
    --------
    >>> import skdptune
    >>> with skdptune.reveal_fit_messages():
    ...     pass  # search.fit(X_public, y_public)
    """
    token = _REVEAL.set(True)
    try:
        yield
    finally:
        _REVEAL.reset(token)


def revealing():
    """Whether :func:`reveal_fit_messages` is active in this thread (read by the parent)."""
    return _REVEAL.get()


@contextmanager
def private_fit_context(reveal=None):
    """The context of every fit on private data; yields the list of recorded warnings.

    What the fit prints is discarded (:func:`silenced_output`) unless ``reveal`` (by default,
    whether :func:`reveal_fit_messages` is active in this thread; a joblib worker is told by
    its caller, since the context does not travel to workers).
    """
    reveal = revealing() if reveal is None else reveal
    with WARNINGS_LOCK, warnings.catch_warnings(record=True) as caught, parallel_config(
        backend="sequential"
    ), (nullcontext() if reveal else silenced_output()):
        warnings.simplefilter("always")
        yield caught


def _flush_c_streams():
    """Flush the C library's stdio buffers (printf from compiled code), where there is one."""
    if _LIBC is not None:
        _LIBC.fflush(None)


def _load_libc():
    try:
        return ctypes.CDLL(None)  # the running process's C library (POSIX)
    except OSError:
        return None


_LIBC = _load_libc() if os.name == "posix" else None


@contextmanager
def silenced_output():
    """Discard everything written to standard output and error, down to the file descriptors.

    A fit on private data can print what it computes from the records (``verbose`` training
    losses of scikit-learn's ``MLPClassifier`` or ``SGDClassifier``, objective values of
    scipy's optimisers), and whether it prints can depend on one record. So every fit on
    private data runs with Python's ``sys.stdout``/``sys.stderr`` replaced (prints, also in
    notebooks, whose streams are not file descriptors) and file descriptors 1 and 2 pointed at
    the null device (compiled code's ``printf`` and direct writes), the C library's buffers
    flushed before they are restored. Process-wide state, so it is entered under
    :data:`WARNINGS_LOCK`, which every fit on private data holds.
    """
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    _flush_c_streams()
    saved = []
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            saved.append((fd, os.dup(fd)))
            os.dup2(devnull, fd)
        os.close(devnull)
    except OSError:
        pass  # no such descriptors (an embedded interpreter): the Python streams still are
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            yield
    finally:
        _flush_c_streams()
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)


_WITHHELD_NOTICE = (
    "Warnings raised while fitting on the private data (partition fits, trials, refit) are "
    "not shown: they, and even whether there were any, can depend on a single record. To see "
    "them, fit on non-sensitive data inside skdptune.reveal_fit_messages()."
)

#: Where the notice has been shown under the filter actions that show a warning once per
#: place: ``("default", filename, lineno)``, ``("module", filename)``, ``("once",)``.
#: Python keeps this in each module's ``__warningregistry__``, but clears that registry
#: whenever the filters change, and every fit on private data changes them
#: (:func:`private_fit_context`): without this record the notice would repeat at every fit.
_NOTICE_SHOWN = set()
_NOTICE_LOCK = threading.Lock()


def withheld_notice():
    """Say that warnings of fits on private data are withheld (a data-independent notice).

    An ordinary warning, subject to the user's warning filters: under Python's default
    filters it is shown once per line that calls ``fit`` (as any warning), with
    ``simplefilter("always")`` at every fit. Whether it is shown depends on the filters and
    on earlier calls only, never on the data. It points at the user's frame
    (``skdptune._stack.user_stacklevel``).
    """
    if revealing():
        return
    # The user's frame: stacklevel 1 of warnings.warn is this function, so warn's
    # stacklevel is _getframe(stacklevel - 1).
    stacklevel = user_stacklevel()
    frame = sys._getframe(stacklevel - 1)
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    action = _filter_action(_WITHHELD_NOTICE, FitWarningsWithheld,
                            frame.f_globals.get("__name__", "<string>"), lineno)
    place = {"default": ("default", filename, lineno), "module": ("module", filename),
             "once": ("once",)}.get(action)
    if place is not None:
        with _NOTICE_LOCK:
            if place in _NOTICE_SHOWN:
                return
            _NOTICE_SHOWN.add(place)
    warnings.warn(_WITHHELD_NOTICE, FitWarningsWithheld, stacklevel=stacklevel)


def _filter_action(message, category, module, lineno):
    """The action of the first warning filter that matches, as :func:`warnings.warn_explicit`
    chooses it (``warnings.defaultaction`` when none does)."""
    for action, text, filter_category, filter_module, filter_lineno in warnings.filters:
        if ((text is None or text.match(message)) and issubclass(category, filter_category)
                and (filter_module is None or filter_module.match(module))
                and (filter_lineno == 0 or filter_lineno == lineno)):
            return action
    return warnings.defaultaction


def reemit(recorded):
    """Re-emit recorded ``(category, message)`` pairs (only under :func:`reveal_fit_messages`)."""
    for category, message in recorded:
        warnings.warn(message, category, stacklevel=user_stacklevel())


def plain_warnings(caught):
    """``(category, message)`` pairs of recorded warnings: picklable, for leaving a worker."""
    return [(warning.category, str(warning.message)) for warning in caught]


def with_params(estimator, params, source="param_grid candidate"):
    """A clone of ``estimator`` with ``params`` set; names the setting on a bad parameter.

    Estimator-valued parameters are cloned and the others deep-copied, as scikit-learn's
    searches do: the grid's own objects are never fitted (on private data, and then shown in
    ``cv_results_``). An empty setting (``param_grid={}``) leaves the clone as it is:
    ``set_params()`` without arguments is not part of the estimator contract (scikit-learn's
    own mocking estimators reject it).
    """
    cloned = clone(estimator)
    if not params:
        return cloned
    try:
        return cloned.set_params(
            **{name: clone(value, safe=False) for name, value in params.items()}
        )
    except ValueError as error:
        raise ValueError(f"{source} {params} is invalid: {error}") from error


def configuration_key(value):
    """A hashable key of a parameter value: equal keys configure the same fit.

    Keys compare as the values do (``1``, ``1.0`` and ``np.float64(1)`` are one key),
    except that booleans are told from numbers (``True == 1`` in Python); estimators by
    class and parameters, looked into; sequences and arrays element by element (an array as
    the nested lists it holds); dicts by their items. An ``accountant`` is left out: the
    search gives every fit its own (:func:`set_accountants`). Any other unhashable value is
    its own key (never merged). Hashing keeps merging linear in the number of candidates.
    The plan merges repeated candidates by it; the rehearsal fits a pipeline prefix once per
    key.
    """
    if isinstance(value, BaseEstimator):
        params = value.get_params(deep=False)
        return (type(value), tuple(sorted((name, configuration_key(param))
                                          for name, param in params.items()
                                          if name != "accountant")))
    if isinstance(value, (bool, np.bool_)):
        return ("bool", bool(value))
    if isinstance(value, np.ndarray):  # as the nested lists it holds: bounds as either
        return configuration_key(value.tolist())
    if isinstance(value, (tuple, list)):
        return ("sequence", tuple(configuration_key(item) for item in value))
    if isinstance(value, dict):
        return ("dict", frozenset((configuration_key(k), configuration_key(v))
                                  for k, v in value.items()))
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return value


def set_accountants(estimator, accountant):
    """Give every (nested) step that takes an ``accountant`` the given accountant."""
    keys = [
        key for key in estimator.get_params(deep=True)
        if key == "accountant" or key.endswith("__accountant")
    ]
    if keys:
        estimator.set_params(**{key: accountant for key in keys})


def fit(estimator, X, y, fit_params):
    """``estimator.fit`` with or without ``y``; on dask input, the distributed refit."""
    if isinstance(X, OnWorkers):
        return X.refit(estimator, y)
    if y is None:
        return estimator.fit(X, **fit_params)
    return estimator.fit(X, y, **fit_params)


#: Steps whose fit changes the array it is given, each with when: a released fit then gets
#: a copy of ``X``, so the user's data are left as they were. diffprivlib 0.6.6's
#: ``PCA(centered=False)`` subtracts its DP mean from a float array in place while fitting.
MUTATES_INPUT = {
    DPPCA: lambda step: not step.centered,
}


def mutates_input(estimator):
    """Whether fitting ``estimator`` (or a step nested in it) changes the ``X`` it is given
    (:data:`MUTATES_INPUT`)."""
    steps = [estimator] + [value for value in estimator.get_params(deep=True).values()
                           if isinstance(value, BaseEstimator)]
    return any(type(step) in MUTATES_INPUT and MUTATES_INPUT[type(step)](step)
               for step in steps)


def fit_for_release(estimator, X, y, fit_params, accountant):
    """Fit a model that will be released, measuring its spend on ``accountant``.

    Parameters
    ----------
    estimator : estimator
        A configuration the refit gate accepted; fitted in place.
    X, y, fit_params
        The data and fit parameters.
    accountant : MeasuringAccountant
        Given to every step that takes an accountant; read it for the spend, also after a
        failure.

    Returns
    -------
    leak : str or None
        The message of the first ``PrivacyLeakWarning``, or None. The caller refuses a leak.

    Raises
    ------
    PrivateFitError
        When the fit raises ``Exception``; names the step and the exception type but not the
        message (raised outside the handler, so the original is not attached as context).
        Under :func:`reveal_fit_messages` the original exception propagates instead.
    """
    set_accountants(estimator, accountant)
    if mutates_input(estimator):
        X = X.copy() if hasattr(X, "copy") else deepcopy(X)
    failure = None
    caught = []
    try:
        with private_fit_context() as caught:
            fit(estimator, X, y, fit_params)
    except Exception as error:
        if revealing():
            raise
        failure = describe_failure(error, estimator)
    if failure is not None:
        raise PrivateFitError(
            f"{failure}. Its message is withheld because it can quote the private data; "
            "reproduce the failure on non-sensitive data inside "
            "skdptune.reveal_fit_messages() to see it."
        )
    leaks = [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    if revealing():
        reemit(plain_warnings(caught))
    return leaks[0] if leaks else None


def describe_failure(error, estimator):
    """``"ValueError in step 'name' (Class)"``: the failing step and type, never the message.

    The step is the innermost estimator on the traceback, named by its parameter path in
    ``estimator`` (matched by identity, else by class when one nested step has that class:
    ``ColumnTransformer`` fits clones of its branches).
    """
    names = {id(estimator): "estimator"}
    by_class = {}
    for name, value in estimator.get_params(deep=True).items():
        if isinstance(value, BaseEstimator):
            names[id(value)] = name
            by_class.setdefault(type(value), []).append(name)
    failing = None
    traceback = error.__traceback__
    while traceback is not None:
        candidate = traceback.tb_frame.f_locals.get("self")
        if isinstance(candidate, BaseEstimator):
            failing = candidate
        traceback = traceback.tb_next
    kind = type(error).__name__
    if failing is None:
        return f"The fit of {type(estimator).__name__} raised {kind}"
    name = names.get(id(failing))
    if name is None and len(by_class.get(type(failing), ())) == 1:
        name = by_class[type(failing)][0]
    if name == "estimator":
        name = None
    where = f"step {name!r} ({type(failing).__name__})" if name else type(failing).__name__
    return f"The fit of {type(estimator).__name__} raised {kind} in {where}"
