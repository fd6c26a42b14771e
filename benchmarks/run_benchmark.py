"""Every private tuning method at equal total privacy: test accuracy, regret, wall time.

For each data set, model, total budget and repetition: split off a public test set, train the
oracle (every candidate with the refit budget ``total/2`` on the training data, scored on the
test set), then run every method on the training data and score the model it releases.
Writes ``raw.csv``, ``table.md`` and ``accuracy.png`` to ``--out``
(``results/run_benchmark/`` by default).

This was version 0.1's benchmark: its published run (``results/raw.csv``, ``table.md``,
``accuracy.png`` and RESULTS.md's "Version 0.1's benchmark") came from version 0.1's code. It
runs on the current library: the grid searches set the selector, ``n_partitions``, the
selection epsilon and the refit epsilon as 0.1 did, and take the library's current defaults
for everything else (``partition_scaling="auto"``, ``score_share=0.1``), so a new run
measures today's searches, not 0.1's.

    python benchmarks/run_benchmark.py            # the full configuration (1 to 2 hours)
    python benchmarks/run_benchmark.py --reps 1 --datasets synthetic --synthetic-rows 5000 \
        --models logistic --budgets 1                 # the smallest run (under a minute)
    python benchmarks/run_benchmark.py --table-only --out benchmarks/results   # 0.1's table
    python benchmarks/run_benchmark.py --help     # the other options
"""

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import ParameterGrid, train_test_split

from skdptune.exceptions import FitWarningsWithheld

from lib import datasets, methods
from lib.runs import machine

RESULTS = Path(__file__).resolve().parent / "results"
#: Where a run writes by default: not ``RESULTS`` itself, which keeps version 0.1's published
#: run (``raw.csv``, ``table.md``, ``accuracy.png``; see README.md).
OUT = RESULTS / "run_benchmark"
BUDGETS = (0.5, 1.0, 2.0, 4.0)
#: Partitions of PrivateGridSearchCV per data set (synthetic: larger data, larger partitions).
N_PARTITIONS = {"adult": 20, "synthetic": 50}


def run_cell(dataset, model, total, rep, method_names, config):
    """One repetition of one (data set, model, budget): a list of result rows, one per method."""
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    warnings.filterwarnings("ignore", message=".*selected no candidate.*")
    warnings.filterwarnings("ignore", category=FitWarningsWithheld)  # a notice at every fit
    X, y, row_norm = datasets.load(dataset, config["synthetic_rows"])
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=datasets.TEST_FRACTION, random_state=rep, stratify=y)
    refit_epsilon = (1 - methods.SELECTION_SHARE) * total
    estimator = methods.make_estimator(model, dataset, X.shape[1], row_norm, refit_epsilon)
    grid = methods.GRIDS[model]
    config = dict(config, n_partitions=N_PARTITIONS[dataset])

    # Oracle: computed once per cell and shared by every method (reused from an earlier run's
    # rows with --merge: same split, same budget).
    oracle = config["oracles"].get((dataset, model, total, rep))
    if oracle is None:
        oracle = max(
            methods.with_params(estimator, params).fit(X_train, y_train).score(X_test, y_test)
            for params in ParameterGrid(grid)
        )

    rows = []
    with methods.shared_partition_utilities() as shared:
        for name in method_names:
            paid_before = shared.seconds
            start = time.perf_counter()
            released, (epsilon, delta) = methods.METHODS[name](
                estimator, grid, X_train, y_train, total, rep, config)
            seconds = time.perf_counter() - start
            if name.startswith("grid/"):
                # The first grid search pays the shared partition fits (the later ones find
                # them cached): charge every later one the same amount as well.
                seconds += paid_before
            assert math.isclose(epsilon, total, rel_tol=1e-9), (name, epsilon, total)
            assert delta <= methods.DELTA * (1 + 1e-9), (name, delta)
            accuracy = released.score(X_test, y_test)
            rows.append(dict(dataset=dataset, model=model, budget=total, rep=rep, method=name,
                             accuracy=accuracy, oracle=oracle, regret=oracle - accuracy,
                             seconds=seconds, epsilon=epsilon, delta=delta))
    # Every grid search went through the shared partition utilities (a stale hook would
    # leave each search computing its own, and their times wrong).
    n_grid = sum(name.startswith("grid/") for name in method_names)
    assert shared.calls == n_grid, (shared.calls, n_grid)
    return rows


