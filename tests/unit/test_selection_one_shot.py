"""Tests of the one-shot selectors: exponential mechanism, permute-and-flip, report-noisy-max.

Statistical tests draw their noise from the secure (unseeded) path that users get, and state
their false-failure rate; only the reproducibility test is seeded.
"""

import itertools
import math

import numpy as np
import pytest
from skdptune.naive_bayes import GaussianNB
from scipy import integrate, stats
from sklearn.base import clone
from sklearn.datasets import load_iris

from skdptune import PrivateGridSearchCV
from skdptune._models.naive_bayes import gaussian_nb_charge
from skdptune.selection import (
    SELECTORS,
    ExponentialMechanism,
    PermuteAndFlip,
    ReportNoisyMax,
    SelectionResult,
)
from skdptune.selection._base import default_offsets

CLASSES = [0, 1, 2]  # iris's labels, declared

ONE_SHOT = ["exponential", "permute_and_flip", "report_noisy_max"]

# Documented utility bounds: with probability >= 1 - beta,
# u(selected) >= max u - GAP_FACTOR * (sensitivity / epsilon) * ln(m / beta).
GAP_FACTOR = {"exponential": 2.0, "permute_and_flip": 2.0, "report_noisy_max": 4.0}

# Per-test false-failure rate of the statistical tests below.
ALPHA = 1e-6


def draw(name, utilities, sensitivity, epsilon, n_draws):
    """Counts of each selected index over ``n_draws`` secure (unseeded) selections."""
    selector = SELECTORS[name]()
    indices = [
        selector.select(utilities, sensitivity=sensitivity, epsilon=epsilon, delta=0.0).index
        for _ in range(n_draws)
    ]
    return np.bincount(indices, minlength=len(utilities))


def exact_probabilities(name, utilities, sensitivity, epsilon):
    """Output distribution of each mechanism, computed independently of the library."""
    u = np.asarray(utilities, dtype=float)
    if name == "exponential":
        weights = np.exp(epsilon * (u - u.max()) / (2 * sensitivity))
        return weights / weights.sum()
    if name == "permute_and_flip":
        # Average over every visiting order of P(walk reaches r) * P(r's coin is heads).
        coins = np.exp(epsilon * (u - u.max()) / (2 * sensitivity))
        probabilities = np.zeros(len(u))
        orders = list(itertools.permutations(range(len(u))))
        for order in orders:
            reach = 1.0
            for r in order:
                probabilities[r] += reach * coins[r]
                reach *= 1 - coins[r]
        return probabilities / len(orders)
    # Report-noisy-max, Laplace scale b: P(i wins) = int f(z) prod_{j != i} F(u_i + z - u_j) dz.
    scale = 2 * sensitivity / epsilon
    laplace = stats.laplace(scale=scale)
    probabilities = []
    for i in range(len(u)):
        others = np.delete(u, i)

        def density(z, i=i, others=others):
            return laplace.pdf(z) * np.prod(laplace.cdf(u[i] + z - others))

        value, _ = integrate.quad(density, -60 * scale, 60 * scale, limit=200)
        probabilities.append(value)
    return np.array(probabilities)


# --- Registry and scikit-learn surface ---------------------------------------------------


def test_names_are_registered():
    assert SELECTORS["exponential"] is ExponentialMechanism
    assert SELECTORS["permute_and_flip"] is PermuteAndFlip
    assert SELECTORS["report_noisy_max"] is ReportNoisyMax


@pytest.mark.parametrize("name", ONE_SHOT)
def test_selectors_have_no_parameters_and_clone(name):
    selector = SELECTORS[name]()
    assert selector.get_params() == {}
    assert type(clone(selector)) is type(selector)
    selector.validate_parameters()
    with pytest.raises(ValueError, match="Invalid parameter"):
        selector.set_params(granularity=0.1)


# --- Valid output on every input -----------------------------------------------------------


@pytest.mark.parametrize("name", ONE_SHOT)
@pytest.mark.parametrize(
    "utilities",
    [[0.5], [0.3, 0.3, 0.3, 0.3], [0.0, 1.0], [1.0, 0.0, 1.0], [0.0, 0.0, 0.0], [1.0] * 3,
     np.linspace(0, 1, 7), (0.2, 0.4)],
    ids=["one", "all-equal", "zero-one", "one-zero-one", "all-zero", "all-one", "array", "tuple"],
)
@pytest.mark.parametrize(
    "sensitivity, epsilon",
    # Moderate noise, nearly none, nearly all, and a ratio epsilon/sensitivity that overflows.
    [(0.1, 1.0), (1e-3, 10.0), (1.0, 1e-6), (1e-10, 1e300)],
)
@pytest.mark.parametrize("delta", [0.0, 1e-6, 0.5])
def test_output_is_valid_on_every_input(name, utilities, sensitivity, epsilon, delta):
    result = SELECTORS[name]().select(
        utilities, sensitivity=sensitivity, epsilon=epsilon, delta=delta
    )
    assert isinstance(result, SelectionResult)
    assert type(result.index) is int
    assert 0 <= result.index < len(utilities)
    assert result.score is None
    assert (result.trace, result.n_iterations, result.max_iter) == ((), 1, 1)
    assert result.epsilon == result.epsilon_per_iteration == epsilon
    # Pure DP: delta is accepted but neither spent nor reported.
    assert result.delta == 0.0
    assert result.composition == "single"


