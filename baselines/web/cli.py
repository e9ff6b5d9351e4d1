"""``dominoes serve``: the web app on this machine (localhost unless told otherwise).

    dominoes serve [--host 127.0.0.1] [--port 8000] [--records DIR] [--idle-minutes 30]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from baselines.cli import options

MAX_PORT = 65535


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 shares the "
                             "page with the network, without any login)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--records", default=None, metavar="DIR",
                        help="the directory of game records the watch page lists (e.g. a league's --record-games "
                             "directory); nothing outside it is read")
    parser.add_argument("--idle-minutes", type=int, default=30,
                        help="a game nobody touched for this long is dropped (default 30)")


def run(args: argparse.Namespace) -> int:
    port = options.count("--port", args.port, 1, MAX_PORT)
    idle = options.count("--idle-minutes", args.idle_minutes, 1, 24 * 60)
    if args.records is not None and not Path(args.records).is_dir():
        raise ValueError(f"--records: {args.records!r} is not a directory")
    try:
        import uvicorn

        from baselines.web.app import create_app
        from baselines.web.games import GameStore
    except ImportError as error:
        raise ValueError(f"dominoes serve needs the web extra ({error.name} is missing): "
                         f"pip install 'dominoes-env[web]'") from None
    local = args.host in ("127.0.0.1", "localhost", "::1")
    app = create_app(args.records, GameStore(idle_seconds=60 * idle), any_spec=local)
    where = "this machine only" if local else \
        "every machine that can reach this one (no login; opponents by shipped name only)"
    print(f"dominoes serve: http://{args.host}:{port}/ (play) and http://{args.host}:{port}/watch (watch records); "
          f"listening for {where}; Ctrl-C stops it", flush=True)
    uvicorn.run(app, host=args.host, port=port, log_level="warning")
    print("dominoes serve: stopped", file=sys.stderr)
    return 0


def serve_in_background(app: object, host: str = "127.0.0.1", port: int = 0) -> tuple[str, Callable[[], None]]:
    """Serve `app` from a thread (the browser tests and the screenshot tool): its base URL, and
    a function that stops it. Port 0 takes a free one."""
    import socket
    import threading
    import time

    import uvicorn

    if port == 0:
        with socket.socket() as probe:
            probe.bind((host, 0))
            port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))  # type: ignore[arg-type]
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the web app did not start on {host}:{port}")
        time.sleep(0.05)

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=10)

    return f"http://{host}:{port}", stop
