"""``python -m baselines.cli ARGS``: the ``dominoes`` command without its installed script."""

from baselines.cli import run

run()
