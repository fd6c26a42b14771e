"""End to end with the library's defaults: the released model against untuned baselines.

For each panel of :mod:`panels` (data set, diffprivlib model, grid, stated default candidate),
each total budget ``T`` and each repetition (a stratified 80 / 20 split, seed = repetition),
every method is fitted on the training part at the same total ``(T, delta <= 1e-6)``, the
released ``best_estimator_`` is scored on the test part, and the reported ``privacy_spent_``
is asserted to be ``T``:

- ``grid (defaults)``: ``PrivateGridSearchCV(estimator, grid, epsilon=T,
  accountant=BudgetAccountant())``, every other parameter at its default (permute-and-flip,
  ``n_partitions="auto"``, ``selection_share=0.5``, ``score_share=0.1``,
  ``partition_scaling="auto"``, ``random_state=None``: secure noise, fresh partitions).
- ``grid (v0.1)``: what version 0.1 did: ``selector="doubling"``, ``n_partitions=10``,
  ``partition_scaling=None``, ``score_share=0``, ``selection_epsilon=T/2`` and every
  candidate's refit ``epsilon=T/2``.
- ``random (geometric)``: ``PrivateRandomizedSearchCV`` over the same grid (lists, sampled
  uniformly with replacement), a truncated negative binomial number of trials with shape 1
  (geometric) and mean 10, its per-trial epsilon solved by
  ``skdptune._accounting.calibrate_trial_epsilon`` so that the total is ``T``.

Baselines at refit epsilon ``T`` (the whole budget on one refit), from the expected
accuracies: (a) a uniformly random candidate (the mean of the candidates' expected
accuracies), (b) the panel's default candidate, stated in :mod:`panels` before any result,
(c) the oracle (the best candidate's expected accuracy).

*Expected accuracy* of a candidate at a refit epsilon: mean test accuracy of independent DP
refits on the training part (``REFITS_PER_REP`` per repetition, pooled over the panel's
repetitions), with its standard error. At the grid searches' refit epsilon ``T/2`` and the
baselines' ``T`` the refits use the whole training part; for the randomized search they
emulate its trials: a fit with the per-trial epsilon on a fresh random 80 % of the training
part (each record independently, as the search's ``validation_fraction=0.2`` split does).
*Selection regret* (refit noise removed) = the best candidate's expected accuracy at the
method's refit setting minus that of the candidate the method selected.

Fidelity of the real searches: the partition utilities that ``PrivateGridSearchCV.fit``
computes are read by a wrapper around the library's ``partition_utilities``
(:mod:`lib.partition_hook`) that calls it unchanged and keeps a copy of its return value
(public benchmark data; the search itself still only sees its own local copy). Spearman's
correlation of these against the expected accuracies at ``T/2`` is the fidelity at the
settings actually used.

The exact diffprivlib speed-ups of :mod:`lib.speedups` are used for the expected-accuracy
refits only, never in a process that runs a search.

Sub-commands (everything expensive is cached under ``results/end_to_end_cache/``, git-ignored,
so any command can be stopped and re-run to resume)::

    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=.
    python benchmarks/end_to_end.py expected                 # expected accuracies (refits)
    python benchmarks/end_to_end.py run                      # every method, every cell
    python benchmarks/end_to_end.py report                   # CSVs and results/end_to_end.md

``run`` and ``expected`` take ``--panels``, ``--reps`` (repetitions per panel, overriding
:data:`REPS`), ``--totals`` and ``--n-jobs`` (processes, default 2).
"""

import argparse
import json
import math
import os
import sys
import time
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib import panels as panel_module  # noqa: E402
from lib.panels import split  # noqa: E402
from lib.partition_hook import wrapped_partition_utilities  # noqa: E402
from lib.refits import add_refits, cached_refits, pooled  # noqa: E402
from lib.runs import machine, run_units, stable_seed  # noqa: E402

PANELS = panel_module.PANELS
RESULTS = Path(__file__).resolve().parent / "results"
CACHE = Path(os.environ.get("END_TO_END_CACHE", RESULTS / "end_to_end_cache"))

