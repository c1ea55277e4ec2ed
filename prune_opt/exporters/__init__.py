"""Exporters: a pruned forest in another library's own model format, one module per
library.  Each reads a :class:`~prune_opt.PrunedForest`'s fields and never imports
its class, and imports its library only when called."""
