"""Fidelity study: do partition utilities rank candidates as the refit would, and what follows
for the defaults (n_partitions, selector, budget split)?

Sub-commands (each writes a CSV under ``results/fidelity/``; expensive intermediate results are
cached as ``.npz`` under ``results/fidelity/cache/`` so that a run can be stopped and resumed):

- ``expected`` (A): expected full-data accuracy of every candidate at every refit epsilon the
  other experiments use: mean test accuracy of R independent DP refits on the training part of
  each repetition (pooled over the repetitions), with its standard error.
- ``fidelity`` (B): Spearman correlation between mean partition utilities and A, with
  ``partition_scaling`` off (candidates as written) and on (the library's rescaling), per k.
- ``regret`` (C): selection regret of the library's selectors (and the doubling prototypes of
  D) against k and the selection epsilon, refit noise removed.
- ``doubling`` (D): a table of the doubling prototypes against the faithful loop and the
  one-shot selectors (from the C runs), and the rate at which a run hits its cap.
- ``share`` (E): the budget split between selection and refit, end to end, with baselines.
- ``summary``: ``results/fidelity/summary.md`` from the CSVs.

Building blocks are the library's own: ``partition_labels``/``split_indices``,
``partition_ratio``/``rescaled_params``, ``partition_utilities``, ``make_utility`` and the
selectors of ``skdptune.selection``. Nothing here changes the library.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        PYTHONPATH=. python benchmarks/fidelity_study.py expected --panels adult-lr
"""

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from diffprivlib.accountant import BudgetAccountant
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib import fidelity_summary, speedups  # noqa: E402
from lib.fidelity_settings import (  # noqa: E402
    CONFIG, DELTA, E_SELECTORS, LIBRARY_SELECTORS, PROTOTYPES, REPS, SELECTION_EPSILONS,
    SELECTOR_RUNS, VALIDATION_FRACTION, auto_partitions)
from lib.panels import PANELS, TEST_FRACTION, split  # noqa: E402
from lib.refits import add_refits, cached_refits, pooled  # noqa: E402
from lib.runs import run_units, stable_seed  # noqa: E402
from skdptune._accounting import calibrate_epsilon_per_step  # noqa: E402
from skdptune._dp_fit import with_params  # noqa: E402
from skdptune._evaluate import partition_utilities  # noqa: E402
from skdptune._partition import partition_labels, split_indices  # noqa: E402
from skdptune._partition_scaling import partition_ratio, rescaled_params  # noqa: E402
from skdptune.selection import SELECTORS  # noqa: E402
from skdptune.selection._doubling import _n_levels, auto_max_iter  # noqa: E402
from skdptune._utility import make_utility  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "fidelity"
CACHE = OUT / "cache"


def setup_worker():
    """Every process: exact diffprivlib speed-ups (checked), warnings off."""
    warnings.filterwarnings("ignore")
    speedups.check()
    speedups.install()


def refit_epsilons(panel):
    """Every refit epsilon at which A is needed for ``panel``."""
    config = CONFIG[panel]
    values = set(config["b_epsilons"])
    for total in config["totals"]:
        values.add(total)
        values.update(round((1 - s) * total, 6) for s in config["shares"])
    return sorted(values)


def _key(value):
    return f"{value:g}"


# --- A: expected full-data accuracy ---------------------------------------------------------


def a_path(panel, rep, epsilon):
    return CACHE / "A" / panel / f"rep{rep}_eps{_key(epsilon)}.npz"


def a_unit(panel_name, rep, epsilon, refits):
    """R DP refits of every candidate on the repetition's training part; test accuracies."""
    setup_worker()
    panel = PANELS[panel_name]
    X_train, X_test, y_train, y_test = split(panel_name, rep)

    def make_model(params):
        return with_params(panel.estimator(epsilon), params).set_params(
            accountant=BudgetAccountant())

    return add_refits(a_path(panel_name, rep, epsilon), panel.candidates, make_model,
                      (X_train, y_train), (X_test, y_test), refits)


def expected_table(panel_name, epsilon):
    """``(mean, standard error, n)`` per candidate, pooled over the cached repetitions."""
    paths = [a_path(panel_name, rep, epsilon) for rep in REPS
             if a_path(panel_name, rep, epsilon).exists()]
    return pooled(paths) if paths else None


