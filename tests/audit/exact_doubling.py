"""Exact output laws of the doubling selector, to design the audits (not an audit itself).

The figures quoted in the audits' comments (exact log-ratios, event probabilities, expected
bounds of simulated audits) come from here. This module re-implements the law of
``ProposeTestDoubling``'s released trace by numerical integration: each iteration draws fresh
noise, so the law of a trace is the product of one AboveThreshold law per iteration, and
that law is a one-dimensional integral over the threshold noise. It is a design aid only: no
test imports it, and a mistake in it could make an audit weaker, never make one pass
wrongly (the audits count outputs of the library's own code).

Run ``python tests/audit/exact_doubling.py`` to print the figures of the audits added for
the delta > 0 path and the search (a few seconds; ``--simulate`` adds simulated audits,
about a minute).
"""

import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from scipy import integrate


def _laplace_cdf(x, scale):
    return 0.5 * math.exp(x / scale) if x < 0 else 1 - 0.5 * math.exp(-x / scale)


def step_law(threshold, utilities, threshold_scale, query_scale):
    """``[P(candidate 0 passes), ..., P(candidate m-1 passes), P(none passes)]`` of one
    AboveThreshold run: noisy threshold ``threshold + Lap(threshold_scale)``, candidates
    walked in order with fresh ``Lap(query_scale)`` noise, the first at or above it wins."""
    m = len(utilities)

    def density(t, index):
        value = math.exp(-abs(t - threshold) / threshold_scale) / (2 * threshold_scale)
        for j in range(m):
            fails = _laplace_cdf(t - utilities[j], query_scale)
            if j < index:
                value *= fails
            elif j == index:
                value *= 1 - fails
                break
        return value

    points = sorted({threshold, *utilities})
    reach = 60 * max(threshold_scale, query_scale)
    law = [
        integrate.quad(density, points[0] - reach, points[-1] + reach, args=(index,),
                       points=points, limit=400, epsabs=1e-13, epsrel=1e-11)[0]
        for index in range(m + 1)
    ]
    total = sum(law)
    return [p / total for p in law]


