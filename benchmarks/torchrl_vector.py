"""TorchRL on the batched engine against TorchRL on the AEC env, in one run: moves per second.

    python benchmarks/torchrl_vector.py [--moves 2000] [--games 256] [--batched-moves 100000]

Both envs give the same keys (``baselines.adapters.torchrl``), 4 players, double-nine. Two ways
of collecting are timed on each:

- ``rollout``: ``env.rollout`` with the env's random legal moves (no network);
- ``collector``: TorchRL's ``Collector`` with the masked PPO actor of ``examples/torchrl_ppo.py``
  (an MLP of 2 x 256 on one torch thread), as training collects.

Printed: moves per second for the AEC env through ``PettingZooWrapper`` and for
``TorchRLVectorEnv(games)``, and the ratio. Each figure is the best of three timings.
Needs torch and torchrl (the ``examples`` extra).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import torchrl_ppo  # noqa: E402  (the example's env and actor, so both sides run the same code)
from torchrl.collectors import Collector  # noqa: E402

from dominoes_env import make_config  # noqa: E402


def best_rate(moves: int, run: Callable[[], None], repeats: int = 3) -> float:
    """Moves per second of the fastest of `repeats` runs of `run` (each makes `moves` moves)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return moves / best


def rollout_rate(games: int | None, moves: int) -> float:
    env = torchrl_ppo.make_env(0, make_config(4, 9), games)
    env.reset()
    steps = moves // (games or 1)
    return best_rate(steps * (games or 1), lambda: env.rollout(steps, break_when_any_done=False))


def collector_rate(games: int | None, moves: int) -> float:
    env = torchrl_ppo.make_env(0, make_config(4, 9), games)
    actor, _, _ = torchrl_ppo.make_modules(env)
    per_batch = (moves // (games or 1)) * (games or 1)

    def collect() -> None:
        collector = Collector(env, actor, frames_per_batch=per_batch, total_frames=per_batch,
                              auto_register_policy_transforms=False)
        for _ in collector:
            pass
        collector.shutdown()

    return best_rate(per_batch, collect)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=2000, help="moves timed on the AEC env (default 2000)")
    parser.add_argument("--games", type=int, default=256, help="games of the batched env (default 256)")
    parser.add_argument("--batched-moves", type=int, default=100_000,
                        help="moves timed on the batched env (default 100000)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    print(f"TorchRL, 4 players, double-nine; moves per second (best of 3); batched env: {args.games} games")
    print("| collecting | PettingZooWrapper(raw_env) | TorchRLVectorEnv | ratio |\n|---|---:|---:|---:|")
    for name, rate in (("rollout, random legal moves", rollout_rate), ("Collector, PPO actor", collector_rate)):
        aec, batched = rate(None, args.moves), rate(args.games, args.batched_moves)
        print(f"| {name} | {aec:,.0f} | {batched:,.0f} | {batched / aec:,.0f}x |", flush=True)


if __name__ == "__main__":
    main()
