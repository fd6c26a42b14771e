"""Dask collections as input: the data stay in their chunks on the workers.

``PrivateGridSearchCV.fit(X, y)`` with a dask array or data frame ``X`` and a dask array or
series ``y`` runs the same life cycle as for in-memory input, on public stand-ins
(``_stand_in.OnWorkers``), with the steps that read the data done where the chunks live:

- ``_input``: what has no distributed path, refused from the parameters and metadata before
  anything is read or charged; the input validation that reads values, on the workers;
- ``_evaluate``: partition labels drawn per record in its chunk, rows moved once so that
  each block of partitions meets in one task, the in-memory evaluate stage there, only
  per-candidate sums of utilities back;
- ``_refit``: the released model from statistics reduced over the chunks, with the room's own
  release (its mechanisms and noise, drawn in this process): the same law and charge as the
  in-memory fit; and the check of the released model (``trivial_lead_``) from per-chunk sums.

The docs page ``docs/parallel.rst`` ("Data that never gathers") is the user's account.
"""