def complete_repetitions(raw):
    """Only the repetitions that have a row for every (data set, model, budget, method).

    An interrupted run leaves its last repetitions partial; averaging them with the others
    would compare methods on different seeds.
    """
    cells = raw.groupby(["dataset", "model", "budget", "method"]).ngroups
    per_rep = raw.groupby("rep").size()
    keep = per_rep.index[per_rep == cells]
    dropped = sorted(set(per_rep.index) - set(keep))
    if dropped:
        print(f"Leaving out incomplete repetitions {dropped}.")
    return raw[raw["rep"].isin(keep)]


def summarise(raw):
    """Mean and std over repetitions of every (data set, model, budget, method)."""
    keys = ["dataset", "model", "budget", "method"]
    order = {name: i for i, name in enumerate(methods.METHODS)}
    raw = raw.sort_values(["dataset", "model", "budget"], kind="stable")
    raw = raw.iloc[np.argsort([order[m] for m in raw["method"]], kind="stable")]
    raw = raw.sort_values(["dataset", "model", "budget"], kind="stable")
    return raw.groupby(keys, sort=False).agg(
        accuracy=("accuracy", "mean"), accuracy_std=("accuracy", "std"),
        regret=("regret", "mean"), oracle=("oracle", "mean"), seconds=("seconds", "mean"),
        reps=("rep", "count")).reset_index()


def markdown_table(summary):
    """The results as one markdown table."""
    lines = ["| data | model | ε total | method | test accuracy (mean ± std) | regret (mean) "
             "| oracle | time (s) | reps |", "|---|---|---|---|---|---|---|---|---|"]
    for row in summary.itertuples():
        lines.append(
            f"| {row.dataset} | {row.model} | {row.budget:g} | {row.method} "
            f"| {row.accuracy:.3f} ± {row.accuracy_std:.3f} | {row.regret:.3f} "
            f"| {row.oracle:.3f} | {row.seconds:.2f} | {row.reps} |")
    return "\n".join(lines) + "\n"


def regret_overview(summary):
    """Mean regret per method (rows) and (data set, model) (columns), over the budgets."""
    frame = summary.assign(panel=summary["dataset"] + " / " + summary["model"])
    pivot = frame.pivot_table(index="method", columns="panel", values="regret", sort=False)
    pivot = pivot.reindex([m for m in methods.METHODS if m in pivot.index])
    lines = ["| method | " + " | ".join(pivot.columns) + " |",
             "|---|" + "---|" * len(pivot.columns)]
    for method, values in pivot.iterrows():
        lines.append(f"| {method} | " + " | ".join(f"{v:.3f}" for v in values) + " |")
    return "\n".join(lines) + "\n"


