"""
A private PCA before a private logistic regression
==================================================

PCA is the usual first step before a linear model when features are many and correlated.
:class:`skdptune.decomposition.PCA` makes diffprivlib's PCA releases (a DP mean, noisy
eigenvalues, components drawn one by one from Bingham laws) with the components drawn from
the law its privacy proof assumes, which diffprivlib 0.6.6's sampler does not; it can be
tuned and released in a pipeline before :class:`skdptune.linear_model.LogisticRegression`.

Here a private search tunes the number of components and the regression's ``C`` together,
on generated data (no download): 20,000 records of 12 correlated measurements whose class
depends on a few directions of them.
"""

# %%
# The data and their public bounds
# --------------------------------
# Every measurement lies in ``[-1, 1]`` (declared, and clipped to: public knowledge of the
# instrument), so a row centred by a mean inside the box has norm at most ``2 sqrt(12)``;
# most are far below, and rows above ``data_norm`` are scaled down to it. A projection on
# orthonormal components keeps that norm, so the regression gets the same ``data_norm``.
import numpy as np
from sklearn.model_selection import train_test_split

rng = np.random.RandomState(0)
n_records, n_features = 20_000, 12
latent = rng.normal(size=(n_records, 3))
mixing = rng.normal(size=(3, n_features))
X = np.clip((latent @ mixing + 0.5 * rng.normal(size=(n_records, n_features))) / 8, -1, 1)
y = (latent[:, 0] + 0.5 * latent[:, 1] > 0).astype(int)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
DATA_NORM = 1.5

# %%
# The pipeline and the search
# ---------------------------
# ``epsilon`` of the search is the total. The refit's share is spread over the two DP steps
# in the proportions they declare (the PCA's 1 to the regression's 2), so what they spend
# adds up to it. 40 partitions of about 300 training records each keep the example quick
# (the default, ``"auto"``, would choose more from the number of records and the budget).
from diffprivlib import BudgetAccountant
from sklearn.pipeline import make_pipeline

from skdptune import PrivateGridSearchCV
from skdptune.decomposition import PCA
from skdptune.linear_model import LogisticRegression

pipeline = make_pipeline(PCA(epsilon=1.0, data_norm=DATA_NORM, bounds=(-1.0, 1.0)),
                         LogisticRegression(epsilon=2.0, data_norm=DATA_NORM, classes=[0, 1]))
accountant = BudgetAccountant()
search = PrivateGridSearchCV(
    pipeline,
    {"pca__n_components": [1, 2, 3], "logisticregression__C": [0.1, 1.0, 10.0]},
    epsilon=3.0, n_partitions=40, accountant=accountant,
    random_state=0)  # reproducible for the docs; None on private data
search.fit(X_train, y_train)
print("chosen:", search.best_params_)
refit = search.best_estimator_
print(f"refit budget: PCA {refit['pca'].epsilon:.3f} + regression "
      f"{refit['logisticregression'].epsilon:.3f} = "
      f"{search.privacy_report_['refit_epsilon']:.3f}")
print("privacy spent:", search.privacy_spent_, "| accountant charged:", accountant.total())
print("held-out accuracy:", round(search.score(X_test, y_test), 3))

# %%
# What the PCA released
# ---------------------
# The private components against scikit-learn's on the same data (not private, for the
# comparison only): each released component is a noisy draw around a principal direction.
import matplotlib.pyplot as plt
from sklearn.decomposition import PCA as ExactPCA

released = refit["pca"].components_
exact = ExactPCA(len(released)).fit(X_train).components_
alignment = np.abs(np.sum(released * exact, axis=1))
print("|cosine| between released and exact components:", alignment.round(3))

fig, axes = plt.subplots(1, 2, figsize=(10, 4))
width = 0.4
positions = np.arange(n_features)
axes[0].bar(positions - width / 2, exact[0] * np.sign(exact[0] @ released[0]), width,
            label="exact (not private)")
axes[0].bar(positions + width / 2, released[0], width, label="released")
axes[0].set_xlabel("feature")
axes[0].set_title("first component's loadings")
axes[0].legend()
projected = refit["pca"].transform(X_test)[:, 0]
for value in (0, 1):
    axes[1].hist(projected[y_test == value], bins=50, alpha=0.6, label=f"class {value}")
axes[1].set_xlabel("first released component")
axes[1].set_title("held-out records, projected")
axes[1].legend()
fig.tight_layout()
plt.show()
