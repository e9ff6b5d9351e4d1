"""The ``dominoes`` command: one entry point, its command table (:data:`SUBCOMMANDS`) and the
general subcommands, one per module of this package; ``dominoes league``, ``bench``, ``dataset`` and
``serve`` live with their packages (:mod:`baselines.league.cli`), a learner's ``dominoes train NAME`` in
its own package's ``cli.py``.

The pieces every command shares live below, in :mod:`baselines.command_line`:
:mod:`~baselines.command_line.options` declares the options (the table, the seed, the counts);
:mod:`~baselines.command_line.signals` turns SIGTERM and SIGHUP into an interrupt.
Subcommands are imported only when used, so ``dominoes league`` never pays for torch.
Each module listed in :data:`SUBCOMMANDS` defines ``add_arguments(parser)`` and
``run(args) -> int``. Bad input reaches the user as one line (``dominoes CMD: error:
...``, exit status 2), never as a traceback; Ctrl-C exits with status 130.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import sys
from typing import NoReturn

from baselines.command_line.signals import Stopped

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("baselines.cli.demo", "play a seeded game between random players, shown as text (one hand; --hands N)"),
    "evaluate": ("baselines.cli.evaluate", "evaluate policies against each other with rotated seats"),
    "bench": ("baselines.benchmark.cli", "rate one agent on the fixed dominoes-bench suite (a scorecard with an "
                                         "anchored rating)"),
    "league": ("baselines.league.cli", "run a league of policies and rate them (ELO, OpenSkill)"),
    "dataset": ("baselines.datasets.cli", "write an offline dataset of a player's games in Farama Minari's format "
                                          "(the minari extra)"),
    "play": ("baselines.cli.play", "play a game in the terminal against the shipped players"),
    "serve": ("baselines.web.cli", "play against the shipped players and watch recorded games in a browser "
                                   "(the web extra)"),
    "replay": ("baselines.cli.replay", "step through a game record, or write it as PNG frames or an animated GIF"),
    "table": ("baselines.cli.table", "show a table's numbers: the set, the deal, a game's length, the spaces' sizes"),
    "train": ("baselines.cli.train", "train a learning policy"),
}


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``dominoes CMD: error: ...``), as every other
    refusal of the command is; ``--help`` still shows the usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def main_and_exit() -> NoReturn:
    """The ``dominoes`` program (its installed script and ``python -m baselines.cli``): :func:`main`,
    then exit.

    Before exiting, every object is moved out of the garbage collector's reach
    (:func:`gc.freeze`): the interpreter's final collection would otherwise walk the whole heap
    that numba, matplotlib and the players left behind, which took 0.3 to 0.45 s at the end of
    ``dominoes league --games 20``, for memory the operating system takes back anyway. Only the
    program does this; :func:`main` called in a longer-lived process (the tests) leaves its
    collector alone.
    """
    status = main()
    gc.freeze()
    sys.exit(status)


def main(argv: list[str] | None = None) -> int:
    """Run ``dominoes ARGV``; Ctrl-C at any point, start-up included, is one line and status 130
    (SIGTERM and SIGHUP, where a command turns them into
    :class:`~baselines.command_line.signals.Stopped`, 128 + the signal's number)."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        return _run(argv)
    except KeyboardInterrupt as interrupt:
        command = f"dominoes {argv[0]}" if argv and argv[0] in SUBCOMMANDS else "dominoes"
        stopped = interrupt if isinstance(interrupt, Stopped) else None
        with contextlib.suppress(OSError):  # a closed terminal (SIGHUP) has nowhere to print
            print(f"\n{command}: {'stopped by ' + stopped.name if stopped else 'interrupted'}", file=sys.stderr)
        return stopped.exit_status if stopped else 130


def _run(argv: list[str]) -> int:
    parser = OneLineParser(prog="dominoes", description="dominoes-env: play, evaluate, rank and train.")
    parser.add_argument("--version", action="store_true", help="print the package's version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text) in SUBCOMMANDS.items():
        commands.add_parser(name, help=help_text, add_help=False)
    if argv == ["--version"]:
        from dominoes_env import __version__  # the one version, read from the installed metadata

        print(f"dominoes-env {__version__}")
        return 0
    if not argv or argv[0] not in SUBCOMMANDS:
        parser.parse_args(argv or ["--help"])
        return 2
    module = importlib.import_module(SUBCOMMANDS[argv[0]][0])
    sub = OneLineParser(prog=f"dominoes {argv[0]}", description=SUBCOMMANDS[argv[0]][1])
    module.add_arguments(sub)
    args = sub.parse_args(argv[1:])
    try:
        return int(module.run(args) or 0)
    except (ValueError, OSError) as error:  # bad input the subcommand did not catch itself: one line, no traceback
        print(f"dominoes {argv[0]}: error: {error}", file=sys.stderr)
        return 2
