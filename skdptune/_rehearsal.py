"""The rehearsal: every candidate fitted on public rows of ``X``'s schema, before the data.

A configuration mistake fails every fit whatever the records hold: per-feature bounds for
three of four columns inside a ``ColumnTransformer``, more PCA components than features, an
encoder's declared categories of another kind than its column. Found on the private data,
it would fail the refit after the charge, with its message withheld (it could quote a
record). Found here it is raised with its full message, and nothing is charged.

The rows are drawn from public quantities only (DESIGN.md, "Decide from parameters"): the
schema of ``X`` (its width, its column names and dtypes), and the bounds and categories the
steps declare. Each column's values come from the first step that receives it: within its
declared ``bounds``/``bounds_X``, among its declared ``categories``, else ``[0, 1]`` (or two
labels of the column's kind). The labels are the final step's declared ``classes``, else two
labels of ``y``'s dtype; a regressor's targets lie within its declared ``bounds_y``. The
generator is seeded: the rehearsal is a fixed function of those public quantities, and the
same on neighbouring datasets.

The same rows give the tuning policy the width its noise model reads (the columns reaching
the default candidate's last step) without reading ``X``'s values. Where that width depends
on the data (a PCA keeping a variance fraction or ``"mle"``), the rehearsal takes its public
upper bound: every component its input allows.
"""

from dataclasses import dataclass
from numbers import Integral

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from scipy.sparse import csr_matrix, issparse
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA as SklearnPCA
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.utils.validation import _num_samples

from ._gate import ALLOWED, sparse_refusal
from ._dp_fit import (configuration_key, describe_failure, fit, private_fit_context,
                      set_accountants)
from ._sklearn_compat import _safe_indexing
from ._validation import collect_refusals, column_indices

#: Public rows per rehearsal, at least; more for wide inputs, so that a step whose
#: parameters fit the real data (a PCA keeping every component) fits these rows too.
MIN_ROWS = 64

#: The generator's seed: the rows are public, and the same for every fit (neighbouring
#: datasets included).
SEED = 0


@dataclass(frozen=True)
class Schema:
    """What the rehearsal may read of ``X`` and ``y``: shapes, names and dtypes, no value.

    Attributes
    ----------
    n_features : int or None
        Columns of ``X``; None when ``X`` holds one document (a string) per record.
    columns : list or None
        A data frame's column names (None for an array).
    dtypes : list
        One dtype per column.
    sparse : bool
        Whether ``X`` is a sparse matrix.
    y_dtype : numpy.dtype or None
        ``y``'s dtype (None without ``y``).
    y_columns : int
        Columns of a 2-d ``y`` (0 for a 1-d ``y``).
    """

    n_features: int
    columns: list = None
    dtypes: list = None
    sparse: bool = False
    y_dtype: object = None
    y_columns: int = 0


def schema_of(X, y=None, n_features=None):
    """The :class:`Schema` of ``X`` and ``y``, or of ``n_features`` float columns when ``X``
    is None (the forecast's shape only)."""
    if X is None:
        width = int(n_features or 1)
        return Schema(n_features=width, dtypes=[np.dtype(float)] * width)
    y_dtype = None if y is None else getattr(y, "dtype", None)
    if y is not None and y_dtype is None:
        y_dtype = np.asarray(y).dtype
    y_columns = 0 if y is None or np.ndim(y) < 2 else int(np.shape(y)[1])
    if hasattr(X, "dtypes") and hasattr(X, "columns"):
        return Schema(n_features=len(X.columns), columns=list(X.columns),
                      dtypes=list(X.dtypes), y_dtype=y_dtype, y_columns=y_columns)
    if issparse(X):
        return Schema(n_features=X.shape[1], dtypes=[X.dtype] * X.shape[1], sparse=True,
                      y_dtype=y_dtype, y_columns=y_columns)
    head = np.asarray(X[:1] if hasattr(X, "__getitem__") else X)
    if head.ndim != 2:  # documents (one string per record): rehearsed on short texts
        return Schema(n_features=None, y_dtype=y_dtype, y_columns=y_columns)
    dtype = getattr(X, "dtype", head.dtype)
    return Schema(n_features=head.shape[1], dtypes=[dtype] * head.shape[1], y_dtype=y_dtype,
                  y_columns=y_columns)


