"""How strong each shipped learned player is at every table it ships for, and at tables it was not trained for.

For every table with shipped weights and every learned player (td_lambda, linear_sarsa, lookahead),
the player sits at a table of one against copies of each hand-crafted player (persistent_line,
greedy, double), on held-out deals (seed 2026, not a training seed), seats rotated, single hands.
Each row gives the paired difference of mean pips per hand (the learned player's minus its
opponents', over the same hands; negative is better) with its 95% interval, over deals.

With ``--transfer`` it also plays weights trained for one table at another (the linear players only:
their features are scaled by the table, so the same names mean the same thing at every size;
td_lambda's network has one input per tile and seat, so its weights fit their own table only).

    python benchmarks/learned_players_by_table.py [--hands 1000] [--two-player-hands 4000] [--transfer]
        [--tables 4p_d9 ...] [--no-strength]
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from baselines.harness.evaluate import evaluate
from baselines.learning.files import shipped_tables, table_tag
from baselines.linear_sarsa.policy import LinearSarsaPolicy
from baselines.linear_sarsa.weights import load_weights as load_sarsa
from baselines.linear_sarsa.weights import shipped_weights as sarsa_file
from baselines.lookahead.policy import LookaheadPolicy
from baselines.lookahead.weights import load_weights as load_lookahead
from baselines.lookahead.weights import shipped_weights as lookahead_file
from baselines.policies.policy import Policy
from baselines.policies.registry import make_policy
from dominoes_env.core.config import GameConfig, describe_table, make_config

LEARNED = ("td_lambda", "linear_sarsa", "lookahead")
OPPONENTS = ("persistent_line", "greedy", "double")
SEED = 2026
#: Weights of one table played at another: (trained for, played at).
TRANSFERS = ((make_config(4, 12, rules="mexican_train"), make_config(6, 12, rules="mexican_train")),
             (make_config(6, 12, rules="mexican_train"), make_config(4, 12, rules="mexican_train")),
             (make_config(4, 12, rules="mexican_train"), make_config(8, 12, rules="mexican_train")),
             (make_config(4, 9), make_config(4, 12, rules="mexican_train")))


def row(player: Policy | str, label: str, config: GameConfig, hands: int) -> str:
    """One table row per opponent: the paired difference against it."""
    cells = []
    for opponent in OPPONENTS:
        result = evaluate([player, f"{opponent}:{config.num_players - 1}"], num_hands=hands, seed=SEED,
                          num_players=config)
        mine = player if isinstance(player, str) else player.label
        mean, half, _ = result.difference(mine, opponent)
        cells.append(f"{mean:+.2f} ± {half:.2f}")
    return f"| {describe_table(config)} | {label} | " + " | ".join(cells) + " |"


def transferred(name: str, trained: GameConfig, played: GameConfig) -> Policy:
    """The linear player `name` with the weights shipped for `trained`, seated at `played`."""
    if name == "linear_sarsa":
        weights = load_sarsa(sarsa_file(trained))
        moved = dataclasses.replace(weights, config=dataclasses.replace(weights.config, game=played))
        return LinearSarsaPolicy(played, seed=0, checkpoint=moved)
    weights = load_lookahead(lookahead_file(trained))
    moved = dataclasses.replace(weights, config=dataclasses.replace(weights.config, game=played))
    return LookaheadPolicy(played, seed=0, checkpoint=moved)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=1000, help="hands per evaluation (default 1000)")
    parser.add_argument("--two-player-hands", type=int, default=4000,
                        help="hands per evaluation at 2 players, where a hand varies most (default 4000)")
    parser.add_argument("--transfer", action="store_true", help="also play weights at tables they were not trained for")
    parser.add_argument("--tables", nargs="+", metavar="TAG", default=None,
                        help="only these shipped tables, by their files' tag (e.g. 4p_d9 6p_d12_mexican_train)")
    parser.add_argument("--no-strength", action="store_true", help="skip the table of the shipped weights")
    args = parser.parse_args()
    start = time.time()
    header = "| table | player | " + " | ".join(f"vs {name}" for name in OPPONENTS) + " |"
    print(f"paired difference in pips per hand (player minus opponents; negative: the player leaves fewer), "
          f"95% interval; {args.hands} hands per cell ({args.two_player_hands} at 2 players), seed {SEED}\n")
    print(header)
    print("|---|---|" + "---:|" * len(OPPONENTS))
    tables = [table for table in shipped_tables("td_lambda", "safetensors")
              if args.tables is None or table_tag(table) in args.tables]
    for config in [] if args.no_strength else tables:
        for name in LEARNED:
            try:
                make_policy(name, config)
            except ValueError:
                print(f"| {describe_table(config)} | {name} | (no weights ship) |||")
                continue
            hands = args.two_player_hands if config.num_players == 2 else args.hands
            print(row(name, name, config, hands), flush=True)
    if args.transfer:
        print("\nweights trained for one table, played at another\n")
        print(header)
        print("|---|---|" + "---:|" * len(OPPONENTS))
        for trained, played in TRANSFERS:
            for name in ("linear_sarsa", "lookahead"):
                label = f"{name} trained for {describe_table(trained)}"
                print(row(transferred(name, trained, played), label, played, args.hands), flush=True)
    print(f"\n{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
