"""Partition and evaluate on the workers: labels drawn where each record lives, rows moved
once so that each partition's rows meet in one task, only per-candidate sums to the client.

The graph, for ``X`` in ``C`` row chunks and ``k`` partitions cut into ``B = min(k, C,
MAX_PIECES // C)`` contiguous blocks of partitions (at least one):

1. per chunk ``c`` (:func:`_deal`), where the chunk is: its records' partition and holdout
   labels, then its rows split by block (one piece per block);
2. per block ``b`` (:func:`_evaluate_block`): the pieces of every chunk for that block,
   concatenated (the only time a row moves), and every candidate fitted on every partition
   of the block by the in-memory evaluate stage (``skdptune._evaluate.partition_utilities``:
   the batched engine where it has a family, the per-fit path otherwise), in that task's
   process; it returns each candidate's sum of utilities over the block's partitions;
3. on the client: the ``B`` vectors of ``m`` sums, added and divided by ``k``.

A block holds about ``n / B`` rows, a chunk's worth: the user's chunking bounds a task's
memory, as dask's does; with very many chunks, fewer and larger blocks keep the graph's
``C x B`` pieces within :data:`MAX_PIECES`.

Privacy, exactly as in memory (DESIGN.md, "Partitions"):

- Labels. Chunk ``c``'s records draw their labels with ``skdptune._partition.partition_labels``
  from ``SeedSequence(entropy, spawn_key=(LABELS, c))``, record ``i`` of the chunk from the
  ``i``-th pair of uniforms of that stream: each record's labels are independent of every
  other record's, uniform on the partitions and Bernoulli(``validation_fraction``), and do
  not depend on any value. Replacing a record changes one partition's contents and no label.
  ``entropy`` is the search's partition seed, fresh OS entropy without one.
- Utilities. Each partition's utility is computed in one task from its own rows only, in
  ``[0, 1]``, as in memory; so every candidate's mean over the ``k`` partitions has
  sensitivity ``1 / k``, all candidates at once. Which block or worker a partition lands in
  changes nothing it computes.
- Emulation noise (not a privacy parameter: partition fits are never released). Block ``b``'s
  batched families draw from the root ``SeedSequence(entropy, spawn_key=(STREAMS, b))``,
  whose streams are keyed by the partition within the block: independent across partitions
  and blocks.
"""

import time

import numpy as np

from .._batched.engine import _stream_entropy
from .._evaluate import _Progress
from .._evaluate import partition_utilities as in_memory_utilities
from .._partition import partition_labels, split_indices

#: Spawn-key roots: the labels of a chunk, the emulation noise of a block.
LABELS, STREAMS = 0, 1

#: The most pieces (a chunk's rows for one block: one task each) the graph may hold; dask's
#: scheduler pays about a millisecond or less per task.
MAX_PIECES = 50_000