def rehearse(candidates, contexts, schema):
    """Fit every candidate on public rows of ``schema``; raise what fails, in full.

    Every failure is collected and raised at once (``_validation.collect_refusals``), each
    named by its candidate; the fits get throw-away accountants and what they print or warn
    is discarded (it concerns public rows only, but is noise to the user). A pipeline's
    steps before the last are fitted once per distinct configuration of them, and each
    candidate's last step on their output: a grid over the last step's parameters costs one
    prefix fit.

    Parameters
    ----------
    candidates : list of estimator
        Unfitted configurations, as the refit would fit them.
    contexts : list of str
        What names each candidate in a message (``"param_grid candidate {...}"``).
    schema : Schema
        The input's public schema.

    Raises
    ------
    ValueError or TypeError
        The fit's own exception class where it is one of those, else ``ValueError``, with
        the fit's full message: the rows are public.
    """
    prefixes = {}
    chosen = [(candidate, context) for candidate, context in zip(candidates, contexts)
              if _understood(candidate)]
    collect_refusals([
        lambda candidate=candidate, context=context: _rehearse_one(candidate, context, schema,
                                                                   prefixes)
        for candidate, context in chosen
    ], [context for _, context in chosen])


def _understood(candidate):
    """Whether every step of ``candidate`` is a class of the refit gate's table (exact
    class): steps whose fit on generic rows of a schema is understood. A plain estimator
    fitted on partitions only (``refit=False``), or any other class, may expect inputs the
    public rows do not mimic (a list, fit parameters): it is not rehearsed, and a fit that
    fails on the data scores ``error_score``, as before."""
    steps = [candidate] + [value for value in candidate.get_params(deep=True).values()
                           if hasattr(value, "get_params")]
    return all(type(step) in ALLOWED for step in steps)


def final_width(estimator, schema):
    """The columns reaching the last step of ``estimator`` (a pipeline) on public rows of
    ``schema``, data-dependent widths at their public upper bound; ``schema.n_features``
    for a plain estimator, or where the prefix cannot be fitted on those rows."""
    if not isinstance(estimator, Pipeline) or len(estimator.steps) < 2:
        return schema.n_features or 1
    prefix = _at_upper_bound(clone(estimator[:-1]))
    set_accountants(prefix, BudgetAccountant())
    try:
        X, y = public_sample(estimator, schema)
        with private_fit_context(reveal=False):
            return int(np.shape(prefix.fit_transform(X, y))[1])
    except Exception:  # noqa: BLE001 - a width for the policy, not a refusal (fit rehearses)
        return schema.n_features or 1


def public_sample(estimator, schema):
    """``(X, y)``: rows of ``schema`` drawn from the bounds and categories ``estimator``'s
    steps declare (see the module's docstring); ``y`` is None when ``schema`` has none."""
    rng = np.random.default_rng(SEED)
    if schema.n_features is None:
        texts = np.array(["alpha beta", "beta gamma", "gamma alpha"], dtype=object)[np.arange(MIN_ROWS) % 3]
        return list(texts), _labels(estimator, schema, MIN_ROWS, rng)
    n_rows = max(MIN_ROWS, 2 * schema.n_features + 2)
    frame = _frame([np.zeros(n_rows, dtype=_storage(dtype)) for dtype in schema.dtypes],
                   schema)
    domains = [None] * schema.n_features
    for column, (step, position) in enumerate(first_receivers(estimator, frame,
                                                              schema.n_features)):
        domains[column] = _declared_domain(step, position)
        if (domains[column] is not None and domains[column][0] == "categories"
                and _kind(schema.dtypes[column]) == "text"
                and not all(isinstance(value, str) for value in domains[column][1])):
            name = schema.columns[column] if schema.columns is not None else column
            raise ValueError(
                f"X's column {name!r} holds text (dtype {schema.dtypes[column]}), but "
                f"{type(step).__name__} declares the categories {domains[column][1]!r} for "
                "it, which are not strings: no value of the column can match them (found "
                "from X's dtypes, nothing was charged). Declare the column's text values as "
                "its categories, or convert the column first."
            )
    values = [_column(domain, dtype, n_rows, rng)
              for domain, dtype in zip(domains, schema.dtypes)]
    return _frame(values, schema), _labels(estimator, schema, n_rows, rng)


def first_receivers(estimator, X, n_columns):
    """For every column of ``X``, ``(step, position)``: the first step that reads it (through
    pipelines, column transformers and feature unions) and the column's position in that
    step's input; ``(None, None)`` for a column no step reads directly."""
    found = [(None, None)] * n_columns

    def walk(step, columns):
        if step is None or isinstance(step, str):
            return
        if isinstance(step, Pipeline):
            children = [child for _, child in step.steps if child not in (None, "passthrough")]
            if children:
                walk(children[0], columns)
            return
        if isinstance(step, ColumnTransformer):
            inner = _safe_indexing(X, columns, axis=1)
            rest = np.ones(len(columns), dtype=bool)
            for _, child, selector in step.transformers:
                chosen = column_indices(inner, selector, len(columns))
                rest[chosen] = False
                walk(child, columns[chosen])
            walk(step.remainder, columns[rest])
            return
        if isinstance(step, FeatureUnion):
            for _, child in step.transformer_list:
                walk(child, columns)
            return
        for position, column in enumerate(columns):
            if found[column] == (None, None):
                found[column] = (step, position)

    walk(estimator, np.arange(n_columns))
    return found