TOTALS = (0.5, 1.0, 2.0, 4.0)
#: Repetitions per panel (seeds 0 .. n-1 of the 80 / 20 split).
REPS = {"adult-lr": 5, "adult-nb": 5, "adult-rf": 5, "big-lr": 3}
#: Independent DP refits per candidate, refit setting and repetition (pooled over repetitions).
REFITS_PER_REP = {"adult-lr": 3, "adult-nb": 3, "adult-rf": 3, "big-lr": 4}
METHODS = ("grid (defaults)", "grid (v0.1)", "random (geometric)")
DELTA = 1e-6
#: Randomized search: mean number of trials, shape of the truncated negative binomial.
RANDOM_MEAN, RANDOM_SHAPE = 10.0, 1.0
#: PrivateRandomizedSearchCV's default validation_fraction (its trials train on the rest).
RANDOM_VALIDATION = 0.2


def _key(value):
    return f"{value:g}"


@lru_cache(maxsize=None)
def trial_epsilon(total):
    """Per-trial epsilon of the randomized search whose accounted total is ``total``."""
    from skdptune._accounting import calibrate_trial_epsilon

    return calibrate_trial_epsilon(total, DELTA, RANDOM_MEAN, RANDOM_SHAPE)


def _quiet():
    warnings.filterwarnings("ignore")


# --- Refit settings and expected accuracies ------------------------------------------------


def refit_settings(panel_name, totals=TOTALS):
    """``[(kind, epsilon)]``: ("full", T/2) and ("full", T) for every total; ("trial", eps_t)."""
    settings = set()
    for total in totals:
        settings.add(("full", round(total / 2, 9)))
        settings.add(("full", float(total)))
        settings.add(("trial", trial_epsilon(total)))
    return sorted(settings)


def a_path(panel, kind, epsilon, rep):
    return CACHE / "expected" / panel / f"{kind}_eps{epsilon:.6g}_rep{rep}.npz"


def expected_unit(panel_name, kind, epsilon, rep, refits):
    """``refits`` DP refits of every candidate; test accuracies cached as (m, refits)."""
    _quiet()
    from lib import speedups  # exact speed-ups: this process never runs a search

    speedups.check()
    speedups.install()
    from diffprivlib.accountant import BudgetAccountant

    from skdptune._dp_fit import with_params

    path = a_path(panel_name, kind, epsilon, rep)
    have = cached_refits(path)
    if have >= refits:
        return path
    panel = PANELS[panel_name]
    X_train, X_test, y_train, y_test = split(panel_name, rep)
    rng = np.random.default_rng(stable_seed("trial-split", panel_name, kind, epsilon, rep, have))

    def trial_rows():
        # A fresh independent 80 % of the records, as the search's split.
        return np.flatnonzero(rng.random(len(y_train)) >= RANDOM_VALIDATION)

    def make_model(params):
        return with_params(panel.estimator(epsilon), params).set_params(
            accountant=BudgetAccountant())

    return add_refits(path, panel.candidates, make_model, (X_train, y_train), (X_test, y_test),
                      refits, rows=trial_rows if kind == "trial" else None)


def expected_table(panel_name, kind, epsilon, reps):
    """``(mean, se, n)`` per candidate, pooled over ``reps``; None if a repetition is missing."""
    paths = [a_path(panel_name, kind, epsilon, rep) for rep in reps]
    if not all(path.exists() for path in paths):
        return None
    return pooled(paths)


# --- The methods, run for real ----------------------------------------------------------------


def base_estimator(panel, epsilon):
    """The panel's model with the default candidate's parameters and ``epsilon``.

    Every candidate of the grid overrides these parameters; they matter only where a search
    checks the estimator itself (PrivateRandomizedSearchCV's gate refuses a LogisticRegression
    without ``data_norm`` or a GaussianNB without ``bounds`` before sampling any setting).
    """
    return panel.estimator(epsilon).set_params(**panel.default)


