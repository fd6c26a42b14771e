"""skdptune: tune scikit-learn models on private data with differential privacy."""

from .search import PrivateGridSearchCV

__all__ = ["PrivateGridSearchCV"]
__version__ = "0.1.0"