@pytest.mark.parametrize("name", ONE_SHOT)
def test_overflowing_ratio_selects_a_best_candidate(name):
    # epsilon / sensitivity overflows to inf: the mechanism must degrade to the argmax.
    utilities = [0.2, 0.9, 0.5, 0.9]
    for _ in range(20):
        index = SELECTORS[name]().select(
            utilities, sensitivity=1e-10, epsilon=1e300, delta=0.0
        ).index
        assert index in (1, 3)


@pytest.mark.parametrize("name", ONE_SHOT)
def test_seeded_runs_are_reproducible(name):
    utilities = np.linspace(0, 1, 10)

    def run(seed):
        rng = np.random.RandomState(seed)
        return [
            SELECTORS[name]().select(
                utilities, sensitivity=0.5, epsilon=1.0, delta=0.0, random_state=rng
            ).index
            for _ in range(30)
        ]

    first = run(3)
    assert run(3) == first
    # 30 draws from a distribution with every probability below 0.3 agree with another
    # seed's 30 draws with probability below 0.3 ** 30 < 1e-15.
    assert run(4) != first


# --- Bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ONE_SHOT)
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"utilities": [0.5, 1.5]}, r"utilities must lie in \[0, 1\]"),
        ({"utilities": [-0.1, 0.5]}, r"utilities must lie in \[0, 1\]"),
        ({"utilities": [np.nan, 0.5]}, r"utilities must lie in \[0, 1\] \(and not be NaN\)"),
        ({"utilities": []}, "utilities must be a non-empty 1-d array"),
        ({"utilities": [[0.1, 0.2], [0.3, 0.4]]}, "utilities must be a non-empty 1-d array"),
        ({"epsilon": 0.0}, "epsilon must be a positive finite number, got 0.0"),
        ({"epsilon": -1.0}, "epsilon must be a positive finite number, got -1.0"),
        ({"epsilon": np.inf}, "epsilon must be a positive finite number, got inf"),
        ({"epsilon": np.nan}, "epsilon must be a positive finite number, got nan"),
        ({"epsilon": "1"}, "epsilon must be a positive finite number, got '1'"),
        ({"sensitivity": 0.0}, "sensitivity must be a positive finite number, got 0.0"),
        ({"sensitivity": -0.1}, "sensitivity must be a positive finite number, got -0.1"),
        ({"sensitivity": np.inf}, "sensitivity must be a positive finite number, got inf"),
        ({"delta": -0.1}, r"delta must be a number in \[0, 1\), got -0.1"),
        ({"delta": 1.0}, r"delta must be a number in \[0, 1\), got 1.0"),
        ({"delta": 2}, r"delta must be a number in \[0, 1\), got 2"),
    ],
)
def test_bad_input_is_named(name, kwargs, match):
    arguments = {"utilities": [0.2, 0.8], "sensitivity": 0.1, "epsilon": 1.0, "delta": 0.0}
    arguments.update(kwargs)
    utilities = arguments.pop("utilities")
    with pytest.raises(ValueError, match=match):
        SELECTORS[name]().select(utilities, **arguments)


# --- Statistical behaviour -----------------------------------------------------------------


@pytest.mark.parametrize("name", ONE_SHOT)
def test_concentrates_on_best_when_noise_is_negligible(name):
    # Gap 0.4, sensitivity 1e-3, epsilon 10. EM and PF select a given worse candidate with
    # probability <= exp(-10 * 0.4 / 2e-3) = exp(-2000); RNM (Laplace scale 2e-4) needs a noise
    # difference above 0.4, probability <= 2 * exp(-0.2 / 2e-4) = 2 * exp(-1000). Over 300
    # draws and 2 worse candidates the false-failure rate is below 1e-400.
    counts = draw(name, [0.1, 0.5, 0.9], sensitivity=1e-3, epsilon=10.0, n_draws=300)
    assert counts.tolist() == [0, 0, 300]


