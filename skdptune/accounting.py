"""What a fitted search's ``privacy_report_`` says, and the values it is read with.

Each release of a search (the selection, the ``best_score_`` estimate, the refit; the tuning
and the final fit of the randomized search) is one :class:`Charge`, listed as a dict under the
report's ``"charges"``. The report states the privacy unit (:data:`PRIVACY_UNIT`), the
adjacency charged (:data:`ADJACENCY`) and the comparison figure's
(:data:`ZERO_OUT_ADJACENCY`); a charge's ``records`` is :data:`ALL_RECORDS`,
:data:`SUBSAMPLE` or :data:`REMAINDER`. A search's ``privacy_spent_`` is a
:class:`PrivacySpent`, the named pair ``(epsilon, delta)`` of the report's total.
"""

from ._accounting import (
    ADJACENCY,
    ALL_RECORDS,
    PRIVACY_UNIT,
    REMAINDER,
    SUBSAMPLE,
    ZERO_OUT_ADJACENCY,
    Charge,
    PrivacySpent,
)

__all__ = [
    "ADJACENCY",
    "ALL_RECORDS",
    "PRIVACY_UNIT",
    "REMAINDER",
    "SUBSAMPLE",
    "ZERO_OUT_ADJACENCY",
    "Charge",
    "PrivacySpent",
]
