"""Is the released model better than a trivial one? Decided from released outputs only.

At the end of ``fit`` both searches call :func:`warn_if_useless`, which issues a
:class:`~skdptune.exceptions.UselessModelWarning` when :func:`trivial_findings` finds one of:

- **A constant linear classifier.** A released diffprivlib ``LogisticRegression`` (the whole
  estimator or a pipeline's last step) whose ``coef_`` and ``intercept_`` predict one class for
  every row of L2 norm at most its declared ``data_norm``. For two classes the decision
  ``x @ w + b`` ranges over ``[b - ||w|| D, b + ||w|| D]`` on that ball, so the prediction is
  constant exactly when ``|b| >= ||w|| D``. With more classes (one-vs-rest, argmax of the
  decisions) class ``c`` wins everywhere exactly when ``b_c - b_j >= ||w_c - w_j|| D`` for every
  other class ``j``. In a pipeline, ``D`` bounds the rows *reaching the classifier* (the
  declaration diffprivlib clips to during fit). When every earlier step is a diffprivlib
  ``StandardScaler`` with declared ``bounds``, those rows also lie in the box the released
  ``mean_`` and ``scale_`` map the bounds to, and a decision that keeps its sign on that box
  (interval arithmetic, exact for a box) is constant too. Other earlier steps leave the ball
  alone: a classifier constant only on their (smaller) image goes unreported.
- **A score no better than a trivial model's.** ``best_score_`` below ``baseline + k *
  best_score_std_`` (``k = 2``, :data:`MARGIN_STDS`), where ``baseline`` is what a constant
  predictor is guaranteed to score *whatever the data*:

  - accuracy or balanced accuracy: ``1 / len(classes_)`` (the most frequent class scores at
    least that; a random guess scores it in expectation; with imbalanced classes the majority
    scores more, which cannot be known privately, so the test is lenient there);
  - :class:`~skdptune.utility.BoundedSquaredErrorScorer` (``LinearRegression(bounds_y=...)``
    with ``scoring=None``): ``0.75``, what predicting the middle of ``bounds_y`` scores at
    least, since a clipped target is at most half the range from the middle, so each record's
    ``1 - (error / range)**2`` is at least ``1 - 1/4``. The middle's true score depends on the
    data (``1 - 1/12`` for targets uniform on the bounds), so a model can lose to it and still
    pass this test.

  ``best_score_`` is Laplace noise of standard deviation ``s = best_score_std_`` around the
  mean partition utility (grid search) or the best trial's held-out score (randomized search,
  optimistic: the largest of several). For a model exactly at the baseline, the warning is
  missed with probability ``P(L > k s) = exp(-k sqrt(2)) / 2`` (2.96 % at ``k = 2``); for a
  model above the baseline by ``d >= k s`` it is a false alarm with probability
  ``exp(-(d / s - k) sqrt(2)) / 2`` (50 % at ``d = k s``, 2.96 % at ``d = 2 k s``): the warning
  then says the released outputs cannot tell the model from a trivial one, which is true.
  Decided only when the margin stays within half the way to a perfect score, ``baseline + k s
  <= (baseline + 1) / 2``, so that a model halfway between trivial and perfect is flagged with
  probability at most 1/2 (and one at ``baseline + 2 k s`` with 2.96 %): a noisier estimate
  cannot tell a good model from a trivial one, and a warning on nearly every fit would be
  noise (binary accuracy: ``s <= 0.125``; with the grid search's defaults, ``s = sqrt(2) /
  (n_partitions * 0.1 * selection epsilon)``). Not decided when ``best_score_std_`` is NaN
  (the doubling selector's own estimate, which has no closed-form noise law) or when there is
  no ``best_score_``, nor when the lead rule below is decided and the lead is at least
  :data:`LEAD_RESOLUTION`: the released model itself then clearly beats a trivial one, which
  a noisy ``best_score_`` of the partition fits cannot overrule.

- **A released lead over a trivial model that is not positive.** The grid search spends
  ``check_share`` of its refit's budget on one Laplace estimate, released as ``trivial_lead_``:
  the released model's mean per-record score on the training data minus a trivial model's
  (:func:`estimate_lead`; accuracy against the most frequent class, the bounded squared error
  against predicting the middle of ``bounds_y``). It is warned on when ``trivial_lead_ <
  k * trivial_lead_std_``: the miss and false-alarm rates are those of the score rule above.
  Decided only when ``k * trivial_lead_std_ <= LEAD_RESOLUTION`` (5 points of the score):
  noisier, the estimate cannot tell a useful model from a trivial one. Unlike the score rule,
  this one compares the model actually released (fitted on all the records, with the
  candidate as written) with the best constant (accuracy) or a constant better than the
  worst case (the middle of ``bounds_y`` on the data, not the 0.75 it scores at least): it
  catches the diffprivlib ``LinearRegression`` that clips nearly every prediction to an end of
  ``bounds_y``, which the score rule cannot see.

Apart from :func:`estimate_lead` (a DP mechanism, charged by the search), nothing here reads
the data or a partition utility: only ``best_score_``, ``best_score_std_``,
``trivial_lead_``, ``trivial_lead_std_``, ``scorer_``, ``best_estimator_`` (released) and
declared parameters. That is post-processing of the released outputs, so it costs no
privacy. ``len(classes_)`` is read from the released model, which holds it anyway
(diffprivlib takes ``classes_`` from the labels without privacy: a known limit of the faults
page).
"""