@pytest.mark.parametrize("name", ONE_SHOT)
def test_near_uniform_when_noise_dominates(name):
    # epsilon / sensitivity = 1e-6: every probability is within a factor exp(1e-6) of 1/5,
    # which shifts the chi-square statistic by far less than its spread. Chi-square goodness
    # of fit to the uniform law, false-failure rate ALPHA; a mechanism that ignores the noise
    # (always the argmax) gives a statistic near 4 * 4000, p far below ALPHA.
    n_draws = 4000
    counts = draw(name, [0.0, 0.25, 0.5, 0.75, 1.0], sensitivity=1.0, epsilon=1e-6,
                  n_draws=n_draws)
    assert stats.chisquare(counts).pvalue > ALPHA, counts


@pytest.mark.parametrize("name", ONE_SHOT)
def test_output_distribution_matches_exact_law(name):
    # Chi-square goodness of fit to the exact law, false-failure rate ALPHA. The exponent's
    # scale epsilon / (2 * sensitivity) = 2 here; a monotone calibration (scale 4, or RNM noise
    # of scale sensitivity / epsilon) moves the probabilities by 0.05 to 0.2, a chi-square
    # statistic of several hundred at 3000 draws, far beyond the 1e-6 critical value (~30).
    utilities = [0.0, 0.5, 1.0, 0.8]
    sensitivity, epsilon, n_draws = 0.25, 1.0, 3000
    expected = exact_probabilities(name, utilities, sensitivity, epsilon)
    assert expected.sum() == pytest.approx(1.0, abs=1e-6)
    counts = draw(name, utilities, sensitivity, epsilon, n_draws)
    assert stats.chisquare(counts, expected * n_draws).pvalue > ALPHA, (counts, expected)


def test_exponential_law_is_softmax_of_scaled_utilities():
    # The exact law used above, spelled out for the exponential mechanism: softmax of
    # epsilon * u / (2 * sensitivity), independent of a shift of the utilities.
    utilities = np.array([0.0, 0.5, 1.0, 0.8])
    softmax = np.exp(2.0 * utilities) / np.exp(2.0 * utilities).sum()
    np.testing.assert_allclose(
        exact_probabilities("exponential", utilities, 0.25, 1.0), softmax
    )


@pytest.mark.parametrize("name", ONE_SHOT)
@pytest.mark.parametrize("configuration", ["uniform", "tight"])
def test_documented_utility_bound_holds_at_its_probability(name, configuration):
    m, beta, sensitivity, epsilon, n_draws = 50, 0.1, 0.01, 1.0, 2000
    gap = GAP_FACTOR[name] * sensitivity / epsilon * math.log(m / beta)
    if configuration == "uniform":
        # Fixed utilities (not noise), seeded so that the test data does not vary.
        utilities = np.random.RandomState(0).uniform(0, 1, m)
    else:
        # Every other candidate just past the bound: for EM the violation rate is then
        # 49/500 / (1 + 49/500) = 0.089, close to beta, so a mechanism with even slightly more
        # noise than documented violates the bound at a rate well above beta.
        utilities = np.full(m, 1.0 - gap - 1e-6)
        utilities[17] = 1.0
    counts = draw(name, utilities, sensitivity, epsilon, n_draws)
    violations = counts[utilities < utilities.max() - gap].sum()
    # One-sided binomial test of "violation rate <= beta": under the documented guarantee
    # P(Binomial(n_draws, beta) >= violations) < ALPHA happens with probability <= ALPHA.
    assert stats.binom.sf(violations - 1, n_draws, beta) > ALPHA, violations


# --- Inside PrivateGridSearchCV ------------------------------------------------------------


@pytest.mark.parametrize(
    "selector", ONE_SHOT + [ExponentialMechanism(), PermuteAndFlip(), ReportNoisyMax()],
    ids=ONE_SHOT + ["ExponentialMechanism()", "PermuteAndFlip()", "ReportNoisyMax()"],
)
def test_usable_inside_private_grid_search(selector):
    X, y = load_iris(return_X_y=True)
    bounds = ([4.0, 2.0, 1.0, 0.0], [8.0, 4.5, 7.0, 2.5])
    search = PrivateGridSearchCV(
        GaussianNB(classes=CLASSES, bounds=bounds),
        {"epsilon": [0.5, 1.0], "var_smoothing": [1e-9, 1e-3]},
        selection_epsilon=1.0, delta=1e-6, selector=selector, n_partitions=5, random_state=0,
        check_share=0,  # the whole selection budget to the selector and best_score_
    )
    search = clone(search).fit(X, y)
    assert search.best_params_ in [
        {"epsilon": e, "var_smoothing": v} for e in (0.5, 1.0) for v in (1e-9, 1e-3)
    ]
    # A tenth of the selection budget buys a Laplace estimate of the selected utility.
    assert 0.0 <= search.best_score_ <= 1.0
    report = search.privacy_report_
    assert report["selector_composition"] == "single"
    assert (report["selector_epsilon"], report["score_epsilon"]) == pytest.approx((0.9, 0.1))
    assert (report["selection_epsilon"], report["selection_delta"]) == (1.0, 0.0)
    assert (report["max_iter"], report["n_iterations"]) == (1, 1)
    # Selection (1.0, 0) plus the refit, charged at the grid's largest epsilon times
    # GaussianNB's charge factor for these bounds (about 2.33).
    assert search.privacy_spent_[0] == pytest.approx(
        1.0 + gaussian_nb_charge(GaussianNB(classes=CLASSES, bounds=bounds)) * 1.0)
    assert search.predict(X).shape == y.shape