# --- Partition utilities (B, C, E) ----------------------------------------------------------


def u_path(panel, rep, k, epsilon, scaling):
    return CACHE / "U" / panel / f"rep{rep}_k{k}_eps{_key(epsilon)}_{scaling}.npz"


def partition_seed(rep, k):
    """Same partitions for scaling on / off and every refit epsilon (common random numbers)."""
    return 10_000 * (rep + 1) + k


def u_unit(panel_name, rep, k, epsilon, scaling):
    """Mean partition utilities of every candidate (library building blocks only)."""
    setup_worker()
    path = u_path(panel_name, rep, k, epsilon, scaling)
    if path.exists():
        return path
    panel = PANELS[panel_name]
    X_train, _, y_train, _ = split(panel_name, rep)
    start = time.perf_counter()
    partition, is_validation = partition_labels(
        len(y_train), k, VALIDATION_FRACTION, random_state=partition_seed(rep, k))
    splits = split_indices(partition, is_validation, k)
    ratio = partition_ratio(k, VALIDATION_FRACTION)
    base = panel.estimator(epsilon)
    _, utility = make_utility(base, "accuracy", None)
    candidates = []
    for params in panel.candidates:
        params = {**params, "epsilon": epsilon}
        if scaling == "on":  # what partition_scaling="auto" does in PrivateGridSearchCV._plan
            params.update(rescaled_params(with_params(base, params), ratio, None))
        candidates.append(params)
    utilities = partition_utilities(base, candidates, X_train, y_train, splits, {}, utility,
                                    0.0, n_jobs=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, utilities=utilities, seconds=time.perf_counter() - start)
    return path


def load_utilities(panel, rep, k, epsilon, scaling):
    path = u_path(panel, rep, k, epsilon, scaling)
    return np.load(path)["utilities"] if path.exists() else None


# --- Selectors: the library's, and the doubling prototypes of D ------------------------------


def prototype_doubling(utilities, sensitivity, epsilon, delta, rng, order="grid",
                       noise="ding_wu", max_iter="auto", granularity=0.01, floor=0.0):
    """PROTOTYPE, NOT LIBRARY CODE: the loop of skdptune/selection/doubling.py with variants.

    Every variant keeps each iteration one AboveThreshold run that is eps0-DP for queries of
    sensitivity Delta that need not be monotone, and composes ``max_iter`` of them with the
    library's calibration (``calibrate_epsilon_per_step``), as the library does.

    order : "grid" (the library), "shuffle_run" (one uniformly random order per run, drawn
        before the loop: data-independent) or "shuffle_iter" (a fresh one per iteration).
    noise : "ding_wu" (the library: threshold Lap(2 Delta / eps0), queries Lap(4 Delta / eps0),
        i.e. eps1 = eps2 = eps0 / 2) or "lyu" (Lyu, Su & Li 2017, one positive answer:
        threshold Lap(Delta / eps1), queries Lap(2 Delta / eps2), eps1 : eps2 = 1 : 2^(2/3),
        eps1 + eps2 = eps0).
    max_iter : "auto" (the library's cap) or an int.

    Returns ``(index or None, iterations run, hit_cap)``; noise from ``rng`` (numpy: seeded,
    not private: a study, not a release).
    """
    m = len(utilities)
    cap = auto_max_iter(granularity, floor) if max_iter == "auto" else int(max_iter)
    eps0 = calibrate_epsilon_per_step(float(epsilon), float(delta), cap)
    if noise == "ding_wu":
        threshold_scale, query_scale = 2 * sensitivity / eps0, 4 * sensitivity / eps0
    elif noise == "lyu":
        eps1 = eps0 / (1 + 2 ** (2 / 3))
        eps2 = eps0 - eps1
        threshold_scale, query_scale = sensitivity / eps1, 2 * sensitivity / eps2
    else:
        raise ValueError(noise)
    n_levels = _n_levels(granularity, floor)
    level, step, index, iterations = 0, 1, None, 0
    permutation = rng.permutation(m) if order == "shuffle_run" else np.arange(m)
    while step > 0 and level < n_levels and iterations < cap:
        if order == "shuffle_iter":
            permutation = rng.permutation(m)
        proposed = floor + (level + step) * granularity
        noisy_threshold = proposed + rng.laplace(0.0, threshold_scale)
        # Queries walked in order with fresh noise; the first that passes stops the walk (the
        # noise of the candidates after it is never used, so drawing it all at once is the
        # same distribution).
        noisy = utilities[permutation] + rng.laplace(0.0, query_scale, m)
        passing = np.flatnonzero(noisy >= noisy_threshold)
        passed = None if passing.size == 0 else int(permutation[passing[0]])
        iterations += 1
        if passed is None:
            step //= 2
        else:
            index, level, step = passed, level + step, step * 2
    hit_cap = iterations == cap and step > 0 and level < n_levels
    return index, iterations, hit_cap