import math
import warnings

import numpy as np
from diffprivlib.mechanisms import Laplace
from diffprivlib.models import LogisticRegression as DPLogisticRegression
from diffprivlib.models import StandardScaler as DPStandardScaler
from diffprivlib.utils import check_random_state
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.pipeline import Pipeline

from .dp_fit import private_fit_context
from .exceptions import UselessModelWarning
from .selection.score import estimate_std
from .utility import (
    BoundedR2Scorer,
    BoundedSquaredErrorScorer,
    declared_bounds_y,
    scores_accuracy,
)

#: ``k``: how many noise standard deviations ``best_score_`` must clear above the baseline.
MARGIN_STDS = 2.0

#: The best score of every scorer with a baseline (accuracy, the bounded squared error, R²).
PERFECT_SCORE = 1.0

#: What predicting the middle of ``bounds_y`` scores at least under
#: :class:`~skdptune.utility.BoundedSquaredErrorScorer`, whatever the data.
MIDDLE_OF_BOUNDS_Y_SCORE = 0.75

#: A score :func:`estimate_lead` knows a trivial model for: accuracy (the most frequent class).
ACCURACY = "accuracy"

#: A score :func:`estimate_lead` knows a trivial model for:
#: :class:`~skdptune.utility.BoundedSquaredErrorScorer` (the middle of ``bounds_y``).
BOUNDED_SQUARED_ERROR = "bounded squared error"

#: How much one record can move ``n`` times the mean per-record lead, whatever the released
#: model (fixed: it is a DP output) when the record is replaced (replace-one, ``n`` public).
#: Accuracy: the model's term moves by at most 1 and the most frequent class's share by at
#: most 1 (one count down, one up), hence 2. Bounded squared error: with ``a = |y - middle|
#: / range`` in ``[0, 1/2]`` and ``b = |pred - y| / range`` (both clipped), each record's
#: lead ``u_model - u_middle = a**2 - b**2`` lies in ``[-3/4, 1/4]``: at most ``a**2 <= 1/4``,
#: and at least ``a**2 - (a + 1/2)**2 = -a - 1/4 >= -3/4`` since ``b <= a + 1/2`` (the
#: prediction is clipped to the bounds too); a range of 1.
LEAD_SENSITIVITY = {ACCURACY: 2.0, BOUNDED_SQUARED_ERROR: 1.0}

#: The largest ``MARGIN_STDS * trivial_lead_std_`` at which the lead rule is decided.
LEAD_RESOLUTION = 0.05


def constant_class(model):
    """The class a released linear classifier predicts on its whole declared domain, or None.

    Parameters
    ----------
    model : estimator
        A fitted diffprivlib ``LogisticRegression``, or a pipeline ending in one; anything else
        (or ``data_norm=None``) gives None (not decided).

    Returns
    -------
    label or None
        The class predicted for every row of L2 norm at most ``data_norm`` reaching the
        classifier, or, in a pipeline whose earlier steps are all diffprivlib
        ``StandardScaler`` with declared ``bounds``, for every row of the box those steps map
        the declared bounds to. None when some such row gets another class (or it cannot be
        decided).
    """
    steps = _steps(model)
    final = steps[-1]
    if not isinstance(final, DPLogisticRegression) or final.data_norm is None:
        return None
    coef = getattr(final, "coef_", None)
    intercept = getattr(final, "intercept_", None)
    classes = getattr(final, "classes_", None)
    if coef is None or intercept is None or classes is None:
        return None
    coef, intercept = np.atleast_2d(coef), np.ravel(intercept)
    data_norm = float(final.data_norm)
    box = _image_box(steps[:-1], coef.shape[1])

    def always_positive(weights, bias):
        # x @ weights + bias >= 0 for every row reaching the classifier: on the ball of
        # radius D its minimum is bias - ||weights|| D; on a box [low, high] it is bias plus,
        # per feature, the smaller of weights * low and weights * high. The rows lie in both
        # (the ball as declared, the box as the earlier steps map it), so either suffices.
        if bias - np.linalg.norm(weights) * data_norm >= 0:
            return True
        if box is None:
            return False
        low, high = box
        return bias + np.sum(np.minimum(weights * low, weights * high)) >= 0

    if coef.shape[0] == 1:
        # Binary: classes_[1] where x @ w + b > 0, else classes_[0].
        if always_positive(-coef[0], -float(intercept[0])):
            return classes[0]
        if always_positive(coef[0], float(intercept[0])):
            return classes[1]  # (a decision of exactly 0, on the boundary, gives classes_[0])
        return None
    # One-vs-rest: the argmax of the decisions; class c wins everywhere iff each pairwise
    # difference (w_c - w_j) @ x + (b_c - b_j) stays >= 0. Only a class that wins at some row
    # can: try each.
    for winner in range(coef.shape[0]):
        if all(always_positive(coef[winner] - coef[other], intercept[winner] - intercept[other])
               for other in range(coef.shape[0]) if other != winner):
            return classes[winner]
    return None


