"""Microseconds per sampled hidden deal (the hidden-information kit), on positions from real games.

Fixed seeds; greedy players; each seat's tracker sees its own observations. For each table
it prints the time of one sample (``sample_deals(knowledge, rng, 1)``), of one sample in a
batch of 32, and of a batch of 32 samples turned into engine states (``sampled_states``),
averaged over every decision of the games, with the facts known per decision; then the
sampler's cost bound: the largest counting table met (entries, of at most
``MAX_COUNTING_ENTRIES``), the slowest call of 32 samples, and the decisions at which facts
had to be set aside to stay within the bound:

    python benchmarks/hidden_sampling.py [--games 40]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dominoes_env
from baselines.policies.registry import make_policy
from dominoes_env.core.config import GameConfig, describe_table, make_config
from dominoes_env.core.hidden import (
    MAX_COUNTING_ENTRIES,
    HandKnowledge,
    KnowledgeTracker,
    sample_deals,
    sampled_states,
    sampling_plan,
)

TABLES = (make_config(4, 9), make_config(8, 12), make_config(6, 12, rules="mexican_train"),
          make_config(8, 18), make_config(8, 18, rules="mexican_train"))


def knowledge_at_decisions(config: GameConfig, games: int) -> list[HandKnowledge]:
    env = dominoes_env.raw_env(config)
    num_players = config.num_players
    found = []
    for game in range(games):
        env.reset(seed=game)
        trackers = [KnowledgeTracker(env.game.config) for _ in range(num_players)]
        players = [make_policy("greedy", config) for _ in range(num_players)]
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent)
            found.append(trackers[seat].observe(observation["observation"]))
            env.step(players[seat].act(observation["observation"], observation["action_mask"]))
    return found


def microseconds(positions: list[HandKnowledge], count: int, states: bool) -> float:
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for knowledge in positions:
        deals = sample_deals(knowledge, rng, count)
        if states:
            sampled_states(knowledge, deals, rng)
    return (time.perf_counter() - start) / (len(positions) * count) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=40, help="games per table (default 40)")
    args = parser.parse_args()
    print("hidden deals sampled at every decision of greedy games, one process")
    for config in TABLES:
        positions = knowledge_at_decisions(config, args.games)
        microseconds(positions[:20], 2, True)  # compile before timing
        facts = np.mean([knowledge.forbidden.sum() for knowledge in positions])
        print(f"{describe_table(config)}: {len(positions)} decisions, {facts:.1f} forbidden values "
              f"known per decision on average")
        print(f"  one sample:                   {microseconds(positions, 1, False):8.1f} us")
        print(f"  in a batch of 32:             {microseconds(positions, 32, False):8.1f} us per sample")
        print(f"  in a batch of 32, as states:  {microseconds(positions, 32, True):8.1f} us per sample")
        plans = [sampling_plan(knowledge) for knowledge in positions]
        slowest = max(_seconds(knowledge, 32) for knowledge in positions)
        print(f"  largest counting table: {max(plan.table_entries for plan in plans):,} entries (bound "
              f"{MAX_COUNTING_ENTRIES:,}); slowest call of 32 samples {slowest * 1e3:.2f} ms; facts set aside at "
              f"{sum(bool(plan.dropped) for plan in plans)} of {len(plans)} decisions")


def _seconds(knowledge: HandKnowledge, count: int) -> float:
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    sample_deals(knowledge, rng, count)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
