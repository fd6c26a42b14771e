"""Is the released model better than a trivial one? Decided from released outputs only.

At the end of ``fit`` both searches call :func:`warn_if_useless`, which issues a
:class:`~skdptune.exceptions.UselessModelWarning` when :func:`trivial_findings` finds one of
the following. Each rule speaks about the released model only, and each is right both ways
with a stated probability: a model useful by the rule's margin is warned with probability at
most :data:`FALSE_ALARM` (2.96 %), and a useless one is missed with a probability the rule
computes from public figures (the noise's standard deviation, the number of records) and
states in its docstring. Where no rule applies, nothing is said.

- **A constant linear classifier** (both searches; exact, no error). A released
  diffprivlib ``LogisticRegression`` (the whole estimator or a pipeline's last step) whose
  ``coef_`` and ``intercept_`` predict one class for every row of L2 norm at most its
  declared ``data_norm``. For two classes the decision ``x @ w + b`` ranges over ``[b -
  ||w|| D, b + ||w|| D]`` on that ball, so the prediction is constant exactly when ``|b| >=
  ||w|| D``. With more classes (one-vs-rest, argmax of the decisions) class ``c`` wins
  everywhere exactly when ``b_c - b_j >= ||w_c - w_j|| D`` for every other class ``j``. In a
  pipeline, ``D`` bounds the rows *reaching the classifier* (the declaration diffprivlib
  clips to during fit). When every earlier step is a diffprivlib ``StandardScaler`` with
  declared ``bounds``, those rows also lie in the box the released ``mean_`` and ``scale_``
  map the bounds to, and a decision that keeps its sign on that box (interval arithmetic,
  exact for a box) is constant too. Other earlier steps leave the ball alone: a classifier
  constant only on their (smaller) image goes unreported.
- **A lead over the best constant that is not clearly positive** (:class:`PrivateGridSearchCV
  <skdptune.PrivateGridSearchCV>`; :func:`lead_test`). The grid search spends
  ``check_share`` of its refit's budget (of ``selection_epsilon``, when given) on
  ``trivial_lead_``, a Laplace estimate (noise std ``s = trivial_lead_std_``) of the
  released model's mean per-record lead on its training records over the best constant
  there (:func:`estimate_lead`): the most frequent class under accuracy, the targets' mean
  under a squared error (``scoring=None``, ``"r2"``,
  ``"neg_mean_squared_error"`` or the bounded scorers, for a regressor with ``bounds_y``; in
  units of ``(high - low)**2``, so the lead is the training R² times ``var(y) / (high -
  low)**2``). It warns when ``trivial_lead_ < m - 2 s``, ``m`` the kind's
  :data:`USEFUL_MARGIN` (2 accuracy points; 0.005 of ``(high - low)**2``, an R² of 0.08 to
  0.5 for ``bounds_y`` 4 to 10 standard deviations of ``y`` wide). A model whose lead is
  ``m`` or more is warned with probability at most ``exp(-2 sqrt(2)) / 2 = 2.96 %``; one whose
  lead is 0 or less is missed with probability at most ``exp(-(m - 2 s) sqrt(2) / s) / 2``
  (at most 2.96 % once ``s <= m / 4``; a larger ``s``, from a small budget or few records,
  misses more, and the warning's message quotes the figure). The partition fits'
  ``best_score_`` decides nothing: fitted on ``k`` times fewer records, they can score far
  below a useful refit (issue 33: a regression with test R² 0.41 was warned from it).
- **A best trial no better than a trivial baseline** (:class:`PrivateRandomizedSearchCV
  <skdptune.PrivateRandomizedSearchCV>` without ``subsample``, whose released model is the
  best trial's; :func:`trials_test`). ``best_score_`` is that model's noisy held-out score;
  the baseline is what any constant predictor scores at least whatever the data: ``1 /
  n_classes`` under accuracy (the most frequent class scores at least that, more with
  imbalanced classes, which cannot be known privately: the rule is lenient there), 0.75
  under :class:`~skdptune.utility.BoundedSquaredErrorScorer` (the middle of ``bounds_y``:
  a clipped target is at most half the range from it). It warns when ``best_score_`` is
  below a threshold computed from public figures (the number of records, the held-out
  share, the per-trial epsilon and the mean number of trials) such that a released model
  scoring the baseline plus :data:`USEFUL_MARGIN` or more on its held-out records is warned
  with probability at most 2.96 %, counting the Laplace noise and the randomness of the
  held-out count ``best_score_`` divides by its expectation; when no trial scores above the
  baseline, the probability of a miss (bounded over the best of the trials by the mean
  number of trials times one trial's tail) is computed with it.

Nothing is said for other scorers (balanced accuracy, F1, a callable, an error without
``bounds_y``...), for a randomized search with ``subsample`` (its released model is a
final fit, not a scored trial), for a grid search without ``trivial_lead_``
(``check_share=0``, a single candidate, no refit), nor from the doubling selector's own
estimate: the library cannot tell, and says nothing rather than something wrong.

Apart from :func:`estimate_lead` (a DP mechanism, charged by the search), nothing here reads
the data or a partition utility: only ``best_score_``, ``trivial_lead_``, their stds,
``scorer_``, ``best_estimator_`` (released) and public figures of the plan (the number of
records is public under the library's replace-one adjacency). That is post-processing of the
released outputs, so it costs no privacy. ``len(classes_)`` is read from the released model,
which holds it anyway (diffprivlib takes ``classes_`` from the labels without privacy: a
known limit of the faults page). The rates cover the noise and the held-out count; a lead
measured on the training records can exceed the model's lead on new records (a model fitted
with a large epsilon can fit its training records' noise), which no released figure bounds.
"""

