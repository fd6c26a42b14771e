"""Issue 18: how the number of partitions ``k`` trades partition fidelity for selection noise,
on the tables of ``tuning_pays.py`` and Adult (the experiment behind ``n_partitions="auto"``).

Settings FIXED on 25 November 2026, before any result of this script:

- **Panels and totals**: ``tuning_pays.py``'s classification and ridge panels at T in
  {0.5, 1, 4}, and ``adult-lr`` at T in {1, 2} (``hi-lr`` and ``hi-nb``, the held-out table,
  were added after the rules had been compared on the others, to check the choice); every search as ``tuning_pays.py``'s
  ``default-share0.25`` method (``default=`` the panel's default candidate,
  ``selection_share=0.25``, everything else at its default) but with ``n_partitions=k``.
- **k**: the ladder {25, 50, 100, 200, 400, 1000}, and the ``k`` each rule below picks, where a
  partition's training part keeps at least 50 records (the library's floor).
- **Rules** compared (each a function of public quantities only: ``n``, the number of
  candidates ``m``, the selector's epsilon):
  ``current`` (``min(2 ln(m) / (0.03 epsilon), n (1 - v) / 50, 1000)``, the library's rule on
  25 November 2026), ``noise0.01`` (the same with a noise term of 0.01) and ``floor`` (as many
  partitions as the 50-record floor and the cap of 1000 allow). Added after the first results
  had shown Adult's selection limited by the floor (so not blind to them): ``current-floor25``
  and ``noise0.01-floor25``, the first two with a floor of 25 records.
- **Draws**: 2 independent partitionings (secure noise) per panel, T and k (8 at the rules'
  k for ``adult-lr``, ``hi-lr`` and ``hi-nb``, added after the first results: ``--draws 8
  --rules-only``). Each search's
  partition utilities are kept (``lib/partition_hook.py``). Expected scores at T are
  ``tuning_pays.py``'s (``results/tuning_pays/expected.csv``, and ``check/expected.csv`` for
  the ridge panels and Adult; refits of the candidates alone, untouched by any search); for
  the GaussianNB panels of flights and fertility, 100 refits (``refits100/expected.csv``,
  added on 25 November 2026 after the first report: with 10 refits the expected accuracy of
  flights-nb's candidates had standard errors of up to 2.6 points, as large as the regrets).
- **Analysis**: from each draw's utilities, the selection is replayed ``SIMULATIONS = 2000``
  times with the library's own ``PermuteAndFlip`` and ``default_offsets`` (sensitivity
  ``1 / k``, the search's selector epsilon), with the default margin at tail probability
  ``1 / m`` (the library's ``"auto"``), ``1 / 2`` and ``1`` (no margin). Reported per cell:
  the noise-free argmax regret of the utilities (fidelity), and for each margin the expected
  selection regret and gain over the default candidate, both from expected scores at T (the
  refit's share is the same for every k and margin, so it leaves the comparison unchanged).

Commands (repository root)::

    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=.
    python benchmarks/partition_size.py run            # resumable; utilities.csv
    python benchmarks/partition_size.py report         # table.md from utilities.csv

Outputs in ``benchmarks/results/partition_size/``.
"""

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tuning_pays  # noqa: E402
from lib.runs import machine  # noqa: E402
from skdptune import PrivateGridSearchCV  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "partition_size"
EXPECTED = tuning_pays.RESULTS / "expected.csv"
CHECK_EXPECTED = tuning_pays.RESULTS / "check" / "expected.csv"
REFITS100_EXPECTED = tuning_pays.RESULTS / "refits100" / "expected.csv"

PANELS = ["flights-lr", "flights-nb", "fertility-lr", "fertility-nb", "diamonds-ridge",
          "cps1988-ridge", "adult-lr", "hi-lr", "hi-nb"]
TOTALS = {"adult-lr": (1.0, 2.0)}
DEFAULT_TOTALS = (0.5, 1.0, 4.0)
LADDER = (25, 50, 100, 200, 400, 1000)
DRAWS = 2
#: ``tuning_pays.py``'s method the searches follow, and the shares of T it gives.
METHOD = "default-share0.25"
SELECTION_SHARE = tuning_pays.METHODS[METHOD]["selection_share"]
REFIT_SHARE = tuning_pays.refit_share(METHOD)
#: The search's defaults (the selector gets ``1 - score_share`` of the selection's part).
_SEARCH_DEFAULTS = PrivateGridSearchCV(None, {}).get_params()
VALIDATION_FRACTION = _SEARCH_DEFAULTS["validation_fraction"]
SCORE_SHARE = _SEARCH_DEFAULTS["score_share"]
#: The library's floor of training records per partition when the rules were fixed (it is
#: ``skdptune._partition.MIN_TRAINING_RECORDS``, now 25, since this experiment).
FLOOR = 50
CAP = 1000
SIMULATIONS = 2000
#: The default margin's tail probability: ``1 / m`` (the library's "auto"), 1/2, 1 (none).
MARGINS = {"1/m": None, "1/2": 0.5, "none": 1.0}


