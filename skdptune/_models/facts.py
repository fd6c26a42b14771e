"""The record a DP model's room exports for the refit gate and the tuning policy."""

from dataclasses import dataclass
from typing import Callable, Optional


@dataclass(frozen=True)
class ModelFacts:
    """What the library knows of one of its DP models, kept in the model's module.

    Each module of ``skdptune/_models/`` exports one as ``FACTS``, beside the mechanism it
    describes; the refit gate's allowlist turns it into the class's row
    (``skdptune._gate.ALLOWED``), and the tuning policy reads its noise dimension through that
    row. Every field but ``condition`` must be given: a fact a room does not state is an
    error when the module is imported, not a default the gate or the policy would guess.

    Attributes
    ----------
    why : str
        Why a fit is private: the mechanism, its calibration, what it spends.
    declared : tuple of str
        Parameters that must be declared (not None): the public bounds the fit would
        otherwise read from the data.
    charge : callable or None
        ``charge(step) -> float >= 1``: the epsilon a fit really spends per unit of the
        ``epsilon`` it records, with the proof in the function's docstring; None: the
        mechanism is calibrated to replace-one adjacency and spends what it records.
    zero_out : callable or None
        ``zero_out(step) -> float``: what a fit spends per unit of its ``epsilon`` under
        zero-out adjacency, derived in the function's docstring (the privacy report's
        comparison figure, never charged); None: not derived.
    releases : dict
        ``{attribute: why its mechanism covers it}``: what a released fit keeps besides the
        public shape (``skdptune._gate.keep_released`` removes the rest).
    noise_dimension : callable
        ``noise_dimension(step, width) -> int``: the number of quantities the mechanism
        perturbs, each by noise of scale about ``1 / (n * epsilon)``, for an input of
        ``width`` columns (the tuning policy's ``D``, ``skdptune._default_policy``).
    condition : callable or None, default=None
        ``condition(step) -> str or None``: a reason (with its remedy) to refuse releasing
        this configuration of the class, or None.
    """

    why: str
    declared: tuple
    charge: Optional[Callable]
    zero_out: Optional[Callable]
    releases: dict
    noise_dimension: Callable
    condition: Optional[Callable] = None

    def __post_init__(self):
        problems = []
        if not isinstance(self.why, str) or not self.why.strip():
            problems.append(f"why={self.why!r} must say why a fit is private")
        if not isinstance(self.declared, tuple) or not all(
                isinstance(name, str) for name in self.declared):
            problems.append(f"declared={self.declared!r} must be a tuple of parameter names")
        for name in ("charge", "zero_out", "condition"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                problems.append(f"{name}={value!r} must be a function of the step, or None")
        if not callable(self.noise_dimension):
            problems.append(f"noise_dimension={self.noise_dimension!r} must be a function "
                            "(step, width) -> int")
        if not isinstance(self.releases, dict) or not all(
                isinstance(name, str) and isinstance(reason, str) and reason
                for name, reason in self.releases.items()):
            problems.append(f"releases={self.releases!r} must map each released attribute "
                            "to why its mechanism covers it")
        if problems:
            raise TypeError(f"ModelFacts: {'; '.join(problems)}.")
