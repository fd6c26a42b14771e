"""What batched families and partition steps share: the checks of a plan's parameters, of
declared bounds and of declared classes, the binding of a classifier's plan to its score and
each partition's ROC AUC, Laplace variates by inverse CDF, a PCA step's fits and transforms of
a block's partitions, and k-means' nearest centres and per-label sums."""

from dataclasses import replace

import numpy as np
from diffprivlib.validation import check_bounds
from scipy.linalg import lapack
from sklearn.utils.multiclass import type_of_target

from .._validation import positive_finite
from .contract import ACCURACY, ROC_AUC


def checked_params(estimator, positive=("epsilon",)):
    """The estimator's parameters, or None (the per-fit path) when a real fit would refuse
    them.

    Parameters
    ----------
    estimator : estimator
    positive : tuple of str, default=("epsilon",)
        Parameters that must be positive finite numbers.

    Returns
    -------
    params : dict or None
        ``get_params(deep=False)``; None when a parameter of ``positive`` is not a positive
        finite number or scikit-learn's own constraints refuse them (as ``fit`` checks them):
        the per-fit path then gives the candidate the real fit's outcome.
    """
    params = estimator.get_params(deep=False)
    if not all(positive_finite(params.get(name)) for name in positive):
        return None
    try:
        estimator._validate_params()
    except Exception:  # noqa: BLE001 - whatever the real fit would make of it
        return None
    return params


def declared_bounds(bounds, n_features):
    """Per-feature ``(lower, upper)`` of declared ``bounds``, as diffprivlib's ``check_bounds``
    expands them, or None (the family then falls back to the per-fit path, which gives the real
    fit's outcome).

    Parameters
    ----------
    bounds : tuple
        A diffprivlib model's ``bounds`` parameter.
    n_features : int or None
        Columns of ``X``; None before the data (the forecast): the width the bounds declare.

    Returns
    -------
    bounds : tuple of ndarray of shape (n_features,), or None
        Float arrays, finite, ``lower <= upper``.
    """
    if bounds is None:
        return None
    try:
        if n_features is None:
            n_features = int(max(np.size(bounds[0]), np.size(bounds[1])))
        lower, upper = check_bounds(bounds, shape=n_features)
    except Exception:  # noqa: BLE001 - whatever the real fit would make of it
        return None
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper)) and np.all(upper >= lower)):
        return None
    return lower, upper


def declared_labels(classes, max_classes):
    """Declared ``classes`` as skdptune's ``LogisticRegression`` and ``GaussianNB`` take them
    (:func:`skdptune.validation.declared_classes`: sorted, deduplicated), or None (the
    per-fit path, which gives the real fit's outcome).

    Parameters
    ----------
    classes : array-like
        The ``classes`` parameter, not None.
    max_classes : int
        The family's ``MAX_CLASSES``.

    Returns
    -------
    classes : ndarray of shape (n_declared,) or None
        None when the real fit refuses them (not a flat list of at least two labels), when
        they are not class labels ``accuracy_score`` takes (objects, fractional floats), or
        when there are more than ``max_classes``.
    """
    try:
        declared = np.asarray(classes)
        if declared.ndim != 1:
            return None
        declared = np.unique(declared)
    except (TypeError, ValueError):
        return None
    if (declared.dtype.kind not in "biufU" or not 2 <= len(declared) <= max_classes
            or type_of_target(declared) not in ("binary", "multiclass")):
        return None
    return declared


def comparable_labels(labels, classes):
    """Whether the labels of ``y`` and declared ``classes`` are of kinds ``accuracy_score``
    compares (numbers with numbers, strings with strings), and ``y``'s are class labels.

    Parameters
    ----------
    labels : ndarray of shape (n_labels,)
        The sorted distinct labels of ``y``.
    classes : ndarray of shape (n_declared,)

    Returns
    -------
    comparable : bool
    """
    kind = labels.dtype.kind
    if kind == "O" and all(isinstance(label, str) for label in labels):
        kind = "U"
    numeric = "biuf"
    if not ((kind in numeric and classes.dtype.kind in numeric)
            or (kind in "US" and classes.dtype.kind == "U")):
        return False
    return type_of_target(labels) in ("binary", "multiclass")


