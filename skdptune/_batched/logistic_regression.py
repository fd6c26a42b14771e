"""diffprivlib's ``LogisticRegression``, all partitions of a candidate in one array program
(and :class:`skdptune.linear_model.LogisticRegression`: the same fit on rows mapped into the
unit ball, ``unit_ball`` plans).

Emulates ``diffprivlib.models.LogisticRegression.fit`` (diffprivlib 0.6.6, objective
perturbation after Chaudhuri, Monteleoni & Sarwate 2011) followed by ``predict`` and accuracy,
or by ``decision_function`` and ROC AUC, for every partition of a block at once. The noise is drawn from the partition's own stream
(not a secure sampler: partition fits are never released). What diffprivlib's ``fit`` does,
and what is done here in its place:

- ``classes_`` are the labels present in the partition's training rows; fewer than two raise
  ``ValueError`` (here: :data:`~skdptune._batched.contract.FIT_FAILED`, which the engine scores as the
  per-fit path scores a failed fit). Two classes: one problem, the larger label positive, with
  all of ``epsilon``. More: one-vs-rest, one problem per present class, each with ``epsilon /
  n_present`` (sequential composition over the classes), each its own noise vector.
  skdptune's class with declared ``classes``: ``classes_`` are the declared ones on every
  partition, whichever labels its rows hold (a row joins the problem of the class its label
  equals, :func:`bind_labels`); ``K`` of them fit one problem (the second positive) for two
  classes, else one per class, ``epsilon / K`` each, a class without rows included (its
  problem has no positive row). None fails.
- Rows are clipped to L2 norm ``data_norm`` (``clip_to_norm``: a row above it is scaled down
  to it). ``fit_intercept`` appends a constant 1 to every row (scikit-learn's
  ``LinearModelLoss``), so the norm bound becomes ``sqrt(data_norm ** 2 + 1)``. Here: the same.
- The objective, with ``n`` the partition's training rows and ``w`` the coefficients and
  intercept: ``mean(log(1 + exp(z)) - y * z) + ||coef||^2 / (2 * C * n)``, the intercept not
  penalised (``HalfBinomialLoss``, ``l2_reg_strength = 1 / (C * n)``). Here: the same.
- The perturbation, ``Vector(epsilon_c, function_sensitivity=0.25, data_sensitivity=norm,
  dimension=D, alpha=1 / C, n=n)``: ``epsilon' = epsilon_c - 2 * log(1 + 0.25 * norm * C)``;
  if ``epsilon' <= 0``, an extra ridge ``delta = (0.25 * norm / expm1(epsilon_c / 4) - 1 / C)
  / n`` on all of ``w`` (intercept included) and ``epsilon' = epsilon_c / 2``. skdptune's
  class (``unit_ball`` plans) fits diffprivlib's mechanism with a ``C`` that keeps ``epsilon' >=
  NOISE_SHARE * epsilon_c`` (:func:`~skdptune._models.linear_model.objective_perturbation` with
  ``share``): here the same ``epsilon'`` and the same penalty, as ``1 / C`` plus ``delta``. The
  noise vector ``b`` has a uniform direction (diffprivlib normalises a vector of sums of four
  halved standard normals, that is a standard normal vector) and a norm ``Gamma(D, 2 * norm /
  epsilon')`` (diffprivlib sums four ``Gamma(D / 4, .)``); the objective gains ``b . w / n +
  delta * ||w||^2 / 2``. Here: :func:`noise_parameters` computes ``epsilon'``, ``delta`` and the
  scale exactly as ``Vector.randomise``; the direction is a normalised standard normal vector
  and the norm one ``Gamma(D)`` variate times the scale: the same law.
- The minimiser: scipy's L-BFGS-B from ``w = 0`` (``fmin_l_bfgs_b(f, 0, factr=64,
  pgtol=tol, maxiter=max_iter)``). Here, where that solver runs to convergence (``tol`` at
  most :data:`MAX_TOL`, ``max_iter`` at least :data:`MIN_MAX_ITER`): Newton's method on every
  (partition, class) problem at once, each with its own backtracking (Armijo) line search,
  its own stopping rule (gradient max-norm below :data:`NEWTON_GTOL`, Newton decrement below
  :data:`NEWTON_DECREMENT`, or no strict decrease) and its own iteration count (at most
  :data:`NEWTON_MAX_ITER`): the exact optimum of the perturbed objective, to rounding.

  diffprivlib's solver stops once the gradient's max-norm is below ``tol`` (or its relative
  decrease is below ``factr`` times the machine epsilon), so it lands within about
  ``sqrt(D) * tol / mu`` of the optimum (``mu`` the smallest curvature there). Elsewhere
  the optimum's predictions are diffprivlib's but for rows within about that (times the row
  norm) of the decision boundary. Where that bound exceeds :data:`MAX_REACH` (a flat
  optimum: huge noise, weak regularisation, an intercept on which the loss has saturated),
  the problem is solved by diffprivlib's own solver instead: its objective (scikit-learn's
  loss, the same formula in numpy, plus the perturbation) minimised by
  :func:`skdptune._batched.lbfgsb.minimize`, scipy's L-BFGS-B without bounds reproduced on all
  those problems at once (each its own memory, line search and stopping tests; the same
  iterates and iteration count as scipy's, to rounding), with diffprivlib's arguments.
  Where the objective has no minimum at all (noise on the intercept beyond a class's count,
  without diffprivlib's extra ridge), diffprivlib's L-BFGS runs off along the intercept to
  about ``1e18``, a constant sign of its score. Where only that sign matters (a binary
  partition; or at most one class running up, not all running down) the intercept is set to
  that infinity instead of running the solver; otherwise scipy's ``fmin_l_bfgs_b`` itself
  runs on those problems, one at a time (on such a run-off scipy restarts when its compact
  matrices become numerically singular, which the batched emulation does not reproduce).

  With a larger ``tol`` or a smaller ``max_iter``, diffprivlib's solver may stop anywhere
  short of the optimum: then every problem is solved as diffprivlib solves it, by the
  batched L-BFGS-B (scipy's, one at a time, on objectives without a minimum, whose run-off a
  truncated run does not finish). These decisions are functions of the public parameters and
  of the partition's own counts, noise and optima. ``tests/unit/test_batched_logistic.py``
  checks, with diffprivlib's own noise vector, that the emulation's predictions are
  diffprivlib's (all of them where its solver runs, all but rare rows near the boundary
  elsewhere) and, for truncated runs, its coefficients; ``tests/unit/test_batched_lbfgsb.py``
  that the batched L-BFGS-B is scipy's, problem by problem.
- ``predict``: the decision function on the held-out rows (unclipped for diffprivlib's class;
  clipped to ``data_norm`` for skdptune's, as its ``decision_function`` does); two classes: the
  positive one where it is above 0; more: the argmax over the present (or declared) classes
  (the first on ties, classes in sorted order). Accuracy over the partition's held-out rows
  (with declared classes: right where the predicted class equals the row's label).
- ``scoring="roc_auc"`` (two labels in ``y``; no more than two declared classes): scikit-learn's
  scorer reads ``decision_function(X)``, the same scores as ``predict`` (each row's own dot
  product, so equal rows tie as they do in scikit-learn's), ranked per partition by
  :func:`~skdptune._batched.common.partition_roc_auc`; a partition whose held-out rows hold
  one class is :data:`FIT_FAILED` (scikit-learn's score is NaN there). Where the intercept ran
  off (see above) every score of the partition is infinite and ties: AUC 1/2, as
  diffprivlib's scores at an intercept of about ``1e18`` tie (a row's ``x . w`` below half a
  unit in the last place of the intercept, 64, is lost in the sum).

Every quantity of a partition is a function of its own rows, the public parameters and its own
stream: the block's arrays stack partitions side by side, padded with zero rows that weigh
nothing (a partition's sums add exact zeros; the padding's length is set by the partition
sizes, which a record's value does not change). Every problem is stopped by its own criterion
(masks), never by another's.
"""