def build(method, panel, total):
    """The estimator object of ``method`` at total budget ``total`` (unfitted)."""
    from diffprivlib.accountant import BudgetAccountant

    from skdptune import PrivateGridSearchCV
    from skdptune._randomized import PrivateRandomizedSearchCV

    if method == "grid (defaults)":
        # The estimator's own epsilon (diffprivlib's default, 1.0) is replaced by the refit's
        # share of epsilon (the whole fit's).
        return PrivateGridSearchCV(base_estimator(panel, 1.0), panel.grid, epsilon=total,
                                   accountant=BudgetAccountant())
    if method == "grid (v0.1)":
        return PrivateGridSearchCV(base_estimator(panel, total / 2), panel.grid,
                                   selection_epsilon=total / 2,
                                   selector="doubling", n_partitions=10,
                                   partition_scaling=None, score_share=0.0,
                                   accountant=BudgetAccountant())
    if method == "random (geometric)":
        eps_t = trial_epsilon(total)
        return PrivateRandomizedSearchCV(base_estimator(panel, eps_t), panel.grid,
                                         trial_epsilon=eps_t,
                                         distribution="truncated_negative_binomial",
                                         n_iter=RANDOM_MEAN, shape=RANDOM_SHAPE,
                                         accountant=BudgetAccountant())
    raise ValueError(method)


def keep_copies(values):
    """A wrapper for :func:`lib.partition_hook.wrapped_partition_utilities` that calls the
    library's function unchanged, returns its result unchanged and appends a copy of it to
    ``values`` (benchmark data, for the fidelity table)."""

    def observed(original, *args, **kwargs):
        result = original(*args, **kwargs)
        values.append(np.array(result, copy=True))
        return result

    return observed


def run_path(panel, total, rep, method):
    slug = method.replace(" ", "_").replace("(", "").replace(")", "").replace(".", "")
    return CACHE / "runs" / panel / f"T{_key(total)}_rep{rep}_{slug}.json"


def selected_index(panel, params):
    for i, candidate in enumerate(panel.candidates):
        if candidate.keys() == params.keys() and all(
                panel_module._same(candidate[key], params[key]) for key in candidate):
            return i
    raise ValueError(f"{params} is not a candidate of {panel.name}")


def method_unit(panel_name, total, rep, method):
    """Fit ``method`` on the repetition's training part; one result row (cached as JSON)."""
    _quiet()
    path = run_path(panel_name, total, rep, method)
    if path.exists():
        return path
    from lib import speedups

    # The exact speed-ups must not reach a search: refuse to run in a process that has them.
    from diffprivlib.mechanisms.laplace import LaplaceBoundedDomain
    from diffprivlib.models import forest
    assert LaplaceBoundedDomain._find_scale is speedups._ORIGINAL_FIND_SCALE, "speed-ups on"
    assert forest._FittingTree._check_bounds is not speedups.fast_check_bounds, "speed-ups on"

    panel = PANELS[panel_name]
    X_train, X_test, y_train, y_test = split(panel_name, rep)
    search = build(method, panel, total)
    captured = []
    with wrapped_partition_utilities(keep_copies(captured)):
        start = time.perf_counter()
        search.fit(X_train, y_train)
        seconds = time.perf_counter() - start
    epsilon, delta = (float(v) for v in search.privacy_spent_)
    # Equal footing: exactly T (to the randomized search's calibration tolerance, 1e-12
    # relative), delta at most 1e-6.
    assert math.isclose(epsilon, total, rel_tol=1e-9, abs_tol=0), (method, epsilon, total)
    assert epsilon <= total * (1 + 1e-12), (method, epsilon, total)
    assert delta <= DELTA, (method, delta)
    index = selected_index(panel, search.best_params_)
    accuracy = float(search.best_estimator_.score(X_test, y_test))
    grid = method.startswith("grid")
    row = dict(
        panel=panel_name, total_epsilon=total, rep=rep, method=method,
        accuracy=accuracy, selected=index, selected_params=panel.describe(panel.candidates[index]),
        refit_kind="full" if grid else "trial",
        refit_epsilon=total / 2 if grid else trial_epsilon(total),
        n_partitions=int(search.n_partitions_) if grid else None,
        seconds=seconds, epsilon_spent=epsilon, delta_spent=delta,
        epsilon_exact=epsilon == total,
        best_score=float(search.best_score_),
        n_train=len(y_train), n_test=len(y_test),
    )
    if grid:
        assert len(captured) == 1, "the search's partition utilities were not seen"
        row["utilities"] = captured[0].tolist()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(row))
    return path