def declared_codes(classes, labels):
    """Each label's position among the declared ``classes`` (the class whose problem or
    statistics its rows join, and whose prediction is right for it), or None.

    A label's position is ``labels[i] == classes`` (the comparison the real fit makes per
    class), a function of that label and the public ``classes`` only: a record's contribution
    depends on its own label, whatever other labels occur.

    Parameters
    ----------
    classes : ndarray of shape (n_declared,)
        Declared classes (:func:`declared_labels`).
    labels : ndarray of shape (n_labels,)
        The sorted distinct labels of ``y`` (the order of the codes).

    Returns
    -------
    codes : ndarray of shape (n_labels,), int, or None
        None when a label is not among ``classes`` (the real fit raises) or the kinds do not
        compare (:func:`comparable_labels`): the per-fit path.
    """
    if not comparable_labels(labels, classes):
        return None
    try:
        with np.errstate(all="ignore"):
            matches = np.stack([np.asarray(labels == label) for label in classes], axis=1)
    except Exception:  # noqa: BLE001 - comparisons numpy refuses: left to the real fit
        return None
    if matches.shape != (len(labels), len(classes)) or not np.all(matches.sum(axis=1) == 1):
        return None
    return np.argmax(matches, axis=1)


def bind_declared(plan, labels):
    """``plan`` bound to the labels of ``y`` (:class:`~skdptune._batched.contract.BindsLabels`)
    for a family whose plans carry skdptune's declared ``classes`` and their ``code_map``
    (frozen dataclasses): each label code's position among the declared classes
    (:func:`declared_codes`, a function of that label and the public classes only); a plan
    without declared classes unchanged.

    Parameters
    ----------
    plan : dataclass with ``classes`` and ``code_map`` fields
    labels : ndarray of shape (n_labels,)
        The sorted distinct labels of ``y``.

    Returns
    -------
    plan : dataclass or None
        None (the per-fit path) where a label is not among the declared classes (the real fit
        raises) or the kinds do not compare.
    """
    if plan.classes is None:
        return plan
    code_map = declared_codes(plan.classes, labels)
    return None if code_map is None else replace(plan, code_map=code_map)


def labelling(plan, y, n_classes):
    """The class codes and the number of classes a plan's fit uses, and whether they are
    declared: the block's own (``y`` and ``n_classes``), or, for a plan bound to declared
    classes (:func:`bind_declared`), each row's position among them and their number.

    Returns
    -------
    codes : ndarray of shape (n_rows,), int
    n_classes : int
    declared : bool

    Raises
    ------
    ValueError
        When the plan declares classes but is not bound to the labels.
    """
    if plan.classes is None:
        return y, n_classes, False
    if plan.code_map is None:
        raise ValueError("the plan is not bound to the labels (bind_labels)")
    return plan.code_map[y], len(plan.classes), True


def bind_classifier_score(plan, score):
    """``plan`` bound to ``score`` (:class:`~skdptune._batched.contract.BindsScore`) for a
    classifier family whose plans carry a ``score`` field and skdptune's declared ``classes``:
    :data:`~skdptune._batched.contract.ACCURACY` always; :data:`~skdptune._batched.contract.ROC_AUC`
    unless more than two classes are declared (the model's scores are then a matrix, which
    scikit-learn's binary ``roc_auc`` refuses on every partition: the per-fit path keeps
    that behaviour).

    Returns
    -------
    plan : dataclass or None
    """
    if score is ROC_AUC and plan.classes is not None and len(plan.classes) != 2:
        return None
    if score is not ACCURACY and score is not ROC_AUC:
        return None
    return replace(plan, score=score)


