"""The doubling selector's options: a random walk order and the Lyu-Su-Li noise split.

Both keep each iteration an eps0-DP AboveThreshold run (the order is drawn independently of
the data; the split keeps eps1 + eps2 = eps0); the statistical tests state their false-failure
rates.
"""

import numpy as np
import pytest
from scipy import stats

from skdptune.selection import ProposeTestDoubling
from skdptune.selection import _doubling as doubling_module


@pytest.fixture
def recorded_scales(monkeypatch):
    """The scale of every Laplace mechanism the selector builds, in order."""
    original, scales = doubling_module.Laplace, []

    def recording(*, epsilon, sensitivity, random_state=None):
        scales.append(sensitivity / epsilon)
        return original(epsilon=epsilon, sensitivity=sensitivity, random_state=random_state)

    monkeypatch.setattr(doubling_module, "Laplace", recording)
    return scales


@pytest.mark.parametrize(
    "split, threshold_scale, query_scale",
    [
        # Ding & Wu: threshold Lap(2 Delta / eps0), queries Lap(4 Delta / eps0).
        ("ding_wu", 2.0, 4.0),
        # Lyu, Su & Li: eps1 = eps0 / (1 + 2^(2/3)), threshold Lap(Delta / eps1), queries
        # Lap(2 Delta / (eps0 - eps1)).
        ("lyu_su_li", 1 + 2 ** (2 / 3), 2 * (1 + 2 ** (2 / 3)) / 2 ** (2 / 3)),
    ],
)
def test_noise_scales(recorded_scales, split, threshold_scale, query_scale):
    delta_u, epsilon, max_iter = 0.1, 2.0, 4
    ProposeTestDoubling(granularity=0.25, max_iter=max_iter, noise_split=split).select(
        [0.2, 0.6], sensitivity=delta_u, epsilon=epsilon, delta=0.0, random_state=0)
    eps0 = epsilon / max_iter
    assert recorded_scales == pytest.approx(
        [threshold_scale * delta_u / eps0, query_scale * delta_u / eps0])


def test_lyu_su_li_split_has_less_comparison_variance():
    # Var(query noise - threshold noise) = 2 (b_t^2 + b_q^2) for Laplace scales b.
    ding_wu = 2.0 ** 2 + 4.0 ** 2
    ratio = 2 ** (2 / 3)
    lyu = (1 + ratio) ** 2 + (2 * (1 + ratio) / ratio) ** 2
    assert lyu < 0.9 * ding_wu


def test_grid_order_favours_the_first_of_tied_candidates_and_random_order_does_not():
    # Three tied candidates far above every threshold: every iteration's first visited
    # candidate passes. Grid order always selects candidate 0; a random order selects each
    # about a third of the time. 600 runs: a chi-square test at alpha = 1e-4.
    utilities = [0.9, 0.9, 0.9]
    grid = ProposeTestDoubling(granularity=0.5, max_iter=3)
    assert {grid.select(utilities, sensitivity=1e-4, epsilon=10.0, delta=0.0,
                        random_state=seed).index for seed in range(50)} == {0}
    shuffled = ProposeTestDoubling(granularity=0.5, max_iter=3, order="random")
    rng = np.random.RandomState(0)
    counts = np.bincount([
        shuffled.select(utilities, sensitivity=1e-4, epsilon=10.0, delta=0.0,
                        random_state=rng).index for _ in range(600)
    ], minlength=3)
    assert stats.chisquare(counts).pvalue > 1e-4


def test_random_order_still_finds_a_clear_best():
    utilities = [0.1, 0.2, 0.95, 0.3]
    selector = ProposeTestDoubling(granularity=0.05, order="random", noise_split="lyu_su_li")
    for seed in range(20):
        result = selector.select(utilities, sensitivity=1e-4, epsilon=10.0, delta=0.0,
                                 random_state=seed)
        assert result.index == 2


def test_secure_random_order_runs():
    result = ProposeTestDoubling(order="random").select(
        [0.4, 0.5], sensitivity=0.01, epsilon=1.0, delta=1e-6)
    assert result.index in (0, 1, None)


@pytest.mark.parametrize("name, value", [("order", "sorted"), ("noise_split", "even")])
def test_bad_options_are_named(name, value):
    with pytest.raises(ValueError, match=name):
        ProposeTestDoubling(**{name: value}).select(
            [0.5], sensitivity=0.1, epsilon=1.0, delta=0.0)