# --- Scheduling -------------------------------------------------------------------------------


def _cached(unit):
    function, *args = unit
    if function is expected_unit:
        panel, kind, epsilon, rep, refits = args
        return cached_refits(a_path(panel, kind, epsilon, rep)) >= refits
    return run_path(*args).exists()


def expected_units(panel, reps, totals):
    return [(expected_unit, panel, kind, eps, rep, REFITS_PER_REP[panel])
            for rep in range(reps) for kind, eps in refit_settings(panel, totals)]


def method_units(panel, reps, totals, methods=METHODS):
    # Repetition-major: an interrupted run leaves complete repetitions.
    return [(method_unit, panel, total, rep, method)
            for rep in range(reps) for total in totals for method in methods]


# --- Report ------------------------------------------------------------------------------------


def load_runs():
    rows = [json.loads(p.read_text()) for p in sorted((CACHE / "runs").glob("*/*.json"))]
    return pd.DataFrame(rows)


def complete(runs):
    """Only repetitions that have every (total, method) of their panel."""
    keep = []
    for panel, g in runs.groupby("panel"):
        cells = g.groupby(["total_epsilon", "method"]).ngroups
        per_rep = g.groupby("rep").size()
        reps = per_rep.index[per_rep == cells]
        keep.append(g[g["rep"].isin(reps)])
    return pd.concat(keep)


def annotate(runs):
    """Add selection regret, the selected candidate's expected accuracy and fidelity."""
    out = []
    for (panel_name, total, method), g in runs.groupby(["panel", "total_epsilon", "method"]):
        reps = range(REPS[panel_name])
        kind = g["refit_kind"].iloc[0]
        eps = float(g["refit_epsilon"].iloc[0])
        mean, se, n = expected_table(panel_name, kind, eps, reps)
        full_t = expected_table(panel_name, "full", float(total), reps)[0]
        g = g.copy()
        g["expected_selected"] = mean[g["selected"].to_numpy()]
        g["selection_regret"] = mean.max() - g["expected_selected"]
        g["refit_oracle"] = mean.max()
        g["oracle_T"] = full_t.max()
        g["regret_vs_oracle_T"] = full_t.max() - g["accuracy"]
        if method.startswith("grid"):
            g["spearman"] = [spearmanr(u, mean).statistic if np.ptp(u) > 0 else np.nan
                             for u in g["utilities"]]
            g["argmax_regret"] = [mean.max() - mean[int(np.argmax(u))] for u in g["utilities"]]
        out.append(g)
    return pd.concat(out)


def baselines(panel_name, total):
    reps = range(REPS[panel_name])
    mean, se, n = expected_table(panel_name, "full", float(total), reps)
    panel = PANELS[panel_name]
    d = panel.default_index()
    b = int(np.argmax(mean))
    m = len(mean)
    return dict(uniform=mean.mean(), uniform_se=np.sqrt(np.sum(se ** 2)) / m,
                default=mean[d], default_se=se[d], oracle=mean[b], oracle_se=se[b],
                worst=mean.min(),
                oracle_params=panel.describe(panel.candidates[b]), refits=n)


def _se(x):
    x = np.asarray(x, dtype=float)
    return x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else np.nan


def pp(x):
    return f"{100 * x:.1f}"


