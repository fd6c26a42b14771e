"""The default-candidate policy (issue 35): its closed form and its choices.

The closed form of permute-and-flip's probabilities is checked against diffprivlib's own
mechanism by Monte Carlo (each comparison within 4.5 standard errors: a false failure about
once in 150,000 comparisons per test); the choices by properties a wrong policy breaks.
"""

import math

import numpy as np
import pytest
from diffprivlib.mechanisms import PermuteAndFlip

from skdptune import _default_policy as default_policy
from skdptune._default_policy import Policy, choose, selection_gain
from skdptune._tuning_evidence import POOLED


def _monte_carlo(margin, lead, sigma, m, runs, rng):
    gains = np.empty(runs)
    for run in range(runs):
        deficits = rng.exponential(POOLED.others_deficit, m - 2)
        utilities = np.concatenate([[0.0, lead], -deficits])
        offered = utilities.copy()
        offered[0] += margin
        # Coins exp(-(top - v) / sigma): diffprivlib's exp(eps (v - top) / (2 Delta)).
        index = PermuteAndFlip(epsilon=2.0 / sigma, sensitivity=1.0, utility=offered.tolist(),
                               monotonic=False, random_state=rng.integers(2 ** 31)).randomise()
        gains[run] = utilities[index]
    return gains.mean(), gains.std() / math.sqrt(runs)


@pytest.mark.parametrize("margin, lead, sigma, m", [
    (0.02, 0.0, 0.01, 6), (0.02, 0.03, 0.01, 8), (0.0, 0.01, 0.01, 5), (0.03, 0.02, 0.005, 21),
])
def test_the_closed_form_is_permute_and_flips_law(margin, lead, sigma, m):
    rng = np.random.default_rng(0)
    mean, error = _monte_carlo(margin, lead, sigma, m, 2000, rng)
    closed = float(default_policy._gain_given_lead(np.array(margin), np.array(lead), sigma, m,
                                                   POOLED.others_deficit))
    assert abs(closed - mean) <= 4.5 * error + 1e-4, (closed, mean, error)


def test_the_selections_gain_has_its_limits():
    # A margin far above the noise never leaves the default: no gain, no loss.
    assert selection_gain(1.0, 0.001, 10) == pytest.approx(0.0, abs=1e-12)
    # No noise and no margin: the rival is taken exactly when the partitions see it ahead,
    # the others never; the prior's mean real lead over those cases.
    seen, real = np.array(POOLED.leads).T
    expected = np.mean(np.where(seen > 0, real, 0.0))
    assert selection_gain(0.0, 1e-6, 10) == pytest.approx(expected, rel=1e-3)
    # Pure noise (sigma huge) picks uniformly: the others' mean deficit drags the gain down.
    assert selection_gain(0.0, 100.0, 10) < 0


def test_the_policy_declines_when_the_refit_cannot_spare_a_share():
    # Huge refit noise (every share costs the refit more than any lead can pay): decline.
    policy = choose(1.0, n_samples=20_000, n_candidates=20, refit_noise=10.0, score_share=0.1,
                    validation_fraction=0.2)
    assert policy.declined and policy.share == 0 and policy.expected_gain == 0
    assert policy.n_partitions is None and math.isinf(policy.sigma)


def test_the_policy_selects_when_the_refit_loses_nothing():
    policy = choose(1.0, n_samples=500_000, n_candidates=20, refit_noise=0.0, score_share=0.1,
                    validation_fraction=0.2)
    assert not policy.declined and policy.expected_gain > default_policy.MIN_GAIN
    assert 0 < policy.margin < 8 * policy.sigma  # a bonus, in the noise's order
    assert policy.refit_loss == 0


def test_the_refit_loss_and_the_noise_are_what_the_model_says():
    for share in (0.1, 0.25, 0.5):
        policy = choose(2.0, n_samples=50_000, n_candidates=10, refit_noise=0.02,
                        score_share=0.1, validation_fraction=0.2, share=share)
        assert policy.share == share
        assert policy.refit_loss == pytest.approx(0.02 / 2.0 * share / (1 - share))
        epsilon = share * 2.0 * 0.9
        assert policy.sigma == pytest.approx(2 / (policy.n_partitions * epsilon))


def test_more_records_never_make_the_policy_decline_where_fewer_selected():
    shares = [choose(1.0, n_samples=n, n_candidates=20, refit_noise=10 * 30 / n,
                     score_share=0.1, validation_fraction=0.2) for n in
              (10_000, 30_000, 100_000, 1_000_000)]
    gains = [policy.expected_gain for policy in shares]
    assert gains == sorted(gains)
    assert isinstance(shares[0], Policy)


def test_a_declined_policy_says_what_would_make_it_select():
    # Issue 39, item 4: the decline explained in numbers, each one checked against choose().
    common = dict(score_share=0.05, validation_fraction=0.2)
    n, m, total = 7_000, 9, 1.0
    noise = 10 * 15 / n
    policy = choose(total, n_samples=n, n_candidates=m, refit_noise=noise, **common)
    assert policy.declined
    reasons = policy.reasons
    assert reasons.resolvable_lead > 0 and reasons.refit_loss == pytest.approx(
        noise / total * 0.25 / 0.75)

    def selects(n_samples=n, t=total, candidates=m):
        return not choose(t, n_samples=n_samples, n_candidates=candidates,
                          refit_noise=noise * n / n_samples, **common).declined

    assert reasons.n_samples is not None and selects(n_samples=reasons.n_samples)
    assert reasons.n_samples == 2 * n or not selects(n_samples=reasons.n_samples // 2)
    assert reasons.total is not None and selects(t=reasons.total)
    assert reasons.total == 2 * total or not selects(t=reasons.total / 2)
    if reasons.n_candidates is not None:
        assert selects(candidates=reasons.n_candidates) and reasons.n_candidates < m
    # A selecting policy carries none.
    assert choose(total, n_samples=500_000, n_candidates=m, refit_noise=noise * n / 500_000,
                  **common).reasons is None