def trace_law(utilities, sensitivity, eps0, granularity, floor, max_iter):
    """``{trace: probability}`` of the doubling loop (a trace is the tuple of who passed at
    each iteration, None for nobody), as ``ProposeTestDoubling.select`` runs it with
    per-iteration epsilon ``eps0`` and its defaults ``order="grid"``,
    ``noise_split="ding_wu"`` (threshold ``Lap(2 Delta / eps0)``, queries
    ``Lap(4 Delta / eps0)``)."""
    threshold_scale, query_scale = 2 * sensitivity / eps0, 4 * sensitivity / eps0
    n_levels = max(1, math.ceil((1 - floor) / granularity - 1e-9))
    laws, result = {}, {}

    def walk(level, step, trace, probability):
        if not (step > 0 and level < n_levels and len(trace) < max_iter):
            result[trace] = result.get(trace, 0.0) + probability
            return
        threshold = floor + (level + step) * granularity
        key = round(threshold, 12)
        if key not in laws:
            laws[key] = step_law(threshold, list(utilities), threshold_scale, query_scale)
        law = laws[key]
        for candidate in range(len(utilities)):
            walk(level + step, 2 * step, trace + (candidate,), probability * law[candidate])
        walk(level, step // 2, trace + (None,), probability * law[-1])

    walk(0, 1, (), 1.0)
    return result


def best_event(law_d, law_d_prime, delta=0.0):
    """The largest ``ln((P(E) - delta) / Q(E))`` over likelihood-ratio sets, both directions:
    the epsilon an audit with exact probabilities would find. Returns ``(bound, direction,
    event, P(E), Q(E))``."""
    best = (-math.inf, None, None, 0.0, 0.0)
    for larger, smaller, direction in ((law_d, law_d_prime, "D vs D'"),
                                       (law_d_prime, law_d, "D' vs D")):
        ranked = sorted(set(larger) | set(smaller),
                        key=lambda o: (larger.get(o, 0) + 1e-300) / (smaller.get(o, 0) + 1e-300),
                        reverse=True)
        p = q = 0.0
        for size, output in enumerate(ranked, start=1):
            p += larger.get(output, 0.0)
            q += smaller.get(output, 0.0)
            if p - delta > 0 and q > 0 and math.log((p - delta) / q) > best[0]:
                best = (math.log((p - delta) / q), direction, ranked[:size], p, q)
    return best


def simulate_audits(law_d, law_d_prime, n_runs, *, n_pilot=0, events=None, delta=0.0,
                    n_audits=100, seed=0):
    """Bounds of ``n_audits`` audits simulated from the exact laws (multinomial counts),
    with the harness's own bound and event choice."""
    from harness import choose_events, epsilon_lower_bound

    rng = np.random.default_rng(seed)
    outputs = sorted(set(law_d) | set(law_d_prime), key=repr)
    p = np.array([law_d.get(o, 0.0) for o in outputs])
    q = np.array([law_d_prime.get(o, 0.0) for o in outputs])
    p, q = p / p.sum(), q / q.sum()

    def draw(probabilities, n):
        return Counter({outputs[i]: c for i, c in enumerate(rng.multinomial(n, probabilities))
                        if c})

    bounds = []
    for _ in range(n_audits):
        chosen = events
        if chosen is None:
            chosen = choose_events(draw(p, n_pilot), draw(q, n_pilot), delta=delta)
        on_d, on_d_prime = draw(p, n_runs), draw(q, n_runs)
        counts = {e: (sum(on_d[o] for o in e), sum(on_d_prime[o] for o in e)) for e in chosen}
        bounds.append(epsilon_lower_bound(counts, n_runs, delta=delta).epsilon_lower_bound)
    return np.array(bounds)


def _report(name, law_d, law_d_prime, delta, simulate, **audit):
    bound, direction, event, p, q = best_event(law_d, law_d_prime, delta)
    shown = event[0] if len(event) == 1 else f"{len(event)} outputs"
    print(f"{name}: exact {bound:.3f} ({direction}, {shown}: {p:.4f} vs {q:.4f})", end="")
    if simulate:
        bounds = simulate_audits(law_d, law_d_prime, delta=delta, **audit)
        print(f"; simulated {bounds.mean():.2f} (sd {bounds.std():.2f}, "
              f"min {bounds.min():.2f}, max {bounds.max():.2f})", end="")
    print()


def main(simulate=False):
    here = Path(__file__).resolve().parent
    sys.path[:0] = [str(here), str(here.parents[1])]  # the harness; this checkout's skdptune
    from skdptune._accounting import calibrate_epsilon_per_step

    # test_audit_selectors.DELTA_PATH: max_iter 4, (epsilon, delta) = (4, 0.01).
    eps0 = calibrate_epsilon_per_step(4.0, 0.01, 4)
    d, d_prime = [0.5] * 4, [0.4, 0.4, 0.4, 0.6]
    print(f"doubling, delta > 0: eps0 = {eps0:.4f}")
    fewer = {n: calibrate_epsilon_per_step(4.0, 0.01, n) for n in (2, 3)}
    for label, factor, n_runs in (("real", 1.0, 24_000), ("real", 1.0, 300_000),
                                  ("noise / 5", 0.2, 20_000),
                                  ("eps0 for 3 steps", eps0 / fewer[3], 300_000),
                                  ("eps0 for 2 steps", eps0 / fewer[2], 300_000),
                                  ("eps0 for 1 step", eps0 / 4.0, 300_000)):
        laws = [trace_law(u, 0.1 * factor, eps0, 0.001, 0.499, 4) for u in (d, d_prime)]
        _report(f"  {label} at {n_runs}", *laws, 0.01, simulate, n_runs=n_runs,
                n_pilot=max(6_000, n_runs // 10))

    # test_audit_search, one iteration: k = 4, threshold 0.75, eps0 = 1.
    d, d_prime, k_fold = [1.0, 1.0, 0.0], [0.75, 0.75, 0.25], [0.0, 0.0, 1.0]
    events = [frozenset([(i,)]) for i in range(3)] + [frozenset([(None,)])]
    print("search, one iteration")
    for label, pair, factor, n_runs in (("real", (d, d_prime), 1.0, 2_000),
                                        ("real", (d, d_prime), 1.0, 30_000),
                                        ("noise / 10", (d, d_prime), 0.1, 1_000),
                                        ("k-fold", (d, k_fold), 1.0, 1_500)):
        laws = [trace_law(u, 0.25 * factor, 1.0, 0.25, 0.5, 1) for u in pair]
        _report(f"  {label} at {n_runs}", *laws, 0.0, simulate, n_runs=n_runs, events=events)

    # test_audit_search, three iterations: k = 2, (epsilon, delta) = (2, 1e-6).
    eps0 = calibrate_epsilon_per_step(2.0, 1e-6, 3)
    d, d_prime = [0.0, 0.0, 1.0], [0.5, 0.5, 0.5]
    print(f"search, three iterations: eps0 = {eps0:.4f}")
    for label, factor, n_runs, n_pilot in (("real", 1.0, 2_000, 600),
                                           ("real", 1.0, 30_000, 5_000),
                                           ("noise / 10", 0.1, 2_000, 600),
                                           ("noise / 4", 0.25, 30_000, 5_000)):
        laws = [trace_law(u, 0.5 * factor, eps0, 0.05, 0.45, 3) for u in (d, d_prime)]
        _report(f"  {label} at {n_runs}", *laws, 1e-6, simulate, n_runs=n_runs,
                n_pilot=n_pilot)


if __name__ == "__main__":
    main(simulate="--simulate" in sys.argv)
