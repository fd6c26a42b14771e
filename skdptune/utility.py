"""Bounded scorers for regression and clustering, and the range of ``KMeans.score``.

A search selects on utilities in ``[0, 1]``; these scorers are bounded by construction (or
by declared bounds), and :func:`kmeans_score_range` gives the ``utility_range`` of diffprivlib's
``KMeans.score`` from public quantities.
"""

from ._utility import (
    BoundedR2Scorer,
    BoundedSquaredErrorScorer,
    SimplifiedSilhouetteScorer,
    kmeans_score_range,
)

__all__ = [
    "BoundedR2Scorer",
    "BoundedSquaredErrorScorer",
    "SimplifiedSilhouetteScorer",
    "kmeans_score_range",
]
