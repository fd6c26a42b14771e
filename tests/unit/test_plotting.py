"""The displays of skdptune.plotting: values, artists, the missing-matplotlib error, and that no
raw utility of a fit can reach them (DESIGN.md, "The privacy model": what is released)."""

import math
import re
import subprocess
import sys

import numpy as np
import pytest
from diffprivlib.accountant import BudgetAccountant
from skdptune.naive_bayes import GaussianNB
from skdptune.linear_model import LogisticRegression
from sklearn.exceptions import NotFittedError

from skdptune import (
    PrivacyBudgetDisplay,
    PrivateGridSearchCV,
    PrivateRandomizedSearchCV,
    SelectionTraceDisplay,
)
from skdptune._models.naive_bayes import gaussian_nb_charge
from skdptune.selection import Iteration, ProposeTestDoubling, SelectionResult

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

CLASSES = [0, 1]  # binary_data's labels, declared


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


# A fit of GaussianNB(bounds=(0, 1)) is charged this many times the epsilon it records (2).
GNB_CHARGE = gaussian_nb_charge(GaussianNB(classes=CLASSES, bounds=(0, 1)))


def doubling_result(trace, index, score):
    return SelectionResult(index=index, score=score, trace=tuple(trace),
                           n_iterations=len(trace), max_iter=10, epsilon_per_iteration=0.1,
                           epsilon=1.0, delta=0.0, composition="basic")


def test_trace_values_follow_the_released_steps():
    trace = [Iteration(1, 2), Iteration(2, 0), Iteration(4, None), Iteration(2, 1)]
    display = SelectionTraceDisplay.from_selection(
        doubling_result(trace, 1, 0.7), granularity=0.1, floor=0.2, plot=False)
    assert display.iterations == [1, 2, 3, 4]
    # Proposed: floor + (level + step) * g; the level rises only when a candidate passed.
    np.testing.assert_allclose(display.thresholds, [0.3, 0.5, 0.9, 0.7])
    np.testing.assert_allclose(display.levels, [0.3, 0.5, 0.5, 0.7])
    assert display.passed == [2, 0, None, 1]
    assert display.selected_index == 1
    assert not hasattr(display, "ax_")


def test_trace_plot_sets_artists():
    trace = [Iteration(1, 0), Iteration(2, None), Iteration(1, 1)]
    _, ax = plt.subplots()
    display = SelectionTraceDisplay.from_selection(doubling_result(trace, 1, 0.3),
                                                   granularity=0.1, ax=ax)
    assert display.ax_ is ax and display.figure_ is ax.figure
    np.testing.assert_allclose(display.threshold_line_.get_ydata(), display.thresholds)
    np.testing.assert_allclose(display.level_line_.get_ydata(), [0.0] + display.levels)
    assert "selected #1" in ax.get_title()
    assert {text.get_text() for text in ax.texts} == {"#0", "#1"}


def _legend_texts(ax):
    return [text.get_text() for text in ax.get_legend().get_texts()]


def test_trace_plot_explains_its_markers_and_the_ceiling():
    # Issue 19, item 8. Before: "a candidate passed" / "none passed", no ceiling, and a y axis
    # "utility (scaled to [0, 1])" that the thresholds (here up to 1.3) climb past.
    trace = [Iteration(1, 0), Iteration(2, 1), Iteration(4, 1), Iteration(8, None),
             Iteration(4, None)]
    display = SelectionTraceDisplay.from_selection(doubling_result(trace, 1, 0.7),
                                                   granularity=0.1, floor=0.0)
    assert max(display.thresholds) == pytest.approx(1.5)
    legend = _legend_texts(display.ax_)
    assert any("passed the noisy test" in text and "u rises" in text for text in legend)
    assert any(text.startswith("none passed") and "step halves" in text for text in legend)
    # The ceiling: a dashed line at 1, labelled, and the overshoot said to be by design.
    assert display.ceiling_line_.get_linestyle() == "--"
    np.testing.assert_allclose(display.ceiling_line_.get_ydata(), [1.0, 1.0])
    assert any(text.startswith("utility ceiling") for text in legend)
    assert display.overshoot_ is not None
    assert any("above the ceiling" in text and "by design" in text for text in legend)
    # Issue 33: the axis said "[0, 1] utility" while the proposals reached 1.5.
    assert display.ax_.get_ylabel() == ("utility in [0, 1]; proposed thresholds can exceed 1")
    # The title says how to read a marker without the paper.
    assert "selected #1" in display.ax_.get_title()


