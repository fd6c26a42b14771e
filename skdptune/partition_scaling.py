"""The rules of ``partition_scaling``: partition fits that emulate the refit (fidelity).

A partition fit trains on ``ratio = n_partitions / (1 - validation_fraction)`` times fewer
records than the refit; ``partition_scaling="auto"`` rescales each candidate's
data-size-dependent parameters by that ratio for the partition fits only, with one
:class:`ScalingRule` per (class, parameter) in :data:`RULES`. It costs no privacy: partition
fits are never charged, and the refit always uses the candidate as written.
:func:`rescaled_params` shows what a partition fit of one candidate would use, with your own
rules too.
"""

from ._partition_scaling import RULES, ScalingRule, partition_ratio, rescaled_params

__all__ = ["RULES", "ScalingRule", "partition_ratio", "rescaled_params"]