def rules(n, m, epsilon):
    """``{rule: k}`` of the rules compared (see the docstring)."""
    def data(records):
        return n * (1 - VALIDATION_FRACTION) / records

    def noise(target):
        return 2.0 * math.log(max(m, 2)) / (target * epsilon)

    pick = {"current": min(noise(0.03), data(FLOOR), CAP),
            "noise0.01": min(noise(0.01), data(FLOOR), CAP),
            "floor": min(data(FLOOR), CAP),
            # Added after the first results (Adult's selection was limited by the floor):
            "current-floor25": min(noise(0.03), data(25), CAP),
            "noise0.01-floor25": min(noise(0.01), data(25), CAP)}
    return {name: int(max(2, k)) for name, k in pick.items()}


def k_values(n, m, epsilon):
    k_data = n * (1 - VALIDATION_FRACTION) / FLOOR
    return sorted({k for k in LADDER if k <= k_data} | set(rules(n, m, epsilon).values()))


def _panel(name):
    return {**tuning_pays.PANELS, **tuning_pays.EXTRA_PANELS}[name]


def search_utilities(panel, total, k, split):
    """One search with ``n_partitions=k``: ``(utilities, selected index, selector epsilon)``."""
    search, utilities, _, _ = tuning_pays.fit_search(panel, total, split, METHOD, n_partitions=k)
    assert search.n_partitions_ == k, (panel.name, k)
    return utilities, int(search.best_index_), float(search.privacy_report_["selector_epsilon"])


def run(out, panels, draws=DRAWS, rules_only=False):
    out.mkdir(parents=True, exist_ok=True)
    path = out / "utilities.csv"
    done = set()
    if path.exists():
        with path.open() as handle:
            done = {(r["panel"], float(r["total_epsilon"]), int(r["k"]), int(r["draw"]))
                    for r in csv.DictReader(handle)}
    fields = ["panel", "total_epsilon", "k", "draw", "train_rows", "selector_epsilon",
              "selected", "default", "seconds", "utilities"]
    for name in panels:
        panel = _panel(name)
        split = panel.split()
        declarations = split[4]
        cands = tuning_pays.candidates(panel, declarations)
        default = tuning_pays.default_index(panel, declarations, cands)
        n = len(split[2])
        for total in TOTALS.get(name, DEFAULT_TOTALS):
            planned = (1 - SCORE_SHARE) * SELECTION_SHARE * total  # the selector's epsilon
            ks = (sorted(set(rules(n, len(cands), planned).values())) if rules_only
                  else k_values(n, len(cands), planned))
            for k in ks:
                for draw in range(draws):
                    if (name, total, k, draw) in done:
                        continue
                    start = time.perf_counter()
                    utilities, selected, epsilon = search_utilities(panel, total, k, split)
                    seconds = time.perf_counter() - start
                    new = not path.exists()
                    with path.open("a", newline="") as handle:
                        writer = csv.DictWriter(handle, fieldnames=fields)
                        if new:
                            writer.writeheader()
                        writer.writerow({
                            "panel": name, "total_epsilon": total, "k": k, "draw": draw,
                            "train_rows": n, "selector_epsilon": epsilon, "selected": selected,
                            "default": default, "seconds": round(seconds, 2),
                            "utilities": " ".join(f"{u:.6f}" for u in utilities)})
                    print(f"{name} T={total:g} k={k} draw {draw}: {seconds:.1f} s", flush=True)


def _expected(panel, total, cands):
    """Expected scores at epsilon ``total`` per candidate, in the grid's order, from the first
    ``expected.csv`` that has them all (None if none has)."""
    # The most refits first, then the first run's, then the later panels'.
    for path in (REFITS100_EXPECTED, EXPECTED, CHECK_EXPECTED):
        scores = tuning_pays.reused_scores(path, panel, total, cands)
        if scores is not None:
            return scores[0]
    return None


def _declarations(name):
    """The panel's declarations (the grid is built from them)."""
    panel = _panel(name)
    if name == "adult-lr":  # not a registry table: its split carries them
        return panel.split()[4]
    return tuning_pays.datasets.table_split(panel.table)[4]


def replay(utilities, default, k, epsilon, tail, rng):
    """Indices selected in ``SIMULATIONS`` replays of the search's selection."""
    from skdptune.selection import PermuteAndFlip
    from skdptune.selection._base import default_offsets

    selector = PermuteAndFlip()
    m = len(utilities)
    margin = "auto" if tail is None else selector.tail_lead(tail, sensitivity=1 / k,
                                                            epsilon=epsilon)
    offsets = default_offsets(selector, m, default, margin, sensitivity=1 / k, epsilon=epsilon)
    return np.array([selector.select(utilities, sensitivity=1 / k, epsilon=epsilon, delta=0.0,
                                     offsets=offsets, random_state=rng).index
                     for _ in range(SIMULATIONS)])