#: Repetitions actually reported per panel (set by report from the complete repetitions).
REPS_USED = dict(REPS)


def report():
    runs = load_runs()
    runs = complete(runs)
    for panel, g in runs.groupby("panel"):
        REPS_USED[panel] = int(g["rep"].nunique())
        assert sorted(g["rep"].unique()) == list(range(REPS_USED[panel]))
    runs = annotate(runs)
    panel_order = [p for p in PANELS if p in set(runs["panel"])]
    runs["panel"] = pd.Categorical(runs["panel"], panel_order, ordered=True)
    runs["method"] = pd.Categorical(runs["method"], list(METHODS), ordered=True)
    runs = runs.sort_values(["panel", "total_epsilon", "rep", "method"])

    columns = ["panel", "total_epsilon", "rep", "method", "accuracy", "selected",
               "selected_params", "expected_selected", "selection_regret", "refit_kind",
               "refit_epsilon", "refit_oracle", "oracle_T", "regret_vs_oracle_T",
               "n_partitions", "seconds", "epsilon_spent", "delta_spent", "best_score",
               "spearman", "argmax_regret"]
    runs[columns].to_csv(RESULTS / "end_to_end.csv", index=False, float_format="%.6g")

    summary = runs.groupby(["panel", "total_epsilon", "method"], observed=True).agg(
        accuracy=("accuracy", "mean"), accuracy_se=("accuracy", _se),
        regret=("selection_regret", "mean"), regret_se=("selection_regret", _se),
        expected=("expected_selected", "mean"),
        oracle_regret=("regret_vs_oracle_T", "mean"),
        oracle_regret_se=("regret_vs_oracle_T", _se),
        k_min=("n_partitions", "min"), k_max=("n_partitions", "max"),
        seconds=("seconds", "mean"), spearman=("spearman", "mean"),
        spearman_min=("spearman", "min"), argmax_regret=("argmax_regret", "mean"),
        refit_oracle=("refit_oracle", "first"), refit_epsilon=("refit_epsilon", "first"),
        eps_max=("epsilon_spent", "max"), delta_max=("delta_spent", "max"),
        exact=("epsilon_exact", "all") if "epsilon_exact" in runs else ("rep", "count"),
        reps=("rep", "count")).reset_index()
    base = {(p, t): baselines(p, t) for p in panel_order for t in sorted(runs["total_epsilon"]
                                                                         .unique())
            if ((runs["panel"] == p) & (runs["total_epsilon"] == t)).any()}
    write_gallery_csv(summary, base)
    text = markdown(runs, summary, base, panel_order)
    (RESULTS / "end_to_end.md").write_text(text)
    print(text)


def write_gallery_csv(summary, base):
    rows = []
    for r in summary.itertuples():
        rows.append(dict(panel=r.panel, method=r.method, total_epsilon=r.total_epsilon,
                         regret_mean=r.oracle_regret, regret_se=r.oracle_regret_se,
                         kind="tuned", n_reps=r.reps))
    for (panel, total), b in base.items():
        for name, key in (("baseline: uniform random candidate", "uniform"),
                          ("baseline: default candidate", "default")):
            rows.append(dict(panel=panel, method=name, total_epsilon=total,
                             regret_mean=b["oracle"] - b[key],
                             regret_se=math.hypot(b["oracle_se"], b[f"{key}_se"]),
                             kind="baseline", n_reps=b["refits"]))
    frame = pd.DataFrame(rows)
    header = (
        "# Written by benchmarks/end_to_end.py report (see benchmarks/RESULTS.md, 'End to end\n"
        "# with the new defaults'). Schema: examples/plot_regret_vs_budget.py. regret = the\n"
        "# oracle's expected accuracy at refit epsilon T (best candidate, whole budget on one\n"
        "# refit) minus the released model's test accuracy (kind tuned: mean and SE over\n"
        "# n_reps repetitions) or minus the baseline's expected accuracy at T (kind baseline:\n"
        "# SE from the refits' SEs; n_reps = DP refits per candidate behind it).\n")
    path = RESULTS / "regret_by_budget.csv"
    path.write_text(header + frame.to_csv(index=False, float_format="%.6g"))


