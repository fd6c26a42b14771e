"""The batched engine: all partitions of a candidate fitted in one array program.

A partition fit is never released and never charged: the selection's guarantee rests on each
partition utility lying in ``[0, 1]`` and depending on its own partition's records only
(sensitivity ``1 / k``). So a partition fit need not call diffprivlib: an array program that
fits every partition at once, with emulation noise whose law is that of diffprivlib's fit on
the same partition, gives the selection the same input distribution, much faster.

- :mod:`~skdptune._batched.engine`: the door (which candidates, and their partition utilities);
- :mod:`~skdptune._batched.contract`: what a family receives and returns;
- :mod:`~skdptune._batched.registry`: which classes have a family or a partition step;
- :mod:`~skdptune._batched.pipeline`: pipelines, their public steps and partition steps;
- one module per family (:mod:`~skdptune._batched.gaussian_nb`,
  :mod:`~skdptune._batched.logistic_regression` with :mod:`~skdptune._batched.lbfgsb`,
  :mod:`~skdptune._batched.linear_regression`, :mod:`~skdptune._batched.forest`,
  :mod:`~skdptune._batched.kmeans` for diffprivlib's ``KMeans`` and
  ``batched.dp_lloyd`` for :class:`skdptune.cluster.KMeans`) and per partition
  step (:mod:`~skdptune._batched.standard_scaler`, :mod:`~skdptune._batched.pca` for
  diffprivlib's ``PCA`` and ``batched.bingham_pca`` for
  :class:`skdptune.decomposition.PCA`).

The design (the contract, the privacy argument, the noise streams, the routing, the version
pin, how to add a family): ``DESIGN.md``, "The batched engine".
"""
