"""Private PCA whose components are drawn from the Bingham law its privacy proof assumes."""

from ._models.decomposition import PCA

__all__ = ["PCA"]
