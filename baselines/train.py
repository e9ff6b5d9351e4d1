"""``dominoes train``: train a learning policy from the command line.

    dominoes train td-lambda --hands 200000 --checkpoint-dir runs/td

writes into the checkpoint directory: ``td_lambda.safetensors`` (the final weights and
configuration; ``latest.safetensors`` after every evaluation), ``log.csv`` (one row per
learning chunk and per evaluation), and ``learning_curve.png`` (own mean pips per hand
against the opponents' over training). torch is imported only when this runs.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import Any

LEARNERS = ("td-lambda",)
LOG_COLUMNS = ("hands", "kind", "opponent", "own_pips", "opponent_pips", "win_rate", "td_error",
               "hands_per_s", "elapsed_s")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("learner", choices=LEARNERS, help="what to train")
    parser.add_argument("--players", type=int, default=4, help="number of players (default 4)")
    parser.add_argument("--highest", type=int, default=9, help="highest pip value N of the set (default 9)")
    parser.add_argument("--hands", type=int, default=20_000, help="hands to learn from (default 20000)")
    parser.add_argument("--curriculum", default="random:0.1,double:0.2,persistent_line:0.3,self:0.4",
                        help="stages in order as OPPONENT:SHARE of --hands, comma-separated; "
                             "'self' is self-play, 'a+b' alternates opponent kinds over the tables "
                             "(default: %(default)s)")
    parser.add_argument("--variant", choices=("basic", "line"), default="basic",
                        help="input features: basic, or line (basic + best-chain features) (default basic)")
    parser.add_argument("--hidden", default="128,64", help="hidden layer widths (default %(default)s)")
    parser.add_argument("--lambda", dest="td_lambda", type=float, default=0.5, help="trace decay (default 0.5)")
    parser.add_argument("--alpha", type=float, default=3e-5, help="step size (default 3e-5)")
    parser.add_argument("--self-play-alpha", type=float, default=None,
                        help="step size in self-play stages (default: alpha / players)")
    parser.add_argument("--epsilon", type=float, default=0.0, help="random-move probability while learning (default 0)")
    parser.add_argument("--parallel-hands", type=int, default=64, help="tables played side by side (default 64)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the whole run (default 0)")
    parser.add_argument("--eval-every", type=int, default=5_000, help="hands between evaluations (default 5000)")
    parser.add_argument("--eval-hands", type=int, default=400, help="hands per evaluation and opponent (default 400)")
    parser.add_argument("--eval-opponents", default="random,double,persistent_line",
                        help="fixed evaluation opponents, comma-separated (default %(default)s)")
    parser.add_argument("--checkpoint-dir", type=Path, default=Path("runs/td_lambda"),
                        help="where checkpoints, log.csv and learning_curve.png go (default runs/td_lambda)")
    parser.add_argument("--init-checkpoint", type=Path, default=None,
                        help="start from these weights (its network shape and table size must match)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def parse_curriculum(text: str) -> tuple[tuple[str, float], ...]:
    """'random:0.1,self:0.9' -> (("random", 0.1), ("self", 0.9)); a stage without a share gets 1."""
    stages = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, share = item.partition(":")
        try:
            stages.append((name, float(share) if share else 1.0))
        except ValueError:
            raise ValueError(f"curriculum stage {item!r} is not OPPONENT:SHARE (e.g. 'double:0.2')") from None
    return tuple(stages)


def run(args: argparse.Namespace) -> int:
    try:
        return _train_td_lambda(args)
    except (ValueError, FloatingPointError) as error:  # bad arguments, or a diverged run

        print(f"dominoes train: error: {error}", file=sys.stderr)
        return 2


def _train_td_lambda(args: argparse.Namespace) -> int:
    from baselines import td_lambda
    from baselines.policy import policy_names

    config = td_lambda.TDLambdaConfig(
        num_players=args.players, highest_double=args.highest, hands=args.hands, variant=args.variant,
        curriculum=parse_curriculum(args.curriculum),
        hidden_sizes=tuple(int(width) for width in args.hidden.split(",")),
        td_lambda=args.td_lambda, alpha=args.alpha, self_play_alpha=args.self_play_alpha, epsilon=args.epsilon,
        parallel_hands=args.parallel_hands,
        seed=args.seed, eval_every=args.eval_every, eval_hands=args.eval_hands,
        eval_opponents=tuple(name for name in args.eval_opponents.split(",") if name))
    known = set(policy_names()) | {td_lambda.SELF_PLAY}
    named = {name for stage, _ in config.curriculum for name in stage.split("+")} | set(config.eval_opponents)
    if named - known:
        raise ValueError(f"unknown opponent(s) {sorted(named - known)}; known: {sorted(known)}")
    network = None
    if args.init_checkpoint is not None:
        network, previous = td_lambda.load_checkpoint(args.init_checkpoint, expected=config.game)
        if (previous.hidden_sizes, previous.variant) != (config.hidden_sizes, config.variant):
            raise ValueError(f"--init-checkpoint holds a {previous.variant} network of hidden sizes "
                             f"{previous.hidden_sizes}; pass --variant {previous.variant} "
                             f"--hidden {','.join(map(str, previous.hidden_sizes))}")
    out = args.checkpoint_dir
    out.mkdir(parents=True, exist_ok=True)
    recorder = RunRecorder(out, config, td_lambda, progress=not args.no_progress)
    log = td_lambda.TrainingLog(on_hand=recorder.on_hand, on_progress=recorder.on_progress,
                                on_evaluation=recorder.on_evaluation)
    try:
        network = td_lambda.train(config, log, network=network)
    finally:
        recorder.close()  # the log and the curve so far are kept, even when the run diverges
    info = {**recorder.info(), "initialized_from": str(args.init_checkpoint or "")}
    final = td_lambda.save_checkpoint(out / "td_lambda.safetensors", network, config, info)
    print(f"trained {config.hands} hands in {recorder.elapsed():.0f} s; checkpoint {final}, "
          f"log {out / 'log.csv'}, curve {out / 'learning_curve.png'}")
    return 0


class RunRecorder:
    """Progress bar, CSV rows, intermediate checkpoints and the learning-curve plot of one run."""

    def __init__(self, out: Path, config: Any, td_lambda: Any, progress: bool) -> None:
        self.out, self.config, self.td_lambda = out, config, td_lambda
        self.start = time.perf_counter()
        self.rows: list[dict[str, Any]] = []
        self.file = open(out / "log.csv", "w", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=LOG_COLUMNS)
        self.writer.writeheader()
        self.bar = None
        if progress:
            from tqdm import tqdm
            self.bar = tqdm(total=config.hands, unit="hand", smoothing=0.05)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def info(self) -> dict[str, Any]:
        return {"hands_trained": self.config.hands, "seconds": round(self.elapsed(), 1)}

    def on_hand(self, record: Any) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def _write(self, row: dict[str, Any]) -> None:
        row = {**{column: "" for column in LOG_COLUMNS}, **row, "elapsed_s": round(self.elapsed(), 1)}
        self.rows.append(row)
        self.writer.writerow(row)
        self.file.flush()

    def on_progress(self, stats: dict[str, Any]) -> None:
        self._write({"hands": stats["hands"], "kind": "train", "opponent": stats["stage"],
                     "own_pips": round(stats["own_pips"], 3), "opponent_pips": round(stats["opponent_pips"], 3),
                     "td_error": round(stats["td_error"], 4), "hands_per_s": round(stats["hands_per_s"], 1)})

    def on_evaluation(self, hands: int, result: Any, network: Any) -> None:
        self._write({"hands": hands, "kind": "eval", "opponent": result.opponent,
                     "own_pips": round(result.own_pips, 3), "opponent_pips": round(result.opponent_pips, 3),
                     "win_rate": round(result.win_rate, 4)})
        message = (f"[{hands} hands] vs {result.opponent}: own {result.own_pips:.2f} pips/hand, "
                   f"opponents {result.opponent_pips:.2f}, won {100 * result.win_rate:.1f}%")
        (self.bar.write if self.bar is not None else print)(message)
        self.td_lambda.save_checkpoint(self.out / "latest.safetensors", network, self.config,
                                       {"hands_trained": hands, "seconds": round(self.elapsed(), 1)})
        plot_learning_curve(self.rows, self.out / "learning_curve.png")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.file.close()
        plot_learning_curve(self.rows, self.out / "learning_curve.png")


def plot_learning_curve(rows: list[dict[str, Any]], path: Path) -> None:
    """Own mean pips per hand and the opponents' against hands trained: one panel per opponent."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    evaluations = [r for r in rows if r["kind"] == "eval"]
    training = [r for r in rows if r["kind"] == "train"]
    opponents = sorted({r["opponent"] for r in evaluations})
    panels = len(opponents) + 1
    figure, axes = plt.subplots(1, panels, figsize=(4.5 * panels, 3.6), squeeze=False)
    for axis, opponent in zip(axes[0], opponents):
        points = [r for r in evaluations if r["opponent"] == opponent]
        hands = [r["hands"] for r in points]
        axis.plot(hands, [r["own_pips"] for r in points], marker="o", label="td_lambda")
        axis.plot(hands, [r["opponent_pips"] for r in points], marker="s", label=f"{opponent} (mean of 3)")
        axis.set_title(f"evaluation vs 3x {opponent}")
        axis.set_xlabel("hands trained")
        axis.set_ylabel("mean pips per hand (lower is better)")
        axis.legend(fontsize=8)
    axis = axes[0][-1]
    axis.plot([r["hands"] for r in training], [r["own_pips"] for r in training], marker=".", label="td_lambda")
    axis.plot([r["hands"] for r in training], [r["opponent_pips"] for r in training], marker=".",
              label="training opponents")
    axis.set_title("while learning (curriculum)")
    axis.set_xlabel("hands trained")
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)