def check_categories(X, candidates):
    """Refuse values of ``X`` outside the categories an encoder declares for them, where the
    encoder's fit raises on such values (``handle_unknown="error"``).

    Input validation that reads the data, before the accountant (DESIGN.md, "Decide from
    parameters"): one record with an undeclared category would otherwise fail the refit
    after the charge. Like scikit-learn's own validation, the refusal reveals that ``X``
    holds such a value; it names the column and the declared categories, never the value.
    """
    if issparse(X):
        return
    n_columns = int(np.shape(X)[1]) if np.ndim(X) == 2 or hasattr(X, "columns") else 0
    # The steps are found on no row of X (column selectors read names and dtypes); only the
    # columns an encoder checks are read, each once.
    head = _safe_indexing(X, np.arange(0)) if n_columns else X
    checked = set()
    for candidate in candidates:
        for column, (step, position) in enumerate(first_receivers(candidate, head, n_columns)):
            categories = declared_categories(step, position)
            if (categories is None or (column, repr(categories)) in checked
                    or step.get_params(deep=False).get("handle_unknown") != "error"):
                continue
            checked.add((column, repr(categories)))
            if not _within(_safe_indexing(X, [column], axis=1), categories):
                name = X.columns[column] if hasattr(X, "columns") else column
                raise ValueError(
                    f"X's column {name!r} holds values that are not among the categories "
                    f"{categories!r} that {type(step).__name__} declares for it, and its "
                    "handle_unknown='error' fails the fit on them (the refit would fail after "
                    "the charge). Declare every value the column can hold, or pass "
                    "handle_unknown='ignore'. The values are not quoted: they are private."
                )


def _within(values, categories):
    """Whether every non-missing value of the one-column ``values`` is a category."""
    if hasattr(values, "iloc"):
        column = values.iloc[:, 0]
        return bool(column[column.notna()].isin(categories).all())
    known = set(categories)
    return all(value in known or value is None or value != value  # NaN: not this check's
               for value in np.asarray(values, dtype=object).ravel())


def declared_categories(step, position):
    """The categories an encoder declares for its input column ``position``, or None."""
    if step is None:
        return None
    categories = step.get_params(deep=False).get("categories")
    if categories is None or isinstance(categories, str) or position >= len(categories):
        return None
    return list(categories[position])


def _declared_domain(step, position):
    """``("categories", list)``, ``("bounds", (lower, upper))`` or None: what ``step``
    declares of its input column ``position``."""
    categories = declared_categories(step, position)
    if categories is not None:
        return "categories", categories
    if step is None:
        return None
    params = step.get_params(deep=False)
    for name in ("bounds", "bounds_X"):
        value = params.get(name)
        if value is None:
            continue
        lower, upper = (np.asarray(bound, dtype=float) for bound in value)
        if lower.ndim == 0:
            return "bounds", (float(lower), float(upper))
        if position < lower.size:
            return "bounds", (float(lower[position]), float(upper[position]))
    return None


def _column(domain, dtype, n_rows, rng):
    """One column of ``n_rows`` values of ``dtype`` drawn from ``domain``."""
    kind = _kind(dtype)
    if domain is not None and domain[0] == "categories":
        values = np.array(domain[1], dtype=object)[np.arange(n_rows) % len(domain[1])]
        if kind == "text":  # a text column's values are strings, whatever was declared
            values = np.array([str(value) for value in values], dtype=object)
        return values
    if kind == "category":
        levels = list(dtype.categories)
        return np.array(levels, dtype=object)[np.arange(n_rows) % len(levels)]
    if kind == "text":
        return np.array(["a", "b"], dtype=object)[np.arange(n_rows) % 2]
    if kind == "bool":
        return np.arange(n_rows) % 2 == 0
    # Numbers, also in an object column without declared categories: a column of text
    # there reaches a step that declares its categories, or one that reads numbers.
    lower, upper = domain[1] if domain is not None else (0.0, 1.0)
    if kind == "integer":
        low, high = int(np.ceil(lower)), int(np.floor(upper))
        return rng.integers(low, max(high, low) + 1, size=n_rows)
    return rng.uniform(lower, upper, size=n_rows)


