"""Partition fits that emulate the refit (skdptune.partition_scaling).

The rules rescale data-size-dependent parameters for partition fits only: what the refit uses
and what is charged never depend on them.
"""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import RandomForestClassifier
from skdptune.naive_bayes import GaussianNB
from skdptune.linear_model import LogisticRegression
from skdptune._models.linear_model import NOISE_SHARE, objective_perturbation
from diffprivlib.models import StandardScaler as DPStandardScaler
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import Lasso, Ridge
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.tree import DecisionTreeClassifier

from skdptune import PrivateGridSearchCV
from skdptune.ensemble import RandomForestClassifier as SecureRandomForestClassifier
from skdptune.linear_model import Ridge as DPRidge
from skdptune._partition_scaling import RULES, partition_ratio, rescaled_params
from skdptune.tree import DecisionTreeClassifier as SecureDecisionTreeClassifier

CLASSES = [0, 1]  # binary_data's labels, declared

BOUNDS = (0.0, 1.0)
RATIO = 12.5  # k = 10, validation_fraction = 0.2


def test_ratio_is_refit_size_over_partition_size_and_ignores_n():
    assert partition_ratio(10, 0.2) == pytest.approx(RATIO)
    n = 1000
    assert partition_ratio(10, 0.2) == pytest.approx(n / (n * (1 - 0.2) / 10))


def test_every_rule_has_a_justification():
    for cls, rules in RULES.items():
        for name, rule in rules.items():
            assert len(rule.why) > 30, (cls, name)
            assert rule.scaling in ("proportional", "inverse", "inverse_count") or rule.joint


@pytest.mark.parametrize(
    "candidate, expected",
    [
        # Objective perturbation, rows in the unit ball (scale**2 = 10): C * scale**2 = 0.2
        # keeps epsilon' = 2 - 2 log(1.05) >= NOISE_SHARE * 2, so C * ratio and ratio *
        # epsilon' + 2 log(1 + C * ratio * scale**2 / 4), below epsilon * ratio.
        (LogisticRegression(classes=CLASSES, epsilon=2.0, C=0.02, data_norm=3.0),
         {"epsilon": RATIO * (2.0 - 2 * np.log(1.05)) + 2 * np.log(1 + 0.05 * RATIO),
          "C": 0.02 * RATIO}),
        # At epsilon 0.5 it would not (2 log(1.05) > 0.05): epsilon' = 0.45 and the penalty a
        # = 1 / (4 expm1(0.025)) on the sum of losses; the partition gets C * scale**2 =
        # ratio / a and the epsilon whose epsilon' is ratio * 0.45.
        (LogisticRegression(classes=CLASSES, epsilon=0.5, C=0.02, data_norm=3.0),
         {"epsilon": RATIO * 0.45 + 2 * np.log1p(RATIO * np.expm1(0.025)),
          "C": RATIO * 4 * np.expm1(0.025) / 10}),
        (SkLogisticRegression(C=0.1), {"C": 0.1 * RATIO}),
        (Ridge(alpha=5.0), {"alpha": 5.0 / RATIO}),
        (Lasso(alpha=5.0), {}),  # penalty against the mean loss: scale-free
        (DPRidge(alpha=5.0, epsilon=0.5, bounds_X=BOUNDS, bounds_y=BOUNDS),
         {"alpha": 5.0 / RATIO, "epsilon": 0.5 * RATIO}),
        (DecisionTreeClassifier(min_samples_leaf=50, min_samples_split=100),
         {"min_samples_leaf": 4, "min_samples_split": 8}),
        (DecisionTreeClassifier(min_samples_leaf=0.01, min_samples_split=3),
         {"min_samples_split": 2}),  # fractions are scale-free; counts floor at their minimum
        (RandomForestClassifier(epsilon=2.0, bounds=BOUNDS, classes=[0, 1], max_depth=4),
         {"epsilon": 2.0 * RATIO}),
        # skdptune's forest and tree inherit diffprivlib's rules through the MRO.
        (SecureRandomForestClassifier(epsilon=2.0, bounds=BOUNDS, classes=[0, 1], max_depth=4),
         {"epsilon": 2.0 * RATIO}),
        (SecureDecisionTreeClassifier(epsilon=0.5, bounds=BOUNDS, classes=[0, 1]),
         {"epsilon": 0.5 * RATIO}),
        (make_pipeline(DPStandardScaler(bounds=BOUNDS, epsilon=0.2),
                       GaussianNB(classes=CLASSES, bounds=BOUNDS, epsilon=0.3)),
         {"standardscaler__epsilon": 0.2 * RATIO, "gaussiannb__epsilon": 0.3 * RATIO}),
        (ColumnTransformer([("num", DPStandardScaler(bounds=BOUNDS, epsilon=0.2), [0])]),
         {"num__epsilon": 0.2 * RATIO}),
    ],
    ids=["dp-LR", "dp-LR-raised", "sk-LR", "Ridge", "Lasso", "dp-Ridge", "tree-counts", "tree-fractions", "dp-forest",
         "skdptune-forest", "skdptune-tree", "pipeline", "columns"],
)
def test_built_in_rules(candidate, expected):
    changes = rescaled_params(candidate, RATIO, None)
    assert changes.keys() == expected.keys()
    for name, value in expected.items():
        assert changes[name] == pytest.approx(value)


