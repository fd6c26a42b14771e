"""A differentially private random forest whose noise is secure and whose trees carry no seed."""

from ._models.ensemble import RandomForestClassifier

__all__ = ["RandomForestClassifier"]
