"""Tables of ``results/fidelity/summary.md`` from the study's CSVs (see fidelity_study.py).

``summary.md`` = ``notes_head.md`` (the reading, written by hand after the run) + the tables
generated here from the CSVs + ``notes_tail.md``. Re-running only regenerates the tables.
"""

from pathlib import Path

import numpy as np
import pandas as pd

import fidelity_study as fs


def _pp(x):
    return f"{100 * x:.1f}"


def spreads(expected):
    lines = ["| panel | refit ε | refits | best (candidate) | median | worst | best − worst (pp) "
             "| best − median (pp) | default | max SE (pp) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (panel, eps), g in expected.groupby(["panel", "refit_epsilon"], sort=False):
        acc = g["expected_accuracy"].to_numpy()
        best = g.iloc[int(np.argmax(acc))]
        default = g[g["default"]].iloc[0]
        lines.append(
            f"| {panel} | {eps:g} | {int(g['refits'].iloc[0])} | {best.expected_accuracy:.3f} ± "
            f"{best.se:.3f} ({best.params}) | {np.median(acc):.3f} | {acc.min():.3f} | "
            f"{_pp(acc.max() - acc.min())} | {_pp(acc.max() - np.median(acc))} | "
            f"{default.expected_accuracy:.3f} ± {default.se:.3f} | {_pp(g['se'].max())} |")
    return "\n".join(lines) + "\n"


def candidates_table(expected, panel, eps):
    g = expected[(expected["panel"] == panel) & (expected["refit_epsilon"] == eps)]
    g = g.sort_values("expected_accuracy", ascending=False)
    lines = [f"| rank | candidate | expected accuracy ± SE ({panel}, refit ε = {eps:g}) |",
             "|---|---|---|"]
    for rank, row in enumerate(g.itertuples(), 1):
        mark = " (default)" if row.default else ""
        lines.append(f"| {rank} | {row.params}{mark} | {row.expected_accuracy:.3f} ± "
                     f"{row.se:.3f} |")
    return "\n".join(lines) + "\n"


def fidelity_table(fidelity):
    lines = ["| panel | refit ε | k | reps | Spearman off: mean [min, max] | Spearman on: mean "
             "[min, max] | argmax regret off (pp) | argmax regret on (pp) |",
             "|---|---|---|---|---|---|---|---|"]
    keys = ["panel", "refit_epsilon", "k"]
    for (panel, eps, k), g in fidelity.groupby(keys, sort=False):
        cells = {}
        for scaling in ("off", "on"):
            h = g[g["scaling"] == scaling]
            if h.empty:
                cells[scaling] = ("–", "–")
                continue
            rho = h["spearman"]
            cells[scaling] = (f"{rho.mean():.2f} [{rho.min():.2f}, {rho.max():.2f}]",
                              _pp(h["argmax_regret"].mean()))
        lines.append(f"| {panel} | {eps:g} | {k} | {g['rep'].nunique()} | {cells['off'][0]} | "
                     f"{cells['on'][0]} | {cells['off'][1]} | {cells['on'][1]} |")
    return "\n".join(lines) + "\n"


def regret_vs_k(regret, panel, eps, selectors):
    g = regret[(regret["panel"] == panel) & (regret["refit_epsilon"] == eps)
               & regret["selector"].isin(selectors)]
    if g.empty:
        return ""
    ks = sorted(g["k"].unique())
    lines = [f"| selector | selection ε | " + " | ".join(f"k={k}" for k in ks)
             + " | best k |", "|---|---|" + "---|" * (len(ks) + 1)]
    table = g.groupby(["selector", "selection_epsilon", "k"])["regret"].mean()
    for name in selectors:
        for sel in fs.SELECTION_EPSILONS:
            values = [table.get((name, sel, k), np.nan) for k in ks]
            if np.all(np.isnan(values)):
                continue
            best_k = ks[int(np.nanargmin(values))]
            lines.append(f"| {name} | {sel:g} | " + " | ".join(_pp(v) for v in values)
                         + f" | {best_k} |")
    return "\n".join(lines) + "\n"


def write(out):
    out = Path(out)
    parts = []
    head = out / "notes_head.md"
    parts.append(head.read_text() if head.exists() else "# Fidelity study\n")
    expected = pd.read_csv(out / "expected_accuracy.csv")
    parts.append("\n## A. Expected full-data accuracy: panels and spreads\n\n"
                 "Mean test accuracy of independent DP refits on the training part (pooled over "
                 "the 3 repetitions' splits); SE = standard error of that mean. Full per-candidate "
                 "table: `expected_accuracy.csv`.\n\n" + spreads(expected))
    for panel, eps in (("adult-lr", 0.5), ("adult-lr", 2.0), ("big-lr", 0.5)):
        if ((expected["panel"] == panel) & (expected["refit_epsilon"] == eps)).any():
            parts.append("\n" + candidates_table(expected, panel, eps))
    if (out / "fidelity.csv").exists():
        parts.append("\n## B. Fidelity: Spearman(partition utilities, expected accuracy)\n\n"
                     "Per repetition (new partitions), then mean and range over repetitions. "
                     "'argmax regret' = expected accuracy of the best candidate minus that of the "
                     "argmax of the partition utilities (no selection noise). Per-repetition rows:"
                     " `fidelity.csv`.\n\n" + fidelity_table(pd.read_csv(out / "fidelity.csv")))
    if (out / "regret.csv").exists():
        regret = pd.read_csv(out / "regret.csv")
        if (out / "doubling.csv").exists():
            regret = pd.concat([regret, pd.read_csv(out / "doubling.csv")])
        parts.append("\n## C. Selection regret (pp) against k, partition_scaling on\n\n"
                     "Regret = best expected accuracy − expected accuracy of the selected "
                     "candidate, both at the same refit ε (refit noise removed); mean over "
                     f"{fs.SELECTOR_RUNS} selector runs per utility vector and the repetitions. "
                     "Rows: `regret.csv`, `doubling.csv`.\n")
        for (panel, eps), _ in regret.groupby(["panel", "refit_epsilon"], sort=False):
            parts.append(f"\n### {panel}, refit ε = {eps:g}\n\n"
                         + regret_vs_k(regret, panel, eps, list(fs.LIBRARY_SELECTORS)))
    tail = out / "notes_tail.md"
    if tail.exists():
        parts.append("\n" + tail.read_text())
    (out / "summary.md").write_text("".join(parts))
    print(f"wrote {out / 'summary.md'}")
