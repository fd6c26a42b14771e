"""
Tuning a diffprivlib pipeline on mixed-type tabular data
========================================================

A private table rarely arrives as a clean numeric matrix: here it is a
:class:`pandas.DataFrame` with numeric and categorical columns. The pipeline that is released
must be private end to end, so everything a step would otherwise learn from the data is
declared from public knowledge of the schema:

- the categories of each categorical column (``OneHotEncoder(categories=[...])``; with
  learned categories a released model would show which values occur in the data),
- the bounds of each numeric column (diffprivlib's ``StandardScaler(bounds=...)``, which
  spends its own budget on the means and variances),
- the largest norm of a row reaching the classifier (``LogisticRegression(data_norm=...)``),
- the class labels (``LogisticRegression(classes=[0, 1])``; read from the data, a class held
  by a single record would show in the released model).

The refit gate (:mod:`skdptune.gate`) checks every candidate of the grid against these rules
before any data are read, and refuses, with the remedy, a configuration that would leak.
"""

# %%
# A private table
# ---------------
# Generated here so that the example needs no download; imagine it came from a survey.
import numpy as np
import pandas as pd

EDUCATION = ["primary", "secondary", "bachelor", "master"]
REGION = ["north", "south", "east", "west", "centre"]
AGE_BOUNDS, HOURS_BOUNDS = (17, 90), (1, 99)  # public: the survey's admissible answers

rng = np.random.RandomState(0)
n_records = 30_000
frame = pd.DataFrame({
    "age": rng.randint(AGE_BOUNDS[0], AGE_BOUNDS[1] + 1, n_records),
    "hours_per_week": np.clip(rng.normal(40, 12, n_records), *HOURS_BOUNDS).round(),
    "education": rng.choice(EDUCATION, n_records, p=[0.2, 0.4, 0.3, 0.1]),
    "region": rng.choice(REGION, n_records),
})
logit = (0.04 * (frame["age"] - 45) + 0.05 * (frame["hours_per_week"] - 40)
         + frame["education"].map(dict(zip(EDUCATION, [-1.5, -0.5, 0.5, 1.5])))
         + 0.3 * (frame["region"] == "centre"))
target = (rng.uniform(size=n_records) < 1 / (1 + np.exp(-logit))).astype(int)
frame.head()

# %%
# A held-out split plays the part of public test data: scores on it are not private.
from sklearn.model_selection import train_test_split

X_train, X_test, y_train, y_test = train_test_split(frame, target, test_size=0.25,
                                                    random_state=0)

# %%
# The private pipeline
# --------------------
# Two numeric columns, clipped to their declared bounds and standardised privately, and two
# one-hot encoded categorical columns. After scaling, a numeric value lies within a few
# standard deviations; diffprivlib's logistic regression clips every row to ``data_norm``,
# which we set to cover three standard deviations per numeric column plus the two ones of
# the one-hot part: ``sqrt(2 * 3**2 + 2)``.
from diffprivlib.models import StandardScaler
from skdptune.linear_model import LogisticRegression
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

columns = ColumnTransformer([
    ("num", StandardScaler(bounds=([AGE_BOUNDS[0], HOURS_BOUNDS[0]],
                                   [AGE_BOUNDS[1], HOURS_BOUNDS[1]]), epsilon=0.5),
     ["age", "hours_per_week"]),
    ("cat", OneHotEncoder(categories=[EDUCATION, REGION], sparse_output=False),
     ["education", "region"]),
])
pipeline = make_pipeline(columns, LogisticRegression(data_norm=np.sqrt(2 * 3**2 + 2),
                                                     classes=[0, 1], epsilon=1.0))
pipeline

# %%
# One total budget, and a forecast before the data
# -------------------------------------------------
# ``epsilon`` is the budget of the whole fit. ``selection_share`` of it goes to the
# selection (``"auto"``: half, since ``default=None`` below names no candidate to keep); the
# rest is the refit's, spread over the pipeline's DP steps in the proportions
# they declare (here the scaler's 0.5 to the classifier's 1.0).
#
# The selection compares mean utilities over ``n_partitions`` partitions, with sensitivity
# ``1 / n_partitions``: more partitions mean less noise but fewer records per partition fit.
# With 22,500 training records, 100 partitions leave about 180 training records to each.
from diffprivlib import BudgetAccountant