def distributed_utilities(X, y, plan, search, partition_seed, clock=time.perf_counter):
    """Every candidate's mean bounded utility over the partitions, computed on the workers.

    Parameters
    ----------
    X, y : OnWorkers
        Stand-ins of the dask input (``y`` None for k-means without labels).
    plan : skdptune._search.GridPlan
    search : PrivateGridSearchCV
        For ``validation_fraction``, ``error_score`` and ``verbose``.
    partition_seed : int or None
        The labels' and the emulation noise's seed; None: fresh OS entropy.
    clock : callable, default=time.perf_counter

    Returns
    -------
    utilities : ndarray of shape (n_candidates,)
        Raw (non-private) mean utilities in ``[0, 1]``; sensitivity ``1 / n_partitions``.
    """
    import dask

    k, m = plan.n_partitions, len(plan.partition_candidates)
    entropy = _stream_entropy(partition_seed)
    X_chunks = X.source.to_delayed().ravel()
    y_chunks = [None] * len(X_chunks) if y is None else y.source.to_delayed().ravel()
    n_blocks = max(1, min(k, len(X_chunks), MAX_PIECES // len(X_chunks)))
    edges = np.linspace(0, k, n_blocks + 1).astype(int)
    dealt = [
        dask.delayed(_deal, nout=n_blocks)(X_chunk, y_chunk, chunk, entropy, k,
                                           search.validation_fraction, edges)
        for chunk, (X_chunk, y_chunk) in enumerate(zip(X_chunks, y_chunks))
    ]
    blocks = [
        dask.delayed(_evaluate_block)(
            [pieces[block] for pieces in dealt], int(edges[block + 1] - edges[block]),
            plan.estimator, plan.partition_candidates, plan.utility, search.error_score,
            _block_seed(entropy, block))
        for block in range(n_blocks)
    ]
    progress = _Progress(k * m, search.verbose, clock)
    sums = _run(blocks, [m * int(size) for size in np.diff(edges)], progress)
    return np.sum(sums, axis=0) / k


def _run(blocks, fits, progress):
    """The blocks' results in order; with a dask.distributed client, progress counted as they
    complete (counts and times only, as in memory), else after dask's own scheduler."""
    import dask

    client = _client()
    if client is None:
        results = dask.compute(*blocks)
        progress.add(sum(fits))
        return list(results)
    from distributed import as_completed

    futures = client.compute(blocks)
    index = {future.key: i for i, future in enumerate(futures)}
    for future in as_completed(futures):
        progress.add(fits[index[future.key]])
    return client.gather(futures)


def _client():
    """The dask.distributed client that dask's configuration would compute with, or None
    (a local scheduler)."""
    from dask.base import get_scheduler

    try:
        from distributed import Client
    except ImportError:
        return None
    owner = getattr(get_scheduler(), "__self__", None)
    return owner if isinstance(owner, Client) else None


def _block_seed(entropy, block):
    """The root of block ``block``'s emulation noise (see the module's docstring)."""
    sequence = np.random.SeedSequence(entropy, spawn_key=(STREAMS, block))
    return int(sequence.generate_state(1, np.uint64)[0])


def chunk_labels(n_rows, chunk, entropy, n_partitions, validation_fraction):
    """The partition labels and validation flags of chunk ``chunk``'s ``n_rows`` records:
    ``skdptune._partition.partition_labels`` on the chunk's own stream
    ``SeedSequence(entropy, spawn_key=(LABELS, chunk))``, a function of the chunk's index
    and each record's position only (see the module's docstring)."""
    rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(LABELS, chunk)))
    return partition_labels(n_rows, n_partitions, validation_fraction, rng)


def _deal(X, y, chunk, entropy, n_partitions, validation_fraction, edges):
    """Draw one chunk's labels and split its rows by block of partitions.

    Returns
    -------
    pieces : tuple
        One ``(X, y, partition within the block, is_validation)`` per block.
    """
    partition, is_validation = chunk_labels(len(X), chunk, entropy, n_partitions,
                                            validation_fraction)
    block = np.searchsorted(edges, partition, side="right") - 1
    order = np.argsort(block, kind="stable")
    cuts = np.searchsorted(block[order], np.arange(len(edges)))
    return tuple(
        (X[rows], None if y is None else y[rows], partition[rows] - edges[b],
         is_validation[rows])
        for b, rows in enumerate(np.split(order, cuts[1:-1]))
    )


def _evaluate_block(pieces, n_parts, estimator, candidates, utility, error_score, seed):
    """Fit every candidate on every partition of one block; each candidate's sum of
    utilities over them (``n_parts`` times the in-memory stage's mean)."""
    X = np.concatenate([piece[0] for piece in pieces])
    y = None if pieces[0][1] is None else np.concatenate([piece[1] for piece in pieces])
    splits = split_indices(np.concatenate([piece[2] for piece in pieces]),
                           np.concatenate([piece[3] for piece in pieces]), n_parts)
    return n_parts * in_memory_utilities(estimator, candidates, X, y, splits, {}, utility,
                                         error_score, n_jobs=1, random_state=seed)
