"""How well each kind of beliefs predicts where the hidden tiles lie, on held-out hands.

At every decision of every seat, each kind's probabilities are read for every hidden tile and
scored by the log-probability of the tile's true place (a seat relative to the player, or the
boneyard). A hand's score is the mean over its decisions and hidden tiles; kinds are compared
hand by hand against ``uniform`` on the same positions (paired, 95% interval over hands), overall
and by stage of the hand (the share of the dealt tiles on the table: early under a third,
middle under two thirds, late after). ``--plot`` draws the scores by stage and a calibration
plot (predicted probability against the observed frequency of the truth, 10 bins).

    python benchmarks/belief_quality.py [--tables 4p_d9 6p_d12_mt] [--hands 200] [--seed 14000]
                                        [--kinds uniform] [--players td_lambda] [--plot beliefs.png]

Tables: 4p_d9 (4 players, double-nine), 2p_d12_mt, 4p_d12_mt, 6p_d12_mt, 8p_d12_mt (double-twelve
Mexican Train). The players: one shipped player in every seat (its label), or ``default``: the
table's default opponent.
"""

from __future__ import annotations

import argparse
import math
from collections import defaultdict

import numpy as np

import dominoes_env
from baselines.advice import default_opponent
from baselines.harness.statistics import ci95_half_width
from baselines.inference import KINDS, make_beliefs
from baselines.inference.data import true_places
from baselines.policies import registry, specs
from dominoes_env.core.config import GameConfig, describe_table, make_config

TABLES = {"4p_d9": make_config(4, 9), **{f"{n}p_d12_mt": make_config(n, 12, rules="mexican_train")
                                         for n in (2, 4, 6, 8)}}
STAGES = ("early", "middle", "late")
FLOOR = 1e-12  # the log of a zero given to the truth (a sound kind never gives one): counted apart
BINS = 10


def play(config: GameConfig, hands: int, seed: int, kinds: list[str], player: str) -> dict[str, dict]:
    """Every kind's scores: per hand (overall and by stage), and the calibration counts."""
    spec = default_opponent(config) if player == "default" else specs.parse(player)[0]
    env = dominoes_env.raw_env(config)
    scores = {kind: {"hands": [], "stages": {stage: [] for stage in STAGES}, "zeros": 0,
                     "predicted": np.zeros(BINS), "observed": np.zeros(BINS), "count": np.zeros(BINS)}
              for kind in kinds}
    for hand in range(hands):
        env.reset(seed=seed + hand)
        n = config.num_players
        players = [registry.build(spec, config, seed=(seed + hand) * 16 + seat) for seat in range(n)]
        beliefs = {kind: [make_beliefs(config, kind) for _ in range(n)] for kind in kinds}
        for by_seat in beliefs.values():
            for one in by_seat:
                one.reset()
        sums = {kind: defaultdict(list) for kind in kinds}
        on_table_at_deal, held_at_deal = None, 1
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent)
            truth = true_places(env, seat)
            on_table = int((truth < 0).sum())
            if on_table_at_deal is None:  # the hand's first decision: the stage counts from the deal
                on_table_at_deal, held_at_deal = on_table, max(1, int(((truth >= 0) & (truth < n)).sum()))
            share = (on_table - on_table_at_deal) / held_at_deal
            stage = STAGES[min(2, int(3 * share))]
            for kind in kinds:
                one = beliefs[kind][seat]
                one.observe(observation["observation"])
                probabilities = one.probabilities()
                hidden = np.flatnonzero(probabilities.sum(axis=1) > 0)
                if hidden.shape[0] == 0:
                    continue
                given = probabilities[hidden, truth[hidden]]
                record = scores[kind]
                record["zeros"] += int((given <= 0).sum())
                value = float(np.log(np.maximum(given, FLOOR)).mean())
                sums[kind]["all"].append(value)
                sums[kind][stage].append(value)
                rows = probabilities[hidden]
                is_true = np.zeros_like(rows, dtype=bool)
                is_true[np.arange(hidden.shape[0]), truth[hidden]] = True
                mask = rows > 0
                bins = np.minimum((rows[mask] * BINS).astype(int), BINS - 1)
                record["predicted"] += np.bincount(bins, weights=rows[mask], minlength=BINS)
                record["observed"] += np.bincount(bins, weights=is_true[mask], minlength=BINS)
                record["count"] += np.bincount(bins, minlength=BINS)
            env.step(int(players[seat].act(observation["observation"], observation["action_mask"])))
        for kind in kinds:
            scores[kind]["hands"].append(float(np.mean(sums[kind]["all"])))
            for stage in STAGES:
                values = sums[kind][stage]
                scores[kind]["stages"][stage].append(float(np.mean(values)) if values else math.nan)
    return scores


