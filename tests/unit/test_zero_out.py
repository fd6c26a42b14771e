"""The zero-out figure, mechanism by mechanism (issue 34, item 7).

The library charges replace-one adjacency; the privacy report states, for comparison, the
figure under zero-out adjacency (a record replaced by a null record that contributes nothing,
n public). Each mechanism's factor is checked here against the mechanism itself: exact output
laws on neighbouring datasets where they are cheap, brute force over the declared boxes
otherwise. A wrong factor (half of everything, or the replace-one figure) fails.
"""

import itertools
import math

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from skdptune.naive_bayes import GaussianNB

from skdptune import PrivateGridSearchCV, PrivateRandomizedSearchCV
from skdptune._accounting import ZERO_OUT_ADJACENCY, zero_out_total, Charge
from skdptune._gate import zero_out_epsilon
from skdptune._models.cluster import kmeans_zero_out
from skdptune._models.linear_model import logistic_zero_out, ridge_zero_out
from skdptune._models.naive_bayes import gaussian_nb_charge, gaussian_nb_zero_out
from skdptune._models.tree import tree_zero_out
from skdptune.linear_model import LogisticRegression, Ridge
from skdptune._trivial import ACCURACY, BOUNDED_SQUARED_ERROR, LEAD_SENSITIVITY, LEAD_ZERO_OUT

CLASSES = [0, 1]  # the labels of _data(), declared


def _permute_and_flip_law(counts, epsilon):
    """diffprivlib's monotone permute-and-flip (coins ``exp(epsilon (c - max c))``), exactly:
    the probability of each index, averaged over every visiting order."""
    counts = np.asarray(counts, dtype=float)
    coins = np.exp(epsilon * (counts - counts.max()))
    law = np.zeros(len(counts))
    orders = list(itertools.permutations(range(len(counts))))
    for order in orders:
        reach = 1.0
        for index in order:
            law[index] += reach * coins[index] / len(orders)
            reach *= 1 - coins[index]
    return law


@pytest.mark.parametrize("counts", [[3, 1, 0], [0, 0, 1], [5, 5, 4], [1, 0, 0]])
def test_a_leaf_label_spends_its_epsilon_when_a_record_is_zeroed_out(counts):
    epsilon = 0.7
    law = _permute_and_flip_law(counts, epsilon)
    worst_zero_out = 0.0
    for j in range(len(counts)):
        if counts[j] == 0:
            continue
        nulled = np.array(counts) - np.eye(len(counts), dtype=int)[j]
        loss = np.abs(np.log(law) - np.log(_permute_and_flip_law(nulled, epsilon))).max()
        worst_zero_out = max(worst_zero_out, loss)
    # tree_zero_out: one count falls by one, in one leaf: epsilon (the charge, 2, is for a
    # replaced record, which lowers one count and raises another).
    assert worst_zero_out <= epsilon * tree_zero_out(None) + 1e-12
    moved = np.array(counts) + np.eye(len(counts), dtype=int)[0] - np.eye(len(counts), dtype=int)[1]
    if counts[1] > 0:
        replaced = np.abs(np.log(law) - np.log(_permute_and_flip_law(moved, epsilon))).max()
        assert replaced > epsilon * tree_zero_out(None)  # above it: the replace-one factor 2


def _objective_perturbation_density(w, X, y, epsilon_p, Lam, nulled=None):
    """The density of the 1-d minimiser of ``sum_i log(1 + exp(-y_i x_i w)) + n Lam w^2 / 2
    + b w`` with ``b ~ Laplace(2 / epsilon_p)`` (diffprivlib's noise for rows of norm <= 1),
    at ``w``: ``nu(b(w)) |b'(w)|``; ``nulled`` drops one record's loss term (zero-out)."""
    keep = np.ones(len(y), bool)
    if nulled is not None:
        keep[nulled] = False
    margins = y[keep, None] * X[keep, None] * w[None, :]
    sigma = 1 / (1 + np.exp(margins))
    gradient = -(y[keep, None] * X[keep, None] * sigma).sum(0) + len(y) * Lam * w
    hessian = ((X[keep, None] ** 2) * sigma * (1 - sigma)).sum(0) + len(y) * Lam
    b = -gradient
    return epsilon_p / 4 * np.exp(-epsilon_p * np.abs(b) / 2) * np.abs(hessian)


