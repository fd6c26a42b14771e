"""skdptune: tune scikit-learn models on private data with differential privacy."""

from ._dp_fit import reveal_fit_messages
from ._plotting import PrivacyBudgetDisplay, SelectionTraceDisplay
from ._randomized import PrivateRandomizedSearchCV
from ._search import PrivateGridSearchCV

__all__ = [
    "PrivacyBudgetDisplay",
    "PrivateGridSearchCV",
    "PrivateRandomizedSearchCV",
    "SelectionTraceDisplay",
    "reveal_fit_messages",
]
__version__ = "0.1.0"
