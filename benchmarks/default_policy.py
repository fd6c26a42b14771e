"""Issue 35: the default-candidate policy (skdptune._default_policy), checked by simulation.

Two checks, before any benchmark table, on the development tables only (Adult and the issue-18
tables; the held-out tables of ``tuning_defaults.py`` are not read here):

1. **The closed form.** ``default_policy.selection_gain``'s permute-and-flip probabilities
   (a random order as uniform arrival times) against Monte Carlo runs of diffprivlib's own
   ``PermuteAndFlip`` on the same utilities, for several margins, leads, noise scales and
   grid sizes.
2. **The policy on the development tables' candidate profiles.** Each panel's candidates'
   expected scores (refits averaged, ``benchmarks/results/tuning_pays/*/expected.csv``) are
   the truth at budget ``T``; a candidate refit with ``(1 - share) T`` loses ``A (1 / ((1 -
   share) T) - 1 / T)``, ``A`` measured on the panel's default by ``refit_noise.py``;
   partition utilities are those scores plus a fidelity
   error ``N(0, tau^2)``; the selection is permute-and-flip with the search's own ``k`` and
   noise, its probabilities exact. Three rules are compared, each by the expected gain of the
   released model over the default refit with all of ``T`` (points): ``grid`` (today's
   defaults without a default: share 0.5, no margin), ``default-auto`` (``default=`` with
   share 0.25 and the margin ``sigma * ln m``) and ``policy`` (``default_policy.choose``, its
   refit noise from the public model ``a * D / n``, not from the panel).

Command (from the repository root, about a minute on 2 cores)::

    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=.
    python benchmarks/default_policy.py            # both checks, tables to stdout
    python benchmarks/default_policy.py --out benchmarks/results/default_policy

Written on 26 November 2026, before any search of the issue-35 held-out benchmark ran on the
library's new defaults.
"""

import argparse
import csv
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
from diffprivlib.mechanisms import PermuteAndFlip

from skdptune import _default_policy as default_policy
from skdptune._partition import auto_n_partitions

RESULTS = Path(__file__).resolve().parent / "results" / "tuning_pays"
MEASURED = Path(__file__).resolve().parent / "results" / "refit_noise" / "refit_noise.csv"
SCORE_SHARE = 0.1
VALIDATION_FRACTION = 0.2

#: The development panels: (expected-scores file, panel, training rows, the default's family,
#: its noise dimension D (LogisticRegression: encoded width + 1; GaussianNB: width x classes)).
PANELS = [
    ("calibrated_lr", "adult-lr", 26048, "lr", 105),
    ("check", "hi-lr", 17817, "lr", 25),
    ("check", "flights-lr", 261876, "lr", 25),
    ("check", "fertility-lr", 203723, "lr", 15),
    ("check", "hi-nb", 17817, "nb", 48),
    ("check", "flights-nb", 261876, "nb", 48),
    ("check", "fertility-nb", 203723, "nb", 28),
]
TOTALS = (0.5, 1.0, 4.0)


def _pf_probabilities(values, sigma):
    """Exact permute-and-flip selection probabilities (arrival-time integral)."""
    p = np.exp(-(values.max() - values) / sigma)
    t = default_policy._NODES[:, None]
    factors = 1 - p[None, :] * t
    total = np.prod(factors, axis=1, keepdims=True)
    return p * np.sum(default_policy._WEIGHTS[:, None] * total / factors, axis=0)


def check_closed_form(rng, runs=20000):
    rows = []
    for m, sigma, margin, lead in [(6, 0.01, 0.0, 0.0), (6, 0.01, 0.02, 0.01),
                                   (21, 0.01, 0.015, 0.03), (21, 0.005, 0.01, 0.0),
                                   (8, 0.02, 0.04, 0.05)]:
        gains = []
        for _ in range(runs):
            deficits = rng.exponential(default_policy.OTHERS_DEFICIT, m - 2)
            utilities = np.concatenate([[0.0, lead], -deficits])
            offered = utilities + np.eye(1, m, 0)[0] * margin
            # diffprivlib's mechanism: coins exp(eps * (u - u*) / (2 Delta)) = exp(-g / sigma)
            # with eps / (2 Delta) = 1 / sigma (Delta = 1, eps = 2 / sigma).
            index = PermuteAndFlip(epsilon=2.0 / sigma, sensitivity=1.0,
                                   utility=offered.tolist(), monotonic=False,
                                   random_state=rng.integers(2 ** 31)).randomise()
            gains.append(utilities[index])
        closed = float(default_policy._gain_given_lead(np.array(margin), np.array(lead), sigma, m))
        rows.append({"m": m, "sigma": sigma, "margin": margin, "lead": lead,
                     "monte_carlo": np.mean(gains), "standard_error": np.std(gains) / math.sqrt(runs),
                     "closed_form": closed})
    return rows


