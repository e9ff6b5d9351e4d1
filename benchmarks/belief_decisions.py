"""Whether other beliefs make a searcher's moves better, judged move by move in the true deal.

A match (champion_strength.py) answers it, but needs tens of thousands of hands to see a tenth
of a pip: most of its noise is the deals and the play after the moves that differ. This asks
the same question where the players disagree, and nowhere else. Hands are played by PLAYER in
every seat; at each of a seat's decisions a TWIN shadows it (the same observations, in order;
its own beliefs and random numbers) and is asked its move as well. Where the two differ, each
move is judged in the true deal: from the state after it the hand is played out ``--rollouts``
times by the champion's network at every seat (each mover's moves drawn from the softmax of its
predicted pips over the after-states, as the search's prior; the same random numbers after
either move), and the mover's margin (the other seats' mean pips minus its own) is averaged.

A twin's gain is the sum, over one seat's decisions in a hand, of its move's margin minus the
player's (0 where they agree): pips a hand the twin's moves would have saved the seat, taken
one decision at a time along the player's own games. The 95% interval treats hands as the
units (a hand's seats share its deal). Name the player itself with another seed as a twin to
see the judge's noise around 0 (``champion(inference='uniform', seed=1)`` is not a spec: any
twin already has its own random numbers), and ``oracle``, which sees every hand, for the room
the hidden tiles leave. The judge is the champion's network: tables where one ships (or td_lambda's).

    python benchmarks/belief_decisions.py --hands 400 --seed 40000 --workers 2 \\
        --twins "champion(inference='uniform')" "champion(inference='network+policy')" oracle
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

import dominoes_env
from baselines.policies.policy import SeesEveryHand
from baselines.policies.registry import build, check
from baselines.policies.specs import parse
from dominoes_env import make_config
from dominoes_env.core import rules
from dominoes_env.core.config import describe_table

DEFAULT_PLAYER = "champion(inference='uniform')"
DEFAULT_TWINS = ("champion(inference='uniform')", "champion(inference='network+policy')")


@dataclass(frozen=True)
class Engine:
    """What a play-out needs of a table: the engine's tile tables, its action count, the judge."""

    low: np.ndarray
    high: np.ndarray
    tiles_with_value: np.ndarray
    num_actions: int
    guide: Any  # the champion's NetworkGuide: each mover's prior over its legal moves

    @classmethod
    def of(cls, config: Any) -> Engine:
        from baselines.champion.policy import ChampionPolicy

        tiles = config.tiles
        return cls(tiles.low, tiles.high, tiles.tiles_with_value, config.num_actions, ChampionPolicy(config).guide)


def rollout_margins(state: np.ndarray, engine: Engine, rng: np.random.Generator) -> np.ndarray:
    """Every seat's margin (the others' mean pips minus its own) at the end of the hand played out
    from `state` (changed in place), each mover's moves drawn from the guide's prior."""
    legal = np.empty(engine.num_actions, dtype=np.int64)
    while state[rules.HAND_OVER] == 0:
        count = rules.fill_legal_actions(state, engine.tiles_with_value, legal)
        action = int(legal[0])
        if count > 1:
            action = int(legal[rng.choice(count, p=engine.guide.move_priors(state, legal[:count]))])
        rules.apply_action(state, engine.low, engine.high, engine.tiles_with_value, action)
    scores = np.empty(int(state[rules.NUM_PLAYERS]), dtype=np.int64)
    rules.hand_scores(state, engine.low, engine.high, scores)
    pips = scores.astype(np.float64)
    return (pips.sum() - pips) / (pips.shape[0] - 1) - pips


def judged(state: np.ndarray, moves: list[int], engine: Engine, rollouts: int, seed: list[int]) -> np.ndarray:
    """The mover's mean margin after each move, `rollouts` play-outs each; the k-th play-out of
    every move on the same random numbers (common random numbers: their difference is sharper)."""
    mover = int(state[rules.CURRENT_PLAYER])
    margins = np.zeros(len(moves))
    for k in range(rollouts):
        for m, move in enumerate(moves):
            after = state.copy()
            rules.apply_action(after, engine.low, engine.high, engine.tiles_with_value, move)
            margins[m] += rollout_margins(after, engine, np.random.default_rng([*seed, k]))[mover]
    return margins / rollouts


