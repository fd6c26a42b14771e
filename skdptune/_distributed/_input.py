"""Dask collections as input: what is refused from the parameters, the stand-ins, and the
input validation that reads the data (on the workers).

Order, as for in-memory input (DESIGN.md, "Decide from parameters"): everything
:func:`stand_ins` refuses is decided from the search's parameters and the collections'
metadata (their types, dtypes, columns, shapes and chunks), at the very start of ``fit``,
before the plan, before the accountant is checked and before any chunk is read. What must read
the data (:func:`check_data`: non-finite values, labels outside the declared classes, a single
class) runs as the in-memory validation does, inside the plan, before the accountant; its
messages never quote a value.

``n`` and the chunks' lengths are public: under replace-one adjacency neighbouring datasets
share them (a replaced record stays at its place in its chunk). Computing them (a dask data
frame's partition lengths, a dask array's unknown chunk sizes) reads no value.
"""

import numpy as np
from sklearn.model_selection import ParameterGrid

from .._dp_fit import with_params
from ._refit import MODELS
from ._stand_in import is_dask_collection, stand_in


def stand_ins(search, X, y, fit_params):
    """``(X, y)`` as given for in-memory input; for dask input, checked :class:`OnWorkers`
    stand-ins of a float64 ``X`` chunked by rows and a 1-d ``y`` with the same row chunks.

    Parameters
    ----------
    search : BasePrivateSearch
    X, y : array-like or dask collection
    fit_params : dict

    Returns
    -------
    X, y

    Raises
    ------
    ValueError or TypeError
        For a configuration or input without a distributed path, naming the parameter, its
        value and what would be valid; nothing has been read or charged.
    """
    if not (is_dask_collection(X) or is_dask_collection(y)):
        return X, y
    _check_configuration(search, fit_params)
    if not is_dask_collection(X) or not (y is None or is_dask_collection(y)):
        raise TypeError(
            f"X is a {type(X).__name__} and y a {type(y).__name__}: with dask input both "
            "must be dask collections (X a dask array or data frame, y a dask array or "
            "series with X's rows, or None for k-means), so that each record's features "
            "and label are read where they live.")
    X, columns = _rows(X)
    if y is None:  # a supervised estimator is refused by the plan, as for in-memory input
        return stand_in(X, np.float64, columns), None
    y = _target(y, X)
    return stand_in(X, np.float64, columns), stand_in(y, y.dtype)


def _check_configuration(search, fit_params):
    """Refuse, from the parameters alone, what has no distributed path."""
    from .._search import PrivateGridSearchCV  # the search module imports this package

    name = type(search).__name__
    if type(search) is not PrivateGridSearchCV:
        raise TypeError(
            f"{name} does not take dask input; PrivateGridSearchCV does (its partitions are "
            "dealt and fitted on the workers). Use PrivateGridSearchCV, or compute X and y "
            "into memory first.")
    model = MODELS.get(type(search.estimator))
    if model is None:
        raise TypeError(
            f"estimator={search.estimator!r} has no distributed refit: with dask input the "
            f"estimator must be one of {sorted(f.name for f in MODELS.values())} "
            "(exactly, not a subclass or a pipeline: every step would need a fit from "
            "statistics reduced over chunks). Compute X and y into memory to tune other "
            "estimators.")
    # The estimator as given too: default="estimator" may add it as a candidate.
    reason = model.refusal(search.estimator)
    if reason is not None:
        raise ValueError(f"estimator={search.estimator!r}: {reason}.")
    for params in ParameterGrid(search.param_grid):
        reason = model.refusal(with_params(search.estimator, params))
        if reason is not None:
            raise ValueError(f"param_grid candidate {params}: {reason}.")
    if fit_params:
        raise ValueError(
            f"fit parameters {sorted(fit_params)} are not supported with dask input (no "
            "sample_weight or other per-record parameter has a distributed path); call "
            "fit(X, y) without them.")
    if search.scoring not in model.scorings:
        raise ValueError(
            f"scoring={search.scoring!r} is not supported with dask input for "
            f"{type(search.estimator).__name__}; use one of {list(model.scorings)} (the "
            "scores the batched engine computes on the workers).")
    if not isinstance(search.refit, bool):
        raise ValueError(
            f"refit={search.refit!r} is not supported with dask input; use refit=True or "
            "refit=False.")


