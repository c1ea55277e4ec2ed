"""Stage 5, the model the user holds: a forest plus the nodes that stay splits.

* :class:`PrunedForest` (``_pruned``): predicts, costs, exports and saves;
* :class:`LazyPredictor` (``_lazy``): acquires each unit only when a tree asks;
* :func:`refit_leaves` (``_refit``): new leaf values for a fixed structure;
* the JSON codec (``_codec``): schema-versioned files that load without pickle.
"""
