"""Plots of what a fitted private search released, in the style of scikit-learn's displays.

Each display is built from released values only. matplotlib is an optional dependency
(``pip install "skdptune[plot]"``), imported when a display plots.
"""

from ._plotting import PrivacyBudgetDisplay, SelectionTraceDisplay

__all__ = ["PrivacyBudgetDisplay", "SelectionTraceDisplay"]