def test_trace_plot_marks_no_overshoot_when_none_happened():
    trace = [Iteration(1, 0), Iteration(2, None), Iteration(1, 1)]
    display = SelectionTraceDisplay.from_selection(doubling_result(trace, 1, 0.3),
                                                   granularity=0.1)
    assert display.overshoot_ is None
    assert not any("above the ceiling" in text for text in _legend_texts(display.ax_))
    assert any(text.startswith("utility ceiling") for text in _legend_texts(display.ax_))


def test_trace_from_estimator_labels_the_axes_in_the_scorers_units(binary_data):
    X, y = binary_data
    search = PrivateGridSearchCV(
        GaussianNB(classes=CLASSES, bounds=(0, 1), epsilon=1.0), {"var_smoothing": [1e-9, 1e-3]},
        epsilon=5.0, delta=0.0, n_partitions=5, selector="doubling", scoring="accuracy",
        utility_range=(-1.0, 3.0), accountant=BudgetAccountant(), random_state=0, default=None,
    ).fit(X, y)
    display = SelectionTraceDisplay.from_estimator(search)
    assert display.utility_range == (-1.0, 3.0) and display.score_name == "accuracy"
    assert display.ax_.get_ylabel() == ("utility = (accuracy - (-1)) / (3 - (-1)), in [0, 1]; "
                                        "proposed thresholds can exceed 1")
    # A second axis reads the same heights in the scorer's units: utility 0.5 is score 1.
    assert display.score_axis_.get_ylabel() == "accuracy"
    display.ax_.set_ylim(0.0, 0.5)
    display.figure_.canvas.draw()
    np.testing.assert_allclose(display.score_axis_.get_ylim(), (-1.0, 1.0))
    plain = PrivateGridSearchCV(
        GaussianNB(classes=CLASSES, bounds=(0, 1), epsilon=1.0), {"var_smoothing": [1e-9, 1e-3]},
        epsilon=5.0, delta=0.0, n_partitions=5, selector="doubling",
        accountant=BudgetAccountant(), random_state=0, default=None,
    ).fit(X, y)
    display = SelectionTraceDisplay.from_estimator(plain)
    assert display.score_axis_ is None  # accuracy is already in [0, 1]
    assert display.ax_.get_ylabel() == ("utility in [0, 1] (estimator.score); proposed "
                                        "thresholds can exceed 1")


def test_trace_from_estimator_labels_candidates(binary_data):
    X, y = binary_data
    search = PrivateGridSearchCV(
        GaussianNB(classes=CLASSES, bounds=(0, 1), epsilon=1.0), {"var_smoothing": [1e-9, 1e-3]},
        selection_epsilon=5.0, delta=0.0, n_partitions=5,
        selector=ProposeTestDoubling(granularity=0.05),
        accountant=BudgetAccountant(), random_state=0, default=None,
    ).fit(X, y)
    display = SelectionTraceDisplay.from_estimator(search)
    assert display.granularity == 0.05
    assert display.candidate_labels == ["var_smoothing=1e-09", "var_smoothing=0.001"]
    assert display.selected_index == search.best_index_
    assert display.levels[-1] == pytest.approx(search.selection_.score)


def test_trace_refuses_one_shot_selectors_and_unfitted_searches(binary_data):
    X, y = binary_data
    search = PrivateGridSearchCV(
        GaussianNB(classes=CLASSES, bounds=(0, 1), epsilon=1.0), {"var_smoothing": [1e-9, 1e-3]},
        selection_epsilon=1.0, n_partitions=5, selector="exponential",
        accountant=BudgetAccountant(),
        random_state=0, default=None,
    )
    with pytest.raises(NotFittedError):
        SelectionTraceDisplay.from_estimator(search)
    search.fit(X, y)
    with pytest.raises(ValueError, match="one-shot"):
        SelectionTraceDisplay.from_estimator(search)
    with pytest.raises(ValueError, match="no trace"):
        SelectionTraceDisplay.from_selection(search.selection_)


