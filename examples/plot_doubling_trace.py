"""
The doubling mechanism's trajectory
===================================

The propose-test doubling selector (``selector="doubling"``,
:class:`~skdptune.selection.ProposeTestDoubling`) runs a sequence of AboveThreshold tests.
Each iteration proposes a threshold ``u + step * granularity``, adds Laplace noise, and walks
the candidates in grid order with fresh noise on each utility; the first whose noisy utility
clears the threshold passes. After a pass ``u`` rises by the step and the step doubles; after
a failure the step halves. The loop stops when the step reaches 0 or ``u`` reaches 1.

What the search releases about this loop is its trace: for each iteration, the step and the
candidate that passed (``search.selection_.trace``). Everything in the plots below is
computed from that trace and the selector's public parameters: the noisy values the tests
compared are never released. :class:`~skdptune.plotting.SelectionTraceDisplay` draws it.

How the loop behaves depends on the noise, whose scale is ``1 / (n_partitions * eps0)`` with
``eps0`` the budget of one iteration. We run the same search twice: once with a budget far
beyond what privacy would allow, to see the loop home in on the best candidate, and once with
a realistic one.
"""

# %%
# Public data and a cheap model
# -----------------------------
# To keep the example fast, the candidates are scikit-learn decision trees and the search
# runs with ``refit=False``: only the selection is run (and charged). With a diffprivlib model
# and ``refit=True`` the trace is the same kind of object.
import matplotlib.pyplot as plt
from sklearn.datasets import make_classification
from sklearn.tree import DecisionTreeClassifier

from skdptune import PrivateGridSearchCV, SelectionTraceDisplay
from skdptune.selection import ProposeTestDoubling

X, y = make_classification(n_samples=40_000, n_features=10, n_informative=6,
                           flip_y=0.1, random_state=0)
grid = {"max_depth": [1, 2, 3, 4, 6, 8, 12]}

# %%
# The floor: a balanced binary task gives a constant classifier an accuracy of 0.5, a public
# lower bound on the best utility, so the loop may start there and save iterations.
selector = ProposeTestDoubling(granularity=0.01, floor=0.5)


def run(epsilon):
    search = PrivateGridSearchCV(
        DecisionTreeClassifier(random_state=0), grid, epsilon=epsilon, delta=0.0,
        selector=selector, score_share=0.0, n_partitions=200, refit=False,
        default=None,  # the doubling compares candidates alike: no default to keep
        random_state=1,  # reproducible for the docs; leave it None on private data
    )
    forecast = search.forecast(X)
    search.fit(X, y)
    report = search.privacy_report_
    print(f"epsilon={epsilon}: eps0={report['epsilon_per_iteration']:.3f}, "
          f"k * eps0={report['n_partitions'] * report['epsilon_per_iteration']:.1f}, "
          f"iterations run {report['n_iterations']} of max_iter={report['max_iter']}, "
          f"selected {search.best_params_}")
    lead = ("no lead in [0, 1] suffices" if forecast.pairwise_gap == float("inf")
            else f"a lead of {forecast.pairwise_gap:.3f} suffices")
    print(f"   forecast: to be selected with 90% probability over one close rival, {lead}")
    return search


low_noise = run(epsilon=100.0)
realistic = run(epsilon=1.0)

# %%
# The trajectories
# ----------------
# How to read them. The height is a ``[0, 1]`` utility: here accuracy, already in
# ``[0, 1]`` (with a declared ``utility_range`` other than ``(0, 1)``, a second axis on the
# right reads it in the scorer's units). Each iteration proposes a threshold ``u + step *
# granularity`` (grey dotted line; the noise added to it is not released, so not shown).
#
# - A green dot: candidate ``#i`` (written beside it) passed the noisy test. ``u`` (the blue
#   step line) rises to that threshold and the step doubles.
# - A red cross: no candidate passed. ``u`` stays and the step halves.
# - The dashed line is the utility ceiling 1: once ``u`` reaches it the loop stops. A doubled
#   step can propose a threshold above 1 (the shaded band); that is by design, not a utility
#   above 1, and no candidate is likely to pass it.
#
# With little noise ``u`` settles just below the best candidate's utility, and its last value
# is the selector's estimate of that utility. With realistic noise the tests pass by chance,
# the doubling overshoots, and ``u >= 1`` stops the loop after a few iterations: the selected
# candidate is then close to the first that passed by chance, which favours the start of the
# grid.
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True, constrained_layout=True)
SelectionTraceDisplay.from_estimator(low_noise, ax=axes[0])
SelectionTraceDisplay.from_estimator(realistic, ax=axes[1])
axes[0].set_title("epsilon = 100 (no privacy to speak of)\n" + axes[0].get_title(),
                  fontsize="medium")
axes[1].set_title("epsilon = 1\n" + axes[1].get_title(), fontsize="medium")
plt.show()

# %%
# The values behind a plot are attributes of the display:
display = SelectionTraceDisplay.from_estimator(low_noise, plot=False)
for t, step, threshold, passed in zip(display.iterations, display.steps, display.thresholds,
                                      display.passed):
    print(f"iteration {t:2d}: step {step:3d}, proposed threshold {threshold:.2f}, "
          f"passed: {'none' if passed is None else '#' + str(passed)}")

# %%
# ``cv_results_`` carries the same information per candidate: how many iterations each
# passed, and which was selected. There is no per-candidate score: it would not be private.
print(realistic.cv_results_["n_passes"], realistic.cv_results_["selected"])
