"""The pieces every ``dominoes`` command shares, below every command that uses them.

:mod:`~baselines.command_line.options` declares and checks the options the commands have in
common (the table, the seed, the counts); :mod:`~baselines.command_line.signals` turns SIGTERM
and SIGHUP into an interrupt, so a command keeps what Ctrl-C keeps;
:mod:`~baselines.command_line.learner` builds a learner's ``dominoes train`` command from its
description. The commands themselves live above: the command table and the general commands in
:mod:`baselines.cli`, a learner's entry in its own package's ``cli.py``, and ``dominoes league``,
``bench`` and ``serve`` in their packages. This package imports none of them.
"""
