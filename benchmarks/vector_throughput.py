"""Throughput of the batched engine (issue 12's speed targets) beside the scalar env.

4 players, double-nine, masked random actions chosen in numpy for every game, the
observation and mask of every game written at every step, one process, fixed seeds:

    python benchmarks/vector_throughput.py [--seconds 3] [--sizes 1 64 256 1024 4096] [--threads 1 2]

For each batch size B and numba thread count it prints decisions/s of
:class:`dominoes_env.vector.VectorDominoes` (the picker's time included, as a user's loop
pays it) and the ratio to the scalar ``raw_env`` measured in the same run, then the
memory one game takes. Where ``pgx`` is installed (``pip install pgx``: an optional extra
of this benchmark only), Pgx's connect_four at the same B is measured too (jit compile
excluded), on every core JAX uses.

Targets: B=4096 >= 1M decisions/s on one thread (about 6x the scalar env in the same
run), moonshot 2.5M on both cores; B=1 no slower than the scalar env; 100k games in 2 GB.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from env_throughput import aec_steps

import dominoes_env
from dominoes_env.vector import VectorDominoes

#: below this many games a row-by-row pick is cheaper than the batched one
ROW_BY_ROW = 8


def random_legal_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of (B, A) int8 masks, in numpy.

    Small batches pick row by row, as the scalar anchor does. Larger ones take every legal
    index in one pass (``flatnonzero``, ordered by row), the count per row, and one
    uniform per row to pick within the row's run: about 1 ms at B=4096 on this machine,
    five times less than drawing a uniform for every (row, action).
    """
    if masks.shape[0] == 1:  # as the scalar anchor picks (a slice keeps it an array, for free)
        legal = masks[0].nonzero()[0]
        pick = int(rng.random() * legal.shape[0])
        return legal[pick:pick + 1]
    if masks.shape[0] < ROW_BY_ROW:
        picks = np.empty(masks.shape[0], dtype=np.int64)
        for row, mask in enumerate(masks):
            legal = mask.nonzero()[0]
            picks[row] = legal[int(rng.random() * legal.shape[0])]
        return picks
    legal = masks.view(np.bool_)
    flat = np.flatnonzero(legal)
    counts = np.count_nonzero(legal, axis=1)
    starts = np.cumsum(counts) - counts
    picks = flat[starts + (rng.random(legal.shape[0]) * counts).astype(np.int64)]
    return picks - np.arange(legal.shape[0]) * legal.shape[1]


def vector_decisions(batch: int, seconds: float) -> float:
    """Decisions/s of VectorDominoes(batch) stepped with random legal actions."""
    vec = VectorDominoes(batch, 4, 9, seed=0)
    rng = np.random.default_rng(0)
    observations, _ = vec.reset()
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        observations, *_ = vec.step(random_legal_actions(observations["action_mask"], rng))
        steps += 1
    return steps * batch / (time.perf_counter() - start)


def pgx_steps(batch: int, seconds: float) -> float | None:
    """Steps/s of Pgx's connect_four at `batch` games (random legal actions, jitted), or None without pgx."""
    try:
        import jax
        import pgx
    except ImportError:
        return None
    env = pgx.make("connect_four")
    init, step = jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))

    @jax.jit
    def act(key, state):  # uniformly random legal action per game
        logits = jax.numpy.where(state.legal_action_mask, 0.0, -jax.numpy.inf)
        return jax.random.categorical(key, logits, axis=1)

    key = jax.random.PRNGKey(0)
    state = init(jax.random.split(key, batch))
    state = step(state, act(key, state))  # compile
    jax.block_until_ready(state)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        key, subkey = jax.random.split(key)
        state = step(state, act(subkey, state))  # a finished game is reset by pgx's own autoreset
        steps += 1
    jax.block_until_ready(state)
    return steps * batch / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement (default 3)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 256, 1024, 4096], help="batch sizes B")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="numba thread counts")
    args = parser.parse_args()
    available = numba.config.NUMBA_NUM_THREADS
    threads = [count for count in args.threads if 1 <= count <= available]

    for count in threads:  # compile every path (serial and parallel) before timing
        numba.set_num_threads(count)
        vector_decisions(max(args.sizes), 0.3), vector_decisions(1, 0.1)
    aec_steps(dominoes_env.raw_env(4, 9), 0.3)

    scalar = aec_steps(dominoes_env.raw_env(4, 9), args.seconds)
    print("4 players, double-nine, random legal actions chosen in numpy, observation and mask every step, one process")
    print(f"{'scalar raw_env (anchor)':30s} {scalar:12,.0f} decisions/s")
    for batch in args.sizes:
        for count in threads:
            numba.set_num_threads(count)
            rate = vector_decisions(batch, args.seconds)
            print(f"{'VectorDominoes B=' + str(batch) + f', {count} thread' + 's' * (count > 1):30s} "
                  f"{rate:12,.0f} decisions/s  {rate / scalar:6.2f}x the scalar env")
        connect_four = pgx_steps(batch, args.seconds)
        if connect_four is not None:
            print(f"{'pgx connect_four B=' + str(batch):30s} {connect_four:12,.0f} steps/s      "
                  f"{connect_four / scalar:6.2f}x the scalar env")
    numba.set_num_threads(available)
    vec = VectorDominoes(1, 4, 9)
    print(f"memory: {vec.bytes_per_game:,} bytes per game; 100,000 games: "
          f"{vec.bytes_per_game * 100_000 / 2**30:.2f} GiB (target <= 2 GB)")


if __name__ == "__main__":
    main()