import math
import warnings
from dataclasses import dataclass

import numpy as np
from diffprivlib.mechanisms import Laplace
from diffprivlib.models import LogisticRegression as DPLogisticRegression
from diffprivlib.models import StandardScaler as DPStandardScaler
from diffprivlib.utils import check_random_state
from scipy import stats
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.pipeline import Pipeline

from ._dp_fit import private_fit_context
from ._stack import user_stacklevel
from ._distributed._stand_in import OnWorkers
from .exceptions import UselessModelWarning
from .selection._score import estimate_std
from ._utility import (
    BoundedR2Scorer,
    BoundedSquaredErrorScorer,
    declared_bounds_y,
    scores_accuracy,
)

#: ``k``: how many noise standard deviations below the margin the grid search's threshold is.
MARGIN_STDS = 2.0

#: The largest probability that either rule warns on a model useful by its margin:
#: ``exp(-MARGIN_STDS * sqrt(2)) / 2``, the Laplace tail ``MARGIN_STDS`` stds out (2.96 %).
FALSE_ALARM = math.exp(-MARGIN_STDS * math.sqrt(2.0)) / 2

#: What predicting the middle of ``bounds_y`` scores at least under
#: :class:`~skdptune.utility.BoundedSquaredErrorScorer`, whatever the data.
MIDDLE_OF_BOUNDS_Y_SCORE = 0.75

#: A score :func:`estimate_lead` knows a trivial model for: accuracy (the most frequent class).
ACCURACY = "accuracy"

#: A score :func:`estimate_lead` knows a trivial model for: a squared error of a regressor
#: with ``bounds_y`` (the targets' mean), in units of ``(high - low)**2``.
BOUNDED_SQUARED_ERROR = "bounded squared error"

#: How much one record can move ``n`` times the mean per-record lead, whatever the released
#: model (fixed: it is a DP output) when the record is replaced (replace-one, ``n`` public).
#: Accuracy: the model's term moves by at most 1 and the most frequent class's share by at
#: most 1 (one count down, one up), hence 2. Squared error against the mean, in units of
#: ``(high - low)**2`` with targets and predictions clipped to ``bounds_y``: the model's sum
#: of squared errors moves by at most 1 (one term in ``[0, 1]``), and so does the sum of
#: squares about the mean, ``SST = min_c sum (y_i - c)**2``: with ``y_j`` replaced,
#: ``SST' <= sum_{i != j} (y_i - mean)**2 + (y_j' - mean)**2 <= SST + 1``, and the same the
#: other way; hence 2.
LEAD_SENSITIVITY = {ACCURACY: 2.0, BOUNDED_SQUARED_ERROR: 2.0}

