"""Checks decided before the data are read: parameters, fit parameters, the type of the input.

Everything here raises before the accountant is checked, so a mistake costs nothing. The checks
look at parameters, at the type and shape of ``X`` and ``y``, and (like every scikit-learn and
diffprivlib ``fit``) at whether the input is valid at all (NaN, a single class): see "What an
error reveals" in the docs' faults page.
"""

import difflib
import math
import inspect
import warnings
from numbers import Real

import numpy as np
from diffprivlib.utils import PrivacyLeakWarning
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, is_classifier
from sklearn.exceptions import DataConversionWarning
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils import assert_all_finite, check_array, get_tags
from sklearn.utils.metadata_routing import process_routing
from sklearn.utils.multiclass import check_classification_targets

from ._distributed._stand_in import OnWorkers
from ._stack import user_stacklevel
from ._sklearn_compat import (
    _get_column_indices,
    _get_feature_names,
    _num_features,
    _PassthroughScorer,
    _routing_enabled,
)

_GROUPS_MESSAGE = (
    "fit(..., groups=...) is not supported: the search draws each record's partition "
    "independently at random (there is no splitter to take groups), and its guarantee is per "
    "record. If one individual contributes several records (a group), the guarantee per "
    "individual is weaker than privacy_spent_ (group privacy: about the group's size times "
    "epsilon). Remove groups, or keep one record per individual."
)


def raise_refusals(errors, contexts=None):
    """Raise one error that lists every refusal in ``errors``, of the first one's class.

    A configuration is checked whole before the data, and every problem found is reported at
    once, each with its own remedy, rather than one per run; the exception's class is the
    first refusal's (``GateError``, ``ValueError``, ``TypeError``...), so code that handles
    that error still does. A combined error keeps its items in ``refusals`` (``(key,
    message)`` pairs), so that combining combined errors lists each item once; an error's key
    is its ``refusal_key`` when it has one (the refit gate's ``(step path, reason)``), else its
    message without its context.

    Parameters
    ----------
    errors : list of TypeError or ValueError
        The refusals, in the order the checks ran; nothing is raised when it is empty, and a
        single refusal is raised as it is.
    contexts : list of str or None, default=None
        The configuration each error's message names (e.g. ``"param_grid candidate
        {'C': 1}"``): a problem that differs between configurations only by that name, or
        that the gate raises for the same step and reason (a step every candidate shares), is
        listed once, for the first configuration.

    Raises
    ------
    TypeError or ValueError
        When ``errors`` is not empty.
    """
    messages = {}
    for index, error in enumerate(errors):
        key = getattr(error, "refusal_key", None)  # the gate's: (step path, reason)
        if key is None:
            key = str(error).replace(contexts[index], "") if contexts else str(error)
        for item_key, message in getattr(error, "refusals", ((key, str(error)),)):
            messages.setdefault(item_key, message)
    if not messages:
        return
    if len(messages) == 1:
        raise errors[0]
    items = "\n".join(f"  {number}. {message}"
                      for number, message in enumerate(messages.values(), start=1))
    combined = type(errors[0])(
        f"{len(messages)} problems, all found before any data were read (fix each as it says; "
        f"nothing was charged):\n{items}"
    )
    combined.refusals = tuple(messages.items())
    raise combined from None


def collect_refusals(checks, contexts=None):
    """Run every check, then raise what they refused together (:func:`raise_refusals`).

    Parameters
    ----------
    checks : iterable of callable
        Checks that do not depend on each other, each called with no argument; a check
        refuses by raising ``TypeError`` or ``ValueError``.
    contexts : list of str or None, default=None
        The configuration each check examines (one per check, as in
        :func:`raise_refusals`), for checks of several configurations; None for checks of
        one.

    Returns
    -------
    results : list
        Each check's return value, when none refused.
    """
    checks = list(checks)
    results, errors, refused_in = [], [], []
    for check, context in zip(checks, contexts or [None] * len(checks)):
        try:
            results.append(check())
        except (TypeError, ValueError) as error:
            errors.append(error)
            refused_in.append(context)
    raise_refusals(errors, refused_in if contexts is not None else None)
    return results


