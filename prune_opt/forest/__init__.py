"""Stage 1, the forest IR: what a fitted ensemble *is*, whatever library grew it.

* :class:`Forest` (``_forest``): every tree as flat arrays with global node ids,
  and :func:`as_forest`, the one door every model comes in through;
* the ensemble kinds and their losses (``_ensemble``): how the trees combine
  (averaged, or summed raw scores under a link) and every policy that follows;
* the IR's decision rule in compiled form (``_router``): which leaf a row reaches,
  and which fields of a forest that depends on (route compatibility);
* the table of source model classes (``_sources``), feature acquisition costs and
  groups (``_costs``), and the nodes' training statistics (``_node_stats``).

Nothing here knows about routed rows, programs or solvers; every later stage reads it.
"""