from dataclasses import dataclass
from numbers import Integral
from typing import Optional

import numpy as np
from scipy.linalg import lapack
from scipy.special import expit

from .._models.linear_model import LogisticRegression as CalibratedLogisticRegression
from .._models.linear_model import (NOISE_SHARE, logistic_features, logistic_unit_ball,
                             objective_perturbation)
from . import lbfgsb
from .common import (at_least, bind_classifier_score, bind_declared, checked_params,
                     declared_labels, labelling, partition_roc_auc)
from .contract import ACCURACY, CODES, FIT_FAILED, ROC_AUC, Score

#: The family's per-partition score and what it reads of ``y`` (the family contract,
#: :class:`~skdptune._batched.contract.Family`), and every score it computes
#: (:class:`~skdptune._batched.contract.BindsScore`).
SCORE, TARGET = ACCURACY, CODES
SCORES = (ACCURACY, ROC_AUC)

#: Above this many classes the one-vs-rest problems (candidates x classes x partitions, each
#: a ``D x D`` Hessian) stop being cheap: the per-fit path takes over.
MAX_CLASSES = 16

#: Candidates whose ``tol`` is above this have every problem solved by the batched emulation
#: of diffprivlib's solver, not by Newton: that solver may stop far from the optimum.
MAX_TOL = 1e-3

#: Candidates whose ``max_iter`` is below this have every problem solved by the batched
#: emulation of diffprivlib's solver, not by Newton: that solver may stop before it
#: converges (it took at most 56 iterations in 100 fits of each regime of the tests, with
#: the rescaled ``epsilon`` and ``C`` of partition fits; the default is 100).
MIN_MAX_ITER = 100

#: Above this many coefficients (features + intercept) a Hessian per problem stops being
#: cheap: the per-fit path takes over.
MAX_DIMENSION = 256

#: A problem whose optimum is so flat that diffprivlib's stopping point may lie further than
#: this from it, in a held-out row's score (the worst-case bound ``sqrt(D) * tol / mu *
#: norm``, see :func:`fit_partitions`), is solved by diffprivlib's solver (emulated) instead. The
#: bound is loose: in the regimes measured (those of the tests, and a block of 200 partitions
#: x 100 rows x 20 features), the problems where the stopping point changed predictions had
#: a bound above 1e13 (an intercept on which the loss has saturated), the others below 5.
MAX_REACH = 10.0

#: A problem stops once its gradient's max-norm is below this (its optimum, to rounding).
NEWTON_GTOL = 1e-10

#: A problem stops once its Newton decrement ``g' H^-1 g`` is below this (its objective
#: within about half this of the optimum: past the rounding of the objective's value).
NEWTON_DECREMENT = 1e-20

#: At most this many Newton steps per problem (each problem counts its own).
NEWTON_MAX_ITER = 100

#: Bytes of Newton's arrays at once (Hessians and gathered rows): problems are solved in
#: groups of about this size.
NEWTON_BYTES = 2 ** 26

#: Bytes of the gathered rows (and their masks) of the problems that the batched L-BFGS-B
#: solves together, all plans' of a block at once: bounded memory, and few enough rounds that
#: each round's fixed costs are shared (on 20,000 problems of 100 rows x 21 columns, 64 MB
#: groups took about an eighth less time than 16 MB ones; a profile, relative shares).
LBFGSB_BYTES = 2 ** 26

#: From this many columns on, Newton solves each problem's step by its Cholesky factor
#: (LAPACK's potrf and potrs, one problem at a time: about a third less time than one
#: batched LU at 69 columns, in a profile); below, by one batched LU, which a loop's
#: per-call cost would outweigh.
CHOLESKY_WIDTH = 32

#: Halvings of a problem's step before its line search gives up (no further decrease: the
#: problem has reached its optimum to rounding).
MAX_HALVINGS = 40


@dataclass(frozen=True)
class LogisticRegressionPlan:
    """What a partition fit of one candidate needs: public parameters only.

    Attributes
    ----------
    epsilon : float
        The candidate's (partition-scaled) ``epsilon``, split over the one-vs-rest problems.
    data_norm : float
        The declared bound on a row's L2 norm (rows are clipped to it).
    C : float
        Inverse regularisation strength (partition-scaled).
    fit_intercept : bool
        Whether an unpenalised intercept is fitted.
    tol : float
        diffprivlib's ``tol`` (its L-BFGS's ``pgtol``): in the bound of :data:`MAX_REACH`,
        and on the problems diffprivlib's own solver is run on.
    max_iter : int
        diffprivlib's ``max_iter``, on the problems diffprivlib's own solver is run on.
    unit_ball : (float, bool) or None
        For :class:`skdptune.linear_model.LogisticRegression`: its ``(data_norm,
        fit_intercept)``. Its rows are mapped by
        :func:`~skdptune.linear_model.logistic_features` before the fit (the other fields then
        describe its inner diffprivlib fit); None for diffprivlib's class.
    classes : ndarray or None, default=None
        skdptune's declared ``classes`` (sorted, deduplicated), whose problems every
        partition fits; None: the classes present in each partition's rows.
    code_map : ndarray of shape (n_labels,) or None, default=None
        Set by :func:`bind_labels` for declared ``classes``: each label code's position among
        them.
    noise_share : float or None, default=None
        skdptune's :data:`~skdptune._models.linear_model.NOISE_SHARE` (its rule for ``epsilon'`` and
        the penalty); None: diffprivlib's rule.
    """

    epsilon: float
    data_norm: float
    C: float
    fit_intercept: bool
    tol: float = 1e-4
    max_iter: int = 100
    unit_ball: Optional[tuple] = None
    classes: Optional[np.ndarray] = None
    code_map: Optional[np.ndarray] = None
    noise_share: Optional[float] = None
    score: Score = ACCURACY


