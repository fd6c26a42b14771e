"""Data that never gathers: private grid searches on dask input larger than any worker's
memory (issue 42, item 2).

A ``LocalCluster`` of worker processes whose memory limits are below the data's size;
``X`` (``--rows`` x ``--features`` float64, clipped to [-1, 1]) and its labels generated
lazily, chunk by chunk, on the workers (``dask.array.random``: the client never holds them);
one ``PrivateGridSearchCV`` per family (LogisticRegression, GaussianNB, a random forest,
Ridge) with ``default=None`` (the selection always runs) and ``verbose=1`` (its progress).
Each search reads the data four times: the input checks, the partition fits, the refit (the
logistic refit once per evaluation of its objective), the check of the released model.

Reported per search: the wall time; ``privacy_spent_`` against the total; the client's peak
resident memory above its level before the search (psutil, sampled every 0.1 s) and
``ru_maxrss``; each worker's peak process memory and its peak spilled bytes (the scheduler's
heartbeat metrics, sampled every 0.5 s); the bytes the workers sent (dask's
``transfer_outgoing_bytes_total``: to other workers and to the client) and the bytes the
client received (``dask.sizeof`` of every ``Client.gather`` result); and the released model's
accuracy (R² for Ridge) on rows drawn in memory from the same law.

Usage (BLAS pinned, from the repository root)::

    PYTHONPATH=. OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python benchmarks/scale_out.py --rows 10000000 --features 10 --workers 2 \\
        --worker-memory 700MB

``--smoke`` runs 50,000 rows in chunks of 10,000 (seconds). At ten million rows (800 MB of
``X``) the default limit (half of ``X``, 400 MB) is too tight for the dealing step (the
nanny restarts the workers in a loop); 700 MB a worker, still below the data's size, ran
(``benchmarks/RESULTS.md``, "Data that never gathers").
"""

import argparse
import resource
import threading
import time

import numpy as np

FAMILIES = ("lr", "nb", "forest", "ridge")


def parse():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker-memory", default=None,
                        help="each worker's memory limit (dask's syntax, e.g. '400MB'); "
                             "default: half of X's size, at least 350MB")
    parser.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--n-partitions", default="auto")
    parser.add_argument("--test-rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true",
                        help="50,000 rows in chunks of 10,000, 2 workers: seconds")
    args = parser.parse_args()
    if args.smoke:
        args.rows, args.chunk_rows, args.test_rows = 50_000, 10_000, 10_000
    if args.n_partitions != "auto":
        args.n_partitions = int(args.n_partitions)
    return args


def weights(n_features):
    """The generating model's public coefficients."""
    return np.linspace(1.0, -1.0, n_features)


def lazy_data(args):
    """``X``, binary labels and regression targets as dask arrays generated on the workers."""
    import dask.array as da

    rng = da.random.default_rng(args.seed)
    shape, chunks = (args.rows, args.features), (args.chunk_rows, args.features)
    X = da.clip(rng.normal(0.0, 0.4, size=shape, chunks=chunks), -1.0, 1.0)
    noise = rng.normal(0.0, 0.5, size=args.rows, chunks=args.chunk_rows)
    score = X @ weights(args.features) + noise
    return X, (score > 0).astype(np.int64), da.clip(score, -4.0, 4.0)


def in_memory_test(args):
    """Rows of the same law, drawn here, to score the released models."""
    rng = np.random.default_rng(args.seed + 1)
    X = np.clip(rng.normal(0.0, 0.4, (args.test_rows, args.features)), -1.0, 1.0)
    score = X @ weights(args.features) + rng.normal(0.0, 0.5, args.test_rows)
    return X, (score > 0).astype(np.int64), np.clip(score, -4.0, 4.0)