from skdptune import PrivateGridSearchCV
from skdptune.selection import SELECTORS

accountant = BudgetAccountant()
search = PrivateGridSearchCV(
    pipeline,
    {"logisticregression__C": [0.01, 0.1, 1.0, 10.0]},
    epsilon=3.0,
    delta=1e-6,
    n_partitions=100,
    # We compare every selector below, the doubling one included, so no candidate is kept
    # as the default: default=None treats the four alike (see "Tune, or release as set?").
    default=None,
    accountant=accountant,
    random_state=0,  # reproducible for the docs; leave it None on private data
)
print(f"selection_share={search.selection_share}, score_share={search.score_share}")

# %%
# Before touching the data, :meth:`~skdptune.PrivateGridSearchCV.forecast` says how large a
# lead in accuracy the best candidate needs to be selected with 90% probability, for this
# grid, these partitions and this budget. It reads only public quantities, so we can ask it
# for every selector and keep the one that resolves the finest differences.
forecasts = {name: search.set_params(selector=name).forecast() for name in SELECTORS}
for name, forecast in forecasts.items():
    print(f"{name:>18}: lead over one rival {forecast.pairwise_gap:.3f}, "
          f"over all others {forecast.uniform_gap:.3f}")
selector = min(forecasts, key=lambda name: forecasts[name].pairwise_gap)
search.set_params(selector=selector)
print("selector:", selector)

# %%
# Fit, then look at what was released
# -----------------------------------
search.fit(X_train, y_train)
print("chosen parameters:", search.best_params_)
print("DP estimate of its accuracy (best_score_):", round(search.best_score_, 3))
print("privacy spent:", search.privacy_spent_)
print("accountant charged:", accountant.total())

# %%
# ``best_score_`` is a Laplace estimate of the selected candidate's mean partition utility
# (models trained on a partition, not on all the data), bought with ``score_share`` of the
# selection budget: not a cross-validation estimate of the released model's test score.
# ``best_score_std_`` is its noise's standard deviation, ``sqrt(2) / (n_partitions *
# score_epsilon)`` in accuracy units (public): read it before trusting the estimate.
report = search.privacy_report_
print(f"best_score_ = {search.best_score_:.3f} +/- {search.best_score_std_:.3f} (noise std)")
print("the same std from the report:",
      round(2 ** 0.5 / (report["n_partitions"] * report["score_epsilon"]), 3))

# %%
# ``privacy_report_`` explains the figure line by line; the display draws it. The one-shot
# selectors are pure DP, so the selection adds no delta.
for key in ("unit", "adjacency", "n_partitions", "selection_epsilon", "refit_epsilon",
            "total_epsilon", "total_delta"):
    print(f"{key:>18}: {search.privacy_report_[key]}")

from skdptune import PrivacyBudgetDisplay

display = PrivacyBudgetDisplay.from_estimator(search)

# %%
# The released model is a fitted pipeline: it takes the DataFrame as it is.
print("held-out accuracy:", round(search.score(X_test, y_test), 3))
print("majority-class accuracy:", round(max(y_test.mean(), 1 - y_test.mean()), 3))

# %%
# What the gate refuses
# ---------------------
# The same pipeline with learned categories would release which categories occur in the
# private data. The search refuses it before reading any data, and charges nothing.
from skdptune.exceptions import GateError

learned = make_pipeline(
    ColumnTransformer([("cat", OneHotEncoder(sparse_output=False), ["education", "region"])]),
    LogisticRegression(data_norm=2.0, classes=[0, 1]),
)
try:
    PrivateGridSearchCV(learned, {"logisticregression__C": [0.1, 1.0]}, epsilon=1.0,
                        n_partitions=20, accountant=accountant).fit(X_train, y_train)
except GateError as error:
    print(error)
print("accountant charged:", accountant.total())