def refuse_keywords(search, keywords, splitting):
    """Raise ``TypeError`` for keywords a search's ``__init__`` does not take, saying why,
    every one at once (:func:`raise_refusals`).

    The searches take ``**keywords`` only to explain the ones a ``GridSearchCV`` user reaches
    for (``cv``, ``n_splits``, ``return_train_score``) and to suggest the closest parameter
    for a misspelt one; scikit-learn's ``get_params`` ignores ``**keywords``. Decided from the
    parameters alone, before any data.

    Parameters
    ----------
    search : BasePrivateSearch
        The search being constructed (for its name and parameters).
    keywords : dict
        The unexpected keyword arguments.
    splitting : str
        How this search splits the data and which parameter to use instead of ``cv``;
        ``{value}`` is replaced by the value of ``cv`` when it is an int (else ``...``).

    Raises
    ------
    TypeError
        Always, when ``keywords`` is not empty.
    """
    if not keywords:
        return
    name = type(search).__name__
    valid = sorted(search._get_param_names())
    errors = []
    for keyword, value in keywords.items():
        if keyword in ("cv", "n_splits"):
            count = value if isinstance(value, int) and not isinstance(value, bool) else "..."
            message = (f"{name} has no {keyword} parameter (got {keyword}={value!r}): there is "
                       f"no splitter. {splitting.format(value=count)}")
        elif keyword == "return_train_score":
            message = (
                f"{name} has no return_train_score parameter (got return_train_score="
                f"{value!r}): cv_results_ holds no per-candidate score, train or test, because "
                "none is differentially private; best_score_ is the search's DP estimate of "
                "the selected candidate's score."
            )
        else:
            close = difflib.get_close_matches(keyword, valid, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else "."
            message = (f"{name}.__init__() got an unexpected keyword argument {keyword!r} "
                       f"({keyword}={value!r}){hint} Its parameters are {valid}.")
        errors.append(TypeError(message))
    raise_refusals(errors)


def validate_candidate(candidate, context):
    """Run scikit-learn's parameter validation on every (nested) step of a candidate.

    ``_validate_params`` checks each step's ``_parameter_constraints`` without data; a fit
    would otherwise raise the same error on every partition, turning the selection into noise.
    """
    steps = [candidate] + [
        value for value in candidate.get_params(deep=True).values()
        if isinstance(value, BaseEstimator)
    ]
    errors = []
    for step in steps:
        if hasattr(type(step), "_parameter_constraints"):
            try:
                step._validate_params()
            except (TypeError, ValueError) as error:
                errors.append(type(error)(f"{context}: {error}"))
    raise_refusals(errors)


def check_record_wise(candidate, context):
    """Refuse an estimator that takes ``X`` as a pairwise matrix (``kernel="precomputed"``,
    ``metric="precomputed"``: scikit-learn's ``pairwise`` tag).

    The guarantee's unit is one record, a row of ``X``. In a precomputed kernel or distance
    matrix a record is also a column, an entry of every other record's row, so replacing
    one record changes every partition at once and the utilities' sensitivity of
    ``1 / n_partitions`` no longer holds. Decided from the parameters, before any data.
    """
    if not get_tags(first_step(candidate)).input_tags.pairwise:
        return
    named = [f"{name}='precomputed'" for name, value in candidate.get_params(deep=True).items()
             if isinstance(value, str) and value == "precomputed"]
    described = ", ".join(named) or "its pairwise tag"
    raise ValueError(
        f"{context}: {type(candidate).__name__} takes X as a precomputed kernel or distance "
        f"matrix ({described}), which a private search cannot use. Its privacy unit is one "
        "record, a row of X; in a pairwise matrix a record is also a column, an entry of every "
        "other record's row, so changing one record changes every partition and the "
        "1/n_partitions sensitivity of the utilities does not hold. Pass the features instead "
        "and let the estimator compute the kernel or distances (e.g. kernel='rbf', "
        "metric='euclidean')."
    )


def route_fit_params(search, estimator, scorer, params, *, weighted_scoring=True,
                     scorer_name=None):
    """Split ``fit``'s ``**params`` between the estimator's ``fit`` and the scorer.

    As scikit-learn 1.7's searches do. With metadata routing enabled
    (``sklearn.set_config(enable_metadata_routing=True)``), through ``search``'s router
    (:meth:`~skdptune.PrivateGridSearchCV.get_metadata_routing`): a parameter that no
    consumer requested raises before the data. Otherwise every parameter goes to ``fit`` (each
    name must be accepted by the estimator's ``fit``: one it rejects would fail every
    partition fit, silently, and then the refit, after the selection was charged), and a
    ``sample_weight`` also goes to the scorer when the scorer accepts it (scikit-learn warns
    when it does not; so does this). ``groups`` is refused: there is no splitter, and the
    guarantee is per record.

    Parameters
    ----------
    search : BasePrivateSearch
        The search whose router routes the parameters.
    estimator : estimator
        The (unfitted) estimator being tuned.
    scorer : callable
        The scorer that computes the utilities.
    params : dict
        ``fit``'s keyword arguments.
    weighted_scoring : bool, default=True
        Whether the search can pass ``sample_weight`` to the scorer. When it cannot (the
        randomized search's held-out sum needs each record's utility in ``[0, 1]``), a
        ``sample_weight`` reaches the fits only, with a warning.
    scorer_name : str or None, default=None
        The scorer's name among several metrics, for the warning.

    Returns
    -------
    fit_params, score_params : dict
        Sample-aligned values are sliced later, to the rows each fit or score sees.
    """
    if "groups" in params:
        raise ValueError(_GROUPS_MESSAGE)
    if _routing_enabled():
        routed = process_routing(search, "fit", **params)
        return dict(routed.estimator.fit), dict(routed.scorer.get("score", {}))
    for name in params:
        _check_accepts(estimator, name, name)
    score_params = {}
    if params.get("sample_weight") is not None:
        if not weighted_scoring:
            warnings.warn(
                f"{type(search).__name__} passes sample_weight to the fits only: held-out "
                "records are scored unweighted, because the noisy held-out sum needs every "
                "record's utility in [0, 1] (sensitivity 1).",
                UserWarning, stacklevel=user_stacklevel(),
            )
        elif _scorer_accepts_sample_weight(scorer, search, scorer_name):
            score_params["sample_weight"] = params["sample_weight"]
    return dict(params), score_params


def _scorer_accepts_sample_weight(scorer, search, name):
    """scikit-learn's ``BaseSearchCV._check_scorers_accept_sample_weight``, for one scorer."""
    if hasattr(scorer, "_accept_sample_weight"):
        accepts = scorer._accept_sample_weight()
    else:
        accepts = "sample_weight" in inspect.signature(scorer).parameters
    if not accepts:
        warnings.warn(
            f"The scoring {scorer if name is None else f'{name}={scorer}'} does not support "
            "sample_weight, which may lead to "
            f"statistically incorrect results when fitting {type(search).__name__} with "
            "sample_weight.",
            UserWarning, stacklevel=user_stacklevel(),
        )
    return accepts


def _check_accepts(estimator, name, full_name):
    if isinstance(estimator, Pipeline):
        step_name, _, rest = name.partition("__")
        steps = dict(estimator.steps)
        if not rest or step_name not in steps or steps[step_name] in (None, "passthrough"):
            raise ValueError(
                f"fit parameter {full_name!r} is not accepted: Pipeline fit parameters are "
                f"named <step>__<parameter>, with <step> one of {list(steps)} (e.g. "
                f"{estimator.steps[-1][0]}__sample_weight)."
            )
        return _check_accepts(steps[step_name], rest, full_name)
    parameters = inspect.signature(estimator.fit).parameters
    if name in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    ):
        return None
    accepted = [p for p in parameters if p not in ("X", "y")]
    raise ValueError(
        f"fit parameter {full_name!r} is not accepted by {type(estimator).__name__}.fit, which "
        f"takes {accepted or 'no parameter besides X and y'}; remove it."
    )


