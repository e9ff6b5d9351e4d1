"""Hands per second of the TD(lambda) learner while learning and while acting (the README's and docs/vector.md's
figures).

Fixed seeds, 4 players, double-nine, one torch thread. Learning: ``td_lambda.train`` on a
fresh network against each opponent kind ("self" = four learners at the table); a hand
counts once whatever the number of learners at it. Acting: the batched greedy player
(``td_lambda.play_hands`` without traces: the training tables' forward pass, torch) and the
``td_lambda`` policy (numpy) through the environment one decision at a time
(``baselines.harness.play.play_game``, what the harness, training's evaluations and the league
use), both against three random players. Last, the time of one decision of the shipped
checkpoint's policy (``TDLambdaPolicy.act``) on recorded positions with more than one
legal move. The reference learned at about 5 hands/s (basic) and 0.5 hands/s (line
variant) on this machine; the target is 50x that.

    python benchmarks/td_lambda_speed.py [--hands 3000] [--variants basic line]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dominoes_env
from baselines import td_lambda
from baselines.harness.play import play_game
from baselines.policies.registry import make_policy

REFERENCE_HANDS_PER_S = {"basic": 5.0, "line": 0.5}
TARGET_RATIO = 50.0


def learning_hands_per_second(variant: str, opponent: str, hands: int) -> float:
    config = td_lambda.TDLambdaConfig(variant=variant, hands=hands, curriculum=((opponent, 1.0),),
                                      eval_every=0, eval_opponents=(), seed=0)
    rates: list[float] = []
    td_lambda.train(config, td_lambda.TrainingLog(on_progress=lambda stats: rates.append(stats["hands_per_s"])))
    return rates[-1]


def acting_hands_per_second(variant: str, hands: int) -> tuple[float, float]:
    config = td_lambda.TDLambdaConfig(variant=variant, hands=0, eval_every=0, eval_opponents=())
    rng = td_lambda.seed_everything(0)
    network = td_lambda.build_network(config)
    start = time.perf_counter()
    td_lambda.play_hands(network, td_lambda.make_features(config), "random", hands, config, rng)
    batched = hands / (time.perf_counter() - start)
    policy = td_lambda.TDLambdaPolicy(checkpoint=td_lambda.Checkpoint(network.weights(), config))
    env = dominoes_env.raw_env(4, 9)
    table = [policy] + [make_policy("random", seed=seat) for seat in range(3)]
    single_hands = max(hands // 10, 20)
    start = time.perf_counter()
    for seed in range(single_hands):
        play_game(env, table, seed=seed)
    return batched, single_hands / (time.perf_counter() - start)


def microseconds_per_decision(hands: int = 200, repeats: int = 5) -> tuple[float, int]:
    """CPU time of one ``act`` of the shipped checkpoint's policy (best of `repeats`), over the positions
    of `hands` hands of random play where it has more than one legal move."""
    policy = make_policy("td_lambda", seed=0)
    env = dominoes_env.raw_env(4, 9)
    rng = np.random.default_rng(0)
    positions = []
    for seed in range(hands):
        env.reset(seed=seed)
        while not env.game.is_over:
            observed = env.observe(env.agent_selection)
            if observed["action_mask"].sum() > 1:
                positions.append((observed["observation"].copy(), observed["action_mask"].copy()))
            env.step(int(rng.choice(np.flatnonzero(observed["action_mask"]))))
    for observation, mask in positions[:50]:  # compiled code loaded before timing
        policy.act(observation, mask)
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for observation, mask in positions:
            policy.act(observation, mask)
        best = min(best, time.process_time() - start)
    return 1e6 * best / len(positions), len(positions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=3000, help="hands per measurement (default 3000)")
    parser.add_argument("--variants", nargs="+", default=["basic", "line"], choices=["basic", "line"])
    parser.add_argument("--opponents", nargs="+", default=["random", "double", "persistent_line", "self"])
    args = parser.parse_args()
    learning_hands_per_second("basic", "random", 64)  # compile and warm up before timing
    print("TD(lambda), 4 players, double-nine, default network (128, 64), 64 tables, 1 torch thread")
    for variant in args.variants:
        reference = REFERENCE_HANDS_PER_S[variant]
        for opponent in args.opponents:
            rate = learning_hands_per_second(variant, opponent, args.hands)
            print(f"  learning  {variant:5s} vs {opponent:15s} {rate:8.1f} hands/s  "
                  f"= {rate / reference:6.1f}x the reference's {reference} hands/s (target {TARGET_RATIO:.0f}x)")
        batched, single = acting_hands_per_second(variant, args.hands)
        print(f"  acting    {variant:5s} batched greedy vs 3 random: {batched:8.1f} hands/s; "
              f"policy through the env (1 td_lambda + 3 random): {single:6.1f} hands/s")
    microseconds, decisions = microseconds_per_decision()
    print(f"  acting    shipped checkpoint (line): {microseconds:.1f} us per decision (CPU time, best of 5, "
          f"{decisions} decisions with more than one legal move)")


if __name__ == "__main__":
    main()
