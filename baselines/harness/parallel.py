"""Run independent tasks on worker processes or Ray and get the results back in task order.

The league (:mod:`baselines.league.runner`) and the bench (:mod:`baselines.benchmark.run`) hand
out work this way. Results come back in the order of the tasks whatever the backend, so a
file written from them is the same byte for byte on any backend and number of workers.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from dominoes_env.core import validation

Task = TypeVar("Task")
Result = TypeVar("Result")

BACKENDS = ("local", "ray")
MAX_WORKERS = 1024


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def add_parallel_options(parser: argparse.ArgumentParser) -> None:
    """``--backend``, ``--workers`` and ``--ray-address``, as every command that hands out work takes them."""
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="local: processes on this machine; ray: Ray tasks (default local)")
    parser.add_argument("--workers", type=validation.integer_argument, default=None,
                        help=f"worker processes, or CPUs of a local Ray instance (1-{MAX_WORKERS}; default: all "
                             f"cores, {default_workers()} here)")
    parser.add_argument("--ray-address", default=None,
                        help="Ray cluster to join with --backend ray (default: start a local instance)")


def start_method() -> str:
    """fork starts a worker in milliseconds with everything (numba's compiled rules, the
    policies) already imported; elsewhere spawn imports once per worker."""
    import multiprocessing

    return "fork" if "fork" in multiprocessing.get_all_start_methods() and sys.platform == "linux" else "spawn"


def init_worker() -> None:
    """Leave Ctrl-C to the parent, which stops the pool; and let the pool's SIGTERM (its
    ``terminate()``) end a worker at once. A forked worker inherits the parent's Python handlers:
    Ray's driver leaves one that raises SystemExit (even after ``ray.shutdown()``), and a worker
    blocked on the pool's queue was seen to outlive it, holding the run for ever."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def ordered_map(function: Callable[[Task], Result], tasks: Sequence[Task], backend: str = "local",
                workers: int = 1, ray_address: str | None = None,
                missing_ray: Callable[[], Exception] | None = None) -> Iterator[Result]:
    """``function(task)`` for every task, yielded in task order: in this process (one worker),
    on a multiprocessing pool, or as Ray tasks (`ray_address`: a cluster to join; None starts a
    local instance with `workers` CPUs). `function` must be importable by the workers (a
    module-level function). Closing the iterator stops the workers.

    Raises:
        ValueError: `backend` is not one of :data:`BACKENDS` (before any task runs).
    """
    validation.choice("backend", backend, BACKENDS)  # here, when called: the rest runs when iterated
    return _ordered(function, tasks, backend, workers, ray_address, missing_ray)


def _ordered(function: Callable[[Task], Result], tasks: Sequence[Task], backend: str, workers: int,
             ray_address: str | None, missing_ray: Callable[[], Exception] | None) -> Iterator[Result]:
    if backend == "ray":
        yield from _ray_map(function, tasks, workers, ray_address, missing_ray)
    elif workers == 1 or len(tasks) <= 1:
        for task in tasks:
            yield function(task)
    else:
        import multiprocessing

        context = multiprocessing.get_context(start_method())
        with context.Pool(min(workers, len(tasks)), initializer=init_worker) as pool:
            yield from pool.imap(function, tasks)


def _check_something_listens(address: str) -> None:
    """A cluster's address as HOST:PORT must answer at once: Ray itself retries a silent address for
    minutes before it gives up. ("auto", a ray:// client address and the like are left to Ray.)"""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "/" in address:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as error:
        raise ConnectionError(f"no Ray cluster answers at {address} ({error}): start one there with `ray start "
                              f"--head --port {port}`, or give the address its head printed") from None


def _ray_map(function: Callable[[Any], Any], tasks: Sequence[Any], workers: int, address: str | None,
             missing_ray: Callable[[], Exception] | None) -> Iterator[Any]:
    try:
        import ray
    except ImportError:
        raise (missing_ray() if missing_ray else ImportError("the ray backend needs Ray: "
                                                            "pip install 'dominoes-env[ray]'")) from None
    started_here = not ray.is_initialized()
    if started_here:
        if address is None:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        else:
            _check_something_listens(address)
            try:
                ray.init(address=address, log_to_driver=False)
            except ConnectionError as error:
                raise ConnectionError(f"{error}: if that cluster is up (`ray status` on its head), it may ask for the "
                                      f"token `ray start` made (Ray 2.59 and later): set RAY_AUTH_MODE=token here, "
                                      f"with the head's ~/.ray/auth_token copied to this machine") from None
    try:
        remote = ray.remote(num_cpus=1)(function)
        in_flight: deque = deque()
        window = 4 * max(1, int(ray.cluster_resources().get("CPU", workers)))
        for task in tasks:
            in_flight.append(remote.remote(task))
            if len(in_flight) >= window:
                yield ray.get(in_flight.popleft())
        while in_flight:
            yield ray.get(in_flight.popleft())
    finally:
        if started_here:
            ray.shutdown()