def _perturbation(epsilon, norm, C, n):
    """diffprivlib's own Vector mechanism on a zero loss: (b / n, penalty per record) where the
    objective gains b . w / n and the penalty on the mean loss is 1 / (C n) + delta."""
    from diffprivlib.mechanisms import Vector

    def zero(w):
        return 0.0, np.zeros_like(w)

    perturbed = Vector(epsilon=epsilon, dimension=3, alpha=1.0 / C, function_sensitivity=0.25,
                       data_sensitivity=norm, n=n, random_state=0).randomise(zero)
    at_zero = perturbed(np.zeros(3))[1]
    delta = (perturbed(np.ones(3))[1] - at_zero)[0]
    return at_zero, 1.0 / (C * n) + delta


@pytest.mark.parametrize("epsilon", [0.1, 0.71, 4.0])
@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("data_norm, fit_intercept, calibrated",
                         [(0.5, True, True), (2.0, True, True), (0.5, False, True),
                          (2.0, True, False), (1.0, False, False)])
def test_a_logistic_partition_fit_has_the_refits_noise_and_penalty_per_record(
        epsilon, C, data_norm, fit_intercept, calibrated):
    # The same draws (seed) through diffprivlib's mechanism, at the refit's n and the
    # partition's n / ratio: the noise vector over n and the penalty per record must agree,
    # in both of diffprivlib's regimes (epsilon' > 0 or not; C = 1 and 100 cross it).
    from diffprivlib.models import LogisticRegression as DPLogisticRegression

    cls = LogisticRegression if calibrated else DPLogisticRegression
    candidate = cls(epsilon=epsilon, C=C, data_norm=data_norm, fit_intercept=fit_intercept)
    partition = rescaled_params(candidate, RATIO, None)
    norm = np.sqrt(data_norm ** 2 + fit_intercept)
    factor = max(norm, 1.0) ** 2 if calibrated else 1.0  # the calibrated class's C * scale**2
    if calibrated:
        norm = norm / max(norm, 1.0)

    def inner_C(epsilon, C):
        """The C the calibrated class hands diffprivlib: its rule's penalty."""
        if not calibrated:
            return C
        _, extra = objective_perturbation(epsilon, norm, C, NOISE_SHARE)
        return 1.0 / (1.0 / C + float(extra))

    n = 10_000
    noise, penalty = _perturbation(epsilon, norm, inner_C(epsilon, C * factor), n)
    noise_p, penalty_p = _perturbation(partition["epsilon"], norm,
                                       inner_C(partition["epsilon"], partition["C"] * factor),
                                       n / RATIO)
    assert noise_p == pytest.approx(noise, rel=1e-9)
    assert penalty_p == pytest.approx(penalty, rel=1e-9)


