"""skdptune: tune scikit-learn models on private data with differential privacy."""

from .randomized import PrivateRandomizedSearchCV
from .search import PrivateGridSearchCV

__all__ = ["PrivateGridSearchCV", "PrivateRandomizedSearchCV"]
__version__ = "0.1.0"
