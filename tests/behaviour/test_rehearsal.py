"""Issue 38, items 1 and 2: nothing read from the data before the charge, and no
configuration mistake that costs the budget (skdptune._rehearsal)."""

import numpy as np
import pandas as pd
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import StandardScaler as DPStandardScaler
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skdptune import PrivateGridSearchCV, PrivateRandomizedSearchCV
from skdptune._rehearsal import public_sample, schema_of
from skdptune.decomposition import PCA
from skdptune.linear_model import LogisticRegression

N = 600


def frame(seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({name: rng.uniform(0, 1, N) for name in "abcd"})
    X["s"] = rng.choice(["x", "y"], N)
    y = (X.a + X.b > 1).astype(int).to_numpy()
    return X, y


def logistic():
    return LogisticRegression(data_norm=2.0, classes=[0, 1])


def assert_refused_in_full(search, X, y, match):
    accountant = search.accountant
    with pytest.raises(ValueError, match=match) as error:
        search.fit(X, y)
    assert "withheld" not in str(error.value)
    assert "nothing was charged" in str(error.value) or "not quoted" in str(error.value)
    assert accountant.spent_budget == []


@pytest.mark.parametrize("default", ["estimator", None])
def test_scaler_bounds_for_three_of_four_columns_are_refused_with_their_message(default):
    # Before: the whole epsilon charged, then PrivateFitError "Its message is withheld".
    X, y = frame()
    scaler = DPStandardScaler(bounds=([0, 0, 0], [1, 1, 1]), epsilon=0.5)
    pipeline = make_pipeline(ColumnTransformer([("num", scaler, list("abcd"))]), logistic())
    search = PrivateGridSearchCV(pipeline, {"logisticregression__C": [0.1, 1.0]},
                                 epsilon=1.0, default=default, accountant=BudgetAccountant(),
                                 random_state=0)
    assert_refused_in_full(search, X[list("abcd")], y,
                           r"step 'columntransformer__num' \(StandardScaler\).*"
                           r"bounds must have 4 element\(s\), got 3")


def test_a_text_column_against_numeric_categories_is_refused_with_its_message():
    X, y = frame()
    encoder = OneHotEncoder(categories=[[0, 1]], sparse_output=False)
    pipeline = make_pipeline(ColumnTransformer([("cat", encoder, ["s"]),
                                                ("num", "passthrough", ["a", "b"])]),
                             logistic())
    search = PrivateGridSearchCV(pipeline, {"logisticregression__C": [0.1, 1.0]},
                                 epsilon=1.0, accountant=BudgetAccountant(), random_state=0)
    assert_refused_in_full(search, X[["s", "a", "b"]], y,
                           r"column 's' holds text.*declares the categories \[0, 1\]")


def test_more_pca_components_than_features_are_refused_with_their_message():
    X, y = frame()
    pipeline = make_pipeline(PCA(n_components=5, data_norm=2.0, epsilon=0.5, bounds=(0, 1)),
                             logistic())
    for search in (
        PrivateGridSearchCV(pipeline, {"logisticregression__C": [0.1, 1.0]}, epsilon=1.0,
                            accountant=BudgetAccountant(), random_state=0),
        PrivateRandomizedSearchCV(pipeline, {"logisticregression__C": [0.1, 1.0]}, epsilon=1.0,
                                  accountant=BudgetAccountant(), random_state=0),
    ):
        assert_refused_in_full(search, X[list("abc")].to_numpy(), y,
                               r"step 'pca' \(PCA\).*n_components=5 must be between 1 and "
                               r"min\(n_samples, n_features\)=3")


def neighbours():
    """Two datasets that differ in one of the first 50 rows: in ``X`` those rows lie on a
    line (a PCA keeping 90 % of the variance keeps one component of them), in ``X2`` one of
    them is replaced by a row far off it."""
    rng = np.random.default_rng(1)
    t = rng.uniform(0, 1, (N, 1))
    X = np.hstack([t, t, t, t]) * 0.5 + rng.uniform(0, 1e-3, (N, 4))
    X[50:] = rng.uniform(0, 1, (N - 50, 4))
    X2 = X.copy()
    X2[7] = [1.0, 0.0, 1.0, 0.0]
    y = (X[:, 0] > 0.5).astype(int)
    return X, X2, y


def variance_fraction_search(accountant=None):
    pipeline = make_pipeline(
        PCA(n_components=0.9, data_norm=2.0, bounds=(0, 1), epsilon=1e4, random_state=0),
        logistic())
    return PrivateGridSearchCV(pipeline, {"logisticregression__C": [0.1, 1.0, 10.0]},
                               epsilon=1.0, accountant=accountant, random_state=0)


def test_neighbouring_datasets_give_the_same_decision_forecast_and_charges():
    # Before: the policy's width came from the PCA fitted on the first 50 rows of X (one
    # component on X, more on X2, at the PCA's near-noiseless epsilon): the forecast's
    # refit_noise, the share and the charges could tell the two datasets apart.
    X, X2, y = neighbours()
    first, second = (variance_fraction_search().forecast(data) for data in (X, X2))
    assert first.policy == second.policy
    assert first == second
    spent = []
    for data in (X, X2):
        accountant = BudgetAccountant()
        variance_fraction_search(accountant).fit(data, y)
        spent.append(accountant.spent_budget)
    assert spent[0] == spent[1]


def test_the_policys_width_is_the_public_upper_bound_of_a_variance_fraction_pca():
    # All four components: what a PCA keeping a variance fraction can output at most.
    X, _, y = neighbours()
    forecast = variance_fraction_search().forecast(X)
    from skdptune._default_policy import refit_noise

    assert forecast.policy.refit_noise == pytest.approx(
        refit_noise(logistic(), N, 4), rel=1e-12)


def test_the_public_rows_follow_the_schema_and_the_declared_domains():
    X, y = frame()
    X["n"] = np.arange(N) % 5
    X["flag"] = X["n"] > 2
    scaler = DPStandardScaler(bounds=([-3, 10], [-2, 20]), epsilon=0.5)
    encoder = OneHotEncoder(categories=[["x", "y"]], sparse_output=False)
    pipeline = make_pipeline(ColumnTransformer([("num", scaler, ["a", "b"]),
                                                ("cat", encoder, ["s"])],
                                               remainder="passthrough"), logistic())
    sample, labels = public_sample(pipeline, schema_of(X, y))
    assert list(sample.columns) == list(X.columns)
    assert list(sample.dtypes) == list(X.dtypes)
    assert sample["a"].between(-3, -2).all() and sample["b"].between(10, 20).all()
    assert set(sample["s"]) == {"x", "y"}
    assert sample["c"].between(0, 1).all()
    assert set(labels) == {0, 1}
    # A fixed function of the schema: the same for any data of that schema.
    other, _ = public_sample(pipeline, schema_of(frame(seed=5)[0].assign(
        n=np.arange(N) % 5, flag=True), y))
    pd.testing.assert_frame_equal(sample, other)