@pytest.mark.parametrize("epsilon, C", [(1.0, 1.0), (0.5, 4.0), (2.0, 0.2)])
def test_objective_perturbation_spends_half_its_epsilon_when_a_record_is_zeroed_out(epsilon, C):
    # diffprivlib's calibration (rows in the unit ball, c = 1/4, penalty 1/C on the sum of
    # losses): epsilon' = epsilon - 2 log(1 + C / 4), else the extra ridge.
    rng = np.random.RandomState(0)
    n = 12
    X = rng.choice([-1.0, 1.0], n)  # rows on the unit ball's boundary: the worst case
    y = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    epsilon_p = epsilon - 2 * math.log1p(C / 4)
    Lam = 1 / (C * n)
    if epsilon_p <= 0:  # the extra ridge: epsilon' = epsilon / 2, 2 log(1 + c/(n Lam')) = eps/2
        Lam = 0.25 / math.expm1(epsilon / 4) / n
        epsilon_p = epsilon / 2
    w = np.linspace(-15, 15, 6001)
    density = _objective_perturbation_density(w, X, y, epsilon_p, Lam)
    worst = max(np.abs(np.log(density) - np.log(_objective_perturbation_density(
        w, X, y, epsilon_p, Lam, nulled=i))).max() for i in range(n))
    assert worst <= epsilon * logistic_zero_out(None) + 1e-9
    assert worst > 0.2 * epsilon  # not vacuous: a null record does move the law


@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-1.0, 1.0), (100.0, 101.0), (-3.0, 1.0)])
def test_gaussian_nb_zero_out_factor_is_its_releases_sum(bounds):
    nb = GaussianNB(classes=CLASSES, bounds=bounds, epsilon=1.0)
    lower, upper = bounds
    width, reach = upper - lower, max(abs(lower), abs(upper))
    # counts: one count by 1 (epsilon / 3); sums: |x| <= reach against the calibrated width;
    # sums of squares about the released mean: one term, at most its sensitivity.
    assert gaussian_nb_zero_out(nb) == pytest.approx((1 + reach / width + 1) / 3)
    if bounds == (0.0, 1.0):
        assert gaussian_nb_zero_out(nb) == 1.0  # its recorded epsilon
    assert gaussian_nb_zero_out(nb) < gaussian_nb_charge(nb)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("bounds_X, bounds_y", [
    ((0.0, 1.0), (0.0, 1.0)), ((-1.0, 1.0), (-2.0, 2.0)), ((1.0, 2.0), (0.0, 1.0)),
    (([0.0, -1.0], [1.0, 3.0]), (5.0, 6.0)),
])
def test_ridge_zero_out_bound_covers_every_release_by_brute_force(fit_intercept, bounds_X,
                                                                  bounds_y):
    step = Ridge(bounds_X=bounds_X, bounds_y=bounds_y, fit_intercept=fit_intercept)
    lower_x, upper_x = (np.atleast_1d(np.asarray(b, float)) for b in bounds_X)
    lower = np.concatenate([np.resize(lower_x, 2), [bounds_y[0]]])
    upper = np.concatenate([np.resize(upper_x, 2), [bounds_y[1]]])
    grid = [np.linspace(lo, hi, 9) for lo, hi in zip(lower, upper)]
    ratios = []
    if fit_intercept:  # the centring means: |x| / n against (upper - lower) / n
        ratios += [max(abs(lo), abs(hi)) / (hi - lo) for lo, hi in zip(lower, upper)]
        # the objective on boxes shifted by means inside the bounds (they hold 0)
        for shift in itertools.product(*[np.linspace(lo, hi, 5) for lo, hi in zip(lower, upper)]):
            lo, hi = lower - shift, upper - shift
            for i, j in itertools.combinations_with_replacement(range(3), 2):
                values = [a * b for a in np.linspace(lo[i], hi[i], 9)
                          for b in np.linspace(lo[j], hi[j], 9)] if i != j else \
                    [a * a for a in np.linspace(lo[i], hi[i], 9)]
                spread = (max(abs(lo[i]), abs(hi[i])) ** 2 if i == j
                          else max(values) - min(values))
                if spread > 0:
                    ratios.append(max(abs(v) for v in values) / spread)
    else:
        for i, j in itertools.combinations_with_replacement(range(3), 2):
            values = [a * b for a in grid[i] for b in grid[j]] if i != j else \
                [a * a for a in grid[i]]
            spread = (max(abs(lower[i]), abs(upper[i])) ** 2 if i == j
                      else max(values) - min(values))
            ratios.append(max(abs(v) for v in values) / spread)
    assert max(ratios) <= ridge_zero_out(step) + 1e-9


