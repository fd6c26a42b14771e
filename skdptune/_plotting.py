"""Plots of what a fitted private search released, in the style of scikit-learn's displays.

Each display is built from released values only: the selection trace of a fitted search
(``selection_.trace``, which candidate passed at which iteration) with the selector's public
parameters, and the privacy report (``privacy_report_``). Neither reads raw utilities, which
a fitted search does not keep. Like scikit-learn's :class:`~sklearn.metrics.RocCurveDisplay`,
a display is created with ``from_estimator`` (which also plots), keeps the plotted values as
attributes, and has ``figure_`` and ``ax_`` after :meth:`plot`.

matplotlib is an optional dependency: ``pip install "skdptune[plot]"``. It is imported when a
display plots, never when :mod:`skdptune` is imported.
"""

import math
import textwrap

from sklearn.utils.validation import check_is_fitted

from ._accounting import ALL_RECORDS
from .selection import ProposeTestDoubling, _as_selector

_INSTALL_HINT = 'pip install "skdptune[plot]"'


def _pyplot():
    """matplotlib's pyplot, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(
            f"Plotting needs matplotlib, which is not installed. Install it with: "
            f"{_INSTALL_HINT}"
        ) from error
    return plt


def _axes(ax):
    """``(figure, axes)``: ``ax`` and its figure, or a new figure with one axes."""
    plt = _pyplot()
    if ax is None:
        figure, ax = plt.subplots(constrained_layout=True)
    else:
        figure = ax.figure
    return figure, ax


def _integer_locator():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _selector_of(search):
    """The selector object a search was configured with (its parameters are public)."""
    return _as_selector(search.selector)


def _candidate_label(params):
    """A short label of one candidate's parameters, e.g. ``C=0.1, fit_intercept=True``."""
    return ", ".join(f"{name}={value!r}" for name, value in sorted(params.items())) or "{}"


