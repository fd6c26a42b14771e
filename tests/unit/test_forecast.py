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
from diffprivlib.models import GaussianNB

from skdptune import PrivateGridSearchCV
from skdptune.exceptions import NoisySelectionWarning
from skdptune.forecast import SWAMPED_GAP, _probability_of_best, forecast_selection
from skdptune.selection import SELECTORS, BaseSelector, ProposeTestDoubling


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
    assert "leads one close rival by inf" in str(hopeless)


def test_search_forecast_uses_its_own_budget():
    search = PrivateGridSearchCV(GaussianNB(bounds=(0, 1)), {"var_smoothing": [1e-9, 1e-3]},
                                 epsilon=2.0, selection_share=0.5, score_share=0.2,
                                 selector="exponential", n_partitions=50)
    forecast = search.forecast()
    assert forecast.epsilon == pytest.approx(2.0 * 0.5 * 0.8)
    assert forecast.n_candidates == 2 and forecast.n_partitions == 50


def test_fit_warns_before_the_data_when_noise_swamps_the_selection(binary_data):
    X, y = binary_data
    accountant = BudgetAccountant()
    noisy = PrivateGridSearchCV(GaussianNB(bounds=(0, 1)), {"var_smoothing": [1e-9, 1e-3]},
                                n_partitions=5, accountant=accountant, random_state=0)
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
    search = PrivateGridSearchCV(GaussianNB(bounds=(0, 1)), {"var_smoothing": [1e-9, 1e-3]},
                                 selector=recording_selector(), n_partitions=5,
                                 accountant=BudgetAccountant(), random_state=0)
    with pytest.raises(TypeError, match="No forecast"):
        search.forecast()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoisySelectionWarning)
        search.fit(X, y)
    assert isinstance(search.selector, BaseSelector)