def markdown(runs, summary, base, panel_order):
    lines = [f"Machine: {machine()}", ""]
    lines += ["### Released model: test accuracy (mean ± SE over repetitions) and baselines",
              "",
              "Baselines: expected accuracy at refit ε = T (± SE). k = n_partitions_ used "
              "(min–max over repetitions). Time = wall seconds per fit (mean).", "",
              "| panel | T | grid (defaults) | grid (v0.1) | random (geometric) | uniform "
              "random | default candidate | oracle | k defaults | time defaults / v0.1 / "
              "random (s) | reps |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (panel, total), g in summary.groupby(["panel", "total_epsilon"], observed=True):
        g = g.set_index("method")
        b = base[(panel, total)]
        cell = {m: (f"{g.loc[m, 'accuracy']:.3f} ± {g.loc[m, 'accuracy_se']:.3f}"
                    if m in g.index else "–") for m in METHODS}
        kd = g.loc["grid (defaults)"]
        k = (f"{int(kd.k_min)}" if kd.k_min == kd.k_max else f"{int(kd.k_min)}–{int(kd.k_max)}")
        times = " / ".join(f"{g.loc[m, 'seconds']:.1f}" if m in g.index else "–"
                           for m in METHODS)
        lines.append(
            f"| {panel} | {total:g} | {cell[METHODS[0]]} | {cell[METHODS[1]]} | "
            f"{cell[METHODS[2]]} | {b['uniform']:.3f} ± {b['uniform_se']:.3f} | "
            f"{b['default']:.3f} ± {b['default_se']:.3f} | {b['oracle']:.3f} ± "
            f"{b['oracle_se']:.3f} | {k} | {times} | {int(g['reps'].max())} |")
    lines += ["", "### Selection regret, refit noise removed (pp, mean ± SE over repetitions)",
              "",
              "Best expected accuracy at the method's refit setting minus the selected "
              "candidate's (grid searches: refit ε = T/2 on the whole training part; "
              "randomized search: a trial, ε_t on 80 % of it). In brackets: the best expected "
              "accuracy at that setting.", "",
              "| panel | T | grid (defaults) | grid (v0.1) | random (geometric) | ε_t |",
              "|---|---|---|---|---|---|"]
    for (panel, total), g in summary.groupby(["panel", "total_epsilon"], observed=True):
        g = g.set_index("method")
        cell = {m: (f"{pp(g.loc[m, 'regret'])} ± {pp(g.loc[m, 'regret_se'])} "
                    f"[{g.loc[m, 'refit_oracle']:.3f}]" if m in g.index else "–")
                for m in METHODS}
        lines.append(f"| {panel} | {total:g} | {cell[METHODS[0]]} | {cell[METHODS[1]]} | "
                     f"{cell[METHODS[2]]} | {trial_epsilon(total):.3f} |")
    lines += ["", "### Fidelity of the real searches: Spearman(partition utilities, expected "
              "accuracy at refit ε = T/2)", "",
              "Mean [min] over repetitions; argmax regret = best expected accuracy minus that "
              "of the argmax of the partition utilities (no selection noise), pp. Spread = "
              "best − worst expected accuracy at T/2.", "",
              "| panel | T | spread (pp) | v0.1: k = 10, scaling off | argmax regret v0.1 | "
              "defaults: k | Spearman | argmax regret defaults |",
              "|---|---|---|---|---|---|---|---|"]
    for (panel, total), g in summary.groupby(["panel", "total_epsilon"], observed=True):
        g = g.set_index("method")
        mean, _, _ = expected_table(panel, "full", total / 2, range(REPS[panel]))
        d, v = g.loc["grid (defaults)"], g.loc["grid (v0.1)"]
        k = f"{int(d.k_min)}" if d.k_min == d.k_max else f"{int(d.k_min)}–{int(d.k_max)}"
        lines.append(
            f"| {panel} | {total:g} | {pp(np.ptp(mean))} | {v.spearman:.2f} "
            f"[{v.spearman_min:.2f}] | {pp(v.argmax_regret)} | {k} | {d.spearman:.2f} "
            f"[{d.spearman_min:.2f}] | {pp(d.argmax_regret)} |")
    lines += ["", "### Targets of the issue", ""] + targets(summary, base)
    lines += ["", "### Privacy spent", "",
              f"Every fit's `privacy_spent_` was asserted to be T (relative 1e-9, never above "
              f"T) with δ ≤ 1e-6. Largest |ε − T| / T: "
              f"{(runs['epsilon_spent'] / runs['total_epsilon'] - 1).abs().max():.2g}; "
              "bit-exact T in "
              f"{runs['epsilon_spent'].eq(runs['total_epsilon']).mean() * 100:.0f} % of the fits "
              "(per method: " + ", ".join(
                  f"{m} {g['epsilon_spent'].eq(g['total_epsilon']).mean() * 100:.0f} %"
                  for m, g in runs.groupby("method", observed=True)) + "). Largest δ per "
              "method: " + ", ".join(f"{m} {g['delta_spent'].max():.2g}"
                                      for m, g in runs.groupby("method", observed=True)) + "."]
    lines += ["", "### Expected accuracies behind the baselines", "",
              "| panel | refit setting | refits per candidate | best (candidate) | default | "
              "uniform | best − worst (pp) |", "|---|---|---|---|---|---|---|"]
    for panel in panel_order:
        reps = range(REPS[panel])
        for kind, eps in refit_settings(panel, sorted(summary[summary["panel"] == panel]
                                                      ["total_epsilon"].unique())):
            mean, se, n = expected_table(panel, kind, eps, reps)
            p = PANELS[panel]
            b, d = int(np.argmax(mean)), p.default_index()
            lines.append(
                f"| {panel} | {kind} ε {eps:.3g} | {n} | {mean[b]:.3f} ± {se[b]:.3f} "
                f"({p.describe(p.candidates[b])}) | {mean[d]:.3f} ± {se[d]:.3f} | "
                f"{mean.mean():.3f} | {pp(np.ptp(mean))} |")
    lines += ["", "### Candidates selected (counts over repetitions)", ""]
    for (panel, total, method), g in runs.groupby(["panel", "total_epsilon", "method"],
                                                  observed=True):
        counts = g["selected_params"].value_counts()
        lines.append(f"- {panel}, T = {total:g}, {method}: " + "; ".join(
            f"{name} ×{c}" for name, c in counts.items()))
    return "\n".join(lines) + "\n"


def targets(summary, base):
    s = summary.set_index(["panel", "total_epsilon", "method"])
    lines = ["| target | measured | met? |", "|---|---|---|"]

    def row(target, measured, ok, why_na=None):
        verdict = f"n/a ({why_na})" if why_na else ("met" if ok else "MISSED")
        lines.append(f"| {target} | {measured} | {verdict} |")

    dflt = "grid (defaults)"
    for (panel, total, method), r in s.iterrows():
        if method != dflt:
            continue
        mean, _, _ = expected_table(panel, "full", total / 2, range(REPS[panel]))
        spread = np.ptp(mean)
        if spread >= 0.02:
            row(f"Spearman ≥ 0.85, {panel}, T = {total:g} (k = {int(r.k_min)}"
                f"{'' if r.k_min == r.k_max else '–' + str(int(r.k_max))}, spread "
                f"{pp(spread)} pp)", f"{r.spearman:.2f} (min {r.spearman_min:.2f})",
                r.spearman >= 0.85)
        else:
            lines.append(f"| Spearman ≥ 0.85, {panel}, T = {total:g} (spread {pp(spread)} pp) "
                         f"| {r.spearman:.2f} (min {r.spearman_min:.2f}) | n/a (spread < 2 pp) |")
    for panel in ("adult-lr", "adult-nb", "adult-rf"):
        if (panel, 1.0, dflt) in s.index:
            r = s.loc[(panel, 1.0, dflt)]
            row(f"selection regret ≤ 2 pp, {panel}, T = 1", f"{pp(r.regret)} ± "
                f"{pp(r.regret_se)} pp", r.regret <= 0.02)
    for panel in ("adult-lr", "adult-nb", "adult-rf"):
        for total in (1.0, 4.0):
            if (panel, total, dflt) not in s.index:
                continue
            r, b = s.loc[(panel, total, dflt)], base[(panel, total)]
            # The issue states these targets for the adult-lr grid; on the other panels they
            # are reported, and marked n/a where the panel cannot show them: an oracle less
            # than 8 pp above a random candidate, or candidates within 2 pp of each other.
            headroom = b["oracle"] - b["uniform"]
            flat = b["oracle"] - b["worst"] < 0.02
            gain = r.accuracy - b["uniform"]
            row(f"beats uniform random by ≥ 8 pp, {panel}, T = {total:g}",
                f"{r.accuracy:.3f} ± {r.accuracy_se:.3f} vs {b['uniform']:.3f}: "
                f"{gain * 100:+.1f} pp", gain >= 0.08,
                why_na=(f"oracle − uniform is {pp(headroom)} pp" if headroom < 0.08 else None))
            diff = r.accuracy - b["default"]
            flat_na = "spread < 2 pp" if flat else None
            if total == 1.0:
                row(f"≥ default candidate, {panel}, T = 1",
                    f"{r.accuracy:.3f} ± {r.accuracy_se:.3f} vs {b['default']:.3f} ± "
                    f"{b['default_se']:.3f}: {diff * 100:+.1f} pp", diff >= 0, why_na=flat_na)
            else:
                row(f"within 1 pp of the default candidate, {panel}, T = 4",
                    f"{r.accuracy:.3f} ± {r.accuracy_se:.3f} vs {b['default']:.3f} ± "
                    f"{b['default_se']:.3f}: {diff * 100:+.1f} pp", diff >= -0.01,
                    why_na=flat_na)
    if ("big-lr", 1.0, dflt) in s.index:
        r, b = s.loc[("big-lr", 1.0, dflt)], base[("big-lr", 1.0)]
        gap = b["oracle"] - r.accuracy
        row("within 0.5 pp of the oracle, big-lr, T = 1",
            f"{r.accuracy:.4f} ± {r.accuracy_se:.4f} vs oracle {b['oracle']:.4f} ± "
            f"{b['oracle_se']:.4f}: {-gap * 100:+.2f} pp", gap <= 0.005)
    return lines


# --- CLI -----------------------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["expected", "run", "report"])
    parser.add_argument("--panels", nargs="+", default=list(PANELS))
    parser.add_argument("--reps", nargs="+", default=[],
                        help="run: repetitions, N (every panel) or PANEL=N (default: REPS)")
    parser.add_argument("--totals", nargs="+", type=float, default=list(TOTALS))
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args(argv)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(name) != "1":
            raise SystemExit(f"set {name}=1 (see the module docstring)")
    start = time.perf_counter()
    if args.command == "report":
        report()
    else:
        reps = dict(REPS)
        for entry in args.reps:
            name, _, value = entry.rpartition("=")
            reps.update({name: int(value)} if name else dict.fromkeys(reps, int(value)))
        units = []
        for panel in args.panels:
            if args.command == "expected":  # always over every split of REPS[panel]
                units += expected_units(panel, REPS[panel], args.totals)
            else:
                units += method_units(panel, reps[panel], args.totals, args.methods)
        run_units(units, args.n_jobs, _cached, describe=lambda path: Path(path).relative_to(CACHE))
    print(f"{args.command}: {time.perf_counter() - start:.0f} s", flush=True)


if __name__ == "__main__":
    # Run from the importable module, so that joblib workers can unpickle its functions.
    import end_to_end

    end_to_end.main()