def partition_roc_auc(values, positive, part, n_parts):
    """Each partition's area under the ROC curve of its rows' ``values``, as scikit-learn's
    ``roc_auc_score(positive, values)`` computes it on that partition's rows alone.

    scikit-learn integrates the ROC curve by the trapezoidal rule over the distinct values,
    which is the Mann-Whitney statistic with tied values counted half: ``(R - P (P + 1) / 2)
    / (P N)``, ``R`` the sum of the positive rows' ranks among the partition's rows, tied
    values taking their average rank, ``P`` and ``N`` its positive and negative rows. Here
    that statistic, the rows of all partitions sorted once by (partition, value): a row's rank
    is counted within its partition only. Equal to scikit-learn's to rounding (both sums are
    exact in float64 below 2**53). Infinite values tie with one another, as their equal
    values do.

    Parameters
    ----------
    values : ndarray of shape (n_rows,)
        Finite or infinite (a NaN gives that partition a meaningless value: the caller marks
        it, as scikit-learn raises on it).
    positive : ndarray of shape (n_rows,), bool
    part : ndarray of shape (n_rows,), int
        Each row's partition, ``0 .. n_parts - 1``.
    n_parts : int

    Returns
    -------
    auc : ndarray of shape (n_parts,)
        In ``[0, 1]``; NaN for a partition whose rows hold one class or none (scikit-learn
        returns NaN there, with a warning).
    """
    order = np.lexsort((values, part))
    values, positive, part = values[order], positive[order], part[order]
    n_rows = len(values)
    # A tie group starts where the partition or the value changes.
    starts = np.flatnonzero(np.r_[True, (part[1:] != part[:-1]) | (values[1:] != values[:-1])]
                            if n_rows else np.empty(0, dtype=bool))
    ends = np.r_[starts[1:], n_rows].astype(np.intp)
    first = np.searchsorted(part, np.arange(n_parts))  # each partition's first row
    offset = first[part[starts]] if n_rows else starts
    # Ranks start + 1 .. end within the partition: their average.
    average = ((starts - offset + 1) + (ends - offset)) / 2.0
    rank = np.repeat(average, ends - starts)
    n_positive = np.bincount(part, weights=positive, minlength=n_parts)
    n_negative = np.bincount(part, minlength=n_parts) - n_positive
    rank_sum = np.bincount(part, weights=rank * positive, minlength=n_parts)
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = (rank_sum - n_positive * (n_positive + 1) / 2.0) / (n_positive * n_negative)
    return np.where((n_positive > 0) & (n_negative > 0), np.clip(auc, 0.0, 1.0), np.nan)


def at_least(matrices, floor):
    """Whether each symmetric matrix's smallest eigenvalue is at least ``floor`` (a number, or
    one per matrix): whether ``A - floor I`` has a Cholesky factor, one matrix at a time where
    a batch fails. About a tenth of the time of the eigenvalues themselves.

    Parameters
    ----------
    matrices : ndarray of shape (n, d, d)
    floor : float or ndarray of shape (n,)

    Returns
    -------
    at_least : ndarray of shape (n,), bool
    """
    shifted = matrices - np.asarray(floor, dtype=float)[..., None, None] * np.eye(
        matrices.shape[-1])
    try:
        np.linalg.cholesky(shifted)
        return np.ones(len(shifted), dtype=bool)
    except np.linalg.LinAlgError:
        return np.array([lapack.dpotrf(matrix, lower=1, clean=0)[1] == 0
                         for matrix in shifted], dtype=bool)


def laplace(uniforms):
    """Standard Laplace variates by inverse CDF."""
    centred = uniforms - 0.5
    with np.errstate(divide="ignore"):
        return -np.sign(centred) * np.log1p(-2.0 * np.abs(centred))


