"""skdptune's DP models, one room each (DESIGN.md, "Adding a model").

Each module holds one released model (``linear_model`` two): the estimator, the functions that
carry its mechanism, and ``FACTS`` (:class:`~skdptune._models.facts.ModelFacts`; one per class
where a room holds two: ``LOGISTIC_FACTS``, ``RIDGE_FACTS``): what must be declared, why a fit
is private, what it really spends (``charge``), its zero-out factor, what a released fit
keeps (``releases``) and its noise dimension for the tuning policy, each function with its
proof. The refit gate's allowlist reads the facts in the class's row (``skdptune._gate``);
the public modules (``skdptune.naive_bayes``, ...) re-export the estimators.
"""