# --- Public offsets and the default's margin ---------------------------------------------


@pytest.mark.parametrize("name", ONE_SHOT)
def test_offsets_select_by_the_shifted_law(name):
    # The selection with public offsets has the exact law of the mechanism on utilities +
    # offsets (chi-square, false-failure rate ALPHA). Ignoring the offsets gives the law on
    # [0.5, 0.5, 0.5, 0.8], which puts 0.03-0.1 on candidate 0 instead of 0.3-0.6: a
    # statistic in the hundreds at 3000 draws.
    utilities, offsets = [0.5, 0.5, 0.5, 0.8], [0.6, 0.0, 0.0, 0.0]
    sensitivity, epsilon, n_draws = 0.25, 1.0, 3000
    expected = exact_probabilities(name, np.add(utilities, offsets), sensitivity, epsilon)
    selector = SELECTORS[name]()
    indices = [selector.select(utilities, sensitivity=sensitivity, epsilon=epsilon, delta=0.0,
                               offsets=offsets).index for _ in range(n_draws)]
    counts = np.bincount(indices, minlength=4)
    assert stats.chisquare(counts, expected * n_draws).pvalue > ALPHA, (counts, expected)


@pytest.mark.parametrize("name", ONE_SHOT)
def test_tail_lead_bounds_the_selection_probability_exactly_where_stated(name):
    # tail_lead(p): a candidate trailing another by that lead is selected with probability at
    # most p, by the exact law; the bound is tight to within a factor of 4 (a lead twice
    # too large for the mechanism would make it p ** 2-tight, far below p / 4).
    sensitivity, epsilon, p = 0.01, 0.5, 0.05
    selector = SELECTORS[name]()
    lead = selector.tail_lead(p, sensitivity=sensitivity, epsilon=epsilon)
    for others in ([], [0.5 - lead], [0.5 - lead] * 3, [0.5, 0.4]):
        probabilities = exact_probabilities(name, [0.5, 0.5 - lead] + others, sensitivity,
                                            epsilon)
        assert probabilities[1] <= p * (1 + 1e-6)
    two = exact_probabilities(name, [0.5, 0.5 - lead], sensitivity, epsilon)
    if name == "report_noisy_max":
        assert two[1] == pytest.approx(p, rel=1e-6)  # solved exactly for two candidates
    else:
        assert lead == pytest.approx(2 * sensitivity / epsilon * math.log(1 / p))
        assert two[1] >= p / 4
    assert selector.tail_lead(1.0, sensitivity=sensitivity, epsilon=epsilon) == 0.0


@pytest.mark.parametrize("name", ONE_SHOT)
def test_default_offsets_put_the_auto_margin_on_the_default_only(name):
    selector = SELECTORS[name]()
    offsets = default_offsets(selector, 20, 3, "auto", sensitivity=1 / 400, epsilon=0.45)
    margin = selector.tail_lead(1 / 20, sensitivity=1 / 400, epsilon=0.45)
    assert margin > 0
    np.testing.assert_allclose(offsets, np.eye(20)[3] * margin)
    np.testing.assert_array_equal(
        default_offsets(selector, 5, 0, 0.02, sensitivity=0.1, epsilon=1.0), [0.02, 0, 0, 0, 0])
    # One candidate: nothing to favour it over.
    assert default_offsets(selector, 1, 0, "auto", sensitivity=0.1, epsilon=1.0)[0] == 0.0


@pytest.mark.parametrize("offsets", [[0.1, 0.0], [0.1, 0.0, np.nan, 0.0]])
def test_bad_offsets_are_named(offsets):
    with pytest.raises(ValueError, match="offsets must be finite, one per candidate"):
        PermuteAndFlip().select([0.2, 0.3, 0.4, 0.5][:len(offsets) + (2 if len(offsets) == 2
                                                                      else 0)],
                                sensitivity=0.1, epsilon=1.0, delta=0.0, offsets=offsets)