def run_selector(name, utilities, k, epsilon, runs, rng):
    """``(indices, iterations, hit_cap)`` of ``runs`` selections; None -> candidate 0, as
    PrivateGridSearchCV falls back to the first candidate of the grid."""
    indices = np.empty(runs, dtype=int)
    iterations = np.ones(runs, dtype=int)
    hit = np.zeros(runs, dtype=bool)
    if name in SELECTORS:
        selector = SELECTORS[name]()
        for r in range(runs):
            result = selector.select(utilities, sensitivity=1.0 / k, epsilon=epsilon,
                                     delta=DELTA, random_state=rng)
            indices[r] = 0 if result.index is None else result.index
            iterations[r] = result.n_iterations
            if name == "doubling":
                # Capped: the loop ended by the cap, not by step 0 or u >= 1.
                last_step = result.trace[-1].step * (2 if result.trace[-1].passed is not None
                                                     else 0.5)
                hit[r] = (result.n_iterations == result.max_iter and last_step >= 1
                          and result.score < 1 - 1e-9)
    else:
        for r in range(runs):
            index, iterations[r], hit[r] = prototype_doubling(
                utilities, 1.0 / k, epsilon, DELTA, rng, **PROTOTYPES[name])
            indices[r] = 0 if index is None else index
    return indices, iterations, hit


# --- Work scheduling ----------------------------------------------------------------------------


def _cached(unit):
    function, *args = unit
    if function is a_unit:
        panel, rep, epsilon, refits = args
        return cached_refits(a_path(panel, rep, epsilon)) >= refits
    return u_path(*args).exists()


def a_units(panel, epsilons=None):
    refits = CONFIG[panel]["refits"]
    return [(a_unit, panel, rep, eps, refits) for eps in (epsilons or refit_epsilons(panel))
            for rep in REPS]


def b_units(panel, scalings=("on", "off")):
    config = CONFIG[panel]
    off_reps = config.get("off_reps", {})
    units = [(u_unit, panel, rep, k, eps, scaling) for eps in config["b_epsilons"]
             for scaling in scalings for rep in config["b_reps"] for k in config["ks"]
             if scaling == "on" or rep in off_reps.get(k, config["b_reps"])]
    # Extra partition counts, scaling on only (for C), run last.
    units += [(u_unit, panel, rep, k, eps, "on") for eps in config["b_epsilons"]
              for k, reps in config.get("extra_on", {}).items() for rep in reps]
    return units


# --- B: fidelity table ---------------------------------------------------------------------


def fidelity(panels):
    rows = []
    for panel in panels:
        config = CONFIG[panel]
        for eps in config["b_epsilons"]:
            table = expected_table(panel, eps)
            if table is None:
                continue
            mean, se, n = table
            for k in list(config["ks"]) + list(config.get("extra_on", {})):
                for scaling in ("off", "on"):
                    for rep in config["b_reps"]:
                        u = load_utilities(panel, rep, k, eps, scaling)
                        if u is None:
                            continue
                        rho = spearmanr(u, mean).statistic if np.ptp(u) > 0 else float("nan")
                        rows.append(dict(
                            panel=panel, refit_epsilon=eps, k=k, scaling=scaling, rep=rep,
                            spearman=rho, argmax_regret=mean.max() - mean[int(np.argmax(u))],
                            argmax=int(np.argmax(u)), best=int(np.argmax(mean)),
                            utility_min=u.min(), utility_max=u.max(),
                            seconds=float(np.load(u_path(panel, rep, k, eps, scaling))
                                          ["seconds"])))
    frame = pd.DataFrame(rows)
    frame.to_csv(OUT / "fidelity.csv", index=False)
    return frame