class SelectionTraceDisplay:
    """The doubling mechanism's trajectory: threshold and passing candidate per iteration.

    Built from the released trace of a :class:`~skdptune.selection.ProposeTestDoubling`
    selection (each :class:`~skdptune.selection.Iteration` is ``(step, passed)``) and the
    selector's public ``granularity`` and ``floor``. Every value is post-processing of the DP
    output: the proposed threshold of iteration ``t`` is ``floor + (level + step) *
    granularity``, where ``level`` counts the granularity units of the steps that passed
    before ``t``. The noisy thresholds and the noisy utilities the tests compared are not
    released and are not shown.

    Use :meth:`from_estimator` (a fitted :class:`~skdptune.PrivateGridSearchCV`) or
    :meth:`from_selection` (a :class:`~skdptune.selection.SelectionResult`) to create one.

    How to read the plot (the caption of :meth:`plot`): at every iteration the selector
    proposes a threshold ``u + step * granularity`` (grey dotted line; the noise added to it
    is not shown) and walks the candidates, each with fresh noise. A green dot means candidate
    ``#i`` passed that noisy test: ``u`` (blue step line) rises to the threshold and the step
    doubles. A red cross means no candidate passed: ``u`` stays and the step halves. The loop
    stops when the step reaches 0 or ``u`` reaches the utility ceiling 1 (dashed line); a
    doubled step can propose a threshold above 1 by design (shaded band), which no noisy
    utility is likely to pass. Heights are utilities, in ``[0, 1]`` (the scorer's values
    rescaled by ``utility_range``), and the thresholds proposed to them, which can exceed 1;
    the axis label says both. With a declared range other than ``(0, 1)``, a second axis on
    the right reads them in the scorer's units. The last value of ``u`` is the selector's DP
    estimate of the selected candidate's utility.

    Parameters
    ----------
    steps : list of int
        Step multiplier proposed at each iteration.
    passed : list of int or None
        Index of the candidate that passed at each iteration, None when none passed.
    granularity : float
        The selector's ``granularity`` (utility units).
    floor : float
        The selector's ``floor``, the starting threshold (utility units).
    selected_index : int or None, default=None
        Index of the selected candidate (the last that passed).
    candidate_labels : list of str or None, default=None
        Label of every candidate, by index; None labels them by index.
    utility_range : (float, float) or None, default=None
        The search's declared ``(low, high)`` of the scorer (public): utility ``v`` is score
        ``low + v * (high - low)``. None means the scorer's values are already in ``[0, 1]``.
    score_name : str or None, default=None
        Name of the scorer, for the axis labels (e.g. ``"accuracy"``).

    Attributes
    ----------
    iterations : list of int
        ``1, 2, ..., n_iterations``.
    thresholds : list of float
        The proposed (noise-free) threshold of each iteration, in utility units.
    levels : list of float
        The running estimate ``u`` after each iteration (it rises by ``step * granularity``
        when a candidate passes); the last one is the selector's DP score.
    ax_ : matplotlib Axes
        Axes with the plot (after :meth:`plot`).
    figure_ : matplotlib Figure
        Figure containing the plot (after :meth:`plot`).
    threshold_line_ : matplotlib Line2D
        The proposed thresholds (after :meth:`plot`).
    level_line_ : matplotlib Line2D
        The running estimate ``u`` (after :meth:`plot`).
    ceiling_line_ : matplotlib Line2D
        The dashed utility ceiling at 1 (after :meth:`plot`).
    overshoot_ : matplotlib Polygon or None
        The band above the ceiling, drawn when a proposal exceeds 1 (after :meth:`plot`).
    score_axis_ : matplotlib SecondaryAxis or None
        The right-hand axis in the scorer's units, when ``utility_range`` is given and is not
        ``(0, 1)`` (after :meth:`plot`).

    Examples
    --------
    >>> from skdptune.plotting import SelectionTraceDisplay
    >>> from skdptune.selection import ProposeTestDoubling
    >>> selection = ProposeTestDoubling(granularity=0.1).select(
    ...     [0.2, 0.9, 0.5], sensitivity=0.001, epsilon=10.0, delta=0.0, random_state=0)
    >>> display = SelectionTraceDisplay.from_selection(selection, granularity=0.1, plot=False)
    >>> display.selected_index
    1
    """

    def __init__(self, *, steps, passed, granularity, floor, selected_index=None,
                 candidate_labels=None, utility_range=None, score_name=None):
        self.steps = [int(step) for step in steps]
        self.passed = [None if index is None else int(index) for index in passed]
        if len(self.steps) != len(self.passed):
            raise ValueError(
                f"steps and passed must have the same length, got {len(self.steps)} and "
                f"{len(self.passed)}."
            )
        self.granularity = float(granularity)
        self.floor = float(floor)
        self.selected_index = None if selected_index is None else int(selected_index)
        self.candidate_labels = None if candidate_labels is None else list(candidate_labels)
        self.utility_range = (None if utility_range is None
                              else (float(utility_range[0]), float(utility_range[1])))
        self.score_name = score_name
        self.iterations = list(range(1, len(self.steps) + 1))
        self.thresholds, self.levels = [], []
        level = 0
        for step, index in zip(self.steps, self.passed):
            # Post-processing of the released (step, passed): the proposal before its noise.
            self.thresholds.append(self.floor + (level + step) * self.granularity)
            if index is not None:
                level += step
            self.levels.append(self.floor + level * self.granularity)

    @classmethod
    def from_selection(cls, selection, *, granularity=None, floor=None,
                       candidate_labels=None, utility_range=None, score_name=None, ax=None,
                       plot=True):
        """Create (and by default plot) the display of a selection's trace.

        Parameters
        ----------
        selection : skdptune.selection.SelectionResult
            The output of :meth:`ProposeTestDoubling.select
            <skdptune.selection.ProposeTestDoubling.select>`.
        granularity, floor : float or None, default=None
            The selector's parameters; None takes
            :class:`~skdptune.selection.ProposeTestDoubling`'s defaults.
        candidate_labels : list of str or None, default=None
            Label of every candidate, by index.
        utility_range : (float, float) or None, default=None
            The scorer's declared ``(low, high)``, for a second axis in its units.
        score_name : str or None, default=None
            Name of the scorer, for the axis labels.
        ax : matplotlib Axes, default=None
            Axes to plot on; None creates a figure.
        plot : bool, default=True
            Whether to plot now (False only computes the values).

        Returns
        -------
        display : SelectionTraceDisplay
        """
        defaults = ProposeTestDoubling()
        if not selection.trace:
            raise ValueError(
                "This selection has no trace: it was made by a one-shot selector "
                f"(composition={selection.composition!r}), which releases only the selected "
                "index. Only the doubling selector (selector='doubling') releases a trace."
            )
        display = cls(
            steps=[iteration.step for iteration in selection.trace],
            passed=[iteration.passed for iteration in selection.trace],
            granularity=defaults.granularity if granularity is None else granularity,
            floor=defaults.floor if floor is None else floor,
            selected_index=selection.index,
            candidate_labels=candidate_labels,
            utility_range=utility_range,
            score_name=score_name,
        )
        return display.plot(ax=ax) if plot else display

    @classmethod
    def from_estimator(cls, search, *, ax=None, plot=True):
        """Create (and by default plot) the trace display of a fitted search.

        Parameters
        ----------
        search : PrivateGridSearchCV
            A fitted search whose selector is the doubling selector (``selector="doubling"``
            or a :class:`~skdptune.selection.ProposeTestDoubling` instance).
        ax : matplotlib Axes, default=None
            Axes to plot on; None creates a figure.
        plot : bool, default=True
            Whether to plot now (False only computes the values).

        Returns
        -------
        display : SelectionTraceDisplay
        """
        if hasattr(search, "privacy_spent_") and not hasattr(search, "selection_"):
            raise ValueError(
                f"{type(search).__name__} releases no selection trace (only the best trial); "
                "a trace comes from PrivateGridSearchCV with selector='doubling'."
            )
        check_is_fitted(search, "selection_")
        selector = _selector_of(search)
        if not isinstance(selector, ProposeTestDoubling):
            raise ValueError(
                f"The search's selector {type(selector).__name__} is one-shot: it releases "
                "only the selected index, so there is no trace to plot. Fit with "
                "selector='doubling' to see one, or plot the privacy budget with "
                "PrivacyBudgetDisplay."
            )
        labels = [_candidate_label(params) for params in search.cv_results_["params"]]
        return cls.from_selection(
            search.selection_, granularity=selector.granularity, floor=selector.floor,
            candidate_labels=labels, utility_range=search.utility_range,
            score_name=_score_name(search), ax=ax, plot=plot,
        )

    def _label(self, index):
        if self.candidate_labels is None:
            return f"#{index}"
        return f"#{index}: {self.candidate_labels[index]}"

    def plot(self, ax=None, *, annotate=True):
        """Plot the proposed threshold and the passing candidate of every iteration.

        Green dots: candidate ``#i`` (annotated) passed the noisy test, so ``u`` rose and the
        step doubled; red crosses: none passed, so the step halved. The blue step line is the
        running estimate ``u``, the dashed line the utility ceiling 1 (``u >= 1`` stops the
        loop), and a shaded band above it marks proposals that overshot it, which the doubling
        allows by design. See the class docstring for the whole caption.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to plot on; None creates a figure.
        annotate : bool, default=True
            Write the index of the passing candidate next to each filled marker.

        Returns
        -------
        display : SelectionTraceDisplay
            ``self``, with ``figure_``, ``ax_``, ``threshold_line_``, ``level_line_``,
            ``ceiling_line_``, ``overshoot_`` and ``score_axis_``.
        """
        figure, ax = _axes(ax)
        (self.level_line_,) = ax.step([0] + self.iterations, [self.floor] + self.levels,
                                      where="post", color="tab:blue",
                                      label="running estimate u (last value: the DP score)")
        (self.threshold_line_,) = ax.plot(
            self.iterations, self.thresholds, linestyle=":", color="grey",
            label="proposed threshold u + step × granularity (before its noise)")
        hits = [(t, y) for t, y, p in zip(self.iterations, self.thresholds, self.passed)
                if p is not None]
        misses = [(t, y) for t, y, p in zip(self.iterations, self.thresholds, self.passed)
                  if p is None]
        if hits:
            ax.plot(*zip(*hits), "o", color="tab:green",
                    label="candidate #i passed the noisy test: u rises, the step doubles")
        if misses:
            ax.plot(*zip(*misses), "x", color="tab:red",
                    label="none passed: the step halves")
        if annotate:
            for t, y, p in zip(self.iterations, self.thresholds, self.passed):
                if p is not None:
                    ax.annotate(f"#{p}", (t, y), textcoords="offset points", xytext=(4, 4),
                                fontsize="small")
        # The loop stops once u reaches 1; a doubled step may still propose more (by design).
        self.ceiling_line_ = ax.axhline(1.0, linestyle="--", color="black", linewidth=0.8,
                                        label="utility ceiling 1: u >= 1 stops the loop")
        self.overshoot_ = None
        top = max(self.thresholds, default=1.0)
        if top > 1.0:
            self.overshoot_ = ax.axhspan(
                1.0, top + 0.05 * (top - self.floor), color="grey", alpha=0.12, linewidth=0,
                label="above the ceiling: a doubled step overshoots, by design")
        ax.set_xlabel("iteration")
        ax.set_ylabel(self._utility_label())
        self.score_axis_ = None
        if self.utility_range is not None and self.utility_range != (0.0, 1.0):
            low, high = self.utility_range
            self.score_axis_ = ax.secondary_yaxis(
                "right", functions=(lambda v: low + v * (high - low),
                                    lambda s: (s - low) / (high - low)))
            self.score_axis_.set_ylabel(self.score_name or "score (scorer's units)")
        ax.xaxis.set_major_locator(_integer_locator())
        title = "Doubling selection"
        if self.selected_index is not None:
            title += f": selected {self._label(self.selected_index)}"
        else:
            title += ": no candidate passed"
        ax.set_title(title, fontsize="medium")
        ax.legend(loc="best", fontsize="x-small")
        self.ax_, self.figure_ = ax, figure
        return self

    def _utility_label(self):
        # The heights are utilities, in [0, 1], and the thresholds proposed to them, which a
        # doubled step can push above 1 (issue 33: the axis said "[0, 1] utility" while the
        # curve reached 1.35).
        proposals = "; proposed thresholds can exceed 1"
        if self.utility_range is None or self.utility_range == (0.0, 1.0):
            return ("utility in [0, 1]" + (f" ({self.score_name})" if self.score_name else "")
                    + proposals)
        low, high = (f"({value:g})" if value < 0 else f"{value:g}"
                     for value in self.utility_range)
        name = self.score_name or "score"
        return f"utility = ({name} - {low}) / ({high} - {low}), in [0, 1]{proposals}"