def plan(estimator, n_features):
    """The :class:`LogisticRegressionPlan` of a configured ``LogisticRegression``, or None.

    Decided from the parameters and the number of features only. What this emulation does not
    reproduce falls back to the per-fit path, which gives it the behaviour of a real fit
    (``error_score`` included): ``data_norm`` None (computed from the data), ``warm_start``,
    a non-finite or non-positive ``epsilon``, ``data_norm``, ``C`` or ``tol``, ``max_iter``
    below 1, more than :data:`MAX_DIMENSION` coefficients, declared ``classes`` that the fit
    refuses or that are more than :data:`MAX_CLASSES`, and parameters scikit-learn rejects.

    Parameters
    ----------
    estimator : diffprivlib.models.LogisticRegression
        The candidate, its parameters set.
    n_features : int or None
        Columns of ``X``; None before the data (the forecast): the width is then not checked.

    Returns
    -------
    plan : LogisticRegressionPlan or None
    """
    params = checked_params(estimator, ("epsilon", "data_norm", "C", "tol"))
    if params is None:
        return None
    epsilon, data_norm, C = params["epsilon"], params["data_norm"], params["C"]
    tol, max_iter, fit_intercept = params["tol"], params["max_iter"], params["fit_intercept"]
    if params.get("warm_start") is not False or not isinstance(fit_intercept, (bool, np.bool_)):
        return None
    if isinstance(max_iter, bool) or not isinstance(max_iter, Integral) or max_iter < 1:
        return None
    if n_features is not None and not 1 <= n_features <= MAX_DIMENSION - int(fit_intercept):
        return None
    if isinstance(estimator, CalibratedLogisticRegression):
        classes = params.get("classes")
        if classes is not None:
            classes = declared_labels(classes, MAX_CLASSES)
            if classes is None:
                return None
        # Its inner diffprivlib fit, on rows mapped into the unit ball (see the class).
        scale, inner_norm = logistic_unit_ball(data_norm, fit_intercept)
        return LogisticRegressionPlan(float(epsilon), inner_norm, float(C) * scale ** 2, False,
                                      float(tol), int(max_iter),
                                      (float(data_norm), bool(fit_intercept)), classes,
                                      noise_share=NOISE_SHARE)
    return LogisticRegressionPlan(float(epsilon), float(data_norm), float(C),
                                  bool(fit_intercept), float(tol), int(max_iter))


def bind_labels(candidate, labels):
    """``candidate`` (a :class:`LogisticRegressionPlan`) bound to the labels of ``y``, or None:
    :func:`~skdptune._batched.common.bind_declared` (the family contract,
    :class:`~skdptune._batched.contract.BindsLabels`)."""
    return bind_declared(candidate, labels)


def bind_score(candidate, score):
    """``candidate`` bound to ``score``, or None:
    :func:`~skdptune._batched.common.bind_classifier_score` (the family contract,
    :class:`~skdptune._batched.contract.BindsScore`)."""
    return bind_classifier_score(candidate, score)


def noise_parameters(epsilon, data_norm, C, n, fit_intercept, share=None):
    """The perturbation of one problem, as diffprivlib's ``Vector.randomise`` computes it (with
    ``share``: as skdptune's ``LogisticRegression`` sets it up).

    Parameters
    ----------
    epsilon : float or ndarray
        The problem's ``epsilon`` (the candidate's over the number of one-vs-rest problems).
    data_norm : float
        The declared row norm (before the intercept's column is added).
    C : float
    n : int or ndarray
        The partition's training rows.
    fit_intercept : bool
    share : float or None, default=None
        :func:`~skdptune._models.linear_model.objective_perturbation`'s ``share`` (the plan's
        ``noise_share``); None: diffprivlib's rule.

    Returns
    -------
    scale : float or ndarray
        Scale of the noise vector's ``Gamma(D)`` norm: ``2 * norm / epsilon'``.
    delta : float or ndarray
        The extra ridge on all coefficients (0 where the rule keeps ``1 / C``).
    """
    # Vector(function_sensitivity=0.25, data_sensitivity=norm, alpha=1 / C): the logistic
    # loss's second derivative is at most 1/4, and a clipped row (with its intercept 1) has
    # norm at most `norm`.
    norm = np.sqrt(data_norm ** 2 + 1) if fit_intercept else data_norm
    epsilon_p, extra = objective_perturbation(epsilon, norm, C, share)
    return 2 * norm / epsilon_p, extra / np.asarray(n, dtype=float)


def noise_draws(rng, n_problems, dimension):
    """A partition's standard draws for its noise vectors, in their fixed layout.

    Parameters
    ----------
    rng : numpy.random.Generator
        The partition's stream.
    n_problems : int
        Slots (one-vs-rest problems), each drawn whether it is fitted or not.
    dimension : int
        ``D``: features plus intercept.

    Returns
    -------
    normals : ndarray of shape (n_problems, dimension)
        Standard normals: the directions.
    gammas : ndarray of shape (n_problems,)
        ``Gamma(D, 1)`` variates: the norms, before their scale.
    """
    return rng.standard_normal((n_problems, dimension)), rng.gamma(dimension, 1.0, n_problems)


def noise_vectors(normals, gammas, scale):
    """Noise vectors with diffprivlib's ``Vector`` law from standard draws.

    Parameters
    ----------
    normals : ndarray of shape (..., D)
        Standard normal draws: the direction.
    gammas : ndarray of shape (...)
        ``Gamma(D, 1)`` draws: the norm, before its scale.
    scale : ndarray of shape (...)

    Returns
    -------
    vectors : ndarray of shape (..., D)
    """
    direction = normals / np.linalg.norm(normals, axis=-1, keepdims=True)
    return direction * (gammas * scale)[..., None]