def check_scorer_applies(scorer, estimator, params):
    """Refuse a scorer that needs a method (``predict_proba``, ``score``...) the candidate
    lacks.

    Otherwise every partition score would raise and silently become ``error_score``. Decided
    from the unfitted candidate (``available_if`` answers before fit), so no data is touched.
    """
    if isinstance(scorer, _PassthroughScorer) and not hasattr(estimator, "score"):
        # scoring=None on a candidate whose step (swapped in by the grid) has no score method.
        raise TypeError(
            "If no scoring is specified, the estimator passed should have a 'score' method. "
            f"{type(estimator).__name__} with {params} does not: pass scoring=..."
        )
    if hasattr(scorer, "check_applies"):  # skdptune.utility.BoundedSquaredErrorScorer
        scorer.check_applies(estimator, params)
    # scikit-learn scorers name the prediction methods they can use (any one suffices).
    methods = getattr(scorer, "_response_method", None)
    if methods is None:
        return
    methods = (methods,) if isinstance(methods, str) else tuple(methods)
    if not any(hasattr(estimator, method) for method in methods):
        raise ValueError(
            f"The scorer {scorer!r} needs {' or '.join(methods)}, which "
            f"{type(estimator).__name__} with {params} does not provide. Use a scorer based on "
            "predict (e.g. 'accuracy'), or an estimator (or parameters) that provide it."
        )


