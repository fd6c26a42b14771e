"""The refit gate: which estimators may be fitted on the private data and released.

The gate is an allowlist, :data:`ALLOWED`: one :class:`Rule` per class, saying why the class
may be fitted on private data and released, what it spends and what it needs declared. Every
candidate of a grid is checked against it before the data are touched. A differentially private
estimator of your own joins it with :func:`register_dp_estimator`, on your responsibility.
"""

from ._gate import ALLOWED, Rule, register_dp_estimator, unregister_dp_estimator

__all__ = ["ALLOWED", "Rule", "register_dp_estimator", "unregister_dp_estimator"]