def test_budget_display_of_a_grid_search(binary_data):
    X, y = binary_data
    search = PrivateGridSearchCV(
        GaussianNB(classes=CLASSES, bounds=(0, 1), epsilon=0.75), {"var_smoothing": [1e-9, 1e-3]},
        selection_epsilon=0.5, delta=1e-6, score_share=0.2, n_partitions=5,
        accountant=BudgetAccountant(), random_state=0, default=None,
    ).fit(X, y)
    display = PrivacyBudgetDisplay.from_estimator(search)
    report = search.privacy_report_
    assert display.labels == ["selector", "partition score estimate", "selection entry",
                              "refit", "trivial_lead_ estimate", "refit entry"]
    # The refit is charged GaussianNB's epsilon=0.75 times its charge factor; check_share
    # (0.05) of the selection's 0.5 buys trivial_lead_, in the refit's entry (issue 40).
    refit = GNB_CHARGE * 0.75
    np.testing.assert_allclose(display.epsilons,
                               [0.38, 0.095, 0.475, refit, 0.025, refit + 0.025])
    assert (display.total_epsilon, display.total_delta) == tuple(search.privacy_spent_)
    assert display.total_epsilon == pytest.approx(
        report["selector_epsilon"] + report["score_epsilon"] + report["refit_epsilon"]
        + report["check_epsilon"])
    # The total's bar is stacked from the selector, the score estimate, the refit and the
    # check; the selection's from the first two, the refit entry's from the last two.
    for row, total in (("total", display.total_epsilon), ("selection entry", 0.475),
                       ("refit entry", refit + 0.025)):
        widths = [bar.patches[0].get_width() for bar in display.bars_[row]]
        assert sum(widths) == pytest.approx(total)
    assert len(display.bars_["total"]) == 4
    assert f"ε={0.5 + refit:.3g}" in display.ax_.get_title()  # 0.5 + 2 * 0.75: ε=2
    assert "replace one record" in display.ax_.get_xlabel()


def test_budget_display_of_a_randomized_search(binary_data):
    X, y = binary_data
    search = PrivateRandomizedSearchCV(
        LogisticRegression(classes=CLASSES, data_norm=2.0, epsilon=0.5), {"C": [0.1, 1.0]},
        trial_epsilon=0.5, n_iter=3, accountant=BudgetAccountant(), random_state=1,
    ).fit(X, y)
    display = PrivacyBudgetDisplay.from_estimator(search)
    assert display.labels == ["tuning (best of the trials)"]
    with pytest.raises(ValueError, match="releases no selection trace"):
        SelectionTraceDisplay.from_estimator(search)
    assert display.total_epsilon == pytest.approx(search.privacy_spent_[0])


