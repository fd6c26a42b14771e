"""The contract between the batched engine and its families: what a family receives and
returns (``DESIGN.md``, "The batched engine").

A family is a module that satisfies :class:`Family`; a partition step (a DP transformer fitted
per partition before a family) one that satisfies :class:`PartitionStep`. The engine calls
nothing else of them. Both receive a :class:`Block`: the rows of a block of partitions side by
side, each row tagged with its partition, and one noise stream per partition.

Privacy, by construction (the one rule every family keeps): every quantity of a partition
(statistics, noise scales, stopping rules, scores) is a function of its own rows, the public
parameters and its own stream; the block's arrays only stack partitions. A partition utility
then depends on its own records only, which is all the selection's sensitivity ``1 / k``
needs: partition fits are never released, so they need not be private, and their noise need
not be secure.
"""

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Callable, Optional, Protocol, runtime_checkable

import numpy as np

from .._sklearn_compat import _PassthroughScorer
from sklearn.utils.multiclass import type_of_target

from .._utility import BoundedR2Scorer, is_plain_accuracy, is_plain_roc_auc

#: What ``partition_scores`` returns for a partition whose real fit raises (a condition of the
#: partition's own rows, such as diffprivlib's ``LogisticRegression`` on training rows of one
#: class): the engine scores it ``error_score``, as the per-fit path does (and under
#: ``error_score="raise"`` reruns the candidate on the per-fit path, which raises the real
#: fit's error). NaN, a partition without training or held-out rows, takes precedence.
FIT_FAILED = -np.inf


@dataclass(frozen=True)
class Score:
    """A per-partition score a family computes, and the search utilities it stands for.

    The engine batches a candidate only when ``matches(utility, candidate)``: the search's
    utility is then this score mapped by the utility's range and clip, which the engine
    applies (:meth:`skdptune.utility.BoundedUtility.to_utility`) to what the family returns.

    Attributes
    ----------
    name : str
    high : float
        The largest score (a family's finite scores lie at or below it).
    low : float
        The smallest score (``-inf``: unbounded below, the utility's range clips it).
    matches : callable
        ``matches(utility, candidate) -> bool``, from the scorer and the candidate's
        parameters only.
    admits : callable or None, default=None
        ``admits(labels) -> bool``: whether the score is defined for ``y`` with these
        distinct labels (``np.unique`` order); where not, the per-fit path takes the
        candidate (the engine decides it on the data, as it does the conversion of ``y``).
        None: any labels.
    """

    name: str
    high: float
    low: float
    matches: Callable
    admits: Optional[Callable] = None


def _scorer_is(cls):
    return lambda utility, candidate: type(getattr(utility, "scorer", None)) is cls


#: Plain accuracy of predicted class codes (``scoring="accuracy"``, or ``scoring=None`` on a
#: classifier whose ``score`` is scikit-learn's accuracy).
ACCURACY = Score("accuracy", 1.0, 0.0, is_plain_accuracy)

def _binary_labels(labels):
    # scikit-learn's roc_auc_score takes the binary form for exactly two labels of its
    # "binary" type (two floats that are not integers are "continuous", an error there).
    return labels is not None and len(labels) == 2 and type_of_target(labels) == "binary"


#: scikit-learn's ``"roc_auc"`` scorer without options (:func:`~skdptune._utility.is_plain_roc_auc`)
#: on ``y`` of two labels: the area under the ROC curve of the held-out rows' decision values
#: (or positive-class probabilities), ties counted half (average ranks), the larger label
#: positive; in ``[0, 1]``. Other ``y`` (one label, several: the per-fit path raises or
#: scores them ``error_score`` on every partition) take the per-fit path.
ROC_AUC = Score("roc_auc", 1.0, 0.0, is_plain_roc_auc, _binary_labels)

#: :class:`~skdptune.utility.BoundedR2Scorer` with the candidate's ``bounds_y`` (the default
#: of ``scoring=None`` on diffprivlib's ``LinearRegression`` and skdptune's ``Ridge``), under
#: any utility range: R², at most 1.
BOUNDED_R2 = Score("bounded_r2", 1.0, -np.inf, _scorer_is(BoundedR2Scorer))

