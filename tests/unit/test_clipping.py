"""skdptune._clipping: every record brought into a model's declared domain (issue 38, item 3).

Deterministic: no noise is drawn here.
"""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import StandardScaler
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures

from skdptune._clipping import clip_to_norm
from skdptune.cluster import KMeans
from skdptune.decomposition import PCA
from skdptune.linear_model import LogisticRegression, Ridge
from skdptune.naive_bayes import GaussianNB

LARGEST = np.finfo(float).max


def test_rows_inside_the_ball_are_returned_unchanged():
    rows = np.random.default_rng(0).uniform(-0.5, 0.5, (200, 3))
    rows[0] = [0.6, 0.8, 0.0]  # norm 1 (up to rounding), on the sphere
    rows[1] = 0.0
    rows[2] = [5e-324, -5e-324, 1e-310]  # subnormals
    inside = np.linalg.norm(rows, axis=1) <= 1.0
    np.testing.assert_array_equal(clip_to_norm(rows, 1.0)[inside], rows[inside])


@pytest.mark.parametrize("row, direction", [
    ([3.0, 4.0], [0.6, 0.8]),
    ([3e200, -4e200], [0.6, -0.8]),  # squares overflow: diffprivlib's clip gives zeros
    ([LARGEST, LARGEST], [0.5 ** 0.5, 0.5 ** 0.5]),
    ([np.inf, 1.0], [1.0, 0.0]),
    ([-np.inf, np.inf], [-(0.5 ** 0.5), 0.5 ** 0.5]),
], ids=["plain", "overflowing", "largest", "inf", "two_infs"])
def test_rows_outside_are_scaled_to_the_norm_keeping_their_direction(row, direction):
    clipped = clip_to_norm(np.array([row]), 2.0)
    np.testing.assert_allclose(clipped, 2.0 * np.array([direction]), rtol=1e-12, atol=1e-300)


MODELS = {
    "logistic": (LogisticRegression(data_norm=1.0, classes=[0, 1]), "labels"),
    "ridge": (Ridge(bounds_X=(0.0, 1.0), bounds_y=(0.0, 1.0)), "values"),
    "gaussian_nb": (GaussianNB(bounds=(0.0, 1.0), classes=[0, 1]), "labels"),
    "kmeans": (KMeans(bounds=(0.0, 1.0), n_clusters=2), None),
    "pca": (PCA(n_components=2, data_norm=2.0, bounds=(0.0, 1.0)), None),
}


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("value", [1e39, -1e308, np.inf, -np.inf, -5e-324])
def test_models_fit_infinite_and_extreme_values_and_refuse_nan(name, value):
    # Infinities reach a model when an earlier step overflows (diffprivlib's StandardScaler
    # divides by a noisy scale): clipped like any value outside the bounds. NaN is refused
    # before anything is spent.
    rng = np.random.default_rng(0)
    X = rng.random((200, 3))
    model, target = MODELS[name]
    y = {"labels": (X[:, 0] > 0.5).astype(int), "values": X[:, 0].copy(), None: None}[target]
    X[0, 0] = value
    fitted = clone(model).set_params(accountant=BudgetAccountant(), random_state=0).fit(X, y)
    assert fitted.accountant.total()[0] == pytest.approx(1.0)
    X[0, 0] = np.nan
    refused = clone(model).set_params(accountant=BudgetAccountant())
    with pytest.raises(ValueError, match="X contains NaN"):
        refused.fit(X, y)
    assert refused.accountant.total() == (0, 0)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("final", [
    LogisticRegression(data_norm=1.0, classes=[0, 1]),
    GaussianNB(bounds=(-3.0, 3.0), classes=[0, 1]),
], ids=["logistic", "gaussian_nb"])
@pytest.mark.parametrize("first", [
    StandardScaler(bounds=(0.0, 1.0)), PolynomialFeatures(2),
], ids=["dp_scaler", "polynomial"])
def test_a_step_that_overflows_on_one_record_does_not_fail_the_next(first, final):
    # 1e308 divided by a scale below 1 (the scaler) or squared (the polynomial) is infinite.
    rng = np.random.default_rng(1)
    X = rng.random((200, 3))
    y = (X[:, 0] > 0.5).astype(int)
    X[0, 0] = 1e308
    accountant = BudgetAccountant()
    pipeline = make_pipeline(clone(first), clone(final))
    pipeline.set_params(**{key: accountant for key in pipeline.get_params()
                           if key.endswith("__accountant")})
    assert pipeline.fit(X, y).predict(X[1:]).shape == (199,)
