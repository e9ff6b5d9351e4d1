"""Stopping a command by a signal as by Ctrl-C, so that what Ctrl-C keeps is kept.

A closed terminal sends SIGHUP and ``kill`` sends SIGTERM; by default either ends Python at
once, skipping every ``finally``: ``dominoes play`` would lose the game record it promises
"when you leave, whatever the reason". Inside :func:`signals_stop`, these signals raise
:class:`Stopped`, a KeyboardInterrupt, so the clean-up written for Ctrl-C runs for them too,
and the command exits with the shell's status for that signal (128 + its number).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

#: The signals that stop a command as Ctrl-C does (SIGHUP does not exist on Windows).
STOPPING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stopped(KeyboardInterrupt):
    """The command was told to stop by `signum` (SIGTERM, SIGHUP)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise Stopped(signum)


@contextmanager
def signals_stop() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Stopped`; the previous handlers come back
    afterwards. Outside the main thread (where Python takes no handler) nothing changes."""
    previous = {}
    try:
        for signum in STOPPING_SIGNALS:
            previous[signum] = signal.signal(signum, _raise_stopped)
    except ValueError:  # not the main thread
        pass
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
