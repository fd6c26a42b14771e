"""Tests of bounded utilities (skdptune.utility)."""

import numpy as np
import pytest
from diffprivlib.models import GaussianNB, KMeans
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.preprocessing import StandardScaler

from skdptune._utility import kmeans_score_range, make_utility


def test_classifier_default_is_accuracy():
    X = np.zeros((4, 1))
    y = np.array([0, 0, 0, 1])
    estimator = DummyClassifier(strategy="most_frequent").fit(X, y)
    scorer, utility = make_utility(estimator, None, None)
    assert utility(estimator, X, y) == 0.75


@pytest.mark.parametrize("scoring", ["accuracy", "balanced_accuracy", "roc_auc", "f1_macro",
                                     "precision", "recall_weighted", "jaccard"])
def test_bounded_scorers_need_no_range(scoring):
    make_utility(GaussianNB(), scoring, None)


@pytest.mark.parametrize(
    "estimator, scoring, shown",
    [
        (DummyRegressor(), None, "estimator.score"),
        (KMeans(), None, "estimator.score"),
        (DummyRegressor(), "r2", "'r2'"),
        (DummyRegressor(), "neg_mean_squared_error", "'neg_mean_squared_error'"),
        (GaussianNB(), "neg_log_loss", "'neg_log_loss'"),
        (GaussianNB(), lambda est, X, y: 0.5, "<function"),
    ],
)
def test_unbounded_scorer_without_range_is_an_error(estimator, scoring, shown):
    with pytest.raises(ValueError, match=r"not known to be bounded.*utility_range") as error:
        make_utility(estimator, scoring, None)
    assert shown in str(error.value)


def test_declared_range_rescales_and_clips():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0.0, 1.0, 2.0, 3.0])
    estimator = DummyRegressor(strategy="constant", constant=10.0).fit(X, y)
    # MSE = mean((10 - y)^2) = (100 + 81 + 64 + 49) / 4 = 73.5.
    _, utility = make_utility(estimator, "neg_mean_squared_error", (-100.0, 0.0))
    assert utility(estimator, X, y) == pytest.approx(1 - 73.5 / 100)
    _, clipped = make_utility(estimator, "neg_mean_squared_error", (-50.0, 0.0))
    assert clipped(estimator, X, y) == 0.0
    _, above = make_utility(estimator, "neg_mean_squared_error", (-200.0, -100.0))
    assert above(estimator, X, y) == 1.0
    assert clipped.to_score(0.5) == -25.0


@pytest.mark.parametrize("bad", [(1.0, 1.0), (2.0, 1.0), (0.0, np.inf), (np.nan, 1.0), (1.0,),
                                 "ab", 3.0])
def test_bad_range_is_named(bad):
    with pytest.raises(ValueError, match="utility_range must be a pair"):
        make_utility(DummyRegressor(), "r2", bad)


@pytest.mark.parametrize(
    "estimator, scoring, advice",
    [
        (KMeans(bounds=(0, 1)), None, r"kmeans_score_range\(bounds, n_records\)"),
        (KMeans(bounds=(0, 1)), "adjusted_rand_score", r"'v_measure_score'.*\[-0.5, 1\]"),
        (DummyRegressor(), None, r"utility_range=\(-1, 1\)"),
        (DummyRegressor(), "neg_mean_absolute_error", r"\(-\(y_max - y_min\), 0\)"),
        (GaussianNB(), "neg_log_loss", "'accuracy'"),
    ],
    ids=["kmeans-score", "kmeans-ari", "regressor-score", "regressor-mae", "classifier"],
)
def test_unbounded_scorer_advice_fits_the_estimator(estimator, scoring, advice):
    # Before: every estimator was told to use classifier scorers.
    with pytest.raises(ValueError, match=advice) as error:
        make_utility(estimator, scoring, None)
    if estimator._estimator_type != "classifier":
        assert "'balanced_accuracy'" not in str(error.value)


