"""Throughput of the batched engine (the figures of docs/vector.md) beside the scalar env.

4 players, double-nine, masked random actions for every game (the compiled picker
:func:`dominoes_env.vector.random_legal_actions`), the
observation and mask of every game written at every step, one process, fixed seeds:

    python benchmarks/vector_throughput.py [--seconds 3] [--sizes 1 64 256 1024 4096] [--threads 1 2]
    python benchmarks/vector_throughput.py --tables   # the cost of a decision by table size

For each batch size B and thread count (``VectorDominoes(threads=...)``) it prints decisions/s of
:class:`dominoes_env.vector.VectorDominoes` stepped two ways: ``step`` with the picker's moves
(the picker's time included, as a user's loop pays it) and ``step_random`` (the same moves
chosen inside the compiled step), with the ratios to the scalar ``raw_env`` and to the rules
alone (compiled, no observation: the ceiling) measured in the same run, then the
memory one game takes. Where ``pgx`` is installed (``pip install -e ".[pgx]"``: an
optional extra of this benchmark only), Pgx's connect_four at the same B is measured too (jit compile
excluded), on every core JAX uses.

Targets: B=4096 >= 2M decisions/s on one thread (about 10x the scalar env in the same
run), moonshot 4M on both cores; B=1 no slower than the scalar env; 100k games in 2 GB.
B=1 and the scalar env differ by little, less than the drift of a shared machine's speed
over one run, so B=1 is also measured in alternating pairs against the scalar env and the
median ratio printed.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from env_throughput import aec_steps

import dominoes_env
from dominoes_env.core import rules
from dominoes_env.vector import VectorDominoes
from dominoes_env.vector import random_legal_actions as batched_random_legal_actions


def random_legal_actions(masks: np.ndarray, rng: np.random.Generator, threads: int = 1) -> np.ndarray:
    """One uniformly random legal action per row of (B, A) masks: the random policy's batched pick
    (:func:`dominoes_env.vector.random_legal_actions`, compiled, about 0.2 ms at B=4096 on one
    thread; on the batch's threads), or, for one game, the scalar anchor's own pick (a slice
    keeps it an array, for free)."""
    if masks.shape[0] == 1:
        legal = masks[0].nonzero()[0]
        pick = int(rng.random() * legal.shape[0])
        return legal[pick:pick + 1]
    return batched_random_legal_actions(masks, rng, threads)


def vector_decisions(batch: int, seconds: float, threads: int = 1, inside: bool = False,
                     table: tuple[int, int] = (4, 9)) -> float:
    """Decisions/s of VectorDominoes(batch, threads=threads) stepped with random legal actions:
    picked from the returned masks and passed to ``step``, or (`inside`) ``step_random``, which
    plays the same moves from inside the compiled step; `table` is (players, highest double)."""
    vec = VectorDominoes(batch, *table, seed=0, threads=threads)
    rng = np.random.default_rng(0)
    observations, _ = vec.reset()
    if inside:  # one untimed step first: the timed ones run compiled code only
        vec.step_random(rng)
    else:
        vec.step(random_legal_actions(observations["action_mask"], rng, threads))
    observations, _ = vec.reset()
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        if inside:
            vec.step_random(rng)
        else:
            observations, *_ = vec.step(random_legal_actions(observations["action_mask"], rng, threads))
        steps += 1
    return steps * batch / (time.perf_counter() - start)


def rules_alone_decisions(seconds: float, games: int = 4096) -> float:
    """Decisions/s of the rules alone, compiled, one thread: random hands played to their end by
    :func:`dominoes_env.core.rules.play_random_hands` (legal moves listed and played; no
    observation, mask or Python between moves). The ceiling a step that also writes what the
    players see cannot reach."""
    vec = VectorDominoes(games, 4, 9, seed=0)
    vec.reset()
    dealt = vec.states.copy()
    uniforms = np.random.default_rng(0).random(100_003)
    tiles = vec.config.tiles
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        states = dealt.copy()
        decisions += rules.play_random_hands(states, tiles.low, tiles.high, tiles.tiles_with_value, uniforms)
    return decisions / (time.perf_counter() - start)


def picker_milliseconds(batch: int, seconds: float) -> float:
    """Milliseconds one pick of B random legal actions takes alone (the share of each step the
    benchmark's own player costs), on the masks of a freshly dealt batch."""
    observations, _ = VectorDominoes(batch, 4, 9, seed=0).reset()
    masks, rng = observations["action_mask"], np.random.default_rng(0)
    picks = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        random_legal_actions(masks, rng)
        picks += 1
    return (time.perf_counter() - start) / picks * 1e3


def paired_ratio(seconds: float, rounds: int = 5) -> tuple[float, float, float]:
    """B = 1 against the scalar env, measured in `rounds` alternating pairs of `seconds` / `rounds`
    each, so that both sides of each ratio see the same load: the median ratio, and the lowest
    and highest."""
    ratios = []
    for _ in range(rounds):
        scalar = aec_steps(dominoes_env.raw_env(4, 9), seconds / rounds)
        ratios.append(vector_decisions(1, seconds / rounds) / scalar)
    return float(np.median(ratios)), min(ratios), max(ratios)


def single_agent_steps(batch: int | None, opponents: str, seconds: float) -> float:
    """Learner steps/s of the single-agent view against `opponents`: SingleAgentEnv (batch None) or
    SingleAgentVectorEnv(batch), random legal learner moves; the opponents' moves are inside a step."""
    rng = np.random.default_rng(0)
    steps = 0
    if batch is None:
        env = dominoes_env.SingleAgentEnv(opponents)
        env.reset(seed=0)
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            *_, terminated, _, _ = env.step(int(random_legal_actions(env.action_masks()[None], rng)[0]))
            if terminated:
                env.reset()
            steps += 1
        return steps / (time.perf_counter() - start)
    vec = dominoes_env.SingleAgentVectorEnv(batch, opponents)
    vec.reset(seed=0)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        vec.step(random_legal_actions(vec.action_masks(), rng))
        steps += batch
    return steps / (time.perf_counter() - start)


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
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                        help="VectorDominoes(threads=...) counts (default 1 2)")
    parser.add_argument("--tables", action="store_true",
                        help="only the cost of a decision by table size (B=4096, one thread), then stop")
    args = parser.parse_args()
    if args.tables:
        table_sizes(args.seconds)
        return
    available = numba.config.NUMBA_NUM_THREADS
    threads = [count for count in args.threads if 1 <= count <= available]

    for count in threads:  # compile every path (serial and parallel) before timing
        for inside in (False, True):
            vector_decisions(max(args.sizes), 0.3, count, inside), vector_decisions(1, 0.1, count, inside)
    aec_steps(dominoes_env.raw_env(4, 9), 0.3)
    rules_alone_decisions(0.3)

    scalar = aec_steps(dominoes_env.raw_env(4, 9), args.seconds)
    ceiling = rules_alone_decisions(args.seconds)
    print("4 players, double-nine, random legal actions, observation and mask every step, one process;\n"
          "step: the compiled picker's moves passed to step(); step_random: the same moves picked inside the step")
    print(f"{'scalar raw_env (anchor)':38s} {scalar:12,.0f} decisions/s")
    print(f"{'the rules alone, compiled (ceiling)':38s} {ceiling:12,.0f} decisions/s  {ceiling / scalar:6.2f}x the "
          "scalar env")
    for batch in args.sizes:
        for count in threads:
            for inside in (False, True):
                rate = vector_decisions(batch, args.seconds, count, inside)
                name = f"{'step_random' if inside else 'step'} B={batch}, {count} thread" + "s" * (count > 1)
                print(f"{name:38s} {rate:12,.0f} decisions/s  {rate / scalar:6.2f}x the scalar env  "
                      f"{rate / ceiling:5.2f} of the rules alone (1 thread)")
        connect_four = pgx_steps(batch, args.seconds)
        if connect_four is not None:
            print(f"{'pgx connect_four B=' + str(batch):30s} {connect_four:12,.0f} steps/s      "
                  f"{connect_four / scalar:6.2f}x the scalar env")
    largest = max(args.sizes)
    print(f"the picker alone at B={largest}: {picker_milliseconds(largest, args.seconds / 2):.2f} ms a step")
    if 1 in args.sizes and 1 in threads:
        median, low, high = paired_ratio(2 * args.seconds)
        print(f"B=1 against the scalar env in 5 alternating pairs: median {median:.2f}x (lowest {low:.2f}x, "
              f"highest {high:.2f}x)")
    print("\nthe single-agent view (learner steps/s; the three opponents' moves happen inside each step), 1 thread:")
    for opponents in ("random", "greedy"):
        single_agent_steps(64, opponents, 0.3)
        scalar_view = single_agent_steps(None, opponents, args.seconds)
        print(f"{'SingleAgentEnv vs ' + opponents:30s} {scalar_view:12,.0f} steps/s")
        for batch in (64, 1024):
            rate = single_agent_steps(batch, opponents, args.seconds)
            print(f"{f'SingleAgentVectorEnv B={batch}':30s} {rate:12,.0f} steps/s  {rate / scalar_view:6.2f}x")
    vec = VectorDominoes(1, 4, 9)
    print(f"memory: {vec.bytes_per_game:,} bytes per game; 100,000 games: "
          f"{vec.bytes_per_game * 100_000 / 2**30:.2f} GiB (target <= 2 GB)")


TABLES = [(2, 6), (4, 9), (6, 12), (8, 15), (8, 18)]


def table_sizes(seconds: float, batch: int = 4096) -> None:
    """The time a decision takes by table size (B games, one thread, both ways of stepping), beside
    the bytes a decision writes (observation and mask): the cost grows with what is written."""
    inside = hasattr(VectorDominoes, "step_random")  # not in versions before 0.3: run against one for a before/after
    print(f"time per decision by table size, B={batch}, one thread, random legal actions:")
    print(f"{'table':24s} {'bytes written':>13s} {'step':>9s} {'step_random':>12s}")
    for players, highest in TABLES:
        vec = VectorDominoes(1, players, highest)
        written = vec.observation_size + vec.config.num_actions
        ways = (False, True) if inside else (False,)
        rates = [vector_decisions(batch, seconds, 1, way, (players, highest)) for way in ways
                 if vector_decisions(batch, 0.2, 1, way, (players, highest))]  # the first call compiles
        shown = f"{1e6 / rates[1]:9.2f} us" if inside else f"{'n/a':>12s}"
        print(f"{f'{players} players, double-{highest}':24s} {written:13,d} {1e6 / rates[0]:7.2f} us {shown}")


if __name__ == "__main__":
    main()