def test_budget_display_reads_the_charge_records_of_either_search(binary_data):
    # The display is drawn from the common schema (charges, entries, totals) alone: a report
    # stripped of each search's own keys gives the same rows (before, it told the searches
    # apart by which keys were present, and drew a grid search as a randomized one).
    X, y = binary_data
    # Charged GNB_CHARGE * epsilon = 0.75 per fit: within trial_epsilon=0.75 below.
    nb = GaussianNB(classes=CLASSES, bounds=(0, 1), epsilon=0.75 / GNB_CHARGE)
    searches = {
        ("selector", "partition score estimate", "selection entry", "refit",
         "trivial_lead_ estimate", "refit entry"): PrivateGridSearchCV(
            nb, {"var_smoothing": [1e-9, 1e-3]}, selection_epsilon=0.5, delta=1e-6,
            score_share=0.2, n_partitions=5, accountant=BudgetAccountant(), random_state=0),
        ("tuning (best of the trials)", "final fit"): PrivateRandomizedSearchCV(
            nb, {"var_smoothing": [1e-9, 1e-3]}, trial_epsilon=0.75, n_iter=3.0,
            subsample=0.5, accountant=BudgetAccountant(), random_state=0),
    }
    common = {"unit", "adjacency", "guarantee", "charges", "entries", "total_epsilon",
              "total_delta", "total_composition"}
    for labels, search in searches.items():
        search.fit(X, y)
        full = PrivacyBudgetDisplay.from_estimator(search, plot=False)
        search.privacy_report_ = {key: value for key, value in search.privacy_report_.items()
                                  if key in common}
        display = PrivacyBudgetDisplay.from_estimator(search, plot=False)
        assert tuple(display.labels) == labels
        assert vars(display) == vars(full)
    # The grid's entries are stacked from their two records each (the trivial_lead_ check,
    # bought with check_share of selection_epsilon, is charged with the refit: issue 40);
    # the subsample's mixture bound is not a sum, so nothing is stacked there.
    grid, subsampled = searches.values()
    assert PrivacyBudgetDisplay.from_estimator(grid, plot=False).stacked == {
        "selection entry": ["selector", "partition score estimate"],
        "refit entry": ["refit", "trivial_lead_ estimate"],
        "total": ["selector", "partition score estimate", "refit", "trivial_lead_ estimate"]}
    assert PrivacyBudgetDisplay.from_estimator(subsampled, plot=False).stacked == {}
    plt.close("all")


def _overlapping_texts(ax):
    """Pairs of the axes' texts (annotations and tick labels) whose drawn boxes intersect."""
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    texts = [text for text in ax.texts + ax.get_yticklabels() if text.get_text()]
    boxes = [text.get_window_extent(renderer) for text in texts]
    return [(texts[i].get_text(), texts[j].get_text())
            for i in range(len(texts)) for j in range(i + 1, len(texts))
            if boxes[i].overlaps(boxes[j])]


def test_budget_display_of_a_selecting_search_reads_each_charge_once(binary_data):
    # Issue 40, item 1. Before: with a selection and the trivial_lead_ check, the refit entry's
    # row was labelled "refit" like the refit charge's, so "refit" was drawn twice, the two
    # rows' labels were written at one height ("ε=3.23.4"), and the total's bar stacked only
    # the charges outside that row: about 0.8 of a total of 4.
    X, y = binary_data
    search = PrivateGridSearchCV(
        LogisticRegression(classes=CLASSES, data_norm=2.0), {"C": [0.1, 1.0]}, epsilon=4.0,
        default=None, n_partitions=5, accountant=BudgetAccountant(), random_state=0,
    ).fit(X, y)
    in_refit = [c["release"] for c in search.privacy_report_["charges"] if c["entry"] == "refit"]
    assert in_refit == ["refit", "trivial_lead_ estimate"]
    display = PrivacyBudgetDisplay.from_estimator(search)
    ax = display.ax_
    ticks = [text.get_text() for text in ax.get_yticklabels()]
    assert len(ticks) == len(set(ticks)), ticks
    assert ticks[-1] == "total"
    # The total's bar, read from the figure: its segments add up to what was charged.
    widths = [patch.get_width() for bar in display.bars_["total"] for patch in bar.patches]
    assert math.fsum(widths) == pytest.approx(search.privacy_spent_.epsilon, rel=1e-9)
    assert len(widths) == len(search.privacy_report_["charges"])
    # Every entry's bar adds up to what that entry was charged.
    for entry, (epsilon, _) in search.privacy_report_["entries"].items():
        bar = display.bars_[f"{entry} entry"]
        assert sum(p.get_width() for b in bar for p in b.patches) == pytest.approx(epsilon)
    # One label per row, at its bar's end, and no two texts drawn over each other.
    labels = [text.get_text() for text in ax.texts]
    assert len(labels) == len(ticks)
    assert labels[-1] == f"ε={search.privacy_spent_.epsilon:.3g}"
    assert _overlapping_texts(ax) == []