@pytest.mark.parametrize("epsilon, C", [(2.0, 0.1), (0.5, 100.0)])  # epsilon' > 0, <= 0
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_a_logistic_partition_fit_is_the_refit_on_data_repeated_ratio_times(
        epsilon, C, fit_intercept):
    # The refit on a partition's rows repeated `ratio` times has the partition's mean loss;
    # with the same seed, diffprivlib's fits must then give the same coefficients.
    ratio = 5
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (200, 3))
    y = (X[:, 0] + 0.3 * rng.randn(200) > 0).astype(int)
    refit = LogisticRegression(classes=CLASSES, epsilon=epsilon, C=C, data_norm=2.0,
                               fit_intercept=fit_intercept, random_state=1,
                               accountant=BudgetAccountant())
    partition = clone(refit).set_params(**rescaled_params(refit, ratio, None))
    refit.fit(np.tile(X, (ratio, 1)), np.tile(y, ratio))
    partition.fit(X, y)
    assert np.allclose(partition.coef_, refit.coef_, rtol=1e-6, atol=1e-9)
    assert np.allclose(partition.intercept_, refit.intercept_, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("user", ["none", lambda value, ratio: value * ratio ** 0.5])
def test_a_users_rule_for_C_is_applied_first_and_epsilon_keeps_the_refits_noise(C, user):
    candidate = LogisticRegression(classes=CLASSES, epsilon=1.0, C=C, data_norm=1.0)
    partition = rescaled_params(candidate, RATIO, {"C": user})
    C_part = partition.get("C", C)
    assert C_part == pytest.approx(C if user == "none" else C * RATIO ** 0.5)
    factor, n = 2.0, 10_000  # rows divided by sqrt(2): C * 2 inside, norm 1

    def inner_C(epsilon, C):
        """The C the class hands diffprivlib: its rule's penalty."""
        _, extra = objective_perturbation(epsilon, 1.0, C, NOISE_SHARE)
        return 1.0 / (1.0 / C + float(extra))

    noise, _ = _perturbation(1.0, 1.0, inner_C(1.0, C * factor), n)
    noise_p, _ = _perturbation(partition["epsilon"], 1.0,
                               inner_C(partition["epsilon"], C_part * factor), n / RATIO)
    assert noise_p == pytest.approx(noise, rel=1e-9)


def test_a_dp_ridge_partition_fit_has_the_refits_penalty_per_record():
    # Its penalty is alpha + noise_alpha * noise_scale(epsilon): the rules (epsilon * ratio,
    # alpha / ratio, noise_alpha untouched) give the partition the refit's penalty / ratio.
    ridge = DPRidge(alpha=5.0, noise_alpha=2.0, epsilon=0.5, bounds_X=BOUNDS, bounds_y=BOUNDS)
    partition = clone(ridge).set_params(**rescaled_params(ridge, RATIO, None))
    bounds = (np.full(3, float(BOUNDS[0])), np.full(3, float(BOUNDS[1])))
    assert partition.total_alpha(bounds)[0] == pytest.approx(ridge.total_alpha(bounds)[0] / RATIO)


def test_user_rules_add_override_and_disable():
    candidate = make_pipeline(Ridge(alpha=5.0), )
    assert rescaled_params(candidate, RATIO, {"ridge__alpha": "none"}) == {}
    assert rescaled_params(candidate, RATIO, {"ridge__alpha": "proportional"}) == {
        "ridge__alpha": 5.0 * RATIO}
    custom = rescaled_params(candidate, RATIO, {"ridge__alpha": lambda v, r: v + r})
    assert custom == {"ridge__alpha": 5.0 + RATIO}
    tree = DecisionTreeClassifier(max_leaf_nodes=100)
    assert rescaled_params(tree, RATIO, {"max_leaf_nodes": "inverse_count"}) == {
        "max_leaf_nodes": 8}


class Recorder(GaussianNB):
    """GaussianNB that records the epsilon and C-like parameter of every fit, by size."""

    fits = []
    private = set()  # the rows of the data: the rehearsal's public rows are not recorded

    def fit(self, X, y, sample_weight=None):
        if {tuple(row) for row in np.asarray(X)} <= type(self).private:
            type(self).fits.append((len(X), self.epsilon))
        return super().fit(X, y)


@pytest.mark.parametrize("scaling", ["auto", None])
def test_rescaling_never_reaches_the_refit_or_the_charge(binary_data, allow_in_gate, scaling):
    allow_in_gate(Recorder)
    X, y = binary_data
    Recorder.fits, Recorder.private = [], {tuple(row) for row in X}
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(
        Recorder(classes=CLASSES, bounds=BOUNDS, random_state=0), {"epsilon": [0.5, 0.7]},
        selection_epsilon=1.0, check_share=0,  # the selection and the refit alone
        n_partitions=5, partition_scaling=scaling, accountant=accountant, random_state=0,
        default=None,
    ).fit(X, y)
    *partition_fits, refit = Recorder.fits
    ratio = 5 / (1 - 0.2) if scaling == "auto" else 1.0
    expected = sorted([0.5 * ratio] * 5 + [0.7 * ratio] * 5)
    assert sorted(epsilon for _, epsilon in partition_fits) == pytest.approx(expected)
    assert refit == (len(X), search.best_params_["epsilon"])  # as written
    assert search.best_estimator_.epsilon == search.best_params_["epsilon"]
    # Charged: the selection and the grid's largest declared budget, whatever the scaling.
    assert accountant.spent_budget == [(1.0, 0.0), (0.7, 0.0)]
    assert tuple(search.privacy_spent_) == pytest.approx((1.7, 0.0))


def test_unknown_user_rule_is_refused_before_data(binary_data):
    X, y = binary_data
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(
        GaussianNB(classes=CLASSES, bounds=BOUNDS), {"epsilon": [0.5]},
        partition_scaling={"epsilom": "none"}, accountant=accountant, default=None,
    )
    with pytest.raises(ValueError, match="'epsilom', which is not a parameter"):
        search.fit(X, y)
    with pytest.raises(ValueError, match="is not a rule"):
        search.set_params(partition_scaling={"epsilon": "double"}).fit(X, y)
    assert accountant.spent_budget == []


def test_auto_partitions_come_from_the_shape_only(binary_data):
    X, y = binary_data
    search = PrivateGridSearchCV(GaussianNB(classes=CLASSES, bounds=BOUNDS),
                                 {"var_smoothing": [1e-9, 1e-3]},
                                 n_partitions="auto", accountant=BudgetAccountant(),
                                 random_state=0, default=None).fit(X, y)
    assert 2 <= search.n_partitions_ <= len(X)
    assert search.privacy_report_["n_partitions"] == search.n_partitions_
    with pytest.raises(ValueError, match="n_samples"):
        search.forecast()
    assert search.forecast(n_samples=len(X)).n_partitions == search.n_partitions_