def report(out):
    with (out / "utilities.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    cells = {}
    for r in rows:
        cells.setdefault((r["panel"], float(r["total_epsilon"])), []).append(r)
    candidates = {name: tuning_pays.candidates(_panel(name), _declarations(name))
                  for name in {name for name, _ in cells}}
    rng = np.random.RandomState(0)
    lines = ["# Partitions against fidelity and selection noise (issue 18)", "",
             f"Generated by `python benchmarks/partition_size.py report`; machine: {machine()}.",
             "",
             "Per panel, T and k (mean over the draws): training records per partition, the "
             "noise-free argmax regret of the partition utilities, and for each default margin "
             "(tail probability) the expected selection regret and gain over the default "
             "candidate (expected scores at T, percentage points); where the candidates were "
             "also refit at the searches' refit epsilon (0.7125 T), the regret against the best "
             "candidate there. Rules: the k each rule picks.", "",
             "| panel | T | k | records per partition | rules | argmax regret | "
             + " | ".join(f"regret ({t}) | gain ({t})" for t in MARGINS)
             + " | regret (1/m) against the best candidate at the refit's epsilon |",
             "|---|---|---|---|---|---|" + "---|---|" * len(MARGINS) + "---|"]
    summary = {}
    for (name, total), group in sorted(cells.items(), key=lambda c: (PANELS.index(c[0][0]),
                                                                     c[0][1])):
        cands = candidates[name]
        m = len(cands)
        expected = _expected(_panel(name), total, cands)
        assert expected is not None, (name, total)
        # The best candidate for the epsilon the refit gets, where it was measured.
        at_refit = _expected(_panel(name), REFIT_SHARE * total, cands)
        oracle = expected.max()
        default = int(group[0]["default"])
        n = int(group[0]["train_rows"])
        epsilon = float(group[0]["selector_epsilon"])
        picks = rules(n, m, epsilon)
        by_k = {}
        for r in group:
            by_k.setdefault(int(r["k"]), []).append(r)
        for k, draws in sorted(by_k.items()):
            argmax, regrets, gains = [], {t: [] for t in MARGINS}, {t: [] for t in MARGINS}
            refit_regrets = []
            for r in draws:
                u = np.array([float(x) for x in r["utilities"].split()])
                argmax.append(oracle - expected[int(np.argmax(u))])
                for t, tail in MARGINS.items():
                    indices = replay(u, default, k, epsilon, tail, rng)
                    if tail is None and at_refit is not None:
                        refit_regrets.append(at_refit.max() - at_refit[indices].mean())
                    chosen = expected[indices]
                    regrets[t].append(oracle - chosen.mean())
                    gains[t].append(chosen.mean() - expected[default])
            named = ", ".join(rule for rule, value in picks.items() if value == k)
            stats = {t: (100 * np.mean(regrets[t]), 100 * np.mean(gains[t])) for t in MARGINS}
            for rule, value in picks.items():
                if value == k:
                    summary.setdefault(rule, []).append((name, total, n, stats))
            lines.append(
                f"| {name} | {total:g} | {k} | {n * (1 - VALIDATION_FRACTION) / k:,.0f} | "
                f"{named} | {100 * np.mean(argmax):.1f} | "
                + " | ".join(f"{stats[t][0]:.1f} | {stats[t][1]:+.1f}" for t in MARGINS)
                + (f" | {100 * np.mean(refit_regrets):.1f} |" if refit_regrets else " | |"))
    lines += ["", "Per rule, over the cells (panel, T) it was probed in: mean and worst gain over "
                  "the default, and the largest selection regret in cells of >= 40,000 rows; "
                  "over every cell (the ridge panels' R² points dominate the mean) and over the "
                  "classification cells (accuracy points).",
              "", "| rule | margin | cells | mean gain | worst gain | largest regret at >= 40,000 "
                  "rows | cells above 1 pp |", "|---|---|---|---|---|---|---|"]
    for label, keep in (("", lambda e: True),
                        (" (classification)", lambda e: not e[0].endswith("-ridge"))):
        for rule, entries in summary.items():
            entries = [e for e in entries if keep(e)]
            for t in MARGINS:
                gains = [e[3][t][1] for e in entries]
                big = [e[3][t][0] for e in entries if e[2] >= 40_000]
                largest = f"{max(big):.2f}" if big else "(no such cell)"
                lines.append(f"| {rule}{label} | {t} | {len(entries)} | {np.mean(gains):+.2f} | "
                             f"{min(gains):+.2f} | {largest} | {sum(b > 1 for b in big)} "
                             f"of {len(big)} |")
    text = "\n".join(lines) + "\n"
    (out / "table.md").write_text(text)
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("command", choices=["run", "report"])
    parser.add_argument("--panels", nargs="+", choices=PANELS, default=PANELS)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--draws", type=int, default=DRAWS,
                        help=f"partitionings per panel, T and k (default {DRAWS})")
    parser.add_argument("--rules-only", action="store_true",
                        help="only the k the rules pick (more draws where they differ)")
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.out, args.panels, args.draws, args.rules_only)
    print(report(args.out))


if __name__ == "__main__":
    main()