def _kind(dtype):
    """``"category"``, ``"text"`` (a string dtype), ``"object"`` (numpy's object dtype:
    numbers or text, which only the values tell), ``"bool"``, ``"integer"`` or
    ``"number"``."""
    name = getattr(dtype, "name", str(dtype))
    if name == "category":
        return "category"
    if name in ("string", "str") or getattr(dtype, "kind", "O") in "SU":
        return "text"
    if getattr(dtype, "kind", "O") == "O":
        return "object"
    kind = np.dtype(dtype).kind if not hasattr(dtype, "numpy_dtype") else (
        dtype.numpy_dtype.kind)
    return {"b": "bool", "i": "integer", "u": "integer"}.get(kind, "number")


def _storage(dtype):
    """A numpy dtype that can hold placeholder zeros of ``dtype``."""
    return object if _kind(dtype) in ("text", "category", "object") else float


def _frame(values, schema):
    """Columns ``values`` as ``X`` is held: a data frame with its names and dtypes, a sparse
    matrix or an array of its dtype."""
    if schema.columns is not None:
        import pandas as pd

        return pd.DataFrame({name: pd.Series(column).astype(dtype)
                             for name, column, dtype in zip(schema.columns, values,
                                                            schema.dtypes)})
    array = np.column_stack(values).astype(schema.dtypes[0]) if values else np.empty((0, 0))
    return csr_matrix(array) if schema.sparse else array


def _labels(estimator, schema, n_rows, rng):
    """Public labels: the final step's declared ``classes`` (each present), two labels of
    ``y``'s dtype, or targets within its declared ``bounds_y``."""
    if schema.y_dtype is None:
        return None
    final = estimator.steps[-1][1] if isinstance(estimator, Pipeline) else estimator
    params = final.get_params(deep=False) if hasattr(final, "get_params") else {}
    shape = (n_rows, schema.y_columns) if schema.y_columns else (n_rows,)
    if is_regressor(estimator) or (not is_classifier(estimator)
                                   and np.dtype(schema.y_dtype).kind == "f"):
        lower, upper = params.get("bounds_y") or (0.0, 1.0)
        return rng.uniform(lower, upper, size=shape)
    classes = params.get("classes")
    if classes is None:
        classes = ["a", "b"] if _kind(schema.y_dtype) == "text" else [0, 1]
    labels = np.asarray(classes)[np.arange(n_rows) % len(classes)]
    return np.column_stack([labels] * schema.y_columns) if schema.y_columns else labels


def _at_upper_bound(estimator):
    """``estimator`` with every PCA that keeps a data-dependent number of components (a
    variance fraction, ``"mle"``) set to keep them all: the public upper bound of its
    output's width."""
    data_dependent = {
        key: None for key, value in estimator.get_params(deep=True).items()
        if key.endswith("n_components") and value is not None
        and not isinstance(value, Integral)
        and isinstance(_owner(estimator, key), SklearnPCA)
    }
    return estimator.set_params(**data_dependent) if data_dependent else estimator


def _owner(estimator, key):
    path = key.rpartition("__")[0]
    return estimator.get_params(deep=True)[path] if path else estimator


def _rehearse_one(candidate, context, schema, prefixes):
    """Fit ``candidate`` on public rows, its pipeline prefix from ``prefixes`` (a cache keyed
    by the prefix's :func:`~skdptune._dp_fit.configuration_key`) when an identical prefix was
    fitted already.

    A sparse output of the prefix reaching a last step that needs dense input is refused
    here (:func:`skdptune._gate.sparse_refusal`): the gate leaves a ``ColumnTransformer``
    whose density is the same on any rows to this fit (``skdptune._gate.density_fixed``), whose
    output on the public rows is then what the records would give."""
    candidate = clone(candidate)
    set_accountants(candidate, BudgetAccountant())
    X, y = public_sample(candidate, schema)
    reaching = None
    try:
        with private_fit_context(reveal=False):
            if isinstance(candidate, Pipeline) and len(candidate.steps) > 1:
                key = configuration_key(candidate[:-1])
                if key not in prefixes:
                    try:
                        prefixes[key] = candidate[:-1].fit_transform(X, y)
                    except Exception as error:  # noqa: BLE001 - every sharer raises it
                        prefixes[key] = error
                if isinstance(prefixes[key], Exception):
                    raise prefixes[key]
                name, final = candidate.steps[-1]
                if final not in (None, "passthrough"):
                    reaching = sparse_refusal(final, name, context, prefixes[key])
                    if reaching is None:
                        fit(final, prefixes[key], y, {})
            else:
                fit(candidate, X, y, {})
    except Exception as error:  # noqa: BLE001 - raised below, in full: the rows are public
        kind = TypeError if isinstance(error, TypeError) else ValueError
        raise kind(
            f"{context} cannot be fitted. {describe_failure(error, candidate)} on "
            f"{_num_samples(X)} public rows with X's columns and dtypes, drawn from the "
            "declared bounds and categories (no record was read, nothing was charged): "
            f"{error}"
        ) from None
    if reaching is not None:
        raise reaching
