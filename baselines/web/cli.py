"""``dominoes serve``: the web app on this machine (localhost unless told otherwise).

    dominoes serve [--host 127.0.0.1] [--port 8000] [--records DIR] [--idle-minutes 30]
                   [--players-dir DIR] [--max-decision-ms 1000] [--allowed-host NAME] [--allow-imports]

What the server trusts and refuses is in docs/serve.md ("What the server trusts"); Ctrl-C or
SIGTERM stops it within a second or two, whatever its games are doing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from baselines.command_line import options
from baselines.web.admission import MAX_DECISION_MS
from dominoes_env.core import validation

MAX_PORT = 65535
#: Seconds a stopping server waits for the requests in flight (their opponents stop before
#: their next decision, each at most --max-decision-ms) before it closes them.
GRACE_SECONDS = 1.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 shares the "
                             "page with the network, without any login)")
    parser.add_argument("--port", type=validation.integer_argument, default=8000, help="port (default 8000)")
    parser.add_argument("--records", default=None, metavar="DIR",
                        help="the directory of game records the watch page lists (e.g. a league's --record-games "
                             "directory); nothing outside it is read")
    parser.add_argument("--idle-minutes", type=validation.integer_argument, default=30,
                        help="a game nobody touched for this long is dropped (default 30)")
    parser.add_argument("--players-dir", default=None, metavar="DIR",
                        help="offer the weights files in DIR as opponents, by file name (td_lambda@NAME); no "
                             "other file is read")
    parser.add_argument("--max-decision-ms", type=validation.number_argument, default=MAX_DECISION_MS, metavar="MS",
                        help=f"the longest an opponent's or a hint's search may think a move, in milliseconds "
                             f"(default {MAX_DECISION_MS:g}; 10 to 60000)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="a host name the pages are reached by, besides the address listened on and "
                             "localhost (repeat for several); requests for other names are refused")
    parser.add_argument("--allow-imports", action="store_true",
                        help="UNSAFE beyond your own use: also seat opponents by import path (my_module.MyPolicy) "
                             "and installed entry points; this runs code from the server's Python path (the "
                             "current directory included) when a request names it; refused with a non-local --host")


def run(args: argparse.Namespace) -> int:
    port = options.count("--port", args.port, 1, MAX_PORT)
    idle = options.count("--idle-minutes", args.idle_minutes, 1, 24 * 60)
    for option, directory in (("--records", args.records), ("--players-dir", args.players_dir)):
        if directory is not None and not directory.strip():  # Path("") is the current folder
            raise ValueError(f"{option}: an empty name is no directory (give the folder, e.g. {option} ./players)")
        if directory is not None and not Path(directory).is_dir():
            raise ValueError(f"{option}: {directory!r} is not a directory")
    try:
        import uvicorn  # noqa: F401

        from baselines.web.admission import Admission
        from baselines.web.app import create_app
        from baselines.web.games import GameStore
        from baselines.web.guard import answered_hosts, is_local
    except ImportError as error:
        raise ValueError(f"dominoes serve needs the web extra ({error.name} is missing): "
                         f"pip install 'dominoes-env[web]'") from None
    local = is_local(args.host)
    if args.allow_imports and not local:
        raise ValueError(f"--allow-imports runs code a request names: it is refused with --host {args.host} "
                         f"(use 127.0.0.1, localhost or ::1)")
    max_decision_ms = validation.real("--max-decision-ms", args.max_decision_ms, 10.0, 60_000.0)
    admission = Admission(None if args.players_dir is None else Path(args.players_dir).resolve(), args.allow_imports,
                          max_decision_ms)
    hosts = answered_hosts(args.host, args.allowed_host)
    store = GameStore(idle_seconds=60 * idle)
    app = create_app(args.records, store, admission, hosts)
    where = "this machine only" if local else "every machine that can reach this one (no login)"
    print(f"dominoes serve: http://{args.host}:{port}/ (play) and http://{args.host}:{port}/watch (watch records); "
          f"listening for {where}; answering the host names {', '.join(hosts)}; "
          f"{'opponents by import path too (--allow-imports)' if args.allow_imports else 'the shipped players'}"
          f"{', weights files of ' + str(admission.players_dir) if admission.players_dir else ''}; "
          f"Ctrl-C stops it", flush=True)
    server = PromptServer(app, args.host, port, store.abandon_all)
    server.run()
    print("dominoes serve: stopped", file=sys.stderr)
    return 0


class PromptServer:
    """uvicorn's server that stops promptly: on Ctrl-C or SIGTERM (or :meth:`stop`) every game
    is abandoned first, so no request waits for opponents nobody will see, and the requests
    still in flight get :data:`GRACE_SECONDS` to finish."""

    def __init__(self, app: Any, host: str, port: int, abandon_all: Callable[[], None]) -> None:
        import uvicorn

        class Server(uvicorn.Server):
            def handle_exit(self, sig: int, frame: FrameType | None) -> None:
                abandon_all()
                super().handle_exit(sig, frame)

        config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                                timeout_graceful_shutdown=GRACE_SECONDS)  # type: ignore[arg-type]
        self.server = Server(config)
        self._abandon_all = abandon_all

    def run(self) -> None:
        self.server.run()

    @property
    def started(self) -> bool:
        return bool(self.server.started)

    def stop(self) -> None:
        self._abandon_all()
        self.server.should_exit = True


def serve_in_background(app: object, host: str = "127.0.0.1", port: int = 0,
                        abandon_all: Callable[[], None] = lambda: None) -> tuple[str, Callable[[], None]]:
    """Serve `app` from a thread (the browser tests and the screenshot tool): its base URL, and
    a function that stops it. Port 0 takes a free one; `abandon_all` is called when it stops."""
    import socket
    import threading
    import time

    if port == 0:
        with socket.socket() as probe:
            probe.bind((host, 0))
            port = probe.getsockname()[1]
    server = PromptServer(app, host, port, abandon_all)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the web app did not start on {host}:{port}")
        time.sleep(0.05)

    def stop() -> None:
        server.stop()
        thread.join(timeout=10)

    return f"http://{host}:{port}", stop