def _rows(X):
    """``X`` as a float64 dask array chunked by rows only, and its column names (None for an
    array), from metadata only."""
    if hasattr(X, "to_dask_array") and hasattr(X, "dtypes"):  # a dask data frame
        dtypes = dict(X.dtypes.items())
        # getattr: pandas' extension dtypes (categories, nullable integers) have a kind too.
        other = [column for column, dtype in dtypes.items()
                 if getattr(dtype, "kind", "O") not in "biuf"]
        if other:
            raise TypeError(
                f"X's columns {other} are not numeric; with dask input every column must be "
                "a number (no encoder has a distributed path): encode them before fit.")
        return X.to_dask_array(lengths=True).astype(np.float64), list(dtypes)
    if not hasattr(X, "chunks") or getattr(X, "ndim", None) != 2:
        raise TypeError(
            f"X is a {type(X).__name__} of {getattr(X, 'ndim', '?')} dimensions; with dask "
            "input X must be a 2-d dask array (chunked by rows) or a dask data frame.")
    if len(X.chunks[1]) != 1:
        raise ValueError(
            f"X is chunked along its columns (column chunks {X.chunks[1]}); with dask input "
            "each chunk must hold whole records: X.rechunk({1: -1}).")
    if np.dtype(X.dtype).kind not in "biuf":
        raise TypeError(f"X has dtype {X.dtype}; with dask input X must hold numbers.")
    if any(np.isnan(size) for size in X.chunks[0]):
        X = X.compute_chunk_sizes()  # lengths are public (see the module's docstring)
    return X.astype(np.float64), None


def _target(y, X):
    """``y`` as a 1-d dask array with ``X``'s row chunks."""
    if hasattr(y, "to_dask_array"):  # a dask series (or a one-column frame)
        y = y.to_dask_array(lengths=True)
    if not hasattr(y, "chunks") or y.ndim != 1:
        raise ValueError(
            f"y is a {type(y).__name__} of {getattr(y, 'ndim', '?')} dimensions; with dask "
            "input y must be a 1-d dask array or a dask series.")
    if any(np.isnan(size) for size in y.chunks[0]):
        y = y.compute_chunk_sizes()
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: "
                         f"[{X.shape[0]}, {y.shape[0]}]")
    if np.dtype(y.dtype).kind not in "biuf":
        raise TypeError(f"y has dtype {y.dtype}; with dask input y must hold numbers.")
    return y if y.chunks[0] == X.chunks[0] else y.rechunk((X.chunks[0],))


def check_data(X, y, estimator):
    """The in-memory input validation's checks that read values, one pass on the workers.

    Refuses non-finite values in ``X`` or ``y`` (the library's models reject them in the
    input), and for a classifier labels outside its declared ``classes`` and a ``y`` with a
    single class. Each chunk returns a few booleans; nothing else travels, and no message
    quotes a value.

    Parameters
    ----------
    X, y : OnWorkers
    estimator : estimator
        Of a class in ``MODELS``.
    """
    import dask

    classes = MODELS[type(estimator)].classes(estimator)
    X_chunks = X.source.to_delayed().ravel()
    y_chunks = [None] * len(X_chunks) if y is None else y.source.to_delayed().ravel()
    outcomes = dask.compute(*[
        dask.delayed(_chunk_facts)(X_chunk, y_chunk, classes)
        for X_chunk, y_chunk in zip(X_chunks, y_chunks)
    ])
    name = type(estimator).__name__
    if any(outcome[0] for outcome in outcomes):
        raise ValueError(f"X contains NaN or infinity, and {name} does not accept them. "
                         "Remove or impute those records before fit.")
    if any(outcome[1] for outcome in outcomes):
        raise ValueError(f"y contains NaN or infinity, and {name} does not accept them. "
                         "Remove those records before fit.")
    if classes is None:
        return
    if any(outcome[2] for outcome in outcomes):
        raise ValueError(
            f"y holds labels that are not among the declared classes={list(classes)!r} of "
            f"{name}; declare every label y can hold (they are not quoted: they come from the "
            "private data).")
    if np.logical_or.reduce([outcome[3] for outcome in outcomes]).sum() < 2:
        raise ValueError(f"y has a single class, and {name} is a classifier: one class leaves "
                         "nothing to tune. Pass y with at least two classes.")


def _chunk_facts(X, y, classes):
    """``(X not finite, y not finite, a label outside classes, which classes occur)`` of one
    chunk (the last two None without declared classes; the second False without ``y``)."""
    y_not_finite = y is not None and not np.isfinite(y).all()
    if classes is None:
        return not np.isfinite(X).all(), y_not_finite, None, None
    return (not np.isfinite(X).all(), y_not_finite, not np.isin(y, classes).all(),
            np.isin(classes, y))
