"""Stage 6, the program: BudgetPrune in solver-neutral form.

* :class:`PruningProblem` (``_problem``): the objective's one definition
  (``evaluate``), the LP's standard form and the closure data;
* :func:`compile_problem` and its steps (``_compile``, ``_compile_steps``), the
  sampled cost term (``_sampling``) and the Dask path (``_distributed``);
* :func:`prepare` (``_prepare``): a model and its rows made ready once per call;
* a boosted model's node values and second-order expansion (``_boosted``);
* the MPS/LP writer (``_files``).
"""