#: The estimator's own ``score`` (``scoring=None``, scikit-learn's ``_PassthroughScorer``) of
#: diffprivlib's ``KMeans``: scikit-learn's ``KMeans.score``, minus the inertia of the held-out
#: rows, at most 0; the utility's declared or default range
#: (:func:`skdptune.utility.kmeans_score_range`) maps it.
NEGATIVE_INERTIA = Score("negative_inertia", 0.0, -np.inf, _scorer_is(_PassthroughScorer))

#: What a family reads of ``y`` (its ``TARGET``): class codes, from 0 to ``n_classes - 1`` in
#: ``np.unique`` order (at most ``MAX_CLASSES`` labels), float values, or nothing (``y`` may
#: then be None, and the block's ``y`` are zeros).
CODES, VALUES, NO_TARGET = "codes", "values", "none"


@dataclass(frozen=True)
class Block:
    """The rows of a block of partitions, as a family or partition step receives them.

    Rows of all the block's partitions side by side, in any order of partitions; a
    partition's training rows in the order of its fit (a forest deals them to trees by
    position). Float64 ``X``, already through the candidate's public steps and partition
    steps.

    Attributes
    ----------
    X_train : ndarray of shape (n_train, n_features)
    y_train : ndarray of shape (n_train,)
        Class codes, float targets or zeros, as the family's ``TARGET`` says.
    part_train : ndarray of shape (n_train,), int
        Partition of each training row within the block, ``0 .. n_parts - 1``.
    X_val, y_val, part_val
        The same for the held-out rows.
    n_parts : int
    n_classes : int, default=0
        Distinct labels of ``y`` (``TARGET`` ``"codes"``), 0 otherwise.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    part_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    part_val: np.ndarray
    n_parts: int
    n_classes: int = 0

    @cached_property
    def n_train(self):
        """Training rows per partition, shape ``(n_parts,)``."""
        return np.bincount(self.part_train, minlength=self.n_parts)

    @cached_property
    def n_val(self):
        """Held-out rows per partition, shape ``(n_parts,)``."""
        return np.bincount(self.part_val, minlength=self.n_parts)

    def with_X(self, X_train, X_val):
        """The same block with other features (a partition step's output)."""
        return replace(self, X_train=X_train, X_val=X_val)

    def scored(self, scores):
        """``scores`` (shape ``(..., n_parts)``) with NaN where a partition has no training
        or no held-out rows: the engine then gives it the per-fit path's fixed constant."""
        return np.where((self.n_train > 0) & (self.n_val > 0), scores, np.nan)

    def accuracy(self, correct):
        """Each partition's share of held-out rows predicted right, :meth:`scored`.

        Parameters
        ----------
        correct : ndarray of shape (n_val,), bool or float
            Whether each held-out row is predicted right by its partition's model.
        """
        hits = np.bincount(self.part_val, weights=correct, minlength=self.n_parts)
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.scored(hits / self.n_val)


@runtime_checkable
class Family(Protocol):
    """A batched family: one estimator's partition fits on a block, in one array program.

    Attributes
    ----------
    SCORE : Score
        The per-partition score :meth:`partition_scores` computes.
    TARGET : str
        What it reads of ``y``: :data:`CODES`, :data:`VALUES` or :data:`NO_TARGET`.
    MAX_CLASSES : int or None
        With :data:`CODES`, the most distinct labels it takes (more: the per-fit path).
    """

    SCORE: Score
    TARGET: str
    MAX_CLASSES: Optional[int]

    def plan(self, estimator, n_features):
        """The public parameters of a candidate's partition fits, or None (the per-fit path).

        Decided from the parameters and the width alone: what the family does not reproduce
        exactly goes to the per-fit path, which gives it a real fit's behaviour.

        Parameters
        ----------
        estimator : estimator
            The final estimator of a candidate (its parameters set, partition-rescaled), of a
            class the registry maps to this family.
        n_features : int or None
            Columns of the rows it will receive; None before the data (the forecast): decide
            from the parameters alone.

        Returns
        -------
        plan : object or None
            Anything the family reads back in :meth:`partition_scores` (a frozen dataclass).
        """

    def partition_scores(self, plans, block, rngs):
        """Every plan's score on every partition of a block.

        Parameters
        ----------
        plans : sequence
            Plans from :meth:`plan` (through ``bind_labels`` for a :class:`BindsLabels`).
        block : Block
        rngs : list of list of numpy.random.Generator
            ``rngs[j][p]``: plan ``j``'s stream on partition ``p``, its only source of noise
            there.

        Returns
        -------
        scores : ndarray of shape (len(plans), block.n_parts)
            The plans' score (:attr:`SCORE`, or the one a :class:`BindsScore` family bound
            them to), within its range; NaN where a partition has
            no training or no held-out rows (:meth:`Block.scored`); :data:`FIT_FAILED` where
            its real fit would raise.
        """


@runtime_checkable
class BindsLabels(Protocol):
    """A family whose fit depends on the label values (declared classes compared with
    ``y``): the engine binds each plan to the labels before the fits."""

    def bind_labels(self, plan, labels):
        """``plan`` bound to ``labels`` (the sorted distinct labels of ``y``, the order of the
        codes), or None (the per-fit path). Each label must be mapped on its own: a record's
        contribution may depend on its own label, never on which other labels occur."""


@runtime_checkable
class BindsScore(Protocol):
    """A family that computes several scores: the engine binds each plan to the one the
    search's utility matches before the fits.

    Attributes
    ----------
    SCORES : tuple of Score
        Every score it computes, its ``SCORE`` first.
    """

    SCORES: tuple

    def bind_score(self, plan, score):
        """``plan`` bound to ``score`` (one of :attr:`SCORES`), or None (the per-fit path),
        decided from the plan's public parameters only."""


def scores_of(family):
    """The scores a family computes: its ``SCORES`` (:class:`BindsScore`), else its
    ``SCORE``."""
    return tuple(getattr(family, "SCORES", (family.SCORE,)))


@runtime_checkable
class PartitionStep(Protocol):
    """A DP transformer fitted on each partition's training rows, before a family."""

    def plan(self, step, n_features):
        """The step's public parameters, with an ``n_features_out`` attribute, or None (the
        per-fit path); ``n_features`` the columns of its input."""

    def transform_partitions(self, plan, block, rngs):
        """Each partition's rows through its own fit on its own training rows.

        Parameters
        ----------
        plan : object
        block : Block
            Its ``X`` are the step's input columns.
        rngs : list of numpy.random.Generator
            One stream per partition, this step's own.

        Returns
        -------
        X_train, X_val : ndarray of shape (n_rows, plan.n_features_out)
            The block's rows in the same order. A partition without training rows gets a
            placeholder (its score is NaN whatever the family does); a partition whose real
            fit raises gets NaN rows: the engine then scores it :data:`FIT_FAILED`, as the
            per-fit path scores a pipeline whose step raises, or whose next step refuses
            non-finite input (every family's real fit does).
        """


def check_scores(family, scores, n_plans, n_parts, score=None):
    """Whether ``scores`` keep the contract of ``family.partition_scores``: the shape, and
    every value NaN, :data:`FIT_FAILED`, or within the range of ``score`` (the plans' bound
    score; None: the family's ``SCORE``).

    Returns
    -------
    problem : str or None
        What is wrong, or None.
    """
    if np.shape(scores) != (n_plans, n_parts):
        return f"shape {np.shape(scores)}, not {(n_plans, n_parts)}"
    score = family.SCORE if score is None else score
    values = np.asarray(scores, dtype=float)
    inside = (np.isnan(values) | (values == FIT_FAILED)
              | ((values >= score.low) & (values <= score.high)))
    if not inside.all():
        return f"{values[~inside][:3]} outside [{score.low}, {score.high}] ({score.name})"
    return None

