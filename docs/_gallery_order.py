"""The order of the gallery's examples: the quickstart first, then from use to internals.

Sphinx-Gallery imports this by name (``within_subsection_order``), so the configuration stays
picklable.
"""

ORDER = [
    "quickstart.py",
    "plot_mixed_type_pipeline.py",
    "plot_pca_pipeline.py",
    "plot_private_kmeans.py",
    "plot_custom_dp_estimator.py",
    "plot_forecast.py",
    "dask_input.py",
    "plot_doubling_trace.py",
    "plot_partition_fidelity.py",
    "plot_regret_vs_budget.py",
]


class GalleryOrder:
    """Sort key: the files of ORDER in that order, any other file after them by name."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        position = ORDER.index(filename) if filename in ORDER else len(ORDER)
        return position, filename

    def __repr__(self):
        return f"<{type(self).__name__}>"
