"""Differentially private selection mechanisms.

A selector is a pure function of a vector of utilities in ``[0, 1]`` and their sensitivity: it
never sees data or estimators. Every selector has the same method,
``select(utilities, *, sensitivity, epsilon, delta, random_state=None)``, returning a
:class:`SelectionResult`.
"""

from ._base import BaseSelector, Iteration, SelectionResult
from .doubling import ProposeTestDoubling

#: Selectors that ``PrivateGridSearchCV(selector=...)`` accepts by name.
SELECTORS = {
    "doubling": ProposeTestDoubling,
}

__all__ = [
    "SELECTORS",
    "BaseSelector",
    "Iteration",
    "ProposeTestDoubling",
    "SelectionResult",
]