def plot(summary, path):
    """Accuracy against budget per method; one panel per (data set, model)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(summary.groupby(["dataset", "model"], sort=False))
    n_cols = 3
    n_rows = math.ceil(len(panels) / n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(5 * n_cols, 4 * n_rows), squeeze=False)
    for ax, ((dataset, model), frame) in zip(axes.flat, panels):
        for i, (name, lines) in enumerate(frame.groupby("method", sort=False)):
            style = "-" if name.startswith("grid/") else ("--" if name != "naive" else ":")
            shifted = lines["budget"] * 2 ** (0.03 * (i - 4))  # keep the error bars apart
            ax.errorbar(shifted, lines["accuracy"], yerr=lines["accuracy_std"],
                        label=name, linestyle=style, marker="o", markersize=3, capsize=2)
        oracle = frame.groupby("budget")["oracle"].mean()
        ax.plot(oracle.index, oracle.values, color="black", linewidth=2, label="oracle")
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(BUDGETS), [f"{b:g}" for b in BUDGETS])
        ax.set_title(f"{dataset} / {model}")
        ax.set_xlabel("total ε")
        ax.set_ylabel("test accuracy")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=9)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20, help="repetitions (default 20)")
    parser.add_argument("--first-rep", type=int, default=0,
                        help="seed of the first repetition (to add repetitions with --merge)")
    parser.add_argument("--datasets", nargs="+", default=["adult", "synthetic"])
    parser.add_argument("--models", nargs="+", default=list(methods.GRIDS))
    parser.add_argument("--budgets", nargs="+", type=float, default=list(BUDGETS))
    parser.add_argument("--methods", nargs="+", default=list(methods.METHODS))
    parser.add_argument("--synthetic-rows", type=int, default=datasets.SYNTHETIC_ROWS)
    parser.add_argument("--mean-trials", type=float, default=10.0,
                        help="mean number of trials of the randomized searches (default 10)")
    parser.add_argument("--n-jobs", type=int, default=2, help="cells run in parallel")
    parser.add_argument("--merge", action="store_true",
                        help="keep the rows already in OUT/raw.csv (and their oracles), "
                             "replacing those this run recomputes")
    parser.add_argument("--table-only", action="store_true",
                        help="run nothing: rebuild table.md and accuracy.png from OUT/raw.csv "
                             "(e.g. after an interrupted run)")
    parser.add_argument("--out", type=Path, default=OUT,
                        help="output folder (default benchmarks/results/run_benchmark)")
    return parser.parse_args(argv)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    dataset_names = list(args.datasets)
    if "adult" in dataset_names and not datasets.adult_available():
        print(f"Skipping Adult: {datasets.ADULT_PATH} not found (see benchmarks/README.md). "
              "Running the synthetic data set only.")
        dataset_names.remove("adult")
    args.out.mkdir(parents=True, exist_ok=True)
    raw_path = args.out / "raw.csv"
    if args.table_only:
        write_outputs(raw_path, f"Rebuilt from `{raw_path.name}` with `python "
                      f"benchmarks/run_benchmark.py {' '.join(argv)}`; the run that produced "
                      "it is described in `benchmarks/RESULTS.md`.", args.out)
        return
    previous = pd.read_csv(raw_path) if args.merge and raw_path.exists() else pd.DataFrame()
    oracles = {} if previous.empty else {
        (r.dataset, r.model, r.budget, r.rep): r.oracle for r in previous.itertuples()}
    config = {"synthetic_rows": args.synthetic_rows, "mean_trials": args.mean_trials,
              "validation_fraction": 0.2, "oracles": oracles}
    # Repetition-major order: an interrupted run leaves complete repetitions in raw.csv.
    cells = [(d, m, b, r) for r in range(args.first_rep, args.first_rep + args.reps)
             for d in dataset_names for m in args.models for b in args.budgets]
    print(f"{len(cells)} cells x {len(args.methods)} methods on {args.n_jobs} jobs; "
          f"{machine()}", flush=True)

    start = time.perf_counter()
    key = ("dataset", "model", "budget", "rep", "method")
    rows = {tuple(row[k] for k in key): row for row in previous.to_dict("records")}
    for cell_rows in Parallel(n_jobs=args.n_jobs, verbose=5, return_as="generator")(
            delayed(run_cell)(*cell, args.methods, config) for cell in cells):
        rows.update({tuple(row[k] for k in key): row for row in cell_rows})
        pd.DataFrame(list(rows.values())).to_csv(raw_path, index=False)  # after every cell
    elapsed = time.perf_counter() - start

    write_outputs(raw_path, f"Command: `python benchmarks/run_benchmark.py {' '.join(argv)}`"
                  f" ({elapsed / 60:.1f} min).", args.out)
    print(f"done in {elapsed / 60:.1f} min; wrote {args.out}")


def write_outputs(raw_path, provenance, out):
    """``table.md`` and ``accuracy.png`` from the complete repetitions in ``raw.csv``."""
    raw = complete_repetitions(pd.read_csv(raw_path))
    if raw.empty:
        print("No complete repetition yet: nothing to tabulate.")
        return
    summary = summarise(raw)
    reps = sorted(raw["rep"].unique())
    header = (f"{provenance}\n\nMachine: {machine()}\n\n{len(reps)} repetitions "
              f"(seeds {reps[0]}..{reps[-1]}) per row.\n\n")
    overview = ("\n## Mean regret over the four budgets\n\n" + regret_overview(summary))
    (out / "table.md").write_text(header + markdown_table(summary) + overview)
    plot(summary, out / "accuracy.png")
    print(markdown_table(summary))


if __name__ == "__main__":
    main()
