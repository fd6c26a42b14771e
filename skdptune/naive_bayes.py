"""Private naive Bayes whose released model does not depend on which classes occur."""

from ._models.naive_bayes import GaussianNB

__all__ = ["GaussianNB"]