def partition_scores(plans, block, rngs):
    """Accuracy or ROC AUC (the plan's ``score``) of every plan's fit on every partition of a
    block (the family contract,
    :meth:`~skdptune._batched.contract.Family.partition_scores`); :data:`FIT_FAILED` where the
    partition's training rows hold fewer than two classes without declared classes
    (diffprivlib's fit raises) and, for ROC AUC, where its held-out rows hold one class.

    The problems that go to diffprivlib's solver, of all the plans, are solved together
    (:func:`_lbfgsb_in_chunks`): one round of its bookkeeping serves them all."""
    result = np.empty((len(plans), block.n_parts))
    # Each plan's labels (the block's codes, or positions among declared classes) and
    # problems, built once per labelling.
    labelled, by_labelling = [], {}
    for candidate in plans:
        y_train, n_classes, declared = labelling(candidate, block.y_train, block.n_classes)
        key = None if candidate.code_map is None else (n_classes, candidate.code_map.tobytes())
        if key not in by_labelling:
            by_labelling[key] = _Problems(y_train, block.part_train, block.n_parts, n_classes,
                                          declared)
        labelled.append((y_train, labelling(candidate, block.y_val, block.n_classes)[0],
                         by_labelling[key]))
    # The rows each unit-ball mapping gives, and their padded, clipped layout, computed once
    # for the candidates that share them (a grid over C shares its data_norm).
    mapped, padded = {None: (block.X_train, block.X_val)}, {}
    fits = []
    for j, candidate in enumerate(plans):
        if candidate.unit_ball not in mapped:
            mapped[candidate.unit_ball] = (
                logistic_features(block.X_train, *candidate.unit_ball, clip=True),
                logistic_features(block.X_val, *candidate.unit_ball, clip=True))
        Z_train = mapped[candidate.unit_ball][0]
        key = (candidate.unit_ball, candidate.data_norm, candidate.fit_intercept)
        if key not in padded:
            padded[key] = _padded(candidate, Z_train, block.part_train, block.n_parts)
        y_train, _, problems = labelled[j]
        fits.append(_Fit(candidate, y_train, block.n_parts, rngs[j], problems, padded[key]))
    _lbfgsb_in_chunks(fits)
    for j, (candidate, fit) in enumerate(zip(plans, fits)):
        Z_val = mapped[candidate.unit_ball][1]
        _, y_val, problems = labelled[j]
        w = fit.finish()
        if candidate.score is ROC_AUC:
            # Two labels (ROC_AUC.admits): one slot, class 1 positive.
            decision = _decision(w, Z_val, block.part_val, candidate.fit_intercept)[0]
            scores = partition_roc_auc(decision, y_val == 1, block.part_val, block.n_parts)
            failed = np.isnan(scores)
        else:
            predicted = _predict(w, problems, Z_val, block.part_val, candidate.fit_intercept)
            scores = block.accuracy(predicted == y_val)
            failed = False
        result[j] = block.scored(np.where((problems.n_present >= 2) & ~failed, scores,
                                          FIT_FAILED))
    return result


class _Problems:
    """The one-vs-rest problems of a block: slots (classes that can be positive) x partitions.

    With two classes in the data there is one slot (class 1 positive). With more, one slot per
    class: a partition with two present classes fits one problem (its larger class positive,
    all of ``epsilon``), one with more fits one per present class (``epsilon / n_present``).
    With ``declared`` classes (``n_classes`` of them, ``y`` their positions) every partition
    with training rows holds all of them, present or not: one problem for two, else one per
    class (``epsilon / n_classes``). Everything here is a function of each partition's own
    labels and the public classes.
    """

    def __init__(self, y, part, n_parts, n_classes, declared=False):
        counts = np.bincount(part * n_classes + y,
                             minlength=n_parts * n_classes).reshape(n_parts, n_classes)
        present = counts > 0
        if declared:  # the model's classes, whichever labels the rows hold
            present = np.broadcast_to(present.any(axis=1)[:, None], present.shape)
        self.n_train = counts.sum(axis=1)
        self.n_present = present.sum(axis=1)
        self.n_classes = n_classes
        binary = self.n_present == 2
        # The two classes of a binary partition (placeholders elsewhere).
        order = np.argsort(~present, axis=1, kind="stable")
        self.negative, self.positive = order[:, 0], order[:, 1]
        if n_classes <= 2:
            self.slot_class = np.array([1])
            active = binary[None, :]
        else:
            self.slot_class = np.arange(n_classes)
            multi = self.n_present > 2
            active = (present.T & multi[None, :]) | (
                (self.slot_class[:, None] == self.positive[None, :]) & binary[None, :])
        self.active = active  # (n_slots, n_parts)
        self.binary = binary
        # Each problem's epsilon share: all of it for a binary fit, 1 / n_present otherwise.
        self.share = np.where(binary, 1.0, 1.0 / np.maximum(self.n_present, 1))


def fit_partitions(candidate, X_train, y_train, part_train, n_parts, n_classes, rngs,
                   problems=None):
    """The emulated coefficients of one plan's one-vs-rest problems on every partition.

    Parameters
    ----------
    candidate : LogisticRegressionPlan
    X_train, y_train, part_train, n_parts, n_classes
        A block's training rows, codes, partitions (as
        :class:`~skdptune._batched.contract.Block`).
    rngs : list of numpy.random.Generator
        One stream per partition.
    problems : optional
        The block's problems, when already built.

    Returns
    -------
    w : ndarray of shape (n_slots, n_parts, n_features + fit_intercept)
        Coefficients (then the intercept) of each slot's problem on each partition: one slot
        (class 1 positive) with two classes in the data (or declared), one per class
        otherwise; zeros where the problem is not fitted (the class is absent without declared
        classes, or not the positive one of a binary partition); an intercept of ``+-inf``
        (and zero coefficients) where diffprivlib's runs off to about ``+-1e18``.
    """
    y_train, n_classes, declared = labelling(candidate, y_train, n_classes)
    if problems is None:
        problems = _Problems(y_train, part_train, n_parts, n_classes, declared)
    fit = _Fit(candidate, y_train, n_parts, rngs, problems,
               _padded(candidate, X_train, part_train, n_parts))
    _lbfgsb_in_chunks([fit])
    return fit.finish()