def test_budget_display_refuses_a_label_twice():
    with pytest.raises(ValueError, match=r"each row once.*\['refit'\]"):
        PrivacyBudgetDisplay(labels=["refit", "refit"], epsilons=[1.0, 2.0], deltas=[0, 0],
                             total_epsilon=3.0, total_delta=0.0)


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    display = PrivacyBudgetDisplay(labels=["selection"], epsilons=[1.0], deltas=[0.0],
                                   total_epsilon=1.0, total_delta=0.0)
    with pytest.raises(ValueError, match="not in labels"):
        PrivacyBudgetDisplay(labels=["selection"], epsilons=[1.0], deltas=[0.0],
                             total_epsilon=1.0, total_delta=0.0, stacked={"total": ["refit"]})
    with pytest.raises(ImportError, match=re.escape('pip install "skdptune[plot]"')):
        display.plot()


def test_importing_skdptune_does_not_import_matplotlib():
    code = "import sys, skdptune; assert 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# --- No raw utility reaches a display ---------------------------------------------------


class RecordingDoubling(ProposeTestDoubling):
    """The doubling selector, recording the raw utilities the search hands it (test only)."""

    recorded = []

    def select(self, utilities, **kwargs):
        type(self).recorded.extend(float(u) for u in utilities)
        return super().select(utilities, **kwargs)


def _numbers(value, seen=None):
    """Every number reachable from ``value`` (attributes, containers, arrays)."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return []
    seen.add(id(value))
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float, np.number)):
        return [float(value)]
    if isinstance(value, np.ndarray):
        return [float(v) for v in value.ravel() if np.issubdtype(type(v), np.number)]
    if isinstance(value, dict):
        return [n for item in value.values() for n in _numbers(item, seen)]
    if isinstance(value, (list, tuple, set)):
        return [n for item in value for n in _numbers(item, seen)]
    return []


def _plotted_numbers(ax):
    numbers = []
    for line in ax.get_lines():
        numbers.extend(np.asarray(line.get_xydata(), dtype=float).ravel())
    for patch in ax.patches:
        numbers.extend([patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height()])
    for text in ax.texts:
        numbers.extend(np.asarray(text.xy, dtype=float).ravel())
    return numbers


def _texts(ax):
    """The texts a display writes (annotations, title, axis labels). Tick labels are left out:
    they are the axis' round numbers, which a utility can match to three digits by chance."""
    return [text.get_text() for text in ax.texts] + [ax.get_title(), ax.get_xlabel(),
                                                    ax.get_ylabel()]


def test_no_raw_utility_reaches_the_displays(binary_data, monkeypatch):
    X, y = binary_data
    RecordingDoubling.recorded = []
    granularity = 0.013
    search = PrivateGridSearchCV(
        LogisticRegression(classes=CLASSES, data_norm=2.0, epsilon=1.0),
        {"C": [0.01, 0.1, 1.0, 10.0], "fit_intercept": [True, False]},
        selection_epsilon=30.0, delta=0.0, n_partitions=5,
        selector=RecordingDoubling(granularity=granularity),
        accountant=BudgetAccountant(), random_state=0, default=None,
    ).fit(X, y)
    raw = RecordingDoubling.recorded
    assert len(raw) == 8  # the search handed its raw utilities to the selector
    # Guard against a coincidence that would not be a leak: a raw utility that happens to be
    # a multiple of the granularity (a threshold) or a round number (a bar's height 0.8 and
    # positions, an axis limit).
    raw = [u for u in raw if not any(math.isclose(u / unit, round(u / unit))
                                     for unit in (granularity, 0.1))]
    assert len(raw) >= 6

    trace = SelectionTraceDisplay.from_estimator(search)
    budget = PrivacyBudgetDisplay.from_estimator(search)
    assert len(trace.iterations) >= 2
    for display in (trace, budget):
        numbers = _numbers(vars(display)) + _plotted_numbers(display.ax_)
        texts = _texts(display.ax_)
        for u in raw:
            assert not any(math.isclose(u, n, rel_tol=1e-9, abs_tol=1e-12) for n in numbers), u
            written = f"{u:.3g}"
            assert not any(re.search(rf"(?<![\d.]){re.escape(written)}(?![\d])", text)
                           for text in texts), u