def test_kmeans_score_range_from_declared_bounds():
    assert kmeans_score_range(([0, -1], [1, 1]), 10) == (-50.0, 0.0)  # D^2 = 1 + 4
    assert kmeans_score_range((0, 2), 3, n_features=4) == (-48.0, 0.0)
    with pytest.raises(ValueError, match="n_features"):
        kmeans_score_range((0, 2), 3)
    with pytest.raises(ValueError, match="lower <= upper"):
        kmeans_score_range(([1], [0]), 3)
    # The range holds: records and centres inside the box score within it.
    X = np.array([[0.0, -1.0], [1.0, 1.0], [0.5, 0.0]])
    fitted = KMeans(n_clusters=1, bounds=([0, -1], [1, 1]), epsilon=1e6, random_state=0).fit(X)
    low, high = kmeans_score_range(([0, -1], [1, 1]), len(X))
    assert low <= fitted.score(X) <= high


def test_plain_classifier_score_is_bounded_other_scores_are_not():
    scorer, utility = make_utility(GaussianNB(), None, None)
    assert (utility.low, utility.high) == (0.0, 1.0)
    _, declared = make_utility(GaussianNB(), None, (-1, 1))  # a declared range is used
    assert (declared.low, declared.high) == (-1.0, 1.0)
    with pytest.raises(TypeError, match="should have a 'score' method"):
        make_utility(StandardScaler(), None, None)


# --- Default bounded scores from declared bounds (issue 19, item 4) ---------------------------


def _regression(n_samples=400, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, (n_samples, 2))
    return X, X @ np.array([1.0, -2.0]) + rng.normal(0, 0.1, n_samples)


def test_linear_regression_with_bounds_y_is_scored_by_its_r2_of_clipped_values():
    # Before: "not known to be bounded ... utility_range" until a range was computed by hand;
    # then a bounded squared error, which resolves R² some 50 times more coarsely.
    from diffprivlib.models import LinearRegression
    from sklearn.metrics import r2_score
    from sklearn.pipeline import make_pipeline

    from skdptune.utility import BoundedR2Scorer

    X, y = _regression()
    y[:5] = 10.0  # beyond the bounds: clipped, as the refit clips them
    model = LinearRegression(bounds_X=(-1, 1), bounds_y=(-3, 3), epsilon=1e6,
                             random_state=0).fit(X, y)
    for estimator in (model, make_pipeline(StandardScaler(), LinearRegression(bounds_y=(-3, 3)))):
        scorer, utility = make_utility(estimator, None, None)
        assert isinstance(scorer, BoundedR2Scorer)
        assert (utility.low, utility.high) == (-1.0, 1.0)
    scorer, utility = make_utility(model, None, None)
    expected = r2_score(np.clip(y, -3, 3), np.clip(model.predict(X), -3, 3))
    assert 0.9 < expected < 1
    assert scorer(model, X, y) == pytest.approx(expected)
    assert utility(model, X, y) == pytest.approx((expected + 1) / 2)
    # Worse than twice the mean's error: R² below -1, which the utility clips to 0.
    assert scorer(model, X, -y) < -1 and utility(model, X, -y) == 0.0
    weights = np.r_[np.ones(200), np.zeros(200)]
    assert scorer(model, X, y, sample_weight=weights) == pytest.approx(
        scorer(model, X[:200], y[:200]))
    # A declared utility_range keeps estimator.score (R² of unclipped values).
    r2, _ = make_utility(model, None, (-1, 1))
    assert not isinstance(r2, BoundedR2Scorer)
    # scoring="r2" names the same R²: bounded when the estimator declares bounds_y, mapped
    # from R2_RANGE or from a declared range (issue 33; it was refused without a range).
    for utility_range, expected_range in ((None, (-1.0, 1.0)), ((-2, 1), (-2.0, 1.0))):
        r2, utility = make_utility(model, "r2", utility_range)
        assert isinstance(r2, BoundedR2Scorer)
        assert (utility.low, utility.high) == expected_range
    r2, _ = make_utility(DummyRegressor(), "r2", (-1, 1))  # no bounds_y: scikit-learn's R²
    assert not isinstance(r2, BoundedR2Scorer)


