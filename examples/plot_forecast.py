"""
What the forecast says as epsilon and the number of partitions vary
===================================================================

A private selection adds noise of scale ``sensitivity / epsilon = 1 / (n_partitions *
epsilon)`` to the candidates' utilities. Whether it still picks the best candidate depends on
how far that candidate leads the others. :func:`skdptune.forecast.forecast_selection`
answers before any data are touched: *how large a lead, in utility units (accuracy for
``scoring="accuracy"``), does the best candidate need to be selected with probability 90%?*
:meth:`PrivateGridSearchCV.forecast <skdptune.PrivateGridSearchCV.forecast>` asks the same
question of a configured search, and the search warns at ``fit`` (a
:class:`~skdptune.exceptions.NoisySelectionWarning`) when the answer is above
:data:`~skdptune.forecast.SWAMPED_GAP`.

Two leads bracket real grids: ``pairwise_gap``, the lead over one close rival when the others
are far behind, and ``uniform_gap``, the lead over every other candidate, all tied.
"""

# %%
# The lead needed, by selector, epsilon and number of partitions
# ---------------------------------------------------------------
# The forecasts of the one-shot selectors are closed forms or an integral; the doubling
# selector's is simulated, with the best candidate at a random position of the grid. Here
# ``delta=0``, so the doubling selector composes its iterations with basic composition.
import matplotlib.pyplot as plt
import numpy as np

from skdptune.forecast import SWAMPED_GAP, forecast_selection
from skdptune.selection import SELECTORS

N_CANDIDATES = 12
epsilons = np.geomspace(0.05, 50, 10)
partitions = [10, 100, 1000]

fig, axes = plt.subplots(1, len(SELECTORS), figsize=(13, 3.6), sharey=True,
                         constrained_layout=True)
for ax, name in zip(axes, SELECTORS):
    for k in partitions:
        gaps = [forecast_selection(N_CANDIDATES, n_partitions=k, epsilon=eps, delta=0.0,
                                   selector=name).pairwise_gap for eps in epsilons]
        ax.plot(epsilons, np.minimum(gaps, 1.0), marker="o", markersize=3,
                label=f"n_partitions={k}")
    ax.axhline(SWAMPED_GAP, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_title(name, fontsize="medium")
    ax.set_xlabel("selection epsilon")
axes[0].set_ylabel("lead over one rival needed\n(90% probability; 1 = none suffices)")
axes[0].text(epsilons[0], SWAMPED_GAP, " noise swamps the choice above", va="bottom",
             fontsize="small", color="grey")
axes[-1].legend(fontsize="small")
fig.suptitle(f"{N_CANDIDATES} candidates")
plt.show()

# %%
# For the one-shot selectors only the product ``n_partitions * epsilon`` matters: ten times
# more partitions buy what ten times the budget would, as long as each partition still has
# enough records to fit a useful model. The doubling selector splits its budget over up to
# ``max_iter`` iterations, so it needs ``n_partitions * eps0`` in the hundreds (``eps0`` the
# budget of one iteration) before it selects by utility rather than by grid position.

# %%
# One close rival, or a crowd of near-misses
# ------------------------------------------
# The lead needed over every other candidate grows with the size of the grid, slowly for the
# one-shot selectors (about the logarithm of the number of candidates).
sizes = [2, 4, 8, 16, 32, 64]
fig, ax = plt.subplots(figsize=(6, 3.6), constrained_layout=True)
for name in SELECTORS:
    if name == "doubling":
        continue
    gaps = [forecast_selection(m, n_partitions=100, epsilon=1.0, selector=name).uniform_gap
            for m in sizes]
    ax.plot(sizes, gaps, marker="o", label=name)
ax.set_xscale("log", base=2)
ax.set_xlabel("number of candidates")
ax.set_ylabel("lead over all others needed")
ax.set_title("n_partitions=100, selection epsilon=1", fontsize="medium")
ax.legend(fontsize="small")
plt.show()

# %%
# Asking a configured search
# --------------------------
# :meth:`~skdptune.PrivateGridSearchCV.forecast` reads the grid size, ``n_partitions``, the
# selector and the selector's share of the budget (``selection_share`` of ``epsilon``, or
# ``selection_epsilon`` less ``check_share``, less ``score_share``) from the search itself.
# Here the selection's epsilon is given explicitly, as in the figures above. The estimator as
# given is the default candidate, and the policy that weighs keeping it reads the number of
# records: a forecast before the data takes that number (or ``X`` itself, of which only the
# shape is read).
from skdptune.linear_model import LogisticRegression

from skdptune import PrivateGridSearchCV

search = PrivateGridSearchCV(
    LogisticRegression(data_norm=1.0, classes=[0, 1], epsilon=1.0),
    {"C": [0.01, 0.1, 1.0, 10.0], "fit_intercept": [True, False]},
    selection_epsilon=1.0, n_partitions=100, selector="permute_and_flip",
)
forecast = search.forecast(n_samples=20_000)
print(forecast)
print("swamped:", forecast.swamped)