def laplace_within(uniforms, low, high):
    """Standard Laplace variates conditioned on ``[low, high]`` (``low <= 0 <= high``), by
    inverse CDF: the law of diffprivlib's rejection sampler in ``LaplaceBoundedDomain``."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        below = 0.5 * np.exp(low)         # P(L < low)
        above = 0.5 * np.exp(-high)       # P(L > high)
        mass = 1.0 - below - above
        p = below + uniforms * mass       # CDF value of the draw, from the left
        q = above + (1.0 - uniforms) * mass  # 1 - p, from the right, without cancellation
        draw = np.where(p < 0.5, np.log(2.0 * p), -np.log(2.0 * q))
    return np.clip(draw, low, high)


def fit_pca_partitions(fit_one, n_features, n_components, X_train, part_train, n_parts,
                       rngs):
    """A PCA step's ``mean_`` and ``components_`` on every partition of a block, fitted one
    partition after the other on its own training rows and stream.

    Parameters
    ----------
    fit_one : callable
        ``fit_one(rows, rng)``: ``(mean, components)`` of one partition's fit, or None where
        the real fit raises.
    n_features, n_components : int
    X_train : ndarray of shape (n_train, n_features)
    part_train : ndarray of shape (n_train,), int
        Partition of each training row within the block.
    n_parts : int
    rngs : list of numpy.random.Generator
        One stream per partition.

    Returns
    -------
    mean : ndarray of shape (n_parts, n_features)
    components : ndarray of shape (n_parts, n_components, n_features)
        Placeholders (zeros, and the first unit vectors) for a partition without training
        rows or whose fit raises.
    failed : ndarray of shape (n_parts,), bool
        Where ``fit_one`` returned None.
    """
    mean = np.zeros((n_parts, n_features))
    components = np.tile(np.eye(n_features)[:n_components], (n_parts, 1, 1))
    failed = np.zeros(n_parts, dtype=bool)
    order = np.argsort(part_train, kind="stable")
    starts = np.searchsorted(part_train[order], np.arange(n_parts + 1))
    for p in range(n_parts):
        rows = X_train[order[starts[p]:starts[p + 1]]]
        fitted = fit_one(rows, rngs[p]) if len(rows) else (mean[p], components[p])
        if fitted is None:
            failed[p] = True
        else:
            mean[p], components[p] = fitted
    return mean, components, failed


def transform_pca_partitions(mean, components, failed, block):
    """A block's training and held-out rows, each through its partition's PCA
    (:func:`project`); NaN rows where the partition's fit raised (``failed``), which the
    engine scores ``FIT_FAILED``.

    Parameters
    ----------
    mean, components, failed
        As :func:`fit_pca_partitions` returns them.
    block : skdptune._batched.contract.Block

    Returns
    -------
    X_train, X_val : ndarray of shape (n_rows, n_components)
    """
    X_train = project(mean, components, block.X_train, block.part_train)
    X_val = project(mean, components, block.X_val, block.part_val)
    X_train[failed[block.part_train]] = np.nan
    X_val[failed[block.part_val]] = np.nan
    return X_train, X_val


def project(mean, components, X, part):
    """scikit-learn's PCA ``transform`` without whitening (``X @ components.T - mean @
    components.T``), each row with its partition's fit.

    Parameters
    ----------
    mean : ndarray of shape (n_parts, n_features)
    components : ndarray of shape (n_parts, n_components, n_features)
    X : ndarray of shape (n_rows, n_features)
    part : ndarray of shape (n_rows,), int

    Returns
    -------
    projected : ndarray of shape (n_rows, n_components)
    """
    out = np.einsum("ij,ikj->ik", X, components[part])
    return out - np.einsum("ij,ikj->ik", mean, components)[part]


def nearest_centres(X, centres, part, second=False):
    """Each row's first nearest centre of its partition, and its squared Euclidean distances
    to the nearest and (``second``) the second nearest: a running minimum over the centres,
    one row-sized temporary at a time.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
    centres : ndarray of shape (n_parts, n_centres, n_features)
    part : ndarray of shape (n_rows,), int
        Partition of each row within the block.
    second : bool, default=False
        Whether to track the second nearest.

    Returns
    -------
    labels : ndarray of shape (n_rows,), int
        The first of the nearest centres on ties, as ``argmin`` (diffprivlib's labels).
    distances : ndarray of shape (n_rows, 2)
        Squared distances to the nearest and the second nearest (inf with ``second=False``),
        each ``((x - c) ** 2).sum()``, diffprivlib's expression.
    """
    labels = np.zeros(len(X), dtype=np.intp)
    best = np.full((len(X), 2), np.inf)
    for k in range(centres.shape[1]):
        distance = ((X - centres[part, k]) ** 2).sum(axis=1)
        closer = distance < best[:, 0]
        if second:
            best[:, 1] = np.where(closer, best[:, 0], np.minimum(best[:, 1], distance))
        labels[closer] = k
        best[:, 0] = np.where(closer, distance, best[:, 0])
    return labels, best


def label_sums(X, labels, part, n_parts, n_centres):
    """Each partition's count of rows per label and per-feature sum of their values.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
    labels : ndarray of shape (n_rows,), int
        In ``[0, n_centres)``.
    part : ndarray of shape (n_rows,), int
    n_parts, n_centres : int

    Returns
    -------
    counts : ndarray of shape (n_parts, n_centres), int
    sums : ndarray of shape (n_parts, n_centres, n_features)
    """
    groups = part * n_centres + labels
    size = n_parts * n_centres
    counts = np.bincount(groups, minlength=size).reshape(n_parts, n_centres)
    sums = np.stack([np.bincount(groups, weights=X[:, j], minlength=size)
                     for j in range(X.shape[1])], axis=-1)
    return counts, sums.reshape(n_parts, n_centres, X.shape[1])