#: What one record moves ``n`` times the lead by under zero-out adjacency (a null record
#: contributes nothing), for the privacy report's comparison figure. Accuracy: a null record
#: removes its own term (0 or 1) and at most one from the most frequent class's count, both
#: downwards: at most 1. Squared error against the mean: the model's sum of squared errors
#: loses one term in ``[0, 1]``, and ``SST`` falls by at most 1 (``SST <= SST' + (y_j - c')**2
#: <= SST' + 1`` at the others' mean ``c'``) and never rises (the old mean is still a
#: candidate constant): the difference moves by at most 1.
LEAD_ZERO_OUT = {ACCURACY: 1.0, BOUNDED_SQUARED_ERROR: 1.0}


def lead_zero_out_factor(kind):
    """``LEAD_ZERO_OUT[kind] / LEAD_SENSITIVITY[kind]``: what the ``trivial_lead_`` estimate
    spends per unit of its epsilon under zero-out adjacency (the Laplace mechanism's epsilon
    scales with the sensitivity)."""
    return LEAD_ZERO_OUT[kind] / LEAD_SENSITIVITY[kind]


#: The lead (accuracy points; units of ``(high - low)**2``) above which a model counts as
#: useful: one that leads by this much is warned with probability at most
#: :data:`FALSE_ALARM`. For a squared error, the lead is the R² times ``var(y) / (high -
#: low)**2``: 0.005 is an R² of 0.08 for ``bounds_y`` four standard deviations wide, 0.5 for
#: ten.
USEFUL_MARGIN = {ACCURACY: 0.02, BOUNDED_SQUARED_ERROR: 0.005}

#: Standard deviations of the held-out count either side of its expectation over which the
#: randomized search's rule sums (the rest of the binomial has probability below 1e-30).
_COUNT_SPAN = 12.0


@dataclass(frozen=True)
class TrivialTest:
    """One rule's decision on a fitted search: a released figure against a threshold.

    Attributes
    ----------
    statistic : str
        The released attribute it reads (``"trivial_lead_"`` or ``"best_score_"``).
    value : float
        Its value (a DP output).
    threshold : float
        The rule warns when ``value < threshold`` (same units).
    margin : float
        How far above the trivial model a model must score to count as useful.
    trivial : str
        What the trivial model is, for the message.
    false_alarm : float
        The largest probability of warning on a model useful by ``margin``.
    miss : float
        The largest probability of not warning on a useless model (see the rule).
    """

    statistic: str
    value: float
    threshold: float
    margin: float
    trivial: str
    false_alarm: float
    miss: float

    @property
    def warns(self):
        return self.value < self.threshold


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
    """What a constant predictor scores at least, whatever the data, under ``scorer``.

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
                "0.75, what predicting the middle of bounds_y scores at least whatever the "
                "data (a clipped target is at most half the range from it)")
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


#: Scorings whose trivial model is the targets' mean, for a regressor with ``bounds_y``.
_SQUARED_ERRORS = (None, "r2", "neg_mean_squared_error")


def lead_kind(estimator, scoring, utility_range=None):
    """Which trivial model :func:`estimate_lead` compares the released model with, decided
    from the search's parameters alone (before the data), or None when it knows none.

    Parameters
    ----------
    estimator : estimator
        The estimator being tuned (every candidate shares its kind of score).
    scoring : str, callable or None
        The selection's metric (as for ``skdptune._utility.make_utility``).
    utility_range : (float, float) or None, default=None
        The search's ``utility_range``: it does not change the kind (the lead has its own
        units).

    Returns
    -------
    str or None
        :data:`BOUNDED_SQUARED_ERROR` for a regressor declaring ``bounds_y`` (diffprivlib's
        ``LinearRegression``, :class:`skdptune.linear_model.Ridge`, also at the end of a
        pipeline) scored by ``None``, ``"r2"``, ``"neg_mean_squared_error"`` or the bounded
        scorers; :data:`ACCURACY` for ``scoring="accuracy"``, or None for a classifier scored
        by accuracy; else None.
    """
    squared = (isinstance(scoring, (BoundedSquaredErrorScorer, BoundedR2Scorer))
               or (scoring is None or isinstance(scoring, str)) and scoring in _SQUARED_ERRORS)
    if squared and declared_bounds_y(estimator, required=False) is not None:
        return BOUNDED_SQUARED_ERROR
    if scoring == "accuracy" or (scoring is None and scores_accuracy(estimator)):
        return ACCURACY
    return None


def _lead(kind, model, X, y):
    """The mean per-record lead of ``model`` over the trivial model of ``kind`` (not private)."""
    if isinstance(X, OnWorkers):  # dask input: from per-chunk sums
        return X.lead(kind, model, y)
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
    # The best constant for the squared error on these records: the mean of the clipped
    # targets (it lies within the bounds, so clipping it changes nothing).
    mean = np.broadcast_to(np.mean(np.clip(y, *bounds_y), axis=0), y.shape)
    scorer = BoundedSquaredErrorScorer()
    return float(np.mean(scorer.per_record(model, X, y) - scorer.scores_of(mean, y, bounds_y)))


def estimate_lead(kind, model, X, y, *, epsilon, random_state=None):
    """A DP estimate of how much better the released model scores than the best constant.

    The mean over the ``n`` training records of the released model's per-record score minus
    the best constant's there, in ``[-1, 1]``: for :data:`ACCURACY`, the model's accuracy minus
    the share of the most frequent class; for :data:`BOUNDED_SQUARED_ERROR`, the targets'
    sum of squares about their mean minus the model's sum of squared errors, over ``n (high -
    low)**2``, with targets and predictions clipped to the released model's ``bounds_y`` (the
    training R² times ``var(y) / (high - low)**2``). On the training records, since every
    record is spent on the refit; a DP model's training score tells little more than its
    test score.

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


