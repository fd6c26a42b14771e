"""Partition and holdout labels that are stable under adding or removing one record.

Every record draws its partition label and its holdout label independently of every other
record. Adding or removing one record therefore changes exactly one partition (the one it joins
or leaves) and no other record's labels, which is what gives the mean partition utility its
sensitivity of ``1 / n_partitions``. "Shuffle, then cut into equal chunks" would not: one added
record would shift the boundaries and move many records between partitions.
"""

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


def auto_n_partitions(n_samples, *, n_features, n_candidates, epsilon, selector,
                      validation_fraction):
    """The number of partitions ``n_partitions="auto"`` uses, from public quantities only.

    Parameters
    ----------
    n_samples : int
        Number of records (treated as public, as everywhere in the library).
    n_features : int or None
        Number of features, None for text.
    n_candidates : int
        Size of the grid.
    epsilon : float
        The selector's epsilon.
    selector : selector instance
        The selector.
    validation_fraction : float
        Share of each partition held out for scoring.

    Returns
    -------
    n_partitions : int
        Between 2 and what the data allow (every partition expecting one training and one
        validation record).
    """
    per_partition = max(_MIN_TRAINING_RECORDS, _RECORDS_PER_FEATURE * (n_features or 0))
    k = int(n_samples * (1 - validation_fraction) // per_partition)
    largest = int(n_samples * min(validation_fraction, 1 - validation_fraction))
    return max(2, min(k, _MAX_PARTITIONS, largest))


# Provisional constants of the auto rule (records per partition fit, and a cap on the number of
# partition fits' fixed costs), pending the measurement study.
_MIN_TRAINING_RECORDS = 200
_RECORDS_PER_FEATURE = 2
_MAX_PARTITIONS = 1000
