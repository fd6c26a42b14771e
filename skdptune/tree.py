"""A differentially private decision tree whose noise is secure and whose structure is public."""

from ._models.tree import DecisionTreeClassifier

__all__ = ["DecisionTreeClassifier"]