def _laplace_tail(x, std):
    """``P(L >= x)`` for Laplace noise of standard deviation ``std`` (centred)."""
    scale = std / math.sqrt(2.0)
    return 0.5 * math.exp(-x / scale) if x >= 0 else 1.0 - 0.5 * math.exp(x / scale)


def lead_test(lead, lead_std, kind):
    """The grid search's rule on ``trivial_lead_``, or None when there is no estimate.

    Warns when ``lead < m - MARGIN_STDS * lead_std``, ``m = USEFUL_MARGIN[kind]``.

    Parameters
    ----------
    lead, lead_std : float or None
        ``trivial_lead_`` and ``trivial_lead_std_`` (a DP output and a public figure).
    kind : str or None
        From :func:`lead_kind`.

    Returns
    -------
    TrivialTest or None
        With ``false_alarm``: the probability of a warning when the lead is ``m`` or more,
        at most ``P(L < -MARGIN_STDS * std) = FALSE_ALARM``; ``miss``: of no warning when
        the lead is 0 or less, at most ``P(L >= m - MARGIN_STDS * std)``, ``L`` the Laplace
        noise (exact for a lead of exactly ``m`` or 0).
    """
    if kind is None or lead is None or lead_std is None or math.isnan(lead):
        return None
    margin = USEFUL_MARGIN[kind]
    threshold = margin - MARGIN_STDS * lead_std
    trivial = ("the most frequent class" if kind == ACCURACY
               else "the targets' mean (in units of (high - low)**2 of bounds_y)")
    return TrivialTest("trivial_lead_", lead, threshold, margin, trivial,
                       false_alarm=_laplace_tail(MARGIN_STDS * lead_std, lead_std),
                       miss=_laplace_tail(threshold, lead_std))


