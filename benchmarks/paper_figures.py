"""The seed paper's two figures, reproduced on synthetic utilities (no data, no models).

- ``results/paper_iterations.png`` (its Figure 4): realised iterations of the propose-test
  doubling loop against ``r = (u* - u0) / g``, with the ratio ``iterations / log2(r)``, which
  the paper reports between 1 and 5.
- ``results/paper_fidelity.png`` (its Figure 3): how often the selected candidate is within
  ``g`` of the best, and the mean regret ``u* - u(selected)``, as ``k * eps0`` grows. The
  one-shot selectors are drawn at the same total selection epsilon (``max_iter * eps0``).
- ``results/paper_positions.png`` (not in the paper): which grid position the doubling loop
  selects when all positions are equally good, at the noise levels of ``run_benchmark.py``.

The selectors are called directly: ``select(utilities, sensitivity=1/k, epsilon=...,
delta=0)``, so with ``delta=0`` each doubling iteration gets ``eps0 = epsilon / max_iter``.
A failed selection (no candidate passed) counts as candidate 0, as PrivateGridSearchCV does.

    python benchmarks/paper_figures.py [--runs 300]
"""

import argparse
import time
from pathlib import Path

import numpy as np

from skdptune.selection import SELECTORS, ProposeTestDoubling
from skdptune.selection._doubling import worst_case_iterations

RESULTS = Path(__file__).resolve().parent / "results"
K = 1000  # partitions: sensitivity 1/K; only k * eps0 matters
GRANULARITY = 0.01


def utilities_with_best(best, n_candidates, low, rng):
    """``n_candidates`` utilities uniform on ``[low, best)``, one of them (at random) ``best``."""
    utilities = rng.uniform(low, best, n_candidates)
    utilities[rng.randint(n_candidates)] = best
    return utilities


def iterations_against_gap(ratios, k_eps0_values, runs, rng):
    """Realised iterations (no cap) for ``u* = r * g`` above ``u0 = 0``: {k*eps0: (runs, r)}."""
    max_iter = worst_case_iterations(GRANULARITY, 0.0)  # uncapped: the worst case
    selector = ProposeTestDoubling(granularity=GRANULARITY, max_iter=max_iter)
    counts = {}
    for k_eps0 in k_eps0_values:
        counts[k_eps0] = np.array([[
            selector.select(utilities_with_best(r * GRANULARITY, 20, 0.0, rng),
                            sensitivity=1 / K, epsilon=k_eps0 / K * max_iter, delta=0.0,
                            random_state=rng).n_iterations
            for r in ratios] for _ in range(runs)])
    return counts


def fidelity_against_noise(k_eps0_values, runs, rng, best=0.85, low=0.5, n_candidates=24):
    """Per selector: (P[u(selected) >= u* - g], mean regret) at each ``k * eps0``.

    The utilities mimic the benchmark's: 24 candidates, accuracies uniform on [0.5, 0.85).
    """
    doubling = ProposeTestDoubling(granularity=GRANULARITY)  # the library's default cap
    max_iter = doubling.resolved_max_iter()
    selectors = {"doubling": doubling}
    selectors.update({name: cls() for name, cls in SELECTORS.items() if name != "doubling"})
    results = {name: ([], []) for name in selectors}
    for k_eps0 in k_eps0_values:
        epsilon = k_eps0 / K * max_iter  # doubling: eps0 = epsilon / max_iter (delta = 0)
        regrets = {name: [] for name in selectors}
        for _ in range(runs):
            utilities = utilities_with_best(best, n_candidates, low, rng)
            for name, selector in selectors.items():
                index = selector.select(utilities, sensitivity=1 / K, epsilon=epsilon,
                                        delta=0.0, random_state=rng).index
                regrets[name].append(best - utilities[0 if index is None else index])
        for name, values in regrets.items():
            values = np.array(values)
            results[name][0].append(np.mean(values <= GRANULARITY))
            results[name][1].append(values.mean())
    return results, max_iter


