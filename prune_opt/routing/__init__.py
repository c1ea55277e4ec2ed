"""Stage 3, routing: rows sent through the trees once and read many times.

* :class:`RoutedData` (``_routed``) keeps the leaf each row reaches in every tree;
  :func:`prune_opt.route` is its public face;
* the pruning maps (``_maps``): where a pruning stops a row, and what the row paid,
  read off the routed leaves;
* the first-use records and their compact leaf form (``_records``): for every row,
  tree and unit, the node that first needs it.

The compiled router these read is the IR's own decision rule
(:mod:`prune_opt.forest._router`).
"""