def trials_test(best_score, scorer, model, *, n_samples, validation_fraction, trial_epsilon,
                n_iter, utility):
    """The randomized search's rule on ``best_score_``, or None when it cannot tell.

    ``best_score_`` is ``clip((S + L) / E, 0, 1)`` in utility units: ``S`` the released
    trial's sum of per-record utilities over the ``N ~ Binomial(n, validation_fraction)``
    held-out records, ``L`` its Laplace noise of scale ``1 / trial_epsilon``, ``E = n *
    validation_fraction`` the expected count. The threshold ``t`` is the largest with

        ``sum_r P(N = r) P(L < t E - (b + m) r) <= FALSE_ALARM``

    (``b`` the baseline, ``m`` the margin, in utility units): an upper bound on the
    probability of a warning when the released model's held-out mean ``S / N`` is at least
    ``b + m``, since being the best of the trials only makes its noise larger (the event of
    its selection increases with its noise). When every trial's held-out mean is at most
    ``b``, ``best_score_ * E <= b N + max_k L_k`` and ``P(max_k L_k >= x) <= E[K] P(L >= x)``
    (a union bound; ``E[K] = n_iter`` whatever the law), so the probability of a miss is at
    most ``sum_r P(N = r) min(1, n_iter P(L >= t E - b r))``.

    Parameters
    ----------
    best_score : float
        ``best_score_`` (scorer's units).
    scorer : callable
        ``scorer_``.
    model : estimator
        ``best_estimator_``.
    n_samples : int
        The number of records (public).
    validation_fraction, trial_epsilon, n_iter : float
        The search's (public).
    utility : skdptune._utility.BoundedUtility
        The map between the scorer's units and utilities.

    Returns
    -------
    TrivialTest or None
        None without a known baseline, when the margin leaves ``[0, 1]``, or when no
        positive threshold keeps the false alarms within :data:`FALSE_ALARM` (too few
        held-out records for the noise).
    """
    baseline = trivial_baseline(scorer, model)
    if baseline is None or best_score is None or math.isnan(best_score):
        return None
    kind = ACCURACY if not isinstance(scorer, BoundedSquaredErrorScorer) else \
        BOUNDED_SQUARED_ERROR
    level, what = baseline
    width = utility.high - utility.low
    b = (level - utility.low) / width
    m = USEFUL_MARGIN[kind] / width
    if not 0 <= b < b + m <= 1:
        return None
    expected = n_samples * validation_fraction
    spread = math.sqrt(n_samples * validation_fraction * (1 - validation_fraction))
    counts = np.arange(max(0, math.floor(expected - _COUNT_SPAN * spread)),
                       min(n_samples, math.ceil(expected + _COUNT_SPAN * spread)) + 1)
    weights = stats.binom.pmf(counts, n_samples, validation_fraction)
    noise = stats.laplace(scale=1.0 / trial_epsilon)

    def false_alarm(t):
        return float(weights @ noise.cdf(t * expected - (b + m) * counts))

    low, high = 0.0, b + m
    if false_alarm(low) > FALSE_ALARM:
        return None
    for _ in range(60):  # false_alarm grows with t: the largest t within the rate
        middle = (low + high) / 2
        low, high = (middle, high) if false_alarm(middle) <= FALSE_ALARM else (low, middle)
    threshold = low
    miss = float(weights @ np.minimum(1.0, n_iter * noise.sf(threshold * expected
                                                             - b * counts)))
    return TrivialTest("best_score_", best_score, utility.to_score(threshold),
                       USEFUL_MARGIN[kind], what, false_alarm=false_alarm(threshold),
                       miss=miss)


def trivial_findings(test, model):
    """The reasons the released outputs show a model no better than a trivial one.

    Parameters
    ----------
    test : TrivialTest or None
        The search's rule on its released figure (:func:`lead_test`, :func:`trials_test`).
    model : estimator or None
        The released ``best_estimator_``, or None.

    Returns
    -------
    list of str
        One sentence per finding, quoting the released or public figures it used; empty when
        none.
    """
    findings = []
    if test is not None and test.warns:
        findings.append(
            f"{test.statistic}={test.value:.4g} is below {test.threshold:.4g}: the released "
            f"outputs do not show the released model scoring at least {test.margin:g} above "
            f"{test.trivial}. (A model that does is warned with probability at most "
            f"{test.false_alarm:.2%}; a model no better than it goes unwarned with "
            f"probability at most {test.miss:.2%}.)"
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
    return findings


def warn_if_useless(search, plan):
    """Issue a :class:`~skdptune.exceptions.UselessModelWarning` when :func:`trivial_findings`
    finds anything in the search's released attributes.

    Parameters
    ----------
    search : BasePrivateSearch
        A fitted search: only its released attributes are read, through its
        ``_trivial_test(plan)`` (:func:`lead_test` or :func:`trials_test`).
    plan : skdptune._base.Plan
        The search's plan: public figures only.
    """
    findings = trivial_findings(search._trivial_test(plan),
                                getattr(search, "best_estimator_", None))
    if not findings:
        return
    if hasattr(search, "n_partitions_"):
        fewer = "a smaller grid of better regularised candidates"
    else:
        fewer = ("fewer trials (a smaller n_iter: with epsilon= the total, each trial gets "
                 "more of it)")
    warnings.warn(
        "The released model looks no better than a trivial one. " + " ".join(findings)
        + f" Try a larger epsilon, {fewer}, or the untuned default candidate alone (the user "
        "guide, \"Choosing a method and a budget\": \"A released model no better than a "
        "trivial one\"). Decided from DP outputs and public parameters only "
        "(post-processing: no data were read, nothing was charged).",
        UselessModelWarning,
        stacklevel=user_stacklevel(),
    )
