"""Partition and holdout labels that are stable under a change of one record.

Every record draws its partition label and its holdout label independently of every other
record, by position. Replacing one record (the library's adjacency) therefore changes exactly
one partition's contents and no record's labels, which is what gives the mean partition
utility its sensitivity of ``1 / n_partitions``. Independent labels also keep that property if
a record were added or removed (with ``n_partitions`` fixed), which the library does not
claim (``n`` is public), where "shuffle, then cut into equal chunks" would not: one added
record would shift the chunks' boundaries and move many records between partitions.
"""

import math

import numpy as np


def partition_labels(n_samples, n_partitions, validation_fraction, random_state=None):
    """Draw a partition label and a validation flag for every record, independently.

    Parameters
    ----------
    n_samples : int
        Number of records.
    n_partitions : int
        Number of disjoint partitions ``k``.
    validation_fraction : float
        Probability, in ``(0, 1)``, that a record is held out for scoring inside its partition.
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator, default=None
        Seed of the labels. None uses fresh operating-system entropy. The labels are never
        released, so they need no cryptographic generator.

    Returns
    -------
    partition : ndarray of shape (n_samples,), dtype=int
        Partition of each record, uniform on ``0 .. n_partitions - 1``.
    is_validation : ndarray of shape (n_samples,), dtype=bool
        Whether the record is held out for scoring.

    Notes
    -----
    Record ``i`` uses the ``i``-th pair of uniform draws of the generator, so with a fixed seed
    the labels of the first ``n`` records do not depend on how many records follow.
    """
    rng = _generator(random_state)
    draws = rng.random((n_samples, 2))
    partition = np.minimum((draws[:, 0] * n_partitions).astype(np.intp), n_partitions - 1)
    is_validation = draws[:, 1] < validation_fraction
    return partition, is_validation


def split_indices(partition, is_validation, n_partitions):
    """Train and validation row indices of every partition.

    Returns
    -------
    splits : list of (ndarray, ndarray)
        ``splits[i] = (train_indices, validation_indices)`` of partition ``i``; either may be
        empty for small data.
    """
    splits = []
    for i in range(n_partitions):
        in_partition = partition == i
        splits.append(
            (
                np.flatnonzero(in_partition & ~is_validation),
                np.flatnonzero(in_partition & is_validation),
            )
        )
    return splits


def _generator(random_state):
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        # Derive a Generator from the RandomState's stream, so that the same RandomState
        # object gives the same labels.
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    return np.random.default_rng(random_state)


def auto_n_partitions(n_samples, *, n_candidates, epsilon, validation_fraction,
                      min_training_records=None):
    """The number of partitions ``n_partitions="auto"`` uses, from public quantities only.

    ``k = min(k_noise, k_data)``, between 2 and :data:`MAX_PARTITIONS`, and never more than
    the data allow (every partition expecting one training and one validation record):

    - ``k_noise = 2 * ln(m) / (NOISE_TARGET * epsilon)``: the ``k`` at which the exponential
      mechanism's noise term ``(2 / (k * epsilon)) * ln(m)`` (sensitivity ``1 / k``, ``m``
      candidates) is ``NOISE_TARGET = 0.03`` utility units, that is ``k * epsilon`` of about
      200 for 20 candidates.
    - ``k_data = n_samples * (1 - validation_fraction) / min_training_records``: at least
      that many training records per partition fit, the model family's floor
      (``skdptune._tuning_evidence.FamilyEvidence.min_partition_rows``, measured by issue 39's
      fidelity study), :data:`MIN_TRAINING_RECORDS` when not given.

    The measurements behind it. First (``benchmarks/results/fidelity/summary.md``: UCI Adult
    with a 20-candidate diffprivlib LogisticRegression grid over ``C`` and ``data_norm``, and a
    1,000,000-row generated panel, partition_scaling on): the one-shot selectors' regret falls
    with ``k * epsilon`` (permute-and-flip on Adult: about 12 pp at ``k * epsilon = 10``, 3 pp
    at 50, 1 pp at 100, at most 0.2 pp from 200 on). Then ``benchmarks/partition_size.py``
    (``benchmarks/RESULTS.md``, "How many partitions"): ``k`` from 25 to 1000 on five tables
    (Adult, flights, fertility, diamonds and cps1988: LogisticRegression, GaussianNB and
    :class:`~skdptune.linear_model.Ridge` grids, a stated default candidate, total epsilon 0.5
    to 4). Where the noise term binds, more partitions bought nothing and once cost 12 points
    (GaussianNB at 210 records per partition and a large partition epsilon): hence the
    noise target. Where the data bind (Adult, cps1988), the partition utilities still ranked
    the candidates as well at 25 training records per partition as at 50, and the smaller
    selection noise more than halved the regret (Adult at total epsilon 1: 1.9 points at
    ``k = 416``, 0.5 at 833): hence the floor of 25. Fewer records were not measured.
    The floor was then checked on a sixth table held out from the choice (Ecdat's ``HI``).

    The number of features does not enter: ``n_features_in_`` counts the input's columns, not
    the dimension a pipeline's model sees after encoding.

    Parameters
    ----------
    n_samples : int
        Number of records, public: the library's guarantee is for replace-one adjacency, under
        which neighbouring datasets share it.
    n_candidates : int
        Size of the grid.
    epsilon : float
        The selector's epsilon.
    validation_fraction : float
        Share of each partition held out for scoring.
    min_training_records : int or None, default=None
        The floor on training records per partition (None: :data:`MIN_TRAINING_RECORDS`).

    Returns
    -------
    n_partitions : int
    """
    k_noise = 2.0 * math.log(max(n_candidates, 2)) / (NOISE_TARGET * epsilon)
    floor = MIN_TRAINING_RECORDS if min_training_records is None else min_training_records
    k_data = n_samples * (1 - validation_fraction) / floor
    largest = int(n_samples * min(validation_fraction, 1 - validation_fraction))
    return int(max(2, min(k_noise, k_data, MAX_PARTITIONS, largest)))


#: Noise term of the selection, in utility units, that ``n_partitions="auto"`` aims for.
NOISE_TARGET = 0.03
#: Training records per partition fit below which ``n_partitions="auto"`` does not go.
MIN_TRAINING_RECORDS = 25
#: Largest ``n_partitions="auto"`` chooses: ``k * n_candidates`` fits cost time.
MAX_PARTITIONS = 1000
