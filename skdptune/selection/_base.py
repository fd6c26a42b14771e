"""What every selector returns, and the base class they share.

A selector is a pure function of a utility vector and its sensitivity: it never sees data or
estimators, so it can be tested and audited by itself. It says what it released in a
:class:`SelectionResult`; turning that into ``(epsilon, delta)`` is done in
:mod:`skdptune.accounting`.
"""

from dataclasses import dataclass
from numbers import Real
from typing import NamedTuple, Optional

import numpy as np
from diffprivlib.utils import check_random_state
from sklearn.base import BaseEstimator


class Iteration(NamedTuple):
    """One iteration of an iterative selector, as released.

    Attributes
    ----------
    step : int
        The step multiplier proposed in this iteration (the threshold was raised by
        ``step * granularity``).
    passed : int or None
        Index of the candidate that passed the test, or None when none did.
    """

    step: int
    passed: Optional[int]


@dataclass(frozen=True)
class SelectionResult:
    """The differentially private output of one selection, and its guarantee.

    Every field is a DP release (or computed from one); no raw utility is kept.

    Attributes
    ----------
    index : int or None
        Index of the selected candidate, None when the mechanism selected nothing.
    score : float or None
        The mechanism's DP estimate of the selected candidate's utility (in ``[0, 1]`` utility
        units, possibly above 1 after an overshoot), None when the mechanism releases none.
    trace : tuple of Iteration
        Per iteration: the proposed step and the candidate that passed (empty for one-shot
        mechanisms).
    n_iterations : int
        Iterations actually run (information; the guarantee composes ``max_iter``).
    max_iter : int
        Cap on the iterations, fixed before seeing data; the guarantee composes this many.
    epsilon_per_iteration : float
        Pure-DP epsilon of each iteration.
    epsilon, delta : float
        The guarantee of the whole call, for neighbouring datasets whose utilities each move by
        at most ``sensitivity`` (the library's adjacency: replace one record).
    composition : str
        How the iterations were composed: ``"basic"``, ``"optimal"`` (the exact optimal
        composition of Kairouz, Oh & Viswanath) or ``"single"`` (one pure-DP step).
    """

    index: Optional[int]
    score: Optional[float]
    trace: tuple
    n_iterations: int
    max_iter: int
    epsilon_per_iteration: float
    epsilon: float
    delta: float
    composition: str


class BaseSelector(BaseEstimator):
    """Base class of selectors: scikit-learn parameter handling plus input checks.

    Subclasses implement :meth:`select`. Deriving from :class:`~sklearn.base.BaseEstimator`
    gives ``get_params``/``set_params`` (so ``PrivateGridSearchCV(...).set_params(
    selector__granularity=0.05)`` works), ``clone`` and the repr.
    """

    def validate_parameters(self):
        """Check the selector's parameters; called by the search before it touches data.

        Raises
        ------
        ValueError or TypeError
            Naming the parameter, its value and what would be valid.
        """
        self._validate_params()

    def privacy_cost(self, epsilon, delta):
        """The ``(epsilon, delta)`` a call of :meth:`select` with this budget may spend.

        Decided from the parameters alone, before any data: it is what a search reserves on
        the accountant, and the least it charges (a selection that reports less is still
        charged this). The base class returns the whole budget handed; selectors that spend
        less by construction (pure-DP ones: delta 0) override it.

        Parameters
        ----------
        epsilon : float
            Epsilon handed to :meth:`select`.
        delta : float
            Delta handed to :meth:`select`.

        Returns
        -------
        cost : (float, float)
        """
        return float(epsilon), float(delta)

    def select(self, utilities, *, sensitivity, epsilon, delta, random_state=None):
        """Select a candidate differentially privately.

        Parameters
        ----------
        utilities : array-like of shape (n_candidates,)
            Utilities in ``[0, 1]``.
        sensitivity : float
            Largest change of any utility when one record is replaced (the library's
            adjacency). All
            utilities may move at once, in different directions.
        epsilon : float
            Epsilon of the whole call; positive and finite.
        delta : float
            Delta of the whole call, in ``[0, 1)``.
        random_state : None, int or numpy.random.RandomState, default=None
            None draws noise from :mod:`secrets` (private). A seed gives reproducible noise
            and no privacy guarantee: use it for tests and examples only.

        Returns
        -------
        SelectionResult
        """
        raise NotImplementedError


def check_selection_inputs(utilities, sensitivity, epsilon, delta):
    """Validate the arguments shared by every ``select``; return utilities as a float array."""
    utilities = np.asarray(utilities, dtype=float)
    if utilities.ndim != 1 or utilities.size == 0:
        raise ValueError(
            f"utilities must be a non-empty 1-d array, got shape {utilities.shape}."
        )
    if not np.all((utilities >= 0) & (utilities <= 1)):
        raise ValueError(
            "utilities must lie in [0, 1] (and not be NaN); got values in "
            f"[{np.nanmin(utilities)}, {np.nanmax(utilities)}]."
        )
    for name, value in (("sensitivity", sensitivity), ("epsilon", epsilon)):
        if not isinstance(value, Real) or not np.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be a positive finite number, got {value!r}.")
    if not isinstance(delta, Real) or not 0 <= delta < 1:
        raise ValueError(f"delta must be a number in [0, 1), got {delta!r}.")
    return utilities


