"""PufferLib's vectorisation of the env beside the env's own batched views, in one run (docs/ppo.md).

    python benchmarks/pufferlib_vector.py [--batch 64] [--big-batch 1024] [--workers 2] [--seconds 4]

The question it answers (issue: "PufferLib's vectorisation or your own loop, which is faster
here"): a trainer needs B games stepped at once. PufferLib steps B copies of a Python env,
in this process (``pufferlib.vector.Serial``) or in worker processes writing into shared memory
(``pufferlib.vector.Multiprocessing``); the env ships its own batched engine instead. Figures,
4 players, double-nine, the learner's seat against three random players (the single-agent view,
so every figure counts the same thing: learner steps, the opponents' moves made inside each),
a uniformly random legal move for the learner each step, fixed seeds:

1. PufferLib ``Serial`` over B ``SingleAgentEnv(observation="dict")`` (the mask travels in the
   observation, as PufferLib's flattened dict observations carry it), B = `--batch`;
2. PufferLib ``Multiprocessing`` with `--workers` worker processes, same B;
3. the env's own batched single-agent view, ``gymnasium.make_vec("dominoes_env/Dominoes-v0")``
   (:class:`dominoes_env.SingleAgentVectorEnv`), at B and at `--big-batch`;
4. ``VectorDominoes.step_random`` at B = 4096: every seat's decision, the engine alone (what
   ``dominoes train ppo`` steps), for scale.

PufferLib is not a dependency of the project, not even an optional one: PufferLib 3.0 pins
``gymnasium<=0.29.1``, ``pettingzoo<=1.24.1`` and ``numpy<2``, which the env's own requirements
exclude, and building it downloads raylib from GitHub. Its vectorisation is pure Python, so it
runs from its source on ``PYTHONPATH`` in a virtual environment of its own::

    python -m venv .venv-puffer && . .venv-puffer/bin/activate
    pip install -e . "gym==0.23.1" psutil        # pufferlib.spaces imports gym; vector imports psutil
    # pufferlib-3.0.0.tar.gz, the source archive from PyPI's page of the release (pip cannot
    # fetch it alone: it prepares the build first, which downloads raylib)
    tar xzf pufferlib-3.0.0.tar.gz && PYTHONPATH=pufferlib-3.0.0 python benchmarks/pufferlib_vector.py

Without PufferLib importable it says so in one line and measures figures 3 and 4 alone.
A speed holds for the machine it ran on and its load: read the ratios, measured in one run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from vector_throughput import vector_decisions

import dominoes_env  # noqa: F401  (registers the env ids)
from dominoes_env.core import validation
from dominoes_env.single_agent import SingleAgentEnv
from dominoes_env.vector import random_legal_actions

Stepper = Callable[[np.ndarray], np.ndarray]  # the learner's actions -> the next masks


def timed(step: Stepper, masks: np.ndarray, seconds: float) -> float:
    """Learner steps a second of `step` driven by random legal actions for `seconds` (after one
    warm-up step, which compiles whatever is compiled on first use)."""
    rng = np.random.default_rng(0)
    masks = step(random_legal_actions(masks, rng))
    steps, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        masks = step(random_legal_actions(masks, rng))
        steps += masks.shape[0]
    return steps / (time.perf_counter() - began)


def own_view(batch: int, seconds: float) -> float:
    """The env's batched single-agent view (gymnasium.make_vec), learner steps a second."""
    vec = gymnasium.make_vec("dominoes_env/Dominoes-v0", num_envs=batch, opponents="random")
    vec.reset(seed=0)

    def step(actions: np.ndarray) -> np.ndarray:
        vec.step(actions)
        return vec.unwrapped.action_masks()

    try:
        return timed(step, vec.unwrapped.action_masks(), seconds)
    finally:
        vec.close()


def puffer_view(pufferlib: Any, backend: str, batch: int, seconds: float, **options: Any) -> float:
    """B SingleAgentEnv copies under PufferLib's `backend`, learner steps a second."""
    import pufferlib.emulation
    import pufferlib.vector

    def creator(buf: Any = None, seed: int = 0) -> Any:
        return pufferlib.emulation.GymnasiumPufferEnv(
            env_creator=SingleAgentEnv, env_kwargs={"opponents": "random", "observation": "dict"}, buf=buf, seed=seed)

    vec = pufferlib.vector.make(creator, backend=getattr(pufferlib.vector, backend), num_envs=batch, **options)
    flat, _ = vec.reset(seed=0)
    structure = vec.driver_env.obs_dtype  # the flattened dict observation's fields

    def masks_of(observations: np.ndarray) -> np.ndarray:
        return observations.view(structure)["action_mask"].reshape(observations.shape[0], -1)

    def step(actions: np.ndarray) -> np.ndarray:
        observations, *_ = vec.step(actions)
        return masks_of(observations)

    try:
        return timed(step, masks_of(flat), seconds)
    finally:
        vec.close()


def load_pufferlib() -> Any:
    """PufferLib's module, or None (with the line that says why) where it cannot be imported."""
    try:
        import pufferlib
        import pufferlib.vector  # noqa: F401
    except Exception as error:  # an ImportError, or gym missing beneath it
        print(f"PufferLib not importable ({type(error).__name__}: {error}): its figures are left out "
              f"(see this script's docstring for how to run it)")
        return None
    return pufferlib


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=64, help="games stepped at once (default 64)")
    parser.add_argument("--big-batch", type=int, default=1024, help="the env's own view at this B too (default 1024)")
    parser.add_argument("--workers", type=int, default=2, help="PufferLib's worker processes (default 2)")
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds of stepping per figure (default 4)")
    args = parser.parse_args(argv)
    try:
        batch = validation.integer("--batch", args.batch, 1, 65_536)
        big_batch = validation.integer("--big-batch", args.big_batch, 1, 65_536)
        workers = validation.integer("--workers", args.workers, 1, 256)
        seconds = validation.real("--seconds", args.seconds, 0.01, 3600.0)
        if batch % workers:
            raise ValueError(f"--batch must be a multiple of --workers (PufferLib splits the games evenly), "
                             f"got {batch} and {workers}")
    except ValueError as error:
        parser.error(str(error))

    print("4 players, double-nine, the learner against three random players, learner steps a second")
    rows: list[tuple[str, int, float]] = []
    pufferlib = load_pufferlib()
    if pufferlib is not None:
        rows.append(("PufferLib Serial", batch, puffer_view(pufferlib, "Serial", batch, seconds)))
        rows.append((f"PufferLib Multiprocessing, {workers} workers", batch,
                     puffer_view(pufferlib, "Multiprocessing", batch, seconds, num_workers=workers)))
    rows.append(("the env's own view (gymnasium.make_vec)", batch, own_view(batch, seconds)))
    rows.append(("the env's own view (gymnasium.make_vec)", big_batch, own_view(big_batch, seconds)))
    anchor = rows[-2][2]
    print("| stepped by | B | learner steps/s | against the env's own view at the same B |")
    print("|---|---:|---:|---:|")
    for name, size, rate in rows:
        print(f"| {name} | {size:,} | {rate:,.0f} | {rate / anchor:.2f}x |")
    decisions = vector_decisions(4096, seconds, inside=True)
    print(f"VectorDominoes.step_random, B = 4,096, every seat's decision: {decisions:,.0f} decisions/s "
          f"({decisions / anchor:.0f}x the env's own view at B = {batch:,})")


if __name__ == "__main__":
    main()
