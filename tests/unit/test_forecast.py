"""The forecast: what a selection can resolve, computed before any data are touched.

Each selector's closed form, integral or simulation is checked against the library's own
selector run many times on the forecast's scenario. False-failure rate of each comparison:
the tolerance is 4.5 binomial standard deviations (two-sided, about 7e-6).
"""

import math
import warnings

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from skdptune.naive_bayes import GaussianNB

from skdptune import PrivateGridSearchCV
from skdptune.exceptions import NoisySelectionWarning
from skdptune._forecast import SWAMPED_GAP, _probability_of_best, forecast_selection
from skdptune.selection import SELECTORS, BaseSelector, ProposeTestDoubling

CLASSES = [0, 1]  # binary_data's labels, declared


def empirical_probability(selector, n_candidates, gap, n_partitions, epsilon, delta, runs,
                          seed=0):
    """Share of the selector's own runs that pick the best, its position drawn at random."""
    rng = np.random.RandomState(seed)
    hits = 0
    for _ in range(runs):
        utilities = np.full(n_candidates, 0.8 - gap)
        best = rng.randint(n_candidates)
        utilities[best] = 0.8
        result = selector.select(utilities, sensitivity=1 / n_partitions, epsilon=epsilon,
                                 delta=delta, random_state=rng)
        hits += result.index == best
    return hits / runs


@pytest.mark.parametrize(
    "name, n_candidates, gap, n_partitions, epsilon",
    [
        ("exponential", 5, 0.05, 100, 1.0),
        ("permute_and_flip", 5, 0.05, 100, 1.0),
        ("report_noisy_max", 5, 0.05, 100, 1.0),
        ("report_noisy_max", 2, 0.02, 100, 1.0),
        ("doubling", 3, 0.1, 200, 5.0),
        ("doubling", 5, 0.05, 1000, 10.0),
    ],
)
def test_probability_matches_the_selector(name, n_candidates, gap, n_partitions, epsilon):
    selector = SELECTORS[name]()
    forecast = _probability_of_best(selector, epsilon, 1e-6, n_partitions)(gap, n_candidates)
    runs = 1500
    observed = empirical_probability(selector, n_candidates, gap, n_partitions, epsilon, 1e-6,
                                     runs)
    # The doubling forecast is itself a 4000-run simulation: add its own sampling error.
    sims = 4000 if name == "doubling" else math.inf
    sd = math.sqrt(forecast * (1 - forecast) * (1 / runs + 1 / sims))
    assert abs(observed - forecast) <= 4.5 * sd + 1e-9, (observed, forecast)


def test_closed_forms():
    rate = 1.0 * 100 / 2  # epsilon / (2 Delta)
    f = forecast_selection(20, n_partitions=100, epsilon=1.0, selector="exponential")
    # 1 / (1 + (m - 1) e^(-rate g)) = 0.9  <=>  g = ln(9 (m - 1)) / rate.
    assert f.pairwise_gap == pytest.approx(math.log(9) / rate, abs=2e-4)
    assert f.uniform_gap == pytest.approx(math.log(9 * 19) / rate, abs=2e-4)
    pf = forecast_selection(2, n_partitions=100, epsilon=1.0, selector="permute_and_flip")
    # Two candidates: P(best) = 1 - p / 2 = 0.9  <=>  p = 0.2.
    assert pf.pairwise_gap == pytest.approx(math.log(5) / rate, abs=2e-4)


def test_gaps_shrink_with_the_budget_and_grow_with_the_grid():
    gaps = [forecast_selection(20, n_partitions=k, epsilon=eps, selector="permute_and_flip")
            for k, eps in [(10, 1.0), (100, 1.0), (100, 4.0)]]
    assert gaps[0].pairwise_gap > gaps[1].pairwise_gap > gaps[2].pairwise_gap
    assert all(g.uniform_gap >= g.pairwise_gap for g in gaps)
    assert gaps[0].swamped and not gaps[2].swamped
    hopeless = forecast_selection(20, n_partitions=10, epsilon=0.9, delta=1e-6,
                                  selector=ProposeTestDoubling())
    assert hopeless.pairwise_gap == math.inf and hopeless.swamped
    assert "cannot select the best with probability 90% at any lead" in str(hopeless)


def test_search_forecast_uses_its_own_budget():
    search = PrivateGridSearchCV(GaussianNB(classes=CLASSES, bounds=(0, 1)),
                                 {"var_smoothing": [1e-9, 1e-3]},
                                 epsilon=2.0, selection_share=0.5, score_share=0.2,
                                 selector="exponential", n_partitions=50, default=None)
    forecast = search.forecast()
    assert forecast.epsilon == pytest.approx(2.0 * 0.5 * 0.8)
    assert forecast.n_candidates == 2 and forecast.n_partitions == 50


