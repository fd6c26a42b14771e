"""Property-based tests of every selector in the registry (hypothesis).

Parametrized over :data:`skdptune.selection.SELECTORS`, so a selector added there joins
automatically. Selector-specific parameters are drawn from ``PARAMETERS`` (default: none).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import chi2_contingency

from skdptune._accounting import composed_epsilon
from skdptune.selection import SELECTORS

# Few examples keep the module under a minute; hypothesis's database replays failures.
FAST = settings(max_examples=100, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

# Small sets of budgets, so that PLD calibrations (about 0.1-1 s each, cached) stay few.
EPSILONS = st.sampled_from([0.1, 1.0, 4.0])
DELTAS = st.sampled_from([0.0, 1e-6])
PARAMETERS = {
    "doubling": st.fixed_dictionaries({
        "granularity": st.sampled_from([0.05, 0.25]),
        "floor": st.sampled_from([0.0, 0.5]),
        "max_iter": st.sampled_from(["auto", 3]),
    }),
}
utility_vectors = arrays(
    np.float64, st.integers(1, 30), elements=st.floats(0.0, 1.0, allow_subnormal=False)
)


def make_selector(name, data):
    return SELECTORS[name](**data.draw(PARAMETERS.get(name, st.just({}))))


def is_one_shot(result):
    return result.composition == "single" and result.max_iter == 1


@pytest.mark.parametrize("name", sorted(SELECTORS))
@FAST
@given(
    data=st.data(), utilities=utility_vectors, epsilon=EPSILONS, delta=DELTAS,
    sensitivity=st.floats(1e-4, 0.5), seed=st.integers(0, 2**32 - 1),
)
def test_output_is_valid_and_guarantee_is_the_requested_budget(
    name, data, utilities, epsilon, delta, sensitivity, seed
):
    result = make_selector(name, data).select(
        utilities, sensitivity=sensitivity, epsilon=epsilon, delta=delta, random_state=seed
    )
    assert result.index is None or 0 <= result.index < len(utilities)
    assert 1 <= result.n_iterations <= result.max_iter
    assert len(result.trace) <= result.max_iter
    assert all(it.passed is None or 0 <= it.passed < len(utilities) for it in result.trace)
    assert result.epsilon == epsilon
    # Pure-DP results (one-shot selectors, and a doubling loop whose eps0 is basic
    # composition's) report delta 0, their guarantee at any delta; the rest the requested one.
    pure = is_one_shot(result) or result.composition == "basic"
    assert result.delta == delta or (result.delta == 0.0 and pure)
    if result.composition == "basic":
        assert result.epsilon_per_iteration * result.max_iter == pytest.approx(result.epsilon)
    # The reported guarantee is backed by the composition of max_iter steps of
    # epsilon_per_iteration each (never by the realised count).
    composed = composed_epsilon(result.epsilon_per_iteration, result.max_iter, result.delta)
    assert composed <= epsilon * (1 + 1e-9)


@pytest.mark.parametrize("name", sorted(SELECTORS))
@settings(max_examples=5, deadline=None)
@given(utilities=utility_vectors)
def test_secure_noise_gives_valid_output(name, utilities):
    result = SELECTORS[name]().select(utilities, sensitivity=0.1, epsilon=1.0, delta=0.0)
    assert result.index is None or 0 <= result.index < len(utilities)


# Noise scale at most 4 * sensitivity / eps0 = 4e-9 * max_iter / 10 (doubling; the one-shot
# mechanisms are sharper), so a 1e-4 tolerance is over 2,000 noise scales: a false failure
# has probability below exp(-2000) per comparison.
NOISELESS = dict(sensitivity=1e-9, epsilon=10.0, delta=0.0)
TOLERANCE = 1e-4


@pytest.mark.parametrize("name", sorted(SELECTORS))
@FAST
@given(data=st.data(), utilities=utility_vectors, seed=st.integers(0, 2**32 - 1))
def test_noiseless_limit_does_not_depend_on_candidate_labels(name, data, utilities, seed):
    """With negligible noise, every labelling of the candidates selects (nearly) the best.

    One-shot mechanisms: the selected utility is the maximum, whatever the order.
    Doubling walks the candidates in grid order and keeps the first that clears the
    threshold, so which of several near-best candidates wins depends on the order; what holds
    for every order is that, when the loop stops on its own (before ``max_iter``), the
    selected utility lies within one ``granularity`` below the maximum (the last raise of
    ``u`` passed, the next one failed), and nothing is selected only when no candidate
    reaches ``floor + granularity``.
    """
    selector = make_selector(name, data)
    permutation = np.array(data.draw(st.permutations(range(len(utilities)))))
    best = utilities.max()
    for labelled in (utilities, utilities[permutation]):
        result = selector.select(labelled, random_state=seed, **NOISELESS)
        if is_one_shot(result):
            assert labelled[result.index] >= best - TOLERANCE
        elif result.n_iterations < result.max_iter:
            if result.index is None:
                assert best < selector.floor + selector.granularity + TOLERANCE
            else:
                assert labelled[result.index] > best - selector.granularity - TOLERANCE


# Fixed utilities with ties and a clear spread; epsilon/sensitivity chosen so that every
# candidate is selected often enough (expected counts > 100) for the test to have power.
SPREAD = np.array([0.2, 0.5, 0.5, 0.8, 0.3, 0.65])
N_DRAWS = 3000
ALPHA = 1e-6


@pytest.mark.parametrize("name", sorted(SELECTORS))
def test_one_shot_output_distribution_is_permutation_equivariant(name):
    """P(select candidate j) must not change when the candidates are relabelled.

    Counts of the selected (original) identity over ``N_DRAWS`` seeded draws in grid order
    and in a shuffled order are compared with a chi-square test of homogeneity at level
    ``ALPHA = 1e-6``: for a correct mechanism and unseeded noise the test would fail with
    probability 1e-6; with the fixed seeds below it is deterministic.
    """
    selector = SELECTORS[name]()
    probe = selector.select(SPREAD, sensitivity=0.1, epsilon=0.5, delta=0.0, random_state=0)
    if not is_one_shot(probe):
        pytest.skip(f"{name} walks the candidates in grid order: see the noiseless test")
    permutation = np.random.RandomState(1).permutation(len(SPREAD))
    counts = []
    for order, seed in ((np.arange(len(SPREAD)), 2), (permutation, 3)):
        rng = np.random.RandomState(seed)
        chosen = [
            order[selector.select(SPREAD[order], sensitivity=0.1, epsilon=0.5, delta=0.0,
                                  random_state=rng).index]
            for _ in range(N_DRAWS)
        ]
        counts.append(np.bincount(chosen, minlength=len(SPREAD)))
    assert counts[0].min() > 50, counts  # the test has power: every identity is seen
    _, p_value, _, _ = chi2_contingency(np.array(counts))
    assert p_value > ALPHA, counts