def test_bounded_r2_follows_r2_score_on_constant_targets_and_several_targets():
    from sklearn.metrics import r2_score

    from skdptune.utility import BoundedR2Scorer

    scores_of = BoundedR2Scorer.scores_of
    constant = np.full(4, 2.0)
    assert scores_of(constant, constant, (0.0, 5.0)) == 1.0
    assert scores_of(constant + 1, constant, (0.0, 5.0)) == 0.0
    assert scores_of(np.array([3.0]), np.array([1.0]), (0.0, 5.0)) == 0.0  # one record
    assert scores_of(np.array([9.0, 9.0]), np.array([6.0, 7.0]), (0.0, 5.0)) == 1.0  # clipped
    rng = np.random.RandomState(0)
    Y, P = rng.uniform(-1, 1, (50, 2)) * [1, 100], rng.uniform(-1, 1, (50, 2)) * [1, 100]
    assert scores_of(P, Y, (np.array([-1.0, -100.0]), np.array([1.0, 100.0]))) == \
        pytest.approx(r2_score(Y, P))


def test_bounded_squared_error_is_bounded_whatever_the_data():
    from diffprivlib.models import LinearRegression

    from skdptune.utility import BoundedSquaredErrorScorer

    X, y = _regression()
    model = LinearRegression(bounds_X=(-1, 1), bounds_y=(-3, 3), epsilon=1e6,
                             random_state=0).fit(X, y)
    scorer, utility = make_utility(model, BoundedSquaredErrorScorer(), None)
    assert (utility.low, utility.high) == (0.0, 1.0)
    expected = 1 - np.mean((np.clip(model.predict(X), -3, 3) - np.clip(y, -3, 3)) ** 2) / 36
    assert utility(model, X, y) == pytest.approx(expected)
    # In [0, 1] whatever the data: targets far outside the bounds, the worst predictions.
    assert 0.0 <= utility(model, X, 1e6 * np.sign(-model.predict(X))) < 0.6 < expected
    assert 0.0 <= scorer(model, X, -1e9 * np.ones(len(y))) <= 1.0
    weights = np.r_[np.ones(200), np.zeros(200)]
    assert scorer(model, X, y, sample_weight=weights) == pytest.approx(
        scorer(model, X[:200], y[:200]))


@pytest.mark.parametrize("bounds_y", [(1, 1), (0, np.inf), (np.nan, 1)])
def test_invalid_bounds_y_are_named(bounds_y):
    from diffprivlib.models import LinearRegression

    with pytest.raises(ValueError, match=r"bounds_y must be .*finite.*bounds_y="):
        make_utility(LinearRegression(bounds_y=bounds_y), None, None)


def test_several_targets_are_each_scaled_by_their_own_bounds():
    from diffprivlib.models import LinearRegression

    from skdptune.utility import BoundedSquaredErrorScorer

    X, y = _regression()
    Y = np.c_[y, 100 * y]
    model = LinearRegression(bounds_X=(-1, 1), bounds_y=([-3, -300], [3, 300]), epsilon=1e6,
                             random_state=0).fit(X, Y)
    per_record = BoundedSquaredErrorScorer().per_record(model, X, Y)
    errors = ((np.clip(model.predict(X), [-3, -300], [3, 300]) - Y) / [6, 600]) ** 2
    np.testing.assert_allclose(per_record, 1 - errors.mean(axis=1))


def test_default_kmeans_range_is_the_widest_over_the_candidates():
    from sklearn.pipeline import make_pipeline

    from skdptune._utility import default_kmeans_range

    narrow, wide = KMeans(bounds=([0, 0], [1, 1])), KMeans(bounds=([0, 0], [2, 1]))
    assert default_kmeans_range([narrow, wide], 10, 2) == (-50.0, 0.0)
    assert default_kmeans_range([KMeans(bounds=(0, 1))], 10, 3) == (-30.0, 0.0)
    # Scalar bounds inside a pipeline: its input width is unknown before the fit.
    assert default_kmeans_range([make_pipeline(StandardScaler(), KMeans(bounds=(0, 1)))],
                                10, 3) is None
    assert default_kmeans_range([narrow, KMeans()], 10, 2) is None
    assert default_kmeans_range([GaussianNB()], 10, 2) is None


