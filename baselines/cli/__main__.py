"""``python -m baselines.cli ARGS``: the ``dominoes`` command without its installed script."""

from baselines.cli import main_and_exit

main_and_exit()
