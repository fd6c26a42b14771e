"""Private k-means that spends what it records under replace-one adjacency."""

from ._models.cluster import KMeans

__all__ = ["KMeans"]