# --- skdptune.cluster.KMeans: the simplified silhouette (issue 32) ----------------------------


def _private_kmeans(n_clusters, **params):
    from skdptune.cluster import KMeans as PrivateKMeans

    return PrivateKMeans(n_clusters, bounds=(0.0, 1.0), epsilon=1e6, random_state=0, **params)


def test_the_simplified_silhouette_reads_nearest_and_second_nearest_centres():
    from skdptune.utility import SimplifiedSilhouetteScorer

    model = _private_kmeans(2).fit(np.array([[0.1, 0.1], [0.1, 0.2], [0.9, 0.9], [0.9, 0.8]]))
    model.cluster_centers_ = np.array([[0.0, 0.0], [1.0, 0.0]])
    model.empty_clusters_ = np.array([False, False])
    X = np.array([[0.0, 0.0], [0.5, 0.0], [0.25, 0.0]])
    # (b - a) / b per row: 1, 0 (between the centres) and (0.75 - 0.25) / 0.75.
    assert SimplifiedSilhouetteScorer()(model, X) == pytest.approx((1 + 0 + 2 / 3) / 3)
    weighted = SimplifiedSilhouetteScorer()(model, X, sample_weight=[1.0, 0.0, 0.0])
    assert weighted == pytest.approx(1.0)
    # A centre the fit found empty is discounted: half of the centres kept.
    model.empty_clusters_ = np.array([False, True])
    assert SimplifiedSilhouetteScorer()(model, X) == pytest.approx((1 + 0 + 2 / 3) / 6)
    assert np.isnan(SimplifiedSilhouetteScorer()(model, X[:0]))
    single = _private_kmeans(1).fit(X)
    assert SimplifiedSilhouetteScorer()(single, X) == 0.0


def test_the_simplified_silhouette_peaks_at_the_number_of_blobs_where_inertia_does_not():
    from skdptune.utility import SimplifiedSilhouetteScorer

    rng = np.random.default_rng(0)
    centres = np.array([[0.2, 0.2], [0.8, 0.2], [0.5, 0.8]])
    X = centres[rng.integers(3, size=3000)] + rng.normal(0, 0.03, (3000, 2))
    fits = {k: _private_kmeans(k).fit(X) for k in range(2, 7)}
    silhouettes = {k: SimplifiedSilhouetteScorer()(model, X) for k, model in fits.items()}
    inertias = {k: model.score(X) for k, model in fits.items()}
    assert max(silhouettes, key=silhouettes.get) == 3
    assert max(inertias, key=inertias.get) != 3
    assert all(0 <= value <= 1 for value in silhouettes.values())


def test_scoring_none_means_the_simplified_silhouette_for_skdptunes_kmeans_only():
    from sklearn.pipeline import make_pipeline

    from skdptune._utility import SimplifiedSilhouetteScorer, default_kmeans_range

    for estimator in (_private_kmeans(3), make_pipeline(StandardScaler(), _private_kmeans(3))):
        scorer, utility = make_utility(estimator, None, None)
        assert isinstance(scorer, SimplifiedSilhouetteScorer)
        assert (utility.low, utility.high) == (0.0, 1.0)
        assert default_kmeans_range([estimator], 10, 2) is None
    # diffprivlib's own KMeans keeps its inertia range; a declared range keeps score.
    assert default_kmeans_range([KMeans(bounds=([0, 0], [1, 1]))], 10, 2) == (-20.0, 0.0)
    scorer, _ = make_utility(_private_kmeans(3), None, (-5.0, 0.0))
    assert not isinstance(scorer, SimplifiedSilhouetteScorer)
    with pytest.raises(ValueError, match="does not end in one"):
        SimplifiedSilhouetteScorer().check_applies(GaussianNB(), {})