class _Fit:
    """One plan's problems on a block, up to diffprivlib's solver: the noise, the objective,
    Newton where its optimum stands in for that solver's stopping point, the run-offs; then
    the problems left to the solver (``lbfgsb``: batched, :func:`_lbfgsb_in_chunks`, which
    writes their coefficients into ``w``; ``racing``: scipy's, one by one, in
    :meth:`finish`).

    Parameters
    ----------
    candidate : LogisticRegressionPlan
    y_train : ndarray of shape (n_train,)
    n_parts : int
    rngs : list of numpy.random.Generator
        One stream per partition.
    problems : _Problems
    padded : tuple
        :func:`_padded` of the plan's rows.
    """

    def __init__(self, candidate, y_train, n_parts, rngs, problems, padded):
        X, mask, rows = padded
        n_slots, dimension = len(problems.slot_class), X.shape[-1]
        # Each partition's draws come from its own stream, in a fixed layout: a standard
        # normal vector and a Gamma(D) variate per slot, whether the slot is fitted or not.
        normals = np.empty((n_slots, n_parts, dimension))
        gammas = np.empty((n_slots, n_parts))
        for p, rng in enumerate(rngs):
            normals[:, p], gammas[:, p] = noise_draws(rng, n_slots, dimension)
        n = np.maximum(problems.n_train, 1)
        scale, delta = noise_parameters(candidate.epsilon * problems.share,
                                        candidate.data_norm, candidate.C, n,
                                        candidate.fit_intercept, candidate.noise_share)
        noise = noise_vectors(normals, gammas, np.broadcast_to(scale, (n_slots, n_parts)))
        # Targets: 1 where the row's class is the slot's class (padding rows weigh nothing).
        y_rows = np.zeros(mask.shape, dtype=np.intp)
        y_rows[rows] = y_train
        targets = (y_rows[None] == problems.slot_class[:, None, None]).astype(float)
        ridge = np.broadcast_to(1.0 / (candidate.C * n), (n_slots, n_parts))
        delta = np.broadcast_to(delta, ridge.shape)
        objective = _Objective(X, mask, targets, n, ridge, delta, noise,
                               candidate.fit_intercept)
        up, down = _unbounded(candidate, targets, mask, noise, delta)
        up, down = up & problems.active, down & problems.active
        norm = np.sqrt(candidate.data_norm ** 2 + candidate.fit_intercept)
        bounded = problems.active & ~(up | down)
        # Newton's optimum stands in for diffprivlib's stopping point only when that solver
        # runs to convergence (tol and max_iter within MAX_TOL and MIN_MAX_ITER); otherwise
        # every problem goes to diffprivlib's solver. Newton only where the rule below may
        # keep its optimum: a problem certainly too flat goes to diffprivlib's solver without
        # it (the same outcome, sooner).
        converges = candidate.tol <= MAX_TOL and candidate.max_iter >= MIN_MAX_ITER
        newton = bounded & ~certainly_flat(objective, candidate) if converges else bounded & False
        # Where diffprivlib's L-BFGS may stop far short of the optimum (it stops once the
        # gradient's max-norm is below tol, which leaves w within sqrt(D) * tol / curvature of
        # it, and a score within that times the row norm: a reach above MAX_REACH where the
        # smallest curvature at the optimum is below `floor`): the same solver, on the same
        # objective, from the same start, on these problems one by one. Decided from each
        # problem's own optimum.
        floor = np.sqrt(dimension) * candidate.tol * norm / MAX_REACH
        w, steep = _newton_in_chunks(objective, newton, floor)
        solve = problems.active & ~(up | down) & ~steep
        # No minimum: diffprivlib's L-BFGS runs off along the intercept, to about +-1e18,
        # where a problem's score is a constant sign for every row. Here the intercept is
        # +-inf, unless the partition's prediction depends on how far each ran (two or more
        # running up, or all its problems running down): then diffprivlib's solver on those.
        n_up = up.sum(axis=0)
        n_down = down.sum(axis=0)
        # A run cut short by max_iter (or a loose tol) does not reach that infinity: the
        # solver.
        race = (~problems.binary & ((n_up >= 2) | (n_down == problems.n_present))
                | (not converges))
        solve |= (up | down) & race[None, :]
        ran_off = (up | down) & ~race[None, :]
        w[ran_off] = 0.0
        w[..., -1] = np.where(ran_off, np.where(up, np.inf, -np.inf), w[..., -1])
        # diffprivlib's solver: scipy's L-BFGS-B on the problems with a minimum (the batched
        # emulation, each problem its own state and stopping tests); scipy's own on those
        # without one, on whose run-off to about 1e18 the emulation's iterates part from
        # scipy's (scipy restarts when its compact matrices become singular, which is not
        # reproduced).
        self.candidate, self.objective, self.w, self.delta = candidate, objective, w, delta
        self.lbfgsb = solve & ~(up | down)
        self.racing = solve & (up | down)

    def finish(self):
        """The coefficients (see :func:`fit_partitions`), once :func:`_lbfgsb_in_chunks` has
        solved the ``lbfgsb`` problems: scipy's solver on the ``racing`` ones."""
        objective, w = self.objective, self.w
        for slot, p in zip(*np.nonzero(self.racing)):
            rows = objective.mask[p] > 0
            w[slot, p] = _diffprivlib_lbfgs(self.candidate, objective.X[p, rows],
                                            objective.targets[slot, p, rows],
                                            objective.noise[slot, p], self.delta[slot, p])
        return w