def check_input_data(X, y, estimator, *, check_sparse=True):
    """scikit-learn's input validation, before anything is charged.

    Like the checks in every estimator's ``fit`` (and diffprivlib's), these look at the data
    and reveal, by raising, one non-private fact: that the data are invalid for the estimator.
    They raise before the accountant is checked, so nothing is charged (see the faults page).

    ``check_sparse=False`` leaves sparse input to the refit gate, which follows it through
    every step.
    """
    if isinstance(X, OnWorkers):  # dask input: the same checks on the workers
        return X.check(y, estimator)
    name = type(estimator).__name__
    if check_sparse and issparse(X) and not accepts_sparse(estimator):
        raise TypeError(
            f"X is a sparse matrix, but {name} does not accept sparse input (diffprivlib "
            "models need dense arrays). Densify X (X.toarray()) or put a step that accepts "
            "sparse input first."
        )
    _check_finite_X(X, estimator)
    if y is not None:
        try:
            assert_all_finite(y, input_name="y")
        except ValueError as error:
            raise ValueError(
                f"y contains NaN or infinity ({error}), and {name} does not accept them. "
                "Remove those records before fit."
            ) from None
    if is_diffprivlib_model(first_step(estimator)):
        _check_numeric(X)
    # type_of_target cannot tell for y of 3 or more dimensions: left to the estimator.
    if y is not None and is_classifier(estimator) and np.ndim(np.asarray(y)) <= 2:
        check_classification_targets(y)
    _check_declared_classes(y, estimator)  # class labels first: a continuous y says so
    if y is not None and np.ndim(np.asarray(y)) == 2 and np.shape(y)[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the "
            "shape of y to (n_samples,), for example using ravel().",
            DataConversionWarning, stacklevel=user_stacklevel(),
        )
    # np.asarray first: np.ndim on an array-like that is not an array (a list, or scikit-learn's
    # _NotAnArray) goes through __array_function__, which such objects may refuse.
    if y is not None and is_classifier(estimator) and np.asarray(y).ndim == 1:
        if np.unique(np.asarray(y)).size < 2:
            raise ValueError(
                f"y has a single class, and {name} is a classifier: one class leaves "
                "nothing to tune. Pass y with at least two classes."
            )


#: How a step's fit treats non-finite values (NaN, infinity) in the ``X`` it receives, where
#: its scikit-learn ``allow_nan`` tag is wrong or says too little: a function of the step
#: giving :data:`REJECTS` (its fit raises), :data:`REMOVES` (its output is finite) or
#: :data:`PASSES` (its output keeps them where its input had them), given whether the
#: non-finite values include an infinity. Every diffprivlib model (and skdptune's, which
#: derive from them) is taken to reject them, whatever its tag says: diffprivlib's
#: ``StandardScaler`` inherits ``allow_nan`` from scikit-learn's but its fit refuses NaN.
#: (skdptune's own models clip an infinity to their declared bounds, for the infinities an
#: earlier step's overflow makes, ``skdptune._clipping``; one in ``X`` itself is still
#: refused here, as a mistake in the input.) Compositions are walked
#: (:func:`_non_finite_outcome`). A step in neither is judged by its tag: ``allow_nan=False``
#: rejects; ``True`` accepts (what it outputs is its own business). Adding a class is one row.
REJECTS, REMOVES, PASSES = "rejects", "removes", "passes"
NON_FINITE_HANDLING = {
    # Imputes the NaN it is told to (missing_values=np.nan) and raises on infinity.
    SimpleImputer: lambda step, infinite: (
        REMOVES if _is_nan(step.missing_values) and not infinite else REJECTS),
    # The identity (func=None): the values pass through; any other func is the user's.
    FunctionTransformer: lambda step, infinite: PASSES if step.func is None else None,
}


def _is_nan(value):
    return isinstance(value, float) and math.isnan(value)