def test_kmeans_zero_out_factor_halves_every_release_by_brute_force():
    # One private Lloyd iteration releases the counts (calibrated to L1 sensitivity 2) and the
    # sums of x_j - middle_j (calibrated to w_j, feature j): replacing a record reaches both
    # calibrations; zeroing it out (it joins no cluster) reaches at most half of each.
    rng = np.random.RandomState(0)
    lower, upper = np.array([-1.0, 0.0]), np.array([3.0, 1.0])
    middle, width = (lower + upper) / 2, upper - lower
    centres = rng.uniform(lower, upper, (3, 2))

    def releases(X):
        labels = ((X[:, None, :] - centres) ** 2).sum(axis=2).argmin(axis=1)
        sums = np.zeros((3, 2))
        np.add.at(sums, labels, X - middle)
        return np.bincount(labels, minlength=3), sums

    replaced, zeroed = [0.0, 0.0], [0.0, 0.0]
    for _ in range(500):
        X = rng.uniform(lower, upper, (6, 2))
        X[rng.randint(6)] = np.where(rng.rand(2) < 0.5, lower, upper)  # a corner
        counts, sums = releases(X)
        other = X.copy()
        other[0] = np.where(rng.rand(2) < 0.5, lower, upper)
        counts_r, sums_r = releases(other)
        counts_z, sums_z = releases(X[1:])
        replaced = np.maximum(replaced, [np.abs(counts - counts_r).sum() / 2,
                                         (np.abs(sums - sums_r).sum(axis=0) / width).max()])
        zeroed = np.maximum(zeroed, [np.abs(counts - counts_z).sum() / 2,
                                     (np.abs(sums - sums_z).sum(axis=0) / width).max()])
    assert np.all(replaced <= 1 + 1e-12) and replaced.max() == pytest.approx(1.0, abs=0.05)
    assert zeroed.max() <= kmeans_zero_out(None) + 1e-12


def test_lead_zero_out_sensitivities_by_brute_force():
    # Accuracy lead: sum(correct) - (most frequent class); zeroing one record out removes
    # its terms from both sums.
    rng = np.random.RandomState(0)
    worst = 0.0
    for _ in range(300):
        y = rng.randint(0, 3, 7)
        correct = rng.randint(0, 2, 7)
        lead = correct.sum() - np.bincount(y, minlength=3).max()
        keep = np.arange(7) != rng.randint(7)
        nulled = correct[keep].sum() - np.bincount(y[keep], minlength=3).max()
        worst = max(worst, abs(lead - nulled))
    assert worst <= LEAD_ZERO_OUT[ACCURACY] < LEAD_SENSITIVITY[ACCURACY]
    # Squared error against the targets' mean, in units of (high - low)**2 (targets and
    # predictions in [0, 1]): SST - SSE, one record's terms removed.
    worst = 0.0
    for _ in range(2000):
        y, prediction = rng.uniform(0, 1, 6), rng.uniform(0, 1, 6)
        keep = np.arange(6) != rng.randint(6)

        def lead(y, prediction):
            return np.sum((y - y.mean()) ** 2) - np.sum((y - prediction) ** 2)

        worst = max(worst, abs(lead(y, prediction) - lead(y[keep], prediction[keep])))
    assert worst <= LEAD_ZERO_OUT[BOUNDED_SQUARED_ERROR] < LEAD_SENSITIVITY[
        BOUNDED_SQUARED_ERROR]


