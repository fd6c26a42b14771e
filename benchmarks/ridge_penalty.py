"""Where is the best ridge penalty, in records or in units of the noise? (issue 18)

``skdptune.linear_model.Ridge`` on ``tuning_pays.py``'s regression tables (``diamonds``,
``cps1988``: their split, declared bounds and score, R² of the predictions clipped to
``bounds_y``), refit on the fixed training part at epsilon 0.36, 0.5, 0.71, 1, 2, 2.85 and 4
(the totals 0.5, 1, 4 of ``tuning_pays.py`` and its ``default-share0.25`` refit epsilons,
``0.7125 T``), ``REFITS`` refits each (secure noise), scored on the test part, with the
penalty given two ways:

- ``alpha`` in records (scikit-learn's convention), ``noise_alpha=0``: the decades 1 to 1e5
  of ``tuning_pays.py``'s ``ridge`` panels;
- ``noise_alpha`` in units of ``noise_scale`` (the public spectral scale of the noise on
  ``X'X``), ``alpha=0``: 0.25 to 8 in steps of about a factor of 1.4.

The question (asked before running it): is the best ``noise_alpha`` a constant across
epsilon where the best ``alpha`` is not? If so, one grid and one default in ``noise_alpha``
mean the same thing at every budget, and a search's selection at its share of epsilon picks
what is best for its refit. Output: ``benchmarks/results/ridge_penalty/table.md`` (mean R²
per setting, and per epsilon the best of each grid) and ``scores.csv`` (every refit).
``--tables movies --out benchmarks/results/ridge_penalty/movies`` runs the same on
``ggplot2movies``' ``movies``, held out from the choice of ``NOISE_ALPHA`` (added on 25
November 2026, after that choice).

Command (from the repository root; needs ``pip install -e .[benchmark-data]``)::

    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=.
    python benchmarks/ridge_penalty.py            # about 5 minutes on 2 cores
    python benchmarks/ridge_penalty.py --tables movies --out benchmarks/results/ridge_penalty/movies
"""

import argparse
import csv
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tuning_pays  # noqa: E402
from lib.refits import Scored, add_refits, pooled  # noqa: E402
from lib.runs import machine  # noqa: E402

from skdptune._models.linear_model import noise_scale  # noqa: E402

TABLES = ("diamonds", "cps1988")
EPSILONS = (0.36, 0.5, 0.71, 1.0, 2.0, 2.85, 4.0)
ALPHAS = (1.0, 10.0, 100.0, 1e3, 1e4, 1e5)
NOISE_ALPHAS = (0.25, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0, 8.0)
REFITS = 10
OUT = Path(__file__).resolve().parent / "results" / "ridge_penalty"


def settings():
    """The penalties compared, as ``Ridge`` parameters, in the cache's row order."""
    return ([{"alpha": a, "noise_alpha": 0.0} for a in ALPHAS]
            + [{"alpha": 0.0, "noise_alpha": c} for c in NOISE_ALPHAS])


def run(refits, out, n_rows=None, tables=TABLES, epsilons=EPSILONS):
    """Refit every setting (cached in ``out/cache``); return the rows of ``scores.csv``."""
    rows = []
    for table in tables:
        panel = tuning_pays.PANELS[f"{table}-ridge-noise"]  # its table, split and bounds
        X_train, X_test, y_train, y_test, declarations = panel.split(n_rows)
        box = tuning_pays._box(declarations, 1.0, 1.0)
        for epsilon in epsilons:
            def make_model(params, epsilon=epsilon):
                model = panel.estimator(declarations, epsilon).set_params(**params)
                return Scored(model, declarations)

            path = out / "cache" / f"{table}_eps{epsilon:g}_n{len(y_train)}.npz"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # data outside the declared bounds are clipped
                add_refits(path, settings(), make_model, (X_train, y_train), (X_test, y_test),
                           refits)
            mean, se, n = pooled([path])
            scale = noise_scale(epsilon, box)
            for params, m, s in zip(settings(), mean, se):
                rows.append({"table": table, "train_rows": len(y_train), "epsilon": epsilon,
                             "noise_scale": scale, **params, "mean": m,
                             "standard_error": s, "refits": n})
            print(f"{table} epsilon={epsilon:g}: noise_scale {scale:.4g}", flush=True)
    return rows


def report(rows):
    """The Markdown table: per table and epsilon, each setting's mean R² (points)."""
    lines = ["| table (training rows) | epsilon | noise_scale | best `alpha` (R²) | best "
             "`noise_alpha` (R², as `alpha`) | " + " | ".join(f"`noise_alpha`={c:g}"
                                                            for c in NOISE_ALPHAS) + " |",
             "|---|---|---|---|---|" + "---|" * len(NOISE_ALPHAS)]
    for table in dict.fromkeys(row["table"] for row in rows):
        for epsilon in dict.fromkeys(row["epsilon"] for row in rows if row["table"] == table):
            cell = [row for row in rows if row["table"] == table and row["epsilon"] == epsilon]
            by_alpha = [row for row in cell if row["noise_alpha"] == 0.0]
            by_noise = [row for row in cell if row["alpha"] == 0.0]
            a = max(by_alpha, key=lambda row: row["mean"])
            c = max(by_noise, key=lambda row: row["mean"])
            scale = cell[0]["noise_scale"]
            lines.append(
                f"| {table} ({cell[0]['train_rows']:,}) | {epsilon:g} | {scale:,.0f} | "
                f"{a['alpha']:g} ({100 * a['mean']:.1f}) | {c['noise_alpha']:g} "
                f"({100 * c['mean']:.1f}, {c['noise_alpha'] * scale:,.0f}) | "
                + " | ".join(f"{100 * row['mean']:.1f} ± {100 * row['standard_error']:.1f}"
                             for row in by_noise) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refits", type=int, default=REFITS)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--tables", nargs="+", default=list(TABLES),
                        choices=["diamonds", "cps1988", "movies"])
    parser.add_argument("--smoke", action="store_true",
                        help="1,000 rows a table, one epsilon, 2 refits (checks the script)")
    args = parser.parse_args(argv)
    smoke = dict(n_rows=tuning_pays.SMOKE_ROWS, epsilons=(1.0,)) if args.smoke else {}
    rows = run(2 if args.smoke else args.refits, args.out, tables=args.tables, **smoke)
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "scores.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    table = report(rows)
    (args.out / "table.md").write_text(
        "# Ridge penalty in records or in units of the noise (issue 18)\n\nGenerated by "
        "`python benchmarks/ridge_penalty.py`; machine: " + machine() + ".\n\n"
        "Mean R² (points) of the clipped test predictions over the refits, ± standard "
        "error.\n\n" + table)
    print(table)


if __name__ == "__main__":
    main()