def _check_finite_X(X, estimator):
    """Refuse non-finite values in ``X`` that a step of ``estimator`` would reject.

    Decided from the table :data:`NON_FINITE_HANDLING` and the steps' tags, following ``X``
    through pipelines and column transformers (a column's values reach only the branches that
    select it), before the accountant: without this, every partition fit would fail, the
    selection would run on constant utilities and be charged. Like scikit-learn's own input
    validation, the refusal reveals that ``X`` holds such values (see the faults page); it
    names the step, not the values.
    """
    mask = _non_finite_columns(X)
    if mask is None or not mask.any():
        return
    infinite = _has_infinity(X)
    outcome, path = _non_finite_outcome(estimator, X, mask, infinite, "")
    if outcome == REJECTS:
        where = f"step {path!r} ({type(_step_at(estimator, path)).__name__})" if path else (
            type(estimator).__name__)
        raise ValueError(
            f"X contains NaN or infinity, and {where}, which receives them, does not accept "
            "them (its fit would fail on every partition). Remove or impute those values "
            "before fit, or impute them inside the pipeline with "
            "SimpleImputer(strategy='constant', fill_value=...) first (an imputer must not "
            "learn its fill values from the private data)."
        )


def _step_at(estimator, path):
    return estimator.get_params(deep=True)[path] if path else estimator


def _non_finite_columns(X):
    """Which columns of ``X`` hold NaN or infinity (a boolean array), or None when ``X`` is
    not a table of numbers or objects (text, a list of documents)."""
    if issparse(X):
        data = np.asarray(X.data)
        if data.dtype.kind not in "fc" or np.all(np.isfinite(data)):
            return np.zeros(X.shape[1], dtype=bool)
        return np.ones(X.shape[1], dtype=bool)  # where they are is the steps' business
    if hasattr(X, "columns"):  # a data frame: NaN (or None) in any column, infinity in numbers
        import pandas as pd

        frame = X.replace([np.inf, -np.inf], np.nan) if _has_infinity(X) else X
        return np.asarray(pd.isna(frame).any(axis=0), dtype=bool)
    try:
        values = np.asarray(X)
    except (TypeError, ValueError):
        return None
    if values.ndim != 2:
        return None
    if values.dtype.kind in "biu":
        return np.zeros(values.shape[1], dtype=bool)
    if values.dtype.kind in "fc":
        return ~np.all(np.isfinite(values), axis=0)
    if values.dtype.kind == "O":
        return np.array([any(_missing(value) for value in column) for column in values.T],
                        dtype=bool)
    return None


def _missing(value):
    return value is None or (isinstance(value, (float, np.floating)) and not np.isfinite(value))


def _has_infinity(X):
    if issparse(X):
        return bool(np.any(np.isinf(X.data))) if X.data.dtype.kind in "fc" else False
    if hasattr(X, "select_dtypes"):
        numbers = X.select_dtypes(include="number").to_numpy(dtype=float)
        return bool(np.isinf(numbers).any())
    try:
        values = np.asarray(X)
    except (TypeError, ValueError):
        return False
    if values.dtype.kind in "fc":
        return bool(np.isinf(values).any())
    if values.dtype.kind == "O":
        return any(isinstance(value, (float, np.floating)) and np.isinf(value)
                   for value in values.ravel())
    return False


def _non_finite_outcome(step, X, mask, infinite, path):
    """``(outcome, path)`` of non-finite values in the columns ``mask`` of ``X`` reaching
    ``step``: :data:`REJECTS` with the rejecting step's parameter path, :data:`REMOVES`,
    :data:`PASSES`, or None when a step accepts them (its tag) and nothing more is known."""
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return PASSES, path
    if isinstance(step, Pipeline):
        for name, child in step.steps:
            outcome, where = _non_finite_outcome(child, X, mask, infinite, _join(path, name))
            if outcome != PASSES:
                return outcome, where
            X = None  # the next step receives this one's output: its columns are not X's
        return PASSES, path
    if isinstance(step, (ColumnTransformer, FeatureUnion)):
        return _branches_outcome(step, X, mask, infinite, path)
    if is_diffprivlib_model(step):
        return REJECTS, path
    handling = NON_FINITE_HANDLING.get(type(step))
    outcome = None if handling is None else handling(step, infinite)
    if outcome is None and not get_tags(step).input_tags.allow_nan:
        outcome = REJECTS
    return outcome, path