def _profiles():
    """``{(panel, T): (scores, default index)}`` and the panel's measured ``A``."""
    scores = defaultdict(dict)
    for directory, panel, *_ in PANELS:
        with open(RESULTS / directory / "expected.csv") as handle:
            for row in csv.DictReader(handle):
                if row["panel"] != panel:
                    continue
                total = float(row["total_epsilon"])
                scores[panel, total][row["candidate"]] = (float(row["mean"]),
                                                          row["default"] == "True")
    # The truth's refit noise: each panel's default measured by refit_noise.py.
    with open(MEASURED) as handle:
        measured = {row["case"]: float(row["A"]) for row in csv.DictReader(handle)}
    return scores, measured


def _released_gain(scores, default, total, share, margin, measured_A, n, tau, rng, draws=400):
    """Expected gain (utility units) of a rule on one profile, refit noise averaged."""
    values = np.array(scores)
    if share == 0:
        return 0.0
    refit_loss = measured_A * (1 / ((1 - share) * total) - 1 / total)
    epsilon = share * total * (1 - SCORE_SHARE)
    k = auto_n_partitions(n, n_candidates=len(values), epsilon=epsilon,
                          validation_fraction=VALIDATION_FRACTION)
    sigma = 2.0 / (k * epsilon)
    offsets = np.zeros(len(values))
    offsets[default] = margin(sigma, len(values)) if callable(margin) else margin
    gains = []
    for _ in range(draws):
        partition = values + rng.normal(0.0, tau, len(values)) + offsets
        gains.append(_pf_probabilities(partition, sigma) @ (values - values[default]))
    return float(np.mean(gains)) - refit_loss


def simulate_policies(rng, tau):
    scores, measured = _profiles()
    rows = []
    for _, panel, n, family, dimension in PANELS:
        for total in TOTALS:
            profile = scores.get((panel, total))
            if not profile:
                continue
            names = list(profile)
            values = [profile[name][0] for name in names]
            default = [profile[name][1] for name in names].index(True)
            best = max(values) - values[default]
            policy = default_policy.choose(
                total, n_samples=n, n_candidates=len(values), explain=False,
                refit_noise=default_policy.REFIT_NOISE_CONSTANT * dimension / n,
                score_share=SCORE_SHARE,
                validation_fraction=VALIDATION_FRACTION)
            rules = {
                "grid": (0.5, 0.0),
                "default-auto": (0.25, lambda sigma, m: sigma * math.log(m)),
                "policy": (policy.share, policy.margin),
            }
            row = {"panel": panel, "T": total, "default_below_best": 100 * best,
                   "A_measured": measured[panel], "A_model": policy.refit_noise,
                   "policy_share": policy.share, "policy_margin": 100 * policy.margin}
            for rule, (share, margin) in rules.items():
                row[rule] = 100 * _released_gain(values, default, total, share, margin,
                                                 measured[panel], n, tau, rng)
            rows.append(row)
    return rows


def _summary(rows, rule):
    gains = np.array([row[rule] for row in rows])
    gapped = [row for row in rows if row["default_below_best"] >= 2 and row["T"] >= 1]
    captured = (np.mean([row[rule] / row["default_below_best"] for row in gapped])
                if gapped else float("nan"))
    return gains.mean(), gains.min(), captured, len(gapped)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("## 1. The closed form against diffprivlib's PermuteAndFlip\n")
    print("| m | sigma | margin | lead | Monte Carlo (se) | closed form |\n|---|---|---|---|---|---|")
    for row in check_closed_form(rng):
        print(f"| {row['m']} | {row['sigma']} | {row['margin']} | {row['lead']} | "
              f"{row['monte_carlo']:.5f} ({row['standard_error']:.5f}) | "
              f"{row['closed_form']:.5f} |")
    for tau in (0.005, 0.015):
        rows = simulate_policies(rng, tau)
        print(f"\n## 2. Development tables, fidelity error tau = {100 * tau:g} points\n")
        print("| panel | T | default below best | A measured / model | policy share, margin "
              "| grid | default-auto | policy |\n|---|---|---|---|---|---|---|---|")
        for row in rows:
            print(f"| {row['panel']} | {row['T']:g} | {row['default_below_best']:.1f} | "
                  f"{row['A_measured']:.4f} / {row['A_model']:.4f} | "
                  f"{row['policy_share']:.3f}, {row['policy_margin']:.2f} | "
                  f"{row['grid']:+.2f} | {row['default-auto']:+.2f} | {row['policy']:+.2f} |")
        for rule in ("grid", "default-auto", "policy"):
            mean, worst, captured, n_gapped = _summary(rows, rule)
            print(f"\n{rule}: mean {mean:+.2f}, worst {worst:+.2f}, share of the gap captured "
                  f"where the default is >= 2 points below the best at T >= 1: "
                  f"{100 * captured:.0f} % ({n_gapped} cells)")
        if args.out is not None:
            args.out.mkdir(parents=True, exist_ok=True)
            with open(args.out / f"development_tau{100 * tau:g}.csv", "w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)


if __name__ == "__main__":
    main()
