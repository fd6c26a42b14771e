"""skdptune: tune scikit-learn models on private data with differential privacy."""

from .dp_fit import reveal_fit_messages
from .plotting import PrivacyBudgetDisplay, SelectionTraceDisplay
from .randomized import PrivateRandomizedSearchCV
from .search import PrivateGridSearchCV

__all__ = [
    "PrivacyBudgetDisplay",
    "PrivateGridSearchCV",
    "PrivateRandomizedSearchCV",
    "SelectionTraceDisplay",
    "reveal_fit_messages",
]
__version__ = "0.1.0"
