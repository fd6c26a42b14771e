"""Tests of the partition and holdout labels (skdptune._partition)."""

import numpy as np
import pytest
from scipy import stats

from skdptune._partition import auto_n_partitions, partition_labels, split_indices


def test_adding_a_record_changes_no_other_label():
    partition, validation = partition_labels(500, 7, 0.3, random_state=3)
    more_partition, more_validation = partition_labels(501, 7, 0.3, random_state=3)
    np.testing.assert_array_equal(more_partition[:500], partition)
    np.testing.assert_array_equal(more_validation[:500], validation)
    # Hence the split of every partition but the new record's one is unchanged.
    before = split_indices(partition, validation, 7)
    after = split_indices(more_partition, more_validation, 7)
    changed = [
        i for i in range(7)
        if not (np.array_equal(before[i][0], after[i][0])
                and np.array_equal(before[i][1], after[i][1]))
    ]
    assert changed == [more_partition[500]]


def test_labels_are_uniform_and_independent():
    # Chi-square tests at level 1e-6 each: a correct implementation fails either with
    # probability below 2e-6.
    n, k, fraction = 200_000, 10, 0.25
    partition, validation = partition_labels(n, k, fraction, random_state=None)
    counts = np.bincount(partition, minlength=k)
    assert stats.chisquare(counts).pvalue > 1e-6
    table = np.array([np.bincount(partition[validation == v], minlength=k) for v in (0, 1)])
    assert stats.chi2_contingency(table).pvalue > 1e-6
    # Validation share: binomial, 6 standard deviations (false failure below 2e-9).
    assert abs(validation.mean() - fraction) < 6 * np.sqrt(fraction * (1 - fraction) / n)


def test_splits_cover_every_record_once():
    partition, validation = partition_labels(1000, 4, 0.2, random_state=0)
    splits = split_indices(partition, validation, 4)
    every = np.sort(np.concatenate([np.concatenate(pair) for pair in splits]))
    np.testing.assert_array_equal(every, np.arange(1000))
    for i, (train, held_out) in enumerate(splits):
        assert np.all(partition[train] == i) and np.all(partition[held_out] == i)
        assert not validation[train].any() and validation[held_out].all()


@pytest.mark.parametrize("seed", [0, np.random.RandomState(0), np.random.default_rng(0)])
def test_seeds_give_reproducible_labels(seed):
    first = partition_labels(50, 3, 0.5, random_state=seed)
    if not isinstance(seed, int):
        seed = (np.random.RandomState(0) if isinstance(seed, np.random.RandomState)
                else np.random.default_rng(0))
    second = partition_labels(50, 3, 0.5, random_state=seed)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


@pytest.mark.parametrize("n_samples, n_candidates, epsilon, expected", [
    (26_048, 20, 0.225, 833),  # Adult at total epsilon 1: the 25-record floor binds (887 noise)
    (261_876, 20, 0.9, 221),  # flights at 4: the noise term binds, 2 ln(20) / (0.03 * 0.9)
    (10_000_000, 20, 0.01, 1_000),  # the cap
    (100, 6, 1.0, 3),  # 80 training records: 3 partitions of at least 25
    (10, 6, 1.0, 2),  # never fewer than 2
])
def test_auto_n_partitions_is_the_smaller_of_the_noise_and_data_terms(
        n_samples, n_candidates, epsilon, expected):
    assert auto_n_partitions(n_samples, n_candidates=n_candidates, epsilon=epsilon,
                             validation_fraction=0.2) == expected
