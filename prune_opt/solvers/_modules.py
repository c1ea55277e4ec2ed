"""Import every backend module so its class registers itself.

Optional packages are imported lazily inside the backends, so a missing one
never breaks this import; it only makes ``is_installed()`` false.
"""

import importlib

BACKEND_MODULES = ("highs", "ortools_lp", "cbc", "mincut", "mincut_networkx", "primal_dual",
                   "budget_search")

for _mod in BACKEND_MODULES:
    try:
        importlib.import_module(f"{__package__}.{_mod}")
    except ModuleNotFoundError as exc:  # a backend module not written (yet) is skipped
        if exc.name != f"{__package__}.{_mod}":
            raise