def searches(args):
    from diffprivlib.accountant import BudgetAccountant

    from skdptune import PrivateGridSearchCV
    from skdptune.ensemble import RandomForestClassifier
    from skdptune.linear_model import LogisticRegression, Ridge
    from skdptune.naive_bayes import GaussianNB

    norm = float(np.sqrt(args.features))
    grids = {
        "lr": (LogisticRegression(data_norm=norm, classes=[0, 1]),
               {"C": [0.01, 0.1, 1.0, 10.0]}),
        "nb": (GaussianNB(bounds=(-1, 1), classes=[0, 1]),
               {"var_smoothing": [1e-9, 1e-3, 1e-2, 1e-1]}),
        "forest": (RandomForestClassifier(bounds=(-1, 1), classes=[0, 1], n_estimators=10),
                   {"max_depth": [3, 5, 7]}),
        "ridge": (Ridge(bounds_X=(-1, 1), bounds_y=(-4, 4)),
                  {"noise_alpha": [0.5, 2.0, 8.0]}),
    }
    for family in args.families:
        estimator, grid = grids[family]
        yield family, PrivateGridSearchCV(
            estimator, grid, epsilon=args.epsilon, n_partitions=args.n_partitions,
            default=None, accountant=BudgetAccountant(), verbose=1)


class Sampler(threading.Thread):
    """Peaks of the client's RSS and of each worker's memory and spilled bytes."""

    def __init__(self, client):
        import psutil

        super().__init__(daemon=True)
        self.client, self.process = client, psutil.Process()
        self.baseline = self.client_peak = self.process.memory_info().rss
        self.workers, self.spilled = {}, {}
        self.done = threading.Event()

    def run(self):
        tick = 0
        while not self.done.is_set():
            self.client_peak = max(self.client_peak, self.process.memory_info().rss)
            if tick % 5 == 0:
                for address, info in self.client.scheduler_info()["workers"].items():
                    metrics = info.get("metrics", {})
                    self.workers[address] = max(self.workers.get(address, 0),
                                                metrics.get("memory", 0))
                    spilled = metrics.get("spilled_bytes", {}).get("disk", 0)
                    self.spilled[address] = max(self.spilled.get(address, 0), spilled)
            tick += 1
            self.done.wait(0.1)


def sent_bytes(client):
    return sum(client.run(lambda dask_worker: dask_worker.transfer_outgoing_bytes_total)
               .values())


def gigabytes(value):
    return f"{value / 1e9:.3f}"


def main():
    args = parse()
    import dask
    import distributed

    data_bytes = args.rows * args.features * 8
    memory = args.worker_memory or f"{max(data_bytes // 2, 350_000_000) // 1_000_000}MB"
    print(f"X: {args.rows:,} x {args.features} float64 = {gigabytes(data_bytes)} GB in "
          f"{-(-args.rows // args.chunk_rows)} chunks; {args.workers} worker processes of "
          f"1 thread, memory limit {memory} each", flush=True)
    received = []
    original_gather = distributed.Client.gather

    def gather(self, futures, *a, **k):
        result = original_gather(self, futures, *a, **k)
        received.append(dask.sizeof.sizeof(result))
        return result

    distributed.Client.gather = gather
    X, labels, targets = lazy_data(args)
    X_test, labels_test, targets_test = in_memory_test(args)
    rows = []
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                  processes=True, memory_limit=memory,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        for family, search in searches(args):
            print(f"\n== {family}", flush=True)
            received.clear()
            sent_before = sent_bytes(client)
            sampler = Sampler(client)
            sampler.start()
            start = time.perf_counter()
            search.fit(X, targets if family == "ridge" else labels)
            seconds = time.perf_counter() - start
            sampler.done.set()
            sampler.join()
            y_test = targets_test if family == "ridge" else labels_test
            rows.append({
                "family": family,
                "k": search.n_partitions_,
                "seconds": f"{seconds:.1f}",
                "privacy_spent_": f"{search.privacy_spent_.epsilon:g}",
                "client peak above start (GB)": gigabytes(sampler.client_peak
                                                          - sampler.baseline),
                "client ru_maxrss (GB)": gigabytes(
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024),
                "worker peaks (GB)": " / ".join(gigabytes(v) for v in sampler.workers.values()),
                "worker spilled peaks (GB)": " / ".join(gigabytes(v)
                                                        for v in sampler.spilled.values()),
                "workers sent (GB)": gigabytes(sent_bytes(client) - sent_before),
                "client received (MB)": f"{sum(received) / 1e6:.2f}",
                "test score": f"{search.score(X_test, y_test):.4f}",
            })
    print(f"\nTotal epsilon {args.epsilon:g} per search; X {gigabytes(data_bytes)} GB\n")
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for row in rows:
        print("| " + " | ".join(str(value) for value in row.values()) + " |")


if __name__ == "__main__":
    main()