def test_zero_out_total_composes_as_the_charge_and_states_none_without_a_derivation():
    charges = [Charge("a", 1.0, 1e-6, "m", "c", "e1", zero_out_epsilon=1.0),
               Charge("b", 2.0, 0.0, "m", "c", "e2", zero_out_epsilon=0.5)]
    assert zero_out_total(charges) == (1.5, 1e-6)
    charges.append(Charge("c", 1.0, 0.0, "m", "c", "e2"))
    assert zero_out_total(charges) is None


def _data(n=600, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(0, 1, (n, 3))
    return X, (X[:, 0] > 0.5).astype(int)


def test_the_grid_searchs_report_states_both_figures(capsys):
    X, y = _data()
    search = PrivateGridSearchCV(LogisticRegression(classes=CLASSES, data_norm=2.0),
                                 {"C": [0.1, 1.0]},
                                 epsilon=2.0, n_partitions=5, accountant=BudgetAccountant(),
                                 random_state=0, verbose=1).fit(X, y)
    report = search.privacy_report_
    assert report["zero_out_adjacency"] == ZERO_OUT_ADJACENCY
    by_release = {charge["release"]: charge for charge in report["charges"]}
    # The selection and the estimate keep their figure (sensitivity 1/k under both); the
    # refit (objective perturbation) halves; the lead estimate (accuracy) halves.
    for release in ("selection", "best_score_ estimate"):
        assert by_release[release]["zero_out_epsilon"] == by_release[release]["epsilon"]
    assert by_release["refit"]["zero_out_epsilon"] == pytest.approx(
        by_release["refit"]["epsilon"] / 2)
    assert by_release["trivial_lead_ estimate"]["zero_out_epsilon"] == pytest.approx(
        by_release["trivial_lead_ estimate"]["epsilon"] / 2)
    expected = sum(charge["zero_out_epsilon"] for charge in report["charges"])
    assert report["zero_out_epsilon"] == pytest.approx(expected)
    assert 1.0 < report["zero_out_epsilon"] < report["total_epsilon"] == pytest.approx(2.0)
    assert "zero-out adjacency" in capsys.readouterr().out


def test_a_step_without_a_derivation_leaves_the_figure_unstated():
    from diffprivlib.models import StandardScaler
    from sklearn.pipeline import make_pipeline

    X, y = _data()
    pipeline = make_pipeline(StandardScaler(bounds=(0.0, 1.0)),
                             GaussianNB(classes=CLASSES, bounds=(-5.0, 5.0)))
    assert zero_out_epsilon(pipeline) is None
    search = PrivateGridSearchCV(pipeline, {"gaussiannb__var_smoothing": [1e-9]}, epsilon=1.0,
                                 n_partitions=5, accountant=BudgetAccountant(),
                                 random_state=0).fit(X, y)
    assert search.privacy_report_["zero_out_epsilon"] is None


def test_trees_drop_to_their_recorded_epsilon():
    from skdptune.ensemble import RandomForestClassifier as Forest
    from skdptune.tree import DecisionTreeClassifier as Tree

    for tree in (Tree(bounds=(0.0, 1.0), classes=[0, 1], epsilon=0.3),
                 Forest(bounds=(0.0, 1.0), classes=[0, 1], epsilon=0.3)):
        assert zero_out_epsilon(tree) == pytest.approx(0.3)


def test_the_random_searchs_report_states_its_figure_for_list_distributions():
    X, y = _data()
    nb = GaussianNB(classes=CLASSES, bounds=(0.0, 1.0))
    search = PrivateRandomizedSearchCV(nb, {"var_smoothing": [1e-9, 1e-3]}, epsilon=1.0,
                                       n_iter=3.0, accountant=BudgetAccountant(),
                                       random_state=0).fit(X, y)
    report = search.privacy_report_
    # GaussianNB on [0, 1] spends its recorded epsilon, half its charge: a trial's fit is
    # then below the held-out score's trial_epsilon, and the trial spends trial_epsilon.
    assert report["zero_out_epsilon"] == pytest.approx(report["total_epsilon"])
    from scipy import stats

    continuous = PrivateRandomizedSearchCV(
        nb, {"var_smoothing": stats.loguniform(1e-9, 1e-3)}, epsilon=1.0, n_iter=3.0,
        accountant=BudgetAccountant(), random_state=0).fit(X, y)
    assert continuous.privacy_report_["zero_out_epsilon"] is None