def _image_box(steps, n_features):
    """``(low, high)`` bounding the rows ``steps`` output for rows inside their declared
    bounds, or None when a step's output is not known to lie in a box.

    Only diffprivlib's ``StandardScaler`` with declared ``bounds`` is known: it maps
    ``[lower, upper]`` to ``[(lower - mean_) / scale_, (upper - mean_) / scale_]`` with its
    released ``mean_`` and ``scale_`` (public once the model is).
    """
    if not steps:
        return None
    box = None
    for step in steps:
        if not isinstance(step, DPStandardScaler) or step.bounds is None:
            return None
        try:
            low, high = (np.broadcast_to(np.asarray(bound, dtype=float), (n_features,))
                         for bound in step.bounds)
        except ValueError:  # not the classifier's features: not decided
            return None
        if box is not None:  # the declared bounds already bound the input; keep the tighter
            low, high = np.maximum(low, box[0]), np.minimum(high, box[1])
        mean = step.mean_ if step.with_mean else 0.0
        scale = step.scale_ if step.with_std else 1.0
        ends = ((low - mean) / scale, (high - mean) / scale)
        box = (np.minimum(*ends), np.maximum(*ends))
    return box


def _steps(model):
    """The model's steps, nested pipelines flattened (a lone estimator is one step)."""
    steps = [model]
    while isinstance(steps[-1], Pipeline):
        steps = steps[:-1] + [step for _, step in steps[-1].steps]
    return steps


def _box_note(model):
    """How the earlier steps' box enters :func:`constant_class`, for the message."""
    steps = _steps(model)
    coef = getattr(steps[-1], "coef_", None)
    if coef is None or _image_box(steps[:-1], np.atleast_2d(coef).shape[1]) is None:
        return ""
    return " (or in the box its StandardScaler steps map their declared bounds to)"


def _classifier(model):
    final = model
    while isinstance(final, Pipeline):
        final = final.steps[-1][1]
    return final


def trivial_baseline(scorer, model):
    """What a constant predictor scores at least, whatever the data, under ``scorer`` (for
    R², what the best constant scores: a model below it is no better than a constant).

    Parameters
    ----------
    scorer : callable
        The search's ``scorer_``.
    model : estimator or None
        The released model (its ``classes_`` are public once released).

    Returns
    -------
    (float, str) or None
        The baseline in the scorer's units and what it is, or None when none is known.
    """
    if isinstance(scorer, BoundedSquaredErrorScorer):
        return (MIDDLE_OF_BOUNDS_Y_SCORE,
                "what predicting the middle of bounds_y scores at least, whatever the data "
                "(a clipped target is at most half the range from it)")
    if isinstance(scorer, BoundedR2Scorer):
        return (0.0, "the R² of predicting the held-out targets' mean")
    if model is None:
        return None
    score_func = getattr(scorer, "_score_func", None)
    is_accuracy = (
        (score_func in (accuracy_score, balanced_accuracy_score)
         and getattr(scorer, "_sign", 1) == 1 and not getattr(scorer, "_kwargs", {}))
        or (type(scorer).__name__ == "_PassthroughScorer" and scores_accuracy(model))
    )
    classes = getattr(_classifier(model), "classes_", None)
    if not is_accuracy or classes is None:
        return None
    try:
        classes = np.asarray(classes)
    except ValueError:  # several outputs with different class counts
        return None
    if classes.ndim != 1 or len(classes) < 2:
        return None
    return (1.0 / len(classes),
            f"1/{len(classes)}, what a constant prediction of the most frequent of the "
            f"{len(classes)} classes scores at least")