def paired(values: list[float], baseline: list[float]) -> tuple[float, float]:
    """The mean difference hand by hand (hands where both have a value) and its 95% half-width."""
    differences = np.array(values) - np.array(baseline)
    differences = differences[~np.isnan(differences)]
    return float(differences.mean()) if differences.shape[0] else math.nan, ci95_half_width(differences)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=list(TABLES))
    parser.add_argument("--hands", type=int, default=200)
    parser.add_argument("--seed", type=int, default=14000)
    parser.add_argument("--kinds", nargs="+", default=["uniform"], choices=sorted(KINDS))
    parser.add_argument("--players", default="default", help="the player in every seat (default: the table's "
                                                             "default opponent)")
    parser.add_argument("--plot", default=None, help="a PNG of the scores by stage and the calibration")
    args = parser.parse_args()
    kinds = list(dict.fromkeys(["uniform", *args.kinds]))
    print(f"belief quality: mean log-probability of each hidden tile's true place, per decision, {args.hands} hands "
          f"a table from seed {args.seed}; players: {args.players}")
    print("| table | kind | log p (all) | early | middle | late | minus uniform (all) | zeros on the truth |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    results = {}
    for name in args.tables:
        config = TABLES[name]
        scores = play(config, args.hands, args.seed, kinds, args.players)
        results[name] = scores
        for kind in kinds:
            record = scores[kind]
            stages = [np.nanmean(record["stages"][stage]) for stage in STAGES]
            gap, width = paired(record["hands"], scores["uniform"]["hands"])
            print(f"| {describe_table(config)} | {kind} | {np.mean(record['hands']):.4f} | "
                  + " | ".join(f"{value:.4f}" for value in stages)
                  + f" | {gap:+.4f} ± {width:.4f} | {record['zeros']} |")
    if args.plot:
        draw(results, kinds, args.plot)
        print(f"plot: {args.plot}")


def draw(results: dict[str, dict], kinds: list[str], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (by_stage, calibration) = plt.subplots(1, 2, figsize=(11, 4.2))
    learned = [kind for kind in kinds if kind != "uniform"]
    for name, scores in results.items():
        for kind in learned or kinds:  # each learned kind's gain over uniform; uniform's own score if alone
            values = [np.nanmean(scores[kind]["stages"][stage]) - (np.nanmean(scores["uniform"]["stages"][stage])
                                                                   if learned else 0.0) for stage in STAGES]
            by_stage.plot(STAGES, values, marker="o", label=f"{name} {kind}")
        for kind in kinds:
            record = scores[kind]
            seen = record["count"] > 0
            calibration.plot(record["predicted"][seen] / record["count"][seen],
                             record["observed"][seen] / record["count"][seen], marker=".", label=f"{name} {kind}",
                             linestyle="-" if kind != "uniform" else ":")
    by_stage.set_ylabel("mean log p(true place)" + (" minus uniform's" if learned else ""))
    by_stage.set_title("by stage of the hand")
    calibration.plot([0, 1], [0, 1], color="gray", linestyle=":")
    calibration.set_xlabel("predicted probability")
    calibration.set_ylabel("observed frequency")
    calibration.set_title("calibration")
    by_stage.legend(fontsize=7)
    calibration.legend(fontsize=6, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