def play_share(task: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One worker's hands: per hand and twin, the gain summed over every seat's decisions and
    divided by the seats (a seat's hand); the hand's decisions with a choice; and per twin, those
    where it chose another move."""
    player_text, twin_texts, first, hands, players, highest, rules_name, rollouts = task
    config = make_config(players, highest, **({"rules": rules_name} if rules_name else {}))
    engine = Engine.of(config)
    player_spec = parse(player_text)[0]
    twin_specs = [parse(text)[0] for text in twin_texts]
    env = dominoes_env.raw_env(config)
    n = config.num_players
    gains = np.zeros((hands, len(twin_specs)))
    choices = np.zeros(hands, dtype=np.int64)
    differed = np.zeros((hands, len(twin_specs)), dtype=np.int64)
    for h in range(hands):
        seed = first + h
        env.reset(seed=seed)
        seats = [build(player_spec, config, seed=seed * n + s) for s in range(n)]
        twins = [[build(spec, config, seed=(t + 1) * 10**9 + seed * n + s) for s in range(n)]
                 for t, spec in enumerate(twin_specs)]
        for policy in [*seats, *(twin for row in twins for twin in row)]:
            policy.reset()
        for decision in range(10**6):  # one hand: it ends long before
            state = np.array(env.unwrapped.state(), dtype=np.int16)
            if state[rules.HAND_OVER]:
                break
            seat = env.possible_agents.index(env.agent_selection)
            observation = env.observe(env.agent_selection)
            seen, mask = observation["observation"], observation["action_mask"]
            asked = [seats[seat], *(row[seat] for row in twins)]
            for policy in asked:
                if isinstance(policy, SeesEveryHand):
                    policy.show(state)
            moves = [policy.act(seen, mask) for policy in asked]
            if mask.sum() > 1:
                choices[h] += 1
                candidates = [moves[0], *sorted(set(moves[1:]) - {moves[0]})]
                if len(candidates) > 1:
                    value = dict(zip(candidates, judged(state, candidates, engine, rollouts, [seed, decision])))
                    for t, move in enumerate(moves[1:]):
                        gains[h, t] += value[move] - value[moves[0]]
                        differed[h, t] += move != moves[0]
            env.step(moves[0])
    return gains / n, choices, differed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--player", default=DEFAULT_PLAYER, help=f"plays every seat (default {DEFAULT_PLAYER})")
    parser.add_argument("--twins", nargs="+", default=list(DEFAULT_TWINS), help="the players judged against it")
    parser.add_argument("--hands", type=int, default=200, help="hands, at least (default 200)")
    parser.add_argument("--seed", type=int, default=40000, help="the first hand's seed (default 40000)")
    parser.add_argument("--rollouts", type=int, default=8, help="play-outs a move (default 8)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--highest", type=int, default=9)
    parser.add_argument("--rules", default=None, help="a named rule set (mexican_train)")
    args = parser.parse_args()
    if min(args.hands, args.rollouts, args.workers) < 1 or args.seed < 0:
        parser.error("--hands, --rollouts and --workers must be 1 or more, and --seed 0 or more")
    try:
        config = make_config(args.players, args.highest, **({"rules": args.rules} if args.rules else {}))
        check(parse("champion")[0], config, shown_as="the judge (the champion's network)")
        for text in [args.player, *args.twins]:
            check(parse(text)[0], config)
    except ValueError as error:
        parser.error(str(error))
    share = -(-args.hands // args.workers)
    tasks = [(args.player, args.twins, args.seed + k * share, share, args.players, args.highest, args.rules,
              args.rollouts) for k in range(args.workers)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        parts = list(pool.map(play_share, tasks))
    gains = np.concatenate([part[0] for part in parts])
    choices = np.concatenate([part[1] for part in parts])
    differed = np.concatenate([part[2] for part in parts])
    print(f"{describe_table(config)}: {args.player} in every seat, {gains.shape[0]} hands (seeds {args.seed}.."
          f"{args.seed + gains.shape[0] - 1}), {choices.sum() / gains.shape[0] / config.num_players:.1f} decisions "
          f"with a choice a seat's hand, {args.rollouts} play-outs a move; {time.perf_counter() - start:.0f} s")
    print("| twin | moves unlike the player's | pips a seat's hand its moves save (95%) |")
    print("|---|---:|---:|")
    for t, text in enumerate(args.twins):
        interval = 1.96 * gains[:, t].std(ddof=1) / np.sqrt(gains.shape[0]) if gains.shape[0] > 1 else float("nan")
        print(f"| {text} | {differed[:, t].sum() / max(choices.sum(), 1):.1%} | {gains[:, t].mean():+.3f} ± "
              f"{interval:.3f} |")


if __name__ == "__main__":
    main()