def _branches_outcome(step, X, mask, infinite, path):
    """The outcome of a column transformer or feature union: a branch is checked only if some
    of its columns hold non-finite values (every branch, when ``X`` is not the input's own)."""
    if isinstance(step, FeatureUnion):
        branches = [(name, child, mask) for name, child in step.transformer_list]
    else:
        branches, rest = [], np.ones(len(mask), dtype=bool)
        for name, child, columns in step.transformers:
            selected = np.zeros(len(mask), dtype=bool)
            selected[column_indices(X, columns, len(mask))] = True
            rest &= ~selected
            branches.append((name, child, mask & selected))
        branches.append(("remainder", step.remainder, mask & rest))
    outcomes = [_non_finite_outcome(child, None, selected, infinite, _join(path, name))
                for name, child, selected in branches
                if selected.any() and not (isinstance(child, str) and child == "drop")]
    # Any rejection refuses; values that pass reach the next step; an accepting step (None)
    # says nothing more; otherwise every branch removed them.
    for wanted in (REJECTS, PASSES, None):
        for outcome, where in outcomes:
            if outcome == wanted:
                return outcome, where
    return REMOVES, path


def column_indices(X, columns, n_columns):
    """Column indices a ``ColumnTransformer`` branch selects (its callable selectors read the
    schema); all of them when they cannot be resolved (conservative: the branch is checked)."""
    if X is None:
        return np.arange(n_columns)
    try:
        if callable(columns):
            columns = columns(X)
        return np.asarray(_get_column_indices(X, columns), dtype=int)
    except Exception:  # noqa: BLE001 - the fit would raise its own error
        return np.arange(n_columns)


def _join(path, name):
    return f"{path}__{name}" if path else name


def _check_declared_classes(y, estimator):
    """Refuse labels outside the final step's declared ``classes``, before the accountant:
    every fit would reject them (the labels are not quoted: they are private)."""
    final = estimator.steps[-1][1] if isinstance(estimator, Pipeline) else estimator
    classes = final.get_params(deep=False).get("classes") if hasattr(final, "get_params") \
        else None
    if classes is None or y is None or np.ndim(y) != 1:
        return
    try:
        outside = not np.all(np.isin(np.asarray(y), np.asarray(classes)))
    except (TypeError, ValueError):
        return  # labels of another kind: the fit raises its own error
    if outside:
        raise ValueError(
            f"y holds labels that are not among the declared classes={classes!r} of "
            f"{type(final).__name__}; declare every label y can hold (they are not quoted: "
            "they come from the private data).")


def _check_numeric(X):
    """scikit-learn's ``check_array`` for a diffprivlib first step, with messages that name
    the input's type and shape but never quote its values (scikit-learn's can: "array=[...]",
    "could not convert string to float: '...'")."""
    try:
        check_array(X, accept_sparse=True, dtype="numeric", ensure_all_finite=False)
    except ValueError as error:
        message = str(error)
        shape = getattr(X, "shape", None) or np.shape(np.asarray(X, dtype=object))
        if "Complex data not supported" in message:
            raise ValueError("Complex data not supported.") from None
        if message.startswith("Found array with"):
            raise  # sample and feature counts only
        if message.startswith("Expected 2D array"):
            raise ValueError(
                f"Expected 2D array, got an array of shape {shape} instead. Reshape your data "
                "with X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single "
                "sample."
            ) from None
        raise ValueError(
            f"X (shape {shape}) holds values that are not numbers, which the diffprivlib "
            "first step needs. The original message is withheld because it quotes a value; "
            "encode non-numeric columns first (e.g. OneHotEncoder with declared categories)."
        ) from None


def _is_numeric(X):
    """Whether ``X`` holds numbers (NaN checks do not apply to text or object columns)."""
    if issparse(X) or hasattr(X, "dtypes"):
        return True  # DataFrames are checked column by column by assert_all_finite
    try:
        return np.asarray(X).dtype.kind in "biufc"
    except (TypeError, ValueError):
        return False


def first_step(estimator):
    """The step that receives ``X`` first (a pipeline's tags do not all follow it)."""
    while isinstance(estimator, Pipeline):
        steps = [step for _, step in estimator.steps if step not in (None, "passthrough")]
        if not steps:
            break
        estimator = steps[0]
    return estimator


def is_diffprivlib_model(step):
    """Whether ``step`` is a diffprivlib model or derives from one (skdptune's ``Ridge`` and
    ``LogisticRegression`` do): its public parameters mean what diffprivlib's do."""
    return any(cls.__module__.startswith("diffprivlib") for cls in type(step).__mro__)


