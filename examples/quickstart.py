"""
Quickstart
==========

Tune a differentially private logistic regression with
:class:`~skdptune.PrivateGridSearchCV`.

Runs on generated data (no download). The features are clipped to [-1, 1], bounds that are
declared here rather than computed from the data, so every row has L2 norm at most sqrt(8):
that public constant is the ``data_norm`` skdptune's LogisticRegression needs. Its classes,
0 and 1, are declared too: read from the data, a class held by a single record would show
in the released model.
"""

import numpy as np
from diffprivlib import BudgetAccountant
from skdptune.linear_model import LogisticRegression
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from skdptune import PrivateGridSearchCV

N_FEATURES = 8
X, y = make_classification(n_samples=20_000, n_features=N_FEATURES, n_informative=5,
                           random_state=0)
X = np.clip(X / 4, -1, 1)  # public bounds: every feature in [-1, 1]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)

accountant = BudgetAccountant()
search = PrivateGridSearchCV(
    LogisticRegression(data_norm=np.sqrt(N_FEATURES), classes=[0, 1]),
    {"C": [0.001, 0.01, 0.1, 1.0, 10.0]},
    epsilon=2.0,  # the whole fit: the tuning policy's share to the selection, the rest refit
    accountant=accountant,
)
# Before touching the data: how large a lead in accuracy the best candidate needs
# (n_partitions="auto" is chosen from the number of records, treated as public).
print("forecast:           ", search.forecast(n_samples=len(X_train)))
search.fit(X_train, y_train)

print("partitions:         ", search.n_partitions_)
print("chosen parameters:  ", search.best_params_)
print("privacy spent:      ", search.privacy_spent_)
print("accountant charged: ", accountant.total())
print("held-out accuracy:  ", round(search.score(X_test, y_test), 3))
