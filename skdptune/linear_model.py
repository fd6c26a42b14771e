"""Private linear models that diffprivlib's own do not cover, or do not calibrate correctly."""

from ._models.linear_model import LogisticRegression, Ridge

__all__ = ["LogisticRegression", "Ridge"]