def accepts_sparse(estimator):
    """Whether the first step declares sparse input support (scikit-learn's tag).

    diffprivlib models inherit ``sparse=True`` from scikit-learn parents but reject sparse
    input, so a diffprivlib first step counts as dense-only.
    """
    first = first_step(estimator)
    return (
        get_tags(first).input_tags.sparse
        and not is_diffprivlib_model(first)
    )


def min_samples(n_parts, rate):
    """The fewest records for which each of ``n_parts`` parts, drawn independently per record
    with probability ``rate`` each, expects at least one record: ``ceil(n_parts / rate)``.

    Rounded first: ``1 - 0.9`` is ``0.0999...``, which would ask for one record too many.
    Both searches refuse fewer records before the data are touched (``n`` is public).
    """
    return math.ceil(round(n_parts / rate, 9))


def input_shape(X):
    """``n_features_in_`` and ``feature_names_in_`` of ``X``, or None where ``X`` has none.

    Text (a list of documents) has no number of features: scikit-learn's own searches then
    have no ``n_features_in_`` either.
    """
    try:
        n_features = _num_features(X)
    except TypeError:
        n_features = None
    return {"n_features_in_": n_features, "feature_names_in_": _get_feature_names(X)}


def declared_classes(classes, y, name):
    """The class labels a private classifier fits: ``classes`` declared, or read from ``y``.

    Declared labels are public: sorted and deduplicated they are the model's ``classes_``,
    the same on neighbouring datasets whichever labels occur. Read from ``y`` they are not
    (a class held by one record appears or not with that record): a ``PrivacyLeakWarning``
    says so, as diffprivlib's trees do, and the refit gate refuses to release such a fit.

    Parameters
    ----------
    classes : array-like or None
    y : ndarray of shape (n_samples,)
    name : str
        The model's class name, for messages.

    Returns
    -------
    classes_ : ndarray

    Raises
    ------
    ValueError
        When the labels are not a flat list of at least two, or ``y`` holds a label outside
        them (the label is not quoted: it comes from the private data).
    """
    if classes is None:
        warnings.warn(
            f"{name}: classes have not been specified and will be read from the data; a class "
            "held by a single record shows in the model. To ensure differential privacy, "
            "declare classes=[...] from public knowledge.", PrivacyLeakWarning)
        return np.unique(y)
    declared = np.asarray(classes)
    if declared.ndim != 1:
        raise ValueError(f"classes={classes!r} is not a flat list of labels; declare every "
                         "class the model may predict, e.g. classes=[0, 1].")
    declared = np.unique(declared)
    if declared.size < 2:
        raise ValueError(f"classes={classes!r} declares fewer than two labels; declare every "
                         "class the model may predict, e.g. classes=[0, 1].")
    if not np.all(np.isin(y, declared)):
        raise ValueError(f"y holds labels that are not among the declared classes={classes!r}; "
                         "declare every label y can hold (the labels are not quoted: they "
                         "come from the private data).")
    return declared


def nonnegative_finite(value):
    """Whether ``value`` is a real number (not a bool), finite and at least 0 (an integer too
    large for a float is not finite): a penalty such as ``alpha``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        return False
    try:
        return bool(np.isfinite(float(value))) and value >= 0
    except OverflowError:
        return False


def positive_finite(value):
    """Whether ``value`` is a real number (not a bool), finite and positive: an ``epsilon``,
    ``data_norm`` or ``C``."""
    return nonnegative_finite(value) and value > 0


def declared_box(step, n_features, min_separation=0.0):
    """``(lower, upper)``, one value per feature, of the ``bounds`` a diffprivlib-style model
    declares (given, as a tuple or a list), checked to be finite.

    diffprivlib's ``check_bounds`` (the model's ``_check_bounds``) broadcasts scalars, checks
    the shapes and ``lower <= upper`` and widens intervals narrower than ``min_separation``,
    but lets NaN through, and its bounded-domain samplers never return on infinite bounds.

    Raises
    ------
    ValueError
        Naming the bounds, for bounds that are not finite (and diffprivlib's errors).
    """
    lower, upper = step._check_bounds(tuple(step.bounds), n_features,
                                      min_separation=min_separation)
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise ValueError(f"bounds={step.bounds!r} are not finite; declare finite (lower, "
                         "upper) from public knowledge")
    return lower, upper
