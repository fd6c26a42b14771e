"""Differentially private selection mechanisms.

A selector is a pure function of a vector of utilities in ``[0, 1]`` and their sensitivity: it
never sees data or estimators. Every selector has the same method,
``select(utilities, *, sensitivity, epsilon, delta, random_state=None)``, returning a
:class:`SelectionResult`.
"""

from ._base import BaseSelector, Iteration, OneShotSelector, SelectionResult
from ._doubling import ProposeTestDoubling
from ._exponential import ExponentialMechanism
from ._permute_and_flip import PermuteAndFlip
from ._report_noisy_max import ReportNoisyMax

#: Selectors that ``PrivateGridSearchCV(selector=...)`` accepts by name.
SELECTORS = {
    "doubling": ProposeTestDoubling,
    "exponential": ExponentialMechanism,
    "permute_and_flip": PermuteAndFlip,
    "report_noisy_max": ReportNoisyMax,
}


def _as_selector(selector):
    """The selector object for a name of :data:`SELECTORS` (a new instance), or ``selector``
    itself when it is already one."""
    return SELECTORS[selector]() if isinstance(selector, str) else selector


__all__ = [
    "SELECTORS",
    "BaseSelector",
    "ExponentialMechanism",
    "Iteration",
    "OneShotSelector",
    "PermuteAndFlip",
    "ProposeTestDoubling",
    "ReportNoisyMax",
    "SelectionResult",
]
