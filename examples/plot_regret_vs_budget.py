"""
Regret against the total privacy budget
=======================================

How much worse is the model a private tuning method releases than the best candidate of the
grid, and how does that change with the total budget? This example plots the benchmark's
summary: for every panel (data set and model), every tuning method and every untuned
baseline, the mean regret (the best candidate's test accuracy minus the released model's)
against the total epsilon, every method spending exactly the same total ``(epsilon, delta)``.

The numbers come from ``benchmarks/results/regret_by_budget.csv``, a small file shipped with
the repository (the benchmark itself takes hours; see ``benchmarks/README.md``). Its schema,
one row per (panel, method, total budget):

==================  ========  =========================================================
column              type      meaning
==================  ========  =========================================================
``panel``           str       data set and model, e.g. ``"adult, logistic"``
``method``          str       tuning method, e.g. ``"grid/doubling"``, ``"random/poisson"``
``total_epsilon``   float     the whole fit's epsilon (selection and final model)
``regret_mean``     float     mean regret over the repetitions (accuracy units)
``regret_se``       float     standard error of that mean
``kind``            str       optional: ``"tuned"`` (the default) or ``"baseline"``, an
                              untuned model (e.g. default hyperparameters with the whole
                              budget); baselines are drawn dashed
``n_reps``          int       optional: number of repetitions behind the row
==================  ========  =========================================================

Lines starting with ``#`` are comments. A file whose first line starts with
``# PLACEHOLDER`` is labelled as such in the figure.
"""

# %%
# Read the summary
# ----------------
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

REQUIRED = ["panel", "method", "total_epsilon", "regret_mean", "regret_se"]


def results_file():
    """``benchmarks/results/regret_by_budget.csv`` of this checkout."""
    try:
        here = Path(__file__).resolve().parent
    except NameError:  # run interactively
        here = Path.cwd()
    for folder in (here, *here.parents):
        candidate = folder / "benchmarks" / "results" / "regret_by_budget.csv"
        if candidate.exists():
            return candidate
    raise FileNotFoundError("benchmarks/results/regret_by_budget.csv not found above "
                            f"{here}: run this example from a checkout of the repository.")


path = results_file()
placeholder = path.read_text().startswith("# PLACEHOLDER")
summary = pd.read_csv(path, comment="#")
missing = [column for column in REQUIRED if column not in summary.columns]
if missing:
    raise ValueError(f"{path.name} lacks the columns {missing}; see the schema above.")
if "kind" not in summary.columns:
    summary["kind"] = "tuned"
print(f"{path.name}: {len(summary)} rows, panels {sorted(summary['panel'].unique())}")
if placeholder:
    print("This is the placeholder summary (tuning methods only, no untuned baseline).")
summary.head()

# %%
# One panel per data set and model
# --------------------------------
# Error bars are one standard error. Methods keep the same colour in every panel.
panels = sorted(summary["panel"].unique())
methods = list(dict.fromkeys(summary.sort_values(["kind", "method"])["method"]))
colors = {method: plt.get_cmap("tab10")(i % 10) for i, method in enumerate(methods)}
n_cols = min(3, len(panels))
n_rows = int(np.ceil(len(panels) / n_cols))
fig, axes = plt.subplots(n_rows, n_cols, figsize=(4.2 * n_cols, 3.4 * n_rows + 0.8),
                         sharex=True, squeeze=False, constrained_layout=True)
for ax, panel in zip(axes.ravel(), panels):
    rows = summary[summary["panel"] == panel]
    for method, group in rows.groupby("method", sort=False):
        group = group.sort_values("total_epsilon")
        baseline = (group["kind"] == "baseline").any()
        ax.errorbar(group["total_epsilon"], group["regret_mean"], yerr=group["regret_se"],
                    label=method, color=colors[method], marker="o", markersize=3,
                    capsize=2, linestyle="--" if baseline else "-", linewidth=1.2)
    ax.set_xscale("log", base=2)
    ax.set_title(panel, fontsize="medium")
    ax.set_ylim(bottom=0)
for ax in axes[-1]:
    ax.set_xlabel("total epsilon")
for ax in axes[:, 0]:
    ax.set_ylabel("regret (accuracy)")
for ax in axes.ravel()[len(panels):]:
    ax.set_visible(False)
handles, labels = axes[0, 0].get_legend_handles_labels()
fig.legend(handles, labels, loc="outside lower center", ncol=min(5, len(labels)),
           fontsize="small")
fig.suptitle("Regret of the released model against the total budget"
             + (" (PLACEHOLDER data)" if placeholder else ""))
plt.show()

# %%
# Averaged over the budgets
# -------------------------
# The same numbers as one table: mean regret per method and panel (lower is better).
table = summary.pivot_table(index="method", columns="panel", values="regret_mean",
                            aggfunc="mean").round(3)
table

# %%
# Reading it: the benchmark's own summary (``benchmarks/RESULTS.md``) and the
# :ref:`user guide <choosing>` discuss which method to prefer at which budget.
