"""A PCA -> LogisticRegression pipeline tuned over n_components x C and released (issue 32).

skdptune.decomposition.PCA passes the refit gate with its declared bounds; with the search's
epsilon the total, split_budget gives the refit's share to the two DP steps in proportion to
their own epsilons, and what is charged is what they record; diffprivlib's PCA is refused
with skdptune's as the remedy, and a PCA that would read its domain from the data is refused
before anything is charged."""

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import PCA as DPPCA
from sklearn.datasets import make_classification
from sklearn.decomposition import PCA as SkPCA
from sklearn.pipeline import make_pipeline

from skdptune import PrivateGridSearchCV
from skdptune.decomposition import PCA
from skdptune.exceptions import GateError
from skdptune._gate import split_budget
from skdptune.linear_model import LogisticRegression

BOUNDS = (-1.0, 1.0)
DATA_NORM = 2.0  # a centred row of [-1, 1]^4 has norm at most 4; most are below 2
GRID = {"pca__n_components": [1, 2, 3], "logisticregression__C": [0.1, 1.0, 10.0]}


def _data(n=4000):
    X, y = make_classification(n_samples=n, n_features=4, n_informative=2, n_redundant=1,
                               class_sep=2.0, random_state=0)
    return np.clip(X / 4, *BOUNDS), y


def _pipeline(pca_epsilon=1.0, lr_epsilon=3.0, **pca):
    return make_pipeline(PCA(epsilon=pca_epsilon, data_norm=DATA_NORM, **{"bounds": BOUNDS, **pca}),
                         LogisticRegression(epsilon=lr_epsilon, data_norm=DATA_NORM, classes=[0, 1]))


def test_the_pipeline_is_tuned_over_n_components_and_c_and_released():
    X, y = _data()
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(_pipeline(), GRID, epsilon=4.0, accountant=accountant,
                                 random_state=0).fit(X, y)
    assert set(search.best_params_) == set(GRID)
    assert search.privacy_spent_[0] == pytest.approx(4.0)
    assert accountant.total()[0] == pytest.approx(4.0)
    # The refit's share, split between the steps as their own epsilons are (1 : 3).
    refit = search.best_estimator_
    refit_epsilon = search.privacy_report_["refit_epsilon"]
    assert refit["pca"].epsilon + refit["logisticregression"].epsilon == pytest.approx(
        refit_epsilon)
    assert refit["logisticregression"].epsilon == pytest.approx(3 * refit["pca"].epsilon)
    # The selection may pick the default candidate (the pipeline as given: n_components None,
    # every component kept).
    chosen = search.best_params_["pca__n_components"]
    assert refit["pca"].n_components_ == (X.shape[1] if chosen is None else chosen)
    assert search.score(X, y) > 0.7  # the majority class scores 0.5


def test_split_budget_shares_the_refit_between_the_two_dp_steps():
    shares = split_budget(_pipeline(pca_epsilon=1.0, lr_epsilon=4.0), 2.0)
    assert shares == pytest.approx({"pca__epsilon": 0.4, "logisticregression__epsilon": 1.6})


def test_diffprivlibs_pca_is_refused_with_the_remedy():
    X, y = _data(300)
    pipeline = make_pipeline(DPPCA(data_norm=DATA_NORM, bounds=BOUNDS),
                             LogisticRegression(data_norm=DATA_NORM, classes=[0, 1]))
    with pytest.raises(GateError, match=r"skdptune\.decomposition\.PCA\(data_norm=\.\.\., "
                                        r"bounds=\.\.\.\)"):
        PrivateGridSearchCV(pipeline, {"pca__n_components": [1, 2]}, epsilon=1.0).fit(X, y)
    with pytest.raises(GateError, match=r"skdptune\.decomposition\.PCA"):
        PrivateGridSearchCV(make_pipeline(SkPCA(), LogisticRegression(data_norm=DATA_NORM, classes=[0, 1])),
                            {"pca__n_components": [1, 2]}, epsilon=1.0).fit(X, y)


def test_a_pca_that_would_read_its_domain_from_the_data_is_refused_before_any_charge():
    X, y = _data(300)
    accountant = BudgetAccountant()
    with pytest.raises(GateError, match="DP mean of the features: bounds=None would be read "
                                        "from the private data"):
        PrivateGridSearchCV(_pipeline(bounds=None), GRID, epsilon=1.0,
                            accountant=accountant).fit(X, y)
    with pytest.raises(GateError, match="data_norm=None"):
        PrivateGridSearchCV(make_pipeline(PCA(bounds=BOUNDS),
                                          LogisticRegression(data_norm=DATA_NORM, classes=[0, 1])),
                            GRID, epsilon=1.0, accountant=accountant).fit(X, y)
    assert accountant.spent_budget == []
    # Centred data by public knowledge need no bounds.
    PrivateGridSearchCV(_pipeline(bounds=None, centered=True), GRID, epsilon=1.0,
                        n_partitions=10, accountant=accountant, random_state=0).fit(X, y)
    assert accountant.total()[0] == pytest.approx(1.0)