def _score_name(search):
    """A public name of the search's scorer, for axis labels."""
    if isinstance(search.scoring, str):
        return search.scoring
    if isinstance(search.refit, str):
        return search.refit  # the metric the selection used (multi-metric scoring)
    if search.scoring is None:
        return "estimator.score"
    return None


#: The budget breakdown's row for each released thing of a privacy report's ``charges``.
_ROW_LABELS = {
    "selection": "selector",
    "best_score_ estimate": "partition score estimate",
    "best of K trials": "tuning (best of the trials)",
}


def _entry_label(entry):
    """The row of an accountant entry that adds up several charges: named apart from every
    charge's row (the grid search's "refit" entry holds the "refit" charge and the
    ``trivial_lead_`` estimate)."""
    return f"{entry} entry"


class PrivacyBudgetDisplay:
    """Where a fitted search's privacy budget went, from its ``privacy_report_``.

    One row per charge record of the report, each read once: for
    :class:`~skdptune.PrivateGridSearchCV`, the selector, the Laplace estimate of the selected
    candidate's partition score (``best_score_``), the refit and the estimate of
    ``trivial_lead_``; a row per accountant entry that adds up several of them (``"selection
    entry"``, ``"refit entry"``), and the total, whose bar stacks every charge. For
    :class:`~skdptune.PrivateRandomizedSearchCV`: the tuning (best of a random number of
    trials), the final fit (with ``subsample``) and the total. Every value is a
    privacy parameter fixed by the search's configuration; nothing here depends on the data.

    Parameters
    ----------
    labels : list of str
        Name of each row but the total, each once (``"total"`` is the total's row).
    epsilons : list of float
        Epsilon of each row.
    deltas : list of float
        Delta of each row.
    total_epsilon, total_delta : float
        The whole fit's ``privacy_spent_``.
    stacked : dict of str to list of str or None, default=None
        Rows that add up other rows (basic composition), drawn stacked from them:
        ``{row: [rows it adds up]}``; the key ``"total"`` is the total's row. A row not in it
        is drawn as one bar (the total in grey).
    unit, adjacency : str or None, default=None
        The privacy unit and the adjacency the guarantee assumes, shown under the axis.

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the plot (after :meth:`plot`).
    figure_ : matplotlib Figure
        Figure containing the plot (after :meth:`plot`).
    bars_ : dict of str to list of matplotlib BarContainer
        The bars of each row, ``"total"`` included (after :meth:`plot`).

    Examples
    --------
    >>> from skdptune.plotting import PrivacyBudgetDisplay
    >>> display = PrivacyBudgetDisplay(labels=["selection", "refit"], epsilons=[0.5, 1.0],
    ...                                deltas=[1e-6, 0.0], total_epsilon=1.5,
    ...                                total_delta=1e-6,
    ...                                stacked={"total": ["selection", "refit"]})
    >>> display.total_epsilon
    1.5
    """

    def __init__(self, *, labels, epsilons, deltas, total_epsilon, total_delta, stacked=None,
                 unit=None, adjacency=None):
        self.labels = list(labels)
        repeated = sorted({label for label in self.labels if self.labels.count(label) > 1})
        if repeated or "total" in self.labels:
            raise ValueError(
                f"labels must name each row once, and not 'total' (the total's row): got "
                f"{self.labels}; rename {repeated or ['total']}."
            )
        self.epsilons = [float(value) for value in epsilons]
        self.deltas = [float(value) for value in deltas]
        if not len(self.labels) == len(self.epsilons) == len(self.deltas):
            raise ValueError("labels, epsilons and deltas must have the same length.")
        self.total_epsilon = float(total_epsilon)
        self.total_delta = float(total_delta)
        self.stacked = {row: list(parts) for row, parts in (stacked or {}).items()}
        for row, parts in self.stacked.items():
            unknown = [part for part in [row] + parts
                       if part not in self.labels and part != "total"]
            if unknown:
                raise ValueError(f"stacked names rows {unknown} that are not in labels.")
        self.unit = unit
        self.adjacency = adjacency

    @classmethod
    def from_estimator(cls, search, *, ax=None, plot=True):
        """Create (and by default plot) the budget breakdown of a fitted search.

        Parameters
        ----------
        search : PrivateGridSearchCV or PrivateRandomizedSearchCV
            A fitted search.
        ax : matplotlib Axes, default=None
            Axes to plot on; None creates a figure.
        plot : bool, default=True
            Whether to plot now (False only reads the values).

        Returns
        -------
        display : PrivacyBudgetDisplay
        """
        check_is_fitted(search, "privacy_report_")
        report = search.privacy_report_
        labels, epsilons, deltas, stacked = [], [], [], {}
        # One row per charge record, each read once, in the order charged; an accountant
        # entry of several records on the same data (basic composition: they add up) gets a
        # stacked row too. The total's bar stacks the charge rows only, never an entry's
        # row, which adds up some of them again.
        entries = {}
        for charge in report["charges"]:
            entries.setdefault(charge["entry"], []).append(charge)
        sequential, charge_rows = True, []
        for entry, charges in entries.items():
            rows = [_ROW_LABELS.get(charge["release"], charge["release"]) for charge in charges]
            labels += rows
            charge_rows += rows
            epsilons += [charge["epsilon"] for charge in charges]
            deltas += [charge["delta"] for charge in charges]
            if any(charge["records"] != ALL_RECORDS for charge in charges):
                sequential = False  # a subsample's mixture bound is not a sum: no stack
            elif len(charges) > 1:
                labels.append(_entry_label(entry))
                epsilons.append(report["entries"][entry][0])
                deltas.append(report["entries"][entry][1])
                stacked[labels[-1]] = rows
        if sequential:  # the total adds up every charge (basic composition)
            stacked["total"] = charge_rows
        display = cls(labels=labels, epsilons=epsilons, deltas=deltas, stacked=stacked or None,
                      total_epsilon=report["total_epsilon"], total_delta=report["total_delta"],
                      unit=report.get("unit"), adjacency=report.get("adjacency"))
        return display.plot(ax=ax) if plot else display

    def plot(self, ax=None):
        """Plot one horizontal bar per row and the total.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to plot on; None creates a figure.

        Returns
        -------
        display : PrivacyBudgetDisplay
            ``self``, with ``figure_``, ``ax_`` and ``bars_``.
        """
        figure, ax = _axes(ax)
        rows = self.labels + ["total"]
        values = self.epsilons + [self.total_epsilon]
        deltas = self.deltas + [self.total_delta]
        epsilon_of = dict(zip(rows, values))
        parts_of = {label: [label] for label in self.labels if label not in self.stacked}
        parts_of.update(self.stacked)
        colors = {label: f"C{i}" for i, label in enumerate(
            label for label in self.labels if label not in self.stacked)}
        positions = dict(zip(rows, range(len(rows))[::-1]))  # first row on top
        self.bars_ = {}
        for row in rows:
            parts = parts_of.get(row)
            if parts is None:  # the total, not stacked
                self.bars_[row] = [ax.barh(positions[row], epsilon_of[row], color="grey")]
                continue
            left, self.bars_[row] = 0.0, []
            for part in parts:
                self.bars_[row].append(ax.barh(positions[row], epsilon_of[part], left=left,
                                               color=colors.get(part, "grey")))
                left += epsilon_of[part]
        for row, epsilon, delta in zip(rows, values, deltas):
            text = f"ε={epsilon:.3g}" + (f", δ={delta:.2g}" if delta > 0 else "")
            ax.annotate(text, (epsilon, positions[row]), textcoords="offset points",
                        xytext=(4, 0), va="center", fontsize="small")
        ax.set_yticks([positions[row] for row in rows], rows)
        ax.set_xlim(0, 1.35 * max(values + [1e-12]))
        title = f"Privacy spent: ε={self.total_epsilon:.3g}"
        if self.total_delta > 0 or not math.isfinite(self.total_delta):
            title += f", δ={self.total_delta:.2g}"
        ax.set_title(title, fontsize="medium")
        xlabel = "epsilon"
        if self.unit is not None:
            guarantee = f"unit: {self.unit}" + (f"; {self.adjacency}" if self.adjacency else "")
            xlabel += "\n" + textwrap.fill(guarantee, 60, break_on_hyphens=False)
        ax.set_xlabel(xlabel, fontsize="small")
        self.ax_, self.figure_ = ax, figure
        return self