def _lbfgsb_in_chunks(fits):
    """diffprivlib's ``fmin_l_bfgs_b(f, 0, factr=64, pgtol=tol, maxiter=max_iter)`` on every
    fit's ``lbfgsb`` problems, by :func:`~skdptune._batched.lbfgsb.minimize`: the plans'
    problems together (each with its own plan's ``tol`` and ``max_iter``), in groups whose
    gathered rows take about :data:`LBFGSB_BYTES` (the problems are independent: how they are
    grouped changes nothing). Writes their coefficients into each fit's ``w``."""
    by_shape = {}
    for fit in fits:
        slots, parts = np.nonzero(fit.lbfgsb)
        if len(slots):
            by_shape.setdefault(fit.objective.X.shape[1:], []).append((fit, slots, parts))
    for (n_rows, dimension), sources in by_shape.items():
        size = max(1, LBFGSB_BYTES // (8 * 2 * n_rows * dimension))
        owner = np.concatenate([np.full(len(slots), i) for i, (_, slots, _) in enumerate(sources)])
        slots = np.concatenate([slots for _, slots, _ in sources])
        parts = np.concatenate([parts for _, _, parts in sources])
        tol = np.array([fit.candidate.tol for fit, _, _ in sources])[owner]
        max_iter = np.array([fit.candidate.max_iter for fit, _, _ in sources])[owner]
        for start in range(0, len(slots), size):
            chunk = slice(start, start + size)
            group = _Gathered([(sources[i][0].objective, slots[chunk][owner[chunk] == i],
                                parts[chunk][owner[chunk] == i])
                               for i in np.unique(owner[chunk])])
            w = lbfgsb.minimize(group, np.zeros((len(group.ids), dimension)), factr=64,
                                pgtol=tol[chunk], maxiter=max_iter[chunk]).x
            for i, slot, part, coefficients in zip(owner[chunk], slots[chunk], parts[chunk], w):
                sources[i][0].w[slot, part] = coefficients


class _Gathered:
    """:func:`_value_gradient` of a group of problems (of one or more objectives, in order),
    their arrays gathered once (gathering a problem's rows costs about as much as evaluating
    it), and gathered again, down to the problems still running, once fewer than half of
    those held are asked for. The value and gradient of a problem are computed from its own
    arrays whichever others are held beside them."""

    _ARRAYS = ("X", "mask", "n", "targets", "noise", "l2")

    def __init__(self, sources):
        parts = [(objective.X[p], objective.mask[p], objective.n[p], objective.targets[s, p],
                  objective.noise[s, p], objective.l2[s, p]) for objective, s, p in sources]
        for name, arrays in zip(self._ARRAYS, zip(*parts)):
            setattr(self, name, np.concatenate(arrays))
        self.ids = np.arange(len(self.n))

    def _keep(self, position):
        self.ids = self.ids[position]
        for name in self._ARRAYS:
            setattr(self, name, getattr(self, name)[position])

    def __call__(self, which, w):
        if len(which) < len(self.ids):
            position = np.searchsorted(self.ids, which)  # both ascending
            if 2 * len(which) <= len(self.ids):
                self._keep(position)
            else:
                return _value_gradient(*(getattr(self, name)[position]
                                         for name in self._ARRAYS), w)
        return _value_gradient(*(getattr(self, name) for name in self._ARRAYS), w)


def certainly_flat(objective, candidate):
    """The problems whose optimum is certainly too flat for Newton's optimum to stand in for
    diffprivlib's stopping point (:data:`MAX_REACH`), known before solving: ``(slots, parts)``.

    The smallest curvature at any point is at most every diagonal entry of the Hessian there,
    and entry ``j`` is at most ``l2_j + mean(x_j ** 2) / 4`` (a logistic weight is at most
    ``1 / 4``). If even that bound leaves a reach above :data:`MAX_REACH`, the curvature at the
    optimum does too, and :func:`fit_partitions` sends the problem to diffprivlib's solver
    whatever Newton finds. A function of the problem's own rows and parameters.
    """
    X, mask, n = objective.X, objective.mask, objective.n
    mean_squares = np.einsum("prd,pr->pd", X * X, mask) / n[:, None]  # (parts, D)
    bound = np.min(objective.l2 + 0.25 * mean_squares[None], axis=-1)  # (slots, parts)
    norm = np.sqrt(candidate.data_norm ** 2 + candidate.fit_intercept)
    with np.errstate(divide="ignore"):
        return np.sqrt(X.shape[-1]) * candidate.tol / bound * norm > MAX_REACH


def _unbounded(candidate, targets, mask, noise, delta):
    """The problems whose perturbed objective has no minimum, from their own counts and noise,
    by the direction the intercept runs off in: ``(up, down)``.

    The coefficients carry an L2 penalty, so the objective can only decrease without bound
    along the unpenalised intercept (no intercept, or ``delta > 0``: bounded). Along ``+c``
    its slope tends to ``(n_negative + b_c) / n``, along ``-c`` to ``(b_c - n_positive) / n``
    (``b_c`` the noise on the intercept): unbounded when either is not positive.
    """
    if not candidate.fit_intercept:
        return np.zeros(delta.shape, dtype=bool), np.zeros(delta.shape, dtype=bool)
    positive = np.sum(targets * mask[None], axis=-1)
    negative = np.sum(mask, axis=-1)[None] - positive
    b = noise[..., -1]
    return (delta == 0) & (negative + b <= 0), (delta == 0) & (b - positive >= 0)


def _diffprivlib_lbfgs(candidate, X, targets, noise, delta):
    """diffprivlib's minimiser on one problem (``X`` clipped, with the intercept's column):
    its objective (scikit-learn's loss and gradient, in numpy, plus the perturbation),
    L-BFGS-B from 0 with diffprivlib's ``factr``, ``pgtol`` and ``maxiter``."""
    from scipy import optimize

    n = len(X)
    ridge = np.full(X.shape[1], 1.0 / (candidate.C * n))
    if candidate.fit_intercept:
        ridge[-1] = 0.0  # scikit-learn does not penalise the intercept

    def perturbed(w):
        z = X @ w
        value = np.sum(np.logaddexp(0.0, z) - targets * z) / n + 0.5 * np.sum(ridge * w * w)
        gradient = X.T @ (expit(z) - targets) / n + ridge * w
        return (value + noise @ w / n + 0.5 * delta * w @ w,
                gradient + noise / n + delta * w)

    with np.errstate(all="ignore"):
        w, _, _ = optimize.fmin_l_bfgs_b(perturbed, np.zeros(len(noise)), factr=64,
                                         pgtol=candidate.tol, maxiter=candidate.max_iter)
    return w


def _padded(candidate, X_train, part_train, n_parts):
    """The block's training rows clipped to ``data_norm`` (with the intercept's column),
    as ``(n_parts, max rows, D)`` with zero padding; the mask of real rows; their places."""
    norms = np.linalg.norm(X_train, axis=1) / candidate.data_norm
    X = X_train / np.maximum(norms, 1.0)[:, None]  # diffprivlib's clip_to_norm
    if candidate.fit_intercept:
        X = np.hstack([X, np.ones((len(X), 1))])
    sizes = np.bincount(part_train, minlength=n_parts)
    order = np.argsort(part_train, kind="stable")
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    position = np.empty(len(part_train), dtype=np.intp)
    position[order] = np.arange(len(part_train)) - np.repeat(starts, sizes)
    padded = np.zeros((n_parts, max(int(sizes.max(initial=0)), 1), X.shape[1]))
    padded[part_train, position] = X
    mask = np.zeros(padded.shape[:2])
    mask[part_train, position] = 1.0
    return padded, mask, (part_train, position)


class _Objective:
    """diffprivlib's perturbed objective of every (slot, partition) problem: its arrays.

    ``F(w) = sum(mask * (log(1 + exp(z)) - t * z)) / n + ridge * ||coef||^2 / 2
    + b . w / n + delta * ||w||^2 / 2``, ``z = X w``; ``l2`` the weight of each coefficient's
    square (shape ``(slots, parts, D)``), ``used`` whether a column is nonzero on a partition's
    rows (or unpenalised: the intercept), shape ``(parts, D)``.
    """

    def __init__(self, X, mask, targets, n, ridge, delta, noise, fit_intercept):
        self.X, self.mask, self.targets, self.n = X, mask, targets, n
        self.noise = noise
        dimension = X.shape[-1]
        # The L2 weight of each coefficient: ridge on the features, delta on all.
        penalised = np.ones(dimension)
        if fit_intercept:
            penalised[-1] = 0.0
        self.l2 = ridge[..., None] * penalised + delta[..., None]  # (slots, parts, D)
        self.used = np.any(X != 0, axis=1) | (penalised == 0)

    def value(self, which, w):
        """Values of the problems ``which`` (``(slots, parts)``) at ``w``, each from its own
        rows."""
        slots, parts = which
        return _value(self.X[parts], self.mask[parts], self.n[parts], self.targets[slots, parts],
                      self.noise[slots, parts], self.l2[slots, parts], w)

    def value_gradient(self, which, w):
        """Values and gradients of the problems ``which`` at ``w``, each from its own rows."""
        slots, parts = which
        return _value_gradient(self.X[parts], self.mask[parts], self.n[parts],
                               self.targets[slots, parts], self.noise[slots, parts],
                               self.l2[slots, parts], w)


def _value(X, mask, n, targets, noise, l2, w):
    """The perturbed objective, one problem per row of every argument."""
    z = np.matmul(X, w[..., None])[..., 0]
    loss = np.sum(mask * (_log_one_plus_exp(z, np.exp(-np.abs(z))) - targets * z), axis=-1)
    return (loss + np.sum(noise * w, axis=-1)) / n + 0.5 * np.sum(l2 * w * w, axis=-1)


def _value_gradient(X, mask, n, targets, noise, l2, w):
    """The perturbed objective and its gradient, one problem per row of every argument."""
    z = np.matmul(X, w[..., None])[..., 0]
    # One exponential serves the loss and the logistic function (the solver's evaluations
    # are most of its time); both as numpy's logaddexp and scipy's expit, to rounding.
    e = np.exp(-np.abs(z))
    loss = np.sum(mask * (_log_one_plus_exp(z, e) - targets * z), axis=-1)
    value = (loss + np.sum(noise * w, axis=-1)) / n + 0.5 * np.sum(l2 * w * w, axis=-1)
    residual = mask * (np.where(z >= 0, 1.0, e) / (1.0 + e) - targets)
    gradient = (np.matmul(residual[..., None, :], X)[..., 0, :] + noise) / n[:, None] + l2 * w
    return value, gradient


def _log_one_plus_exp(z, e):
    """``log(1 + exp(z))`` from ``e = exp(-|z|)``, without overflow."""
    return np.maximum(z, 0.0) + np.log1p(e)


class _Reduced:
    """Newton's group of problems, each on the columns its partition's rows use.

    A column that is zero on all of a partition's rows leaves the loss alone: along it the
    objective is ``l2_j w_j ** 2 / 2 + b_j w_j / n``, whatever the other coefficients (the
    Hessian is block diagonal), minimised at ``w_j = -b_j / (n l2_j)`` with curvature
    ``l2_j``. Those columns are solved so, in closed form, and Newton runs on the others only:
    the same optimum and the same smallest curvature (the least of both parts'), to rounding,
    with a fraction of the
    arithmetic on one-hot data (a partition of UCI Adult's 104 encoded columns uses about 62).
    Each problem's columns are padded to the group's widest with unused ones, which have no
    rows and no gradient (Newton leaves them at 0) and get the problem's largest curvature on
    their diagonal (never its smallest). Everything is a function of the problem's own rows,
    noise and parameters; the group only holds problems side by side.
    """

    def __init__(self, objective, slots, parts):
        used = objective.used[parts]
        width = int(used.sum(axis=1).max())
        # Each problem's used columns first, in order, then unused ones as padding.
        self.columns = np.argsort(~used, axis=1, kind="stable")[:, :width]
        self.real = np.take_along_axis(used, self.columns, axis=1)
        self.X = np.take_along_axis(objective.X[parts], self.columns[:, None, :], axis=2)
        noise, l2 = objective.noise[slots, parts], objective.l2[slots, parts]
        self.noise = np.where(self.real, np.take_along_axis(noise, self.columns, axis=1), 0.0)
        self.l2 = np.where(self.real, np.take_along_axis(l2, self.columns, axis=1), 0.0)
        self.mask, self.n = objective.mask[parts], objective.n[parts]
        self.targets = objective.targets[slots, parts]
        self.used, self.ids = used, np.arange(len(parts))
        with np.errstate(divide="ignore", invalid="ignore"):
            self.free = np.where(used, 0.0, -noise / (self.n[:, None] * l2))
            self.free_curvature = np.min(np.where(used, np.inf, l2), axis=1)

    def keep(self, kept):
        """Hold only the problems ``kept`` (a mask over those held)."""
        for name in ("ids", "X", "real", "noise", "l2", "mask", "n", "targets"):
            setattr(self, name, getattr(self, name)[kept])

    def value(self, w, which=None):
        """The objective of the problems held (or of ``which`` of them) at ``w``."""
        arrays = (self.X, self.mask, self.n, self.targets, self.noise, self.l2)
        return _value(*(arrays if which is None else (array[which] for array in arrays)), w)

    def gradient_hessian(self, w):
        """The gradients and Hessians of the problems held at ``w``."""
        X, n = self.X, self.n[:, None]
        sigma = expit(np.matmul(X, w[..., None])[..., 0])
        residual = self.mask * (sigma - self.targets)
        Xt = np.swapaxes(X, -1, -2)
        gradient = (np.matmul(Xt, residual[..., None])[..., 0] + self.noise) / n + self.l2 * w
        weights = self.mask * sigma * (1.0 - sigma) / n
        hessian = np.matmul(Xt * weights[:, None, :], X)
        index = np.arange(w.shape[-1])
        diagonal = hessian[:, index, index] + self.l2
        top = np.max(np.where(self.real, diagonal, -np.inf), axis=1, keepdims=True)
        hessian[:, index, index] = np.where(self.real, diagonal, top)
        return gradient, hessian

    def expand(self, w):
        """Every problem's coefficients on all columns, from ``w`` on its own (all the
        group's problems, in order)."""
        full = np.zeros(self.free.shape)
        np.put_along_axis(full, self.columns, w, axis=1)
        return np.where(self.used, full, self.free)


def _newton_in_chunks(objective, active, floor):
    """:func:`_newton` on groups of problems whose arrays (a Hessian, and the rows twice,
    per problem) take about :data:`NEWTON_BYTES`; the problems are independent, so how they
    are grouped changes nothing but rounding. Returns ``(w, steep)``, shaped as the
    objective's problems."""
    n_rows, dimension = objective.X.shape[1:]
    per_problem = 8 * (dimension * dimension + 2 * dimension * n_rows)
    size = max(1, NEWTON_BYTES // per_problem)
    slots, parts = np.nonzero(active)
    w = np.zeros(objective.noise.shape)
    steep = np.zeros(active.shape, dtype=bool)
    for start in range(0, len(slots), size):
        chunk = slots[start:start + size], parts[start:start + size]
        w[chunk], steep[chunk] = _newton(_Reduced(objective, *chunk), floor)
    return w, steep


def _newton(group, floor):
    """Newton's method with a backtracking line search, every problem of a
    :class:`_Reduced` group on its own: ``(w, steep)``, its coefficients on all columns and
    whether the smallest eigenvalue of its Hessian at the optimum is at least ``floor``
    (False after :data:`NEWTON_MAX_ITER` steps).

    A problem stops when its gradient's max-norm is below :data:`NEWTON_GTOL`, when its Newton
    decrement (``g' H^-1 g``, about twice its distance to the optimal value) is below
    :data:`NEWTON_DECREMENT`, when its line search finds no strict decrease (its optimum, to
    rounding), or after :data:`NEWTON_MAX_ITER` of its own steps. Only running problems are
    computed.
    """
    n_problems, width = group.noise.shape
    w = np.zeros((n_problems, width))
    steep = np.zeros(n_problems, dtype=bool)
    current = np.zeros((n_problems, width))
    value = group.value(current)
    for _ in range(NEWTON_MAX_ITER):  # every running problem takes one step per round
        if not len(group.ids):
            break
        gradient, hessian = group.gradient_hessian(current)
        direction = _solve(hessian, gradient)
        # A singular or non-finite step: the steepest descent instead.
        bad = ~np.all(np.isfinite(direction), axis=-1)
        direction[bad] = -gradient[bad]
        slope = np.sum(gradient * direction, axis=-1)
        done = (np.max(np.abs(gradient), axis=-1) <= NEWTON_GTOL) | (-slope <= NEWTON_DECREMENT)
        # Backtracking, each problem its own step length.
        t = np.ones(len(group.ids))
        searching = ~done
        for _ in range(MAX_HALVINGS):
            look = np.flatnonzero(searching)
            if not len(look):
                break
            trial = current[look] + t[look, None] * direction[look]
            with np.errstate(over="ignore", invalid="ignore"):
                trial_value = group.value(trial, None if len(look) == len(t) else look)
            good = trial_value < value[look] + 1e-4 * t[look] * slope[look]
            current[look[good]], value[look[good]] = trial[good], trial_value[good]
            searching[look[good]] = False
            t[look[~good]] /= 2
        done |= searching  # no strict decrease along a descent direction: at the optimum
        if np.any(done):
            w[group.ids[done]] = current[done]
            steep[group.ids[done]] = at_least(hessian[done], floor)
            group.keep(~done)
            current, value = current[~done], value[~done]
    w[group.ids] = current  # NEWTON_MAX_ITER steps: not steep, diffprivlib's solver
    return group.expand(w), steep & (group.free_curvature >= floor)


def _solve(hessian, gradient):
    """``-H^-1 g`` per problem; NaN for a problem whose ``H`` is singular (one problem's
    failure never changes another's step).

    ``H`` gains ``1e-12`` times its largest diagonal entry on its diagonal: where the loss has
    saturated along the intercept (no curvature there) the step stays defined, and elsewhere
    it is unchanged to rounding. The optimum is the objective's either way.
    """
    diagonal = np.diagonal(hessian, axis1=-2, axis2=-1)
    hessian = hessian + (1e-12 * np.max(np.abs(diagonal), axis=-1))[:, None, None] * np.eye(
        hessian.shape[-1])
    with np.errstate(all="ignore"):
        if hessian.shape[-1] < CHOLESKY_WIDTH:
            try:
                return -np.linalg.solve(hessian, gradient[..., None])[..., 0]
            except np.linalg.LinAlgError:
                pass
        direction = np.full(gradient.shape, np.nan)
        for i, (matrix, slope) in enumerate(zip(hessian, gradient)):
            # H is symmetric positive definite (a Gram matrix plus a positive diagonal): its
            # Cholesky factor, or an LU where rounding defeats it.
            factor, info = lapack.dpotrf(matrix, lower=1, clean=0)
            if info == 0:
                direction[i] = -lapack.dpotrs(factor, slope, lower=1)[0]
                continue
            try:
                direction[i] = -np.linalg.solve(matrix, slope)
            except np.linalg.LinAlgError:
                pass
        return direction


def _decision(w, X, part, fit_intercept):
    """Each slot's decision function on each row under its partition's model (scikit-learn's
    ``decision_function``), ``(slots, rows)``: each row's own dot product."""
    n_features = X.shape[1]
    coef = w[..., :n_features][:, part]  # (slots, rows, features)
    scores = np.einsum("rd,srd->sr", X, coef)
    if fit_intercept:
        scores += w[..., n_features][:, part]
    return scores


def _predict(w, problems, X, part, fit_intercept):
    """Class code that each row's partition model predicts (scikit-learn's ``predict``)."""
    scores = _decision(w, X, part, fit_intercept)
    binary = problems.binary[part]
    # Two present classes: the positive one where the decision function is above 0.
    first = scores[0] if problems.n_classes <= 2 else scores[problems.positive[part],
                                                              np.arange(len(part))]
    binary_prediction = np.where(first > 0, problems.positive[part], problems.negative[part])
    # More: the argmax over the present classes (the first on ties).
    scores = np.where(problems.active[:, part], scores, -np.inf)
    multi_prediction = np.argmax(scores, axis=0) if len(scores) else np.zeros(len(part), int)
    return np.where(binary, binary_prediction, multi_prediction)