def lead_kind(estimator, scoring, utility_range):
    """Which trivial model :func:`estimate_lead` compares the released model with, decided
    from the search's parameters alone (before the data), or None when it knows none.

    Parameters
    ----------
    estimator : estimator
        The estimator being tuned (every candidate shares its kind of score).
    scoring : str, callable or None
        The selection's metric (as for :func:`skdptune.utility.make_utility`).
    utility_range : (float, float) or None
        The search's ``utility_range``.

    Returns
    -------
    str or None
        :data:`ACCURACY` (``scoring="accuracy"``, or None for a classifier scored by
        accuracy), :data:`BOUNDED_SQUARED_ERROR` (the search's default score of diffprivlib's
        ``LinearRegression`` with ``bounds_y``), else None.
    """
    if isinstance(scoring, BoundedSquaredErrorScorer) or (
            scoring is None and utility_range is None
            and declared_bounds_y(estimator, required=False) is not None):
        return BOUNDED_SQUARED_ERROR
    if scoring == "accuracy" or (scoring is None and scores_accuracy(estimator)):
        return ACCURACY
    return None


def _lead(kind, model, X, y):
    """The mean per-record lead of ``model`` over the trivial model of ``kind`` (not private)."""
    if kind == ACCURACY:
        y = np.asarray(y)
        prediction = np.asarray(model.predict(X)).reshape(y.shape)
        correct = prediction == y
        if correct.ndim == 2:  # several outputs: a record is right when every output is
            correct = correct.all(axis=1)
        _, counts = np.unique(y, axis=0 if y.ndim == 2 else None, return_counts=True)
        return float(np.mean(correct)) - counts.max() / len(y)
    bounds_y = declared_bounds_y(model)
    y = np.asarray(y, dtype=float)
    middle = np.broadcast_to((bounds_y[0] + bounds_y[1]) / 2, y.shape)
    scorer = BoundedSquaredErrorScorer()
    return float(np.mean(scorer.per_record(model, X, y) - scorer.scores_of(middle, y, bounds_y)))


def estimate_lead(kind, model, X, y, *, epsilon, random_state=None):
    """A DP estimate of how much better the released model scores than a trivial one.

    The mean over the ``n`` training records of the released model's per-record score minus a
    trivial model's, in ``[0, 1]`` score units: for :data:`ACCURACY`, the model's accuracy
    minus the share of the most frequent class (what the best constant prediction scores);
    for :data:`BOUNDED_SQUARED_ERROR`, the model's ``1 - (clip(pred) - clip(y))**2 / (high -
    low)**2`` minus that of predicting ``(low + high) / 2``, with the released model's
    ``bounds_y``. On the training records, since every record is spent on the refit; a DP
    model's training score tells little more than its test score.

    Parameters
    ----------
    kind : str
        From :func:`lead_kind`.
    model : estimator
        The released model (a DP output: fixed, not a function of the records here).
    X, y : array-like
        The private training data.
    epsilon : float
        The estimate's budget.
    random_state : None, int or numpy.random.RandomState, default=None
        None draws the noise from :mod:`secrets`; a seed gives no guarantee.

    Returns
    -------
    lead : float
        The estimate, NaN when the model cannot predict the records (then nothing about them
        is released beyond that failure, whose message is withheld).
    std : float
        The noise's standard deviation, ``sqrt(2) * LEAD_SENSITIVITY[kind] / (n * epsilon)``:
        public.

    Notes
    -----
    Privacy: the Laplace mechanism on a mean of sensitivity ``LEAD_SENSITIVITY[kind] / n``
    (replace-one adjacency, ``n`` public; the model is a released DP output, so the two
    compose sequentially by adaptive composition): ``epsilon``-DP.
    """
    n = len(y)
    sensitivity = LEAD_SENSITIVITY[kind] / n
    std = estimate_std(sensitivity, epsilon)  # the Laplace noise's std, as best_score_'s
    try:
        with private_fit_context():  # predictions on private records: nothing shown
            lead = _lead(kind, model, X, y)
    except Exception:  # data-dependent: its message could quote a record
        return float("nan"), std
    rng = check_random_state(random_state, secure=True)
    noise = Laplace(epsilon=epsilon, sensitivity=sensitivity, random_state=rng)
    return float(noise.randomise(lead)), std