class OneShotSelector(BaseSelector):
    """Base class of selectors that spend the whole budget in one pure-DP step.

    :meth:`select` validates the inputs, builds the noise generator and wraps the index that
    :meth:`_choose` returns in a :class:`SelectionResult` with ``composition="single"``. The
    step is ``epsilon``-DP whatever ``delta`` is, so the reported delta is ``0.0``.
    """

    # One-shot selectors take no constructor parameters.
    _parameter_constraints = {}

    def privacy_cost(self, epsilon, delta):
        """``(epsilon, 0.0)``: one pure ``epsilon``-DP step, whatever ``delta``."""
        return float(epsilon), 0.0

    def select(self, utilities, *, sensitivity, epsilon, delta, random_state=None,
               offsets=None):
        """Select one candidate in one ``epsilon``-DP step; see :meth:`BaseSelector.select`.

        ``delta`` is validated but not used: the guarantee is pure ``epsilon``-DP and the
        result reports ``delta=0.0``.

        ``offsets`` (array-like of shape ``(n_candidates,)``, default None: zeros) are
        *public* constants added to the utilities before the selection, such as the bonus
        ``default_offsets`` gives an untuned default candidate. Fixed before the data,
        they leave every utility's sensitivity as it was, so the guarantee is unchanged;
        offsets computed from the data would void it.

        Returns
        -------
        SelectionResult
            ``index`` is the selected candidate; ``score`` is None (no utility estimate is
            released), ``trace`` is empty, ``n_iterations == max_iter == 1`` and
            ``epsilon_per_iteration == epsilon``.
        """
        utilities = check_selection_inputs(utilities, sensitivity, epsilon, delta)
        if offsets is not None:
            offsets = np.asarray(offsets, dtype=float)
            if offsets.shape != utilities.shape or not np.all(np.isfinite(offsets)):
                raise ValueError(
                    f"offsets must be finite, one per candidate (shape {utilities.shape}); "
                    f"got {offsets!r}."
                )
            utilities = utilities + offsets
        self.validate_parameters()
        rng = check_random_state(random_state, secure=True)
        index = self._choose(utilities, float(sensitivity), float(epsilon), rng)
        return SelectionResult(
            index=int(index),
            score=None,
            trace=(),
            n_iterations=1,
            max_iter=1,
            epsilon_per_iteration=float(epsilon),
            epsilon=float(epsilon),
            delta=0.0,
            composition="single",
        )

    def _choose(self, utilities, sensitivity, epsilon, rng):
        """Index of the selected candidate; the whole call must be ``epsilon``-DP."""
        raise NotImplementedError

    def tail_lead(self, probability, *, sensitivity, epsilon):
        """The lead that makes a candidate this unlikely to be selected.

        A candidate whose utility trails another candidate's by at least the returned lead
        is selected with probability at most ``probability``, whatever the other utilities
        (each selector derives it in its Notes).

        Parameters
        ----------
        probability : float
            In ``(0, 1]``.
        sensitivity, epsilon : float
            As passed to :meth:`select`.

        Returns
        -------
        lead : float
            In utility units, at least 0.
        """
        raise NotImplementedError


def default_offsets(selector, n_candidates, default_index, margin, *, sensitivity, epsilon):
    """Public offsets that favour an untuned default candidate: ``margin`` on it, 0 elsewhere.

    With ``margin="auto"`` the margin is ``selector.tail_lead(1 / m)``: a candidate that does
    not beat the default's utility is selected with probability at most ``1 / m`` (``m`` the
    number of candidates). For the exponential mechanism this weighs the default as ``m``
    candidates of its utility together; with permute-and-flip it is the default's bonus over
    such a candidate's coin, ``(2 * Delta / epsilon) * ln(m)``. Either way a candidate
    replaces the default only when its lead is of the order of the selection's own error.

    Privacy: the offsets are a function of ``m``, the sensitivity ``Delta = 1 / k``, the
    selector's epsilon and the user's choice of default, all fixed before the data; adding
    them to the utilities leaves each utility's sensitivity ``Delta``, so the selector's
    guarantee holds unchanged (see :meth:`OneShotSelector.select`).

    Parameters
    ----------
    selector : OneShotSelector
    n_candidates : int
    default_index : int
        The default candidate's index.
    margin : float or "auto"
        The bonus in utility units (``[0, 1]``).
    sensitivity, epsilon : float
        As the selector will be called with.

    Returns
    -------
    offsets : ndarray of shape (n_candidates,)
    """
    if margin == "auto":
        margin = selector.tail_lead(1.0 / n_candidates, sensitivity=sensitivity,
                                    epsilon=epsilon)
    offsets = np.zeros(n_candidates)
    offsets[default_index] = margin
    return offsets
