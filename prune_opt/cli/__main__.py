"""``python -m prune_opt.cli`` runs the ``prune-opt`` command."""

import sys

from . import main

sys.exit(main())