# --- C and D: selection regret against k ----------------------------------------------------


def regret(panels, selectors, runs):
    rows = []
    for panel in panels:
        config = CONFIG[panel]
        for eps in config["b_epsilons"]:
            table = expected_table(panel, eps)
            if table is None:
                continue
            mean = table[0]
            best = mean.max()
            for k in list(config["ks"]) + list(config.get("extra_on", {})):
                for rep in config["b_reps"]:
                    u = load_utilities(panel, rep, k, eps, "on")
                    if u is None:
                        continue
                    for s_index, sel_eps in enumerate(SELECTION_EPSILONS):
                        for name in selectors:
                            seed = stable_seed(panel, eps, k, rep, s_index, name)
                            rng = np.random.RandomState(seed)
                            idx, its, hit = run_selector(name, u, k, sel_eps, runs, rng)
                            r = best - mean[idx]
                            rows.append(dict(
                                panel=panel, refit_epsilon=eps, k=k, rep=rep,
                                selection_epsilon=sel_eps, selector=name, runs=runs,
                                regret=r.mean(), regret_sd=r.std(ddof=1),
                                p_best=np.mean(idx == np.argmax(mean)),
                                p_within_1pp=np.mean(r <= 0.01),
                                p_first=np.mean(idx == 0),
                                iterations=its.mean(), hit_cap=hit.mean()))
        print(f"regret: {panel} done", flush=True)
    return pd.DataFrame(rows)


# --- E: budget split --------------------------------------------------------------------------


def e_plan(panel):
    """``[(total, share, selection eps, refit eps, k, k_label)]`` of E for ``panel``."""
    config = CONFIG[panel]
    X, y = PANELS[panel].load()
    n_train = int(round(len(y) * (1 - TEST_FRACTION)))
    m = len(PANELS[panel].candidates)
    plan = []
    for total in config["totals"]:
        for share in config["shares"]:
            sel_eps, refit_eps = round(share * total, 6), round((1 - share) * total, 6)
            ks = {("auto", auto_partitions(n_train, X.shape[1], m, sel_eps)),
                  ("10", 10)}
            if refit_eps in config["b_epsilons"]:  # B's utilities exist: every k for free
                ks |= {("B", k) for k in config["ks"]}
            for label, k in sorted(ks):
                plan.append((total, share, sel_eps, refit_eps, k, label))
    return plan


def e_units(panel):
    return sorted({(u_unit, panel, rep, k, refit, "on")
                   for (_, _, _, refit, k, _) in e_plan(panel)
                   for rep in CONFIG[panel]["e_reps"]},
                  key=lambda u: (u[3], u[2]))


def share(panels, runs):
    rows, baselines = [], []
    for panel in panels:
        default = PANELS[panel].default_index()
        for total in CONFIG[panel]["totals"]:
            table = expected_table(panel, total)
            if table is not None:
                mean, se, _ = table
                baselines.append(dict(panel=panel, total=total, uniform=mean.mean(),
                                      default=mean[default], default_se=se[default],
                                      oracle=mean.max(), oracle_se=se[int(np.argmax(mean))]))
        for total, s, sel_eps, refit_eps, k, label in e_plan(panel):
            table = expected_table(panel, refit_eps)
            if table is None:
                continue
            mean = table[0]
            for rep in CONFIG[panel]["e_reps"]:
                u = load_utilities(panel, rep, k, refit_eps, "on")
                if u is None:
                    continue
                for name in E_SELECTORS:
                    seed = stable_seed("E", panel, total, s, k, rep, name)
                    idx, its, hit = run_selector(name, u, k, sel_eps, runs,
                                                 np.random.RandomState(seed))
                    rows.append(dict(panel=panel, total=total, share=s, k_rule=label, k=k,
                                     selection_epsilon=sel_eps, refit_epsilon=refit_eps,
                                     rep=rep, selector=name, runs=runs,
                                     accuracy=mean[idx].mean(),
                                     selection_regret=(mean.max() - mean[idx]).mean(),
                                     refit_oracle=mean.max(), hit_cap=hit.mean()))
    frame = pd.DataFrame(rows)
    frame.to_csv(OUT / "share.csv", index=False)
    pd.DataFrame(baselines).to_csv(OUT / "share_baselines.csv", index=False)
    return frame


# --- A's CSV ---------------------------------------------------------------------------------


