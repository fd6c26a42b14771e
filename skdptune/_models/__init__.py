"""skdptune's DP models, one room each (DESIGN.md, "Adding a model").

Each module holds one released model: the estimator and the functions that carry its
mechanism. The public modules (``skdptune.naive_bayes``, ...) re-export the estimators.
"""