def test_search_forecast_reads_the_shape_of_the_data_it_is_given():
    # Issue 33: search.forecast() as the README showed it failed under the default
    # n_partitions="auto" (chosen from the number of records). forecast(X) reads X's shape
    # (never its values), as does forecast(X.shape); n_samples= still works.
    search = PrivateGridSearchCV(GaussianNB(classes=CLASSES, bounds=(0, 1)),
                                 {"var_smoothing": [1e-9, 1e-3]}, default=None)
    with pytest.raises(ValueError, match=r"search.forecast\(X\) \(only its shape and schema are read"):
        search.forecast()
    X = np.full((5000, 3), np.nan)  # values unread
    expected = search.forecast(n_samples=5000, n_features=3)
    for given in (X, X.shape, 5000, X.tolist()):
        got = search.forecast(given)
        assert (got.n_partitions, got.pairwise_gap, got.n_fits) == (
            expected.n_partitions, expected.pairwise_gap, expected.n_fits)
    assert search.forecast(X).paths == expected.paths
    assert search.forecast(X, n_samples=5000).n_partitions == expected.n_partitions
    with pytest.raises(ValueError, match="X with 5000 records and n_samples=4000"):
        search.forecast(X, n_samples=4000)


def test_fit_warns_before_the_data_when_noise_swamps_the_selection(binary_data):
    X, y = binary_data
    accountant = BudgetAccountant()
    noisy = PrivateGridSearchCV(GaussianNB(classes=CLASSES, bounds=(0, 1)),
                                {"var_smoothing": [1e-9, 1e-3]},
                                n_partitions=5, accountant=accountant, random_state=0,
                                default=None)
    with pytest.warns(NoisySelectionWarning, match="swamps any plausible difference"):
        noisy.fit(X, y)
    quiet = noisy.set_params(epsilon=50.0, selector="permute_and_flip")
    assert not quiet.forecast().swamped
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoisySelectionWarning)
        quiet.fit(X, y)
    assert SWAMPED_GAP == 0.25


def test_custom_selectors_get_no_forecast_and_no_warning(binary_data, recording_selector):
    X, y = binary_data
    search = PrivateGridSearchCV(GaussianNB(classes=CLASSES, bounds=(0, 1)),
                                 {"var_smoothing": [1e-9, 1e-3]},
                                 selector=recording_selector(), n_partitions=5,
                                 accountant=BudgetAccountant(), random_state=0, default=None)
    with pytest.raises(TypeError, match="No forecast"):
        search.forecast()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoisySelectionWarning)
        search.fit(X, y)
    assert isinstance(search.selector, BaseSelector)


# --- The selector's regime: finite figures where the gaps are infinite ----------------------


def test_doubling_at_the_defaults_gets_finite_figures():
    # 3 candidates, k = 200, the selector's epsilon of a total of 1: the doubling selector
    # cannot reach 90% at any lead; the forecast says how close it gets and what k it needs.
    forecast = forecast_selection(3, n_partitions=200, epsilon=0.45, delta=1e-6,
                                  selector="doubling")
    assert math.isinf(forecast.pairwise_gap)
    assert 0.3 < forecast.max_confidence < 0.9
    needed = forecast.n_partitions_needed
    assert needed > 200
    probability = _probability_of_best(ProposeTestDoubling(), 0.45, 1e-6, needed)
    assert probability(0.05, 2) >= 0.9
    assert _probability_of_best(ProposeTestDoubling(), 0.45, 1e-6, needed - 1)(0.05, 2) < 0.9
    text = str(forecast)
    assert "cannot select the best with probability 90% at any lead: at most" in text
    assert f"needs k >= {needed:,}" in text


def test_partitions_needed_matches_the_closed_form():
    # Permute-and-flip, two candidates: P(best) = 1 - p / 2 with p = exp(-k eps g / 2), so
    # P >= 0.9 at g = 0.05 needs k >= 2 ln 5 / (0.05 eps): 143.05 at eps = 0.45.
    forecast = forecast_selection(20, n_partitions=50, epsilon=0.45,
                                  selector="permute_and_flip")
    assert forecast.n_partitions_needed == math.ceil(2 * math.log(5) / (0.05 * 0.45))
    assert forecast.max_confidence == pytest.approx(1 - math.exp(-50 * 0.45 / 2) / 2)
    assert "needs k >= 144" in str(forecast)
    # Already resolved: nothing to add.
    assert "needs k" not in str(forecast_selection(20, n_partitions=500, epsilon=0.45,
                                                   selector="permute_and_flip"))