def pyplot():
    """matplotlib's pyplot with a non-interactive backend (imported late: optional extra)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def picks_by_position(k_eps0_values, runs, rng, n_candidates=24):
    """Share of runs in which each grid position is selected, when no position is better.

    The utilities are exchangeable (uniform on [0.6, 0.8], redrawn every run), so an unbiased
    selector picks every position equally often. The doubling walk stops at the first candidate
    that passes, so with much noise it favours the first positions of the grid.
    """
    doubling = ProposeTestDoubling(granularity=GRANULARITY)
    max_iter = doubling.resolved_max_iter()
    shares = {}
    for k_eps0 in k_eps0_values:
        counts = np.zeros(n_candidates)
        for _ in range(runs):
            index = doubling.select(rng.uniform(0.6, 0.8, n_candidates), sensitivity=1 / K,
                                    epsilon=k_eps0 / K * max_iter, delta=0.0,
                                    random_state=rng).index
            counts[0 if index is None else index] += 1
        shares[k_eps0] = counts / runs
    return shares


def plot_positions(shares, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 3.8))
    width = 0.8 / len(shares)
    for i, (k_eps0, share) in enumerate(shares.items()):
        positions = np.arange(len(share)) + (i - (len(shares) - 1) / 2) * width
        ax.bar(positions, share, width=width, label=f"k·eps0 = {k_eps0:g}")
    ax.axhline(1 / len(share), color="k", linestyle=":", label="unbiased (1/24)")
    ax.set_xlabel("position of the selected candidate in the grid")
    ax.set_ylabel("share of runs")
    ax.set_title("Doubling with exchangeable utilities: which grid position it picks")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_iterations(ratios, counts, path):
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    log_r = np.log2(ratios)
    for k_eps0, runs in counts.items():
        mean = runs.mean(axis=0)
        low, high = np.percentile(runs, [5, 95], axis=0)
        left.plot(ratios, mean, marker="o", markersize=3, label=f"k·eps0 = {k_eps0:g}")
        left.fill_between(ratios, low, high, alpha=0.15)
        right.plot(ratios, mean / log_r, marker="o", markersize=3, label=f"k·eps0 = {k_eps0:g}")
    left.plot(ratios, log_r, "k--", label="log2(r)")
    left.plot(ratios, 5 * log_r, "k:", label="5·log2(r)")
    right.axhline(1, color="k", linestyle="--")
    right.axhline(5, color="k", linestyle=":")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("r = (u* − u0) / g")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    left.set_ylabel("iterations (mean, 5–95% band)")
    right.set_ylabel("mean iterations / log2(r)")
    fig.suptitle("Propose-test doubling: iterations against the gap (cf. Ding & Wu, Fig. 4)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_fidelity(k_eps0_values, results, max_iter, path):
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, (within, regret) in results.items():
        style = "-" if name == "doubling" else "--"
        left.plot(k_eps0_values, within, style, marker="o", markersize=3, label=name)
        right.plot(k_eps0_values, regret, style, marker="o", markersize=3, label=name)
    left.axhline(1 / 24, color="grey", linestyle=":", label="uniform pick (1/24)")
    left.set_ylabel("P[u(selected) ≥ u* − g]")
    right.set_ylabel("mean regret u* − u(selected)")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel(f"k · eps0 (one-shot selectors: total ε = {max_iter} · eps0)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Fidelity against noise: 24 candidates, u* = 0.85, others U[0.5, 0.85), "
                 "g = 0.01 (cf. Ding & Wu, Fig. 3)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300, help="runs per point (default 300)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(args.seed)

    start = time.perf_counter()
    ratios = np.array([2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 90])
    counts = iterations_against_gap(ratios, (10, 100, 1000), args.runs, rng)
    plot_iterations(ratios, counts, args.out / "paper_iterations.png")
    for k_eps0, runs in counts.items():
        ratio = runs.mean(axis=0) / np.log2(ratios)
        print(f"k*eps0={k_eps0:g}: mean iterations / log2(r) from {ratio.min():.2f} to "
              f"{ratio.max():.2f} (r = {ratios.min()}..{ratios.max()})")

    k_eps0_values = np.array([0.3, 1, 3, 10, 30, 100, 300, 1000])
    results, max_iter = fidelity_against_noise(k_eps0_values, args.runs, rng)
    plot_fidelity(k_eps0_values, results, max_iter, args.out / "paper_fidelity.png")
    print(f"{'k*eps0':>8} " + " ".join(f"{name:>24}" for name in results))
    for i, k_eps0 in enumerate(k_eps0_values):
        print(f"{k_eps0:>8g} " + " ".join(
            f"{results[name][0][i]:>10.2f} / {results[name][1][i]:.3f}    " for name in results))
    # The noise levels of run_benchmark.py: k * eps0 of its smallest and largest budgets.
    shares = picks_by_position((0.2, 1.4, 3.5, 100), args.runs, rng)
    plot_positions(shares, args.out / "paper_positions.png")
    for k_eps0, share in shares.items():
        print(f"k*eps0={k_eps0:g}: share of picks in the first 4 of 24 positions "
              f"{share[:4].sum():.2f} (unbiased: 0.17)")
    print(f"(P within g / mean regret); {args.runs} runs per point; "
          f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
