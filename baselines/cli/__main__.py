"""``python -m baselines.cli ARGS``: the ``dominoes`` command without its installed script."""

import sys

from baselines.cli import main

sys.exit(main())