def trivial_findings(best_score, best_score_std, scorer, model, lead=None, lead_std=None):
    """The reasons the released outputs show a model no better than a trivial one.

    Parameters
    ----------
    best_score, best_score_std : float or None
        The search's ``best_score_`` and ``best_score_std_`` (DP outputs; None or NaN when not
        released).
    scorer : callable
        The search's ``scorer_``.
    model : estimator or None
        The released ``best_estimator_``, or None.
    lead, lead_std : float or None, default=None
        The grid search's ``trivial_lead_`` and ``trivial_lead_std_`` (DP outputs; None or
        NaN when not released).

    Returns
    -------
    list of str
        One sentence per finding, quoting the released or public figures it used; empty when
        none.
    """
    findings = []
    lead_decided = (lead is not None and lead_std is not None and not math.isnan(lead)
                    and MARGIN_STDS * lead_std <= LEAD_RESOLUTION)
    if lead_decided and lead < MARGIN_STDS * lead_std:
        findings.append(
            f"trivial_lead_={lead:.3g} (noise std trivial_lead_std_={lead_std:.2g}) is below "
            f"{MARGIN_STDS:g} * {lead_std:.2g} = {MARGIN_STDS * lead_std:.3g}: on the training "
            "data, the released model does not score clearly better than a trivial one (the "
            "most frequent class, or the middle of bounds_y)."
        )
    if model is not None:
        label = constant_class(model)
        if label is not None:
            final = _classifier(model)
            label = label.item() if isinstance(label, np.generic) else label
            findings.append(
                f"The released {type(final).__name__} predicts class {label!r} for every row "
                f"of L2 norm <= data_norm={final.data_norm:g} reaching it{_box_note(model)} "
                "(from its released coef_ and intercept_): on the rows it was declared to "
                "see, it is a constant predictor (rows of larger norm, which diffprivlib "
                "clips only when fitting, may get another class)."
            )
    # A decided lead of LEAD_RESOLUTION or more measures the released model itself as clearly
    # useful; best_score_ only the partition fits the selection saw, more noisily, and would
    # add its false alarms (HI at a total of 1: 2 in 3 models at 79 % against 63 %). A smaller
    # lead leaves the score rule in force: the lead is measured on the training records, where
    # a model fitted to noise can lead a constant by a little.
    if lead_decided and lead >= LEAD_RESOLUTION:
        return findings
    if best_score is None or best_score_std is None:
        return findings
    if math.isnan(best_score) or math.isnan(best_score_std):
        return findings
    baseline = trivial_baseline(scorer, model)
    if baseline is None:
        return findings
    level, what = baseline
    threshold = level + MARGIN_STDS * best_score_std
    # Too noisy to tell (the margin reaches past halfway to a perfect score, 1 in both
    # scorers' units): a warning would then fire on good models as often as on trivial ones.
    if threshold > (level + PERFECT_SCORE) / 2:
        return findings
    if best_score < threshold:
        findings.append(
            f"best_score_={best_score:.3g} (noise std best_score_std_={best_score_std:.2g}) is "
            f"below {level:.3g} + {MARGIN_STDS:g} * {best_score_std:.2g} = {threshold:.3g}, "
            f"where {level:.3g} is {what}: the released outputs do not show the selected "
            "candidate beats a trivial model."
        )
    return findings


def warn_if_useless(search, stacklevel):
    """Issue a :class:`~skdptune.exceptions.UselessModelWarning` when :func:`trivial_findings`
    finds anything in the search's released attributes.

    Parameters
    ----------
    search : BasePrivateSearch
        A fitted search: only its released attributes are read.
    stacklevel : int
        Stack level of the user's call of ``fit``, as for :func:`warnings.warn` called by the
        caller of this function.
    """
    findings = trivial_findings(getattr(search, "best_score_", None),
                                getattr(search, "best_score_std_", None),
                                getattr(search, "scorer_", None),
                                getattr(search, "best_estimator_", None),
                                getattr(search, "trivial_lead_", None),
                                getattr(search, "trivial_lead_std_", None))
    if not findings:
        return
    if hasattr(search, "n_partitions_"):
        fewer = (f"fewer partitions (n_partitions_={search.n_partitions_}; see "
                 "search.forecast(X))")
    else:
        fewer = ("fewer trials (a smaller n_iter: with epsilon= the total, each trial gets "
                 "more of it)")
    warnings.warn(
        "The released model looks no better than a trivial one. " + " ".join(findings)
        + f" Try a larger epsilon, {fewer}, the untuned default candidate alone, or a grid "
        "of better regularised candidates (the user guide, \"Choosing a method and a "
        "budget\": \"A released model no better than a trivial one\"). Decided from DP "
        "outputs and public parameters only (post-processing: no data were read, nothing was "
        "charged).",
        UselessModelWarning,
        stacklevel=stacklevel + 1,
    )