def expected_csv(panels):
    rows = []
    for panel in panels:
        p = PANELS[panel]
        default = p.default_index()
        for eps in refit_epsilons(panel):
            table = expected_table(panel, eps)
            if table is None:
                continue
            mean, se, n = table
            for i, params in enumerate(p.candidates):
                per_rep = [np.load(a_path(panel, rep, eps))["accuracy"][i].mean()
                           if a_path(panel, rep, eps).exists() else np.nan for rep in REPS]
                rows.append(dict(panel=panel, refit_epsilon=eps, candidate=i,
                                 params=p.describe(params), default=i == default,
                                 expected_accuracy=mean[i], se=se[i], refits=n,
                                 **{f"rep{r}": v for r, v in zip(REPS, per_rep)}))
    frame = pd.DataFrame(rows)
    frame.to_csv(OUT / "expected_accuracy.csv", index=False)
    return frame


# --- CLI ----------------------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["expected", "fidelity", "regret", "doubling",
                                            "share", "all-units", "summary", "check"])
    parser.add_argument("--panels", nargs="+", default=list(PANELS))
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=SELECTOR_RUNS)
    parser.add_argument("--epsilons", nargs="+", type=float, default=None,
                        help="expected: only these refit epsilons")
    parser.add_argument("--refits", type=int, default=None,
                        help="expected: refits per repetition (overrides the panel's)")
    parser.add_argument("--compute-only", action="store_true",
                        help="fill the cache, write no CSV")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    setup_worker()
    OUT.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()

    if args.command == "check":
        check_prototype()
    elif args.command == "expected":
        units = []
        for panel in args.panels:
            if args.refits:
                CONFIG[panel]["refits"] = args.refits
            units += a_units(panel, args.epsilons)
        run_units(units, args.n_jobs, _cached, every=10)
        if not args.compute_only:
            expected_csv(list(PANELS))
    elif args.command == "fidelity":
        units = [u for panel in args.panels for u in b_units(panel)]
        run_units(units, args.n_jobs, _cached, every=10)
        if not args.compute_only:
            print(fidelity(list(PANELS)).groupby(["panel", "refit_epsilon", "k", "scaling"])
                  [["spearman", "argmax_regret"]].mean().round(3).to_string())
    elif args.command in ("regret", "doubling"):
        selectors = (LIBRARY_SELECTORS if args.command == "regret" else list(PROTOTYPES))
        frame = regret(args.panels, selectors, args.runs)
        name = "regret.csv" if args.command == "regret" else "doubling.csv"
        path = OUT / name
        if path.exists():  # keep the other panels' rows
            old = pd.read_csv(path)
            frame = pd.concat([old[~old["panel"].isin(args.panels)], frame])
        frame.to_csv(path, index=False)
    elif args.command == "share":
        units = [u for panel in args.panels for u in e_units(panel)]
        run_units(units, args.n_jobs, _cached, every=10)
        if not args.compute_only:
            share(list(PANELS), args.runs)
    elif args.command == "summary":
        fidelity_summary.write(OUT)
    print(f"{args.command}: {time.perf_counter() - start:.0f} s", flush=True)


def check_prototype(runs=4000):
    """The faithful prototype selects like the library's ProposeTestDoubling."""
    rng = np.random.RandomState(0)
    for k, eps in ((20, 0.5), (200, 2.0)):
        u = np.sort(rng.uniform(0.6, 0.85, 8))[::-1].copy()
        rng.shuffle(u)
        lib, _, _ = run_selector("doubling", u, k, eps, runs, np.random.RandomState(1))
        pro, _, _ = run_selector("dbl/faithful", u, k, eps, runs, np.random.RandomState(2))
        f_lib = np.bincount(lib, minlength=len(u)) / runs
        f_pro = np.bincount(pro, minlength=len(u)) / runs
        print(f"k={k} eps={eps}: library {np.round(f_lib, 3)}\n"
              f"               prototype {np.round(f_pro, 3)}; max |diff| "
              f"{np.abs(f_lib - f_pro).max():.3f} (2 SE ~ {2 * np.sqrt(0.25 / runs) * 1.41:.3f})")


if __name__ == "__main__":
    # Run from the importable module, so that joblib workers can unpickle its functions.
    import fidelity_study

    fidelity_study.main()
