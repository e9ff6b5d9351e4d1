"""Decisions a second of the game in JAX (``dominoes_env.jax.JaxDominoes``) beside the compiled
batched engine, in one run (the figures of docs/jax.md).

B games at once, uniformly random legal actions, a finished game dealt again at once (as a
training loop's auto-reset does), every observation and mask computed at every step. JAX: one
compiled program runs `--unroll` steps of the whole batch (``jax.lax.scan`` over
``vmap(step)``, the random pick and the reset inside it), jit compiling excluded, on every
device and core JAX uses; a decision is a step of a game not finished. The batch's fresh deals
are dealt once per program run, not at every step (under ``vmap`` a reset's deal would be paid
by every game at every step, and a shuffle is the dearest part of a step on a CPU): a game that
finishes within a run starts again from its slot of that run's deal, so no deal repeats within
a game, and a slot serves one game twice only if that game played a whole hand in `--unroll`
steps. Beside it, in the same
run: ``VectorDominoes.step_random`` at the same B on one thread (the anchor: the ratio is the
figure to compare across machines), and, where ``pgx`` is installed, Pgx's connect_four stepped
the same way (its own auto-reset):

    python benchmarks/jax_throughput.py [--sizes 1024 4096] [--seconds 3]
    python benchmarks/jax_throughput.py --players 6 --highest 12 --rules mexican_train
    python benchmarks/jax_throughput.py --sizes 65536 --seconds 10   # on a GPU
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
from vector_throughput import pgx_steps, vector_decisions

from dominoes_env import make_config
from dominoes_env.core.config import describe_table
from dominoes_env.jax import JaxDominoes, restart_finished


def random_legal(key: jax.Array, masks: jax.Array) -> jax.Array:
    """One uniformly random legal action per row of (B, A) masks, from one uniform number per
    game (the k-th legal action): ``jax.random.categorical`` draws a number per action, and on a
    CPU that costs several times the step being measured."""
    counts = masks.sum(axis=1)
    picks = jnp.floor(jax.random.uniform(key, counts.shape) * counts).astype(jnp.int32)
    return jnp.argmax(jnp.cumsum(masks, axis=1) > picks[:, None], axis=1)


def jax_decisions(env: JaxDominoes, batch: int, seconds: float, unroll: int) -> tuple[float, float]:
    """(decisions/s, seconds to compile) of `batch` games stepped with random legal actions,
    `unroll` steps per call of one compiled program."""
    init, step = jax.vmap(env.init), jax.vmap(env.step)

    def steps(state, key, fresh):
        def one_step(carry, _):
            state, key = carry
            key, pick = jax.random.split(key)
            playing = ~state.terminated
            state = step(state, random_legal(pick, state.legal_action_mask))
            state = restart_finished(state, fresh)  # a finished game starts again from this block's deal
            return (state, key), playing.sum()

        (state, key), decisions = jax.lax.scan(one_step, (state, key), None, length=unroll)
        return state, key, decisions.sum()

    @jax.jit
    def run(state, key):
        key, deal = jax.random.split(key)
        return steps(state, key, init(jax.random.split(deal, batch)))

    key = jax.random.PRNGKey(0)
    state = jax.jit(init)(jax.random.split(key, batch))
    start = time.perf_counter()
    state, key, _ = run(state, key)
    jax.block_until_ready(state)
    compiled = time.perf_counter() - start
    decisions, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        state, key, done = run(state, key)
        decisions += int(done)
    return decisions / (time.perf_counter() - start), compiled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--unroll", type=int, default=32, help="steps per compiled call (default 32)")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--highest", type=int, default=9)
    parser.add_argument("--rules", default=None, help="a named rule set (mexican_train)")
    args = parser.parse_args()
    config = make_config(args.players, args.highest, **({"rules": args.rules} if args.rules else {}))
    env = JaxDominoes(config)
    print(f"{describe_table(config)}; JAX {jax.__version__} on {jax.devices()[0].platform} "
          f"({len(jax.devices())} device(s)); random legal actions, finished games dealt again")
    for batch in args.sizes:
        rate, compiled = jax_decisions(env, batch, args.seconds, args.unroll)
        anchor = vector_decisions(batch, args.seconds, table=(args.players, args.highest)) \
            if args.rules is None else None
        connect_four = pgx_steps(batch, args.seconds)
        line = f"B={batch:6d}  JaxDominoes {rate / 1e6:7.3f} M decisions/s (compiled in {compiled:.1f} s)"
        if anchor:
            line += f"   VectorDominoes.step_random (1 thread) {anchor / 1e6:6.3f} M/s   ratio {rate / anchor:5.2f}"
        if connect_four is not None:
            line += f"   Pgx connect_four {connect_four / 1e6:7.3f} M steps/s"
        print(line)


if __name__ == "__main__":
    main()
