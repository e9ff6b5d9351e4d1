"""``dominoes train bc``: behaviour cloning of a ``dominoes dataset`` into the ppo network.

    dominoes dataset td_lambda --hands 20000 --seed 30000000 --dataset-id dominoes/td_lambda-4p-d9-v0
    dominoes train bc --dataset dominoes/td_lambda-4p-d9-v0 --out runs/bc
    dominoes evaluate ppo@runs/bc/bc.safetensors td_lambda:3
    dominoes train ppo --init runs/bc/bc.safetensors --out runs/bc_ppo

The table comes from the dataset; the network's shape options are ppo's (``--hidden``,
``--activation``, ``--policy-head``: ``dominoes train ppo --init`` needs the same). It writes, in
``--out``: ``bc.safetensors`` (the epoch with the lowest held-out loss), ``log.csv`` (per epoch: the
training and held-out cross-entropy and accuracy, and the margin in pips against each evaluation
opponent), ``learning_curve.png`` and ``resume.pt`` (the fit's state after its last finished epoch:
run the same command again after a kill and it goes on from there, ending with the weights an
unbroken run ends with; a directory holding a run of other settings is refused).
"""

from __future__ import annotations

import argparse
import json
import shlex
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from baselines.command_line import options
from baselines.command_line.learner import require_torch
from baselines.imitation.settings import MAX_BATCH, MAX_EPOCHS, CloningSettings
from baselines.learning.options import add_dataclass_options, check_opponents, read_dataclass_options
from baselines.learning.recorder import (
    CURVE_NAME,
    LOG_NAME,
    TORCH_RESUME_NAME,
    RunLog,
    load_torch_resume,
    pyplot,
    save_curve,
    save_torch_resume,
)
from baselines.ppo.config import PPOConfig
from dominoes_env import files
from dominoes_env.core import validation
from dominoes_env.core.config import describe_table

#: One line for ``dominoes train --help``.
HELP = "behaviour cloning of a dominoes dataset into the ppo network (needs torch and minari)"
#: ppo's options this command takes: the network's shape, the value targets, the evaluations.
PPO_FIELDS = ("hidden", "activation", "policy_head", "features", "reward", "reward_scale", "eval_opponents")
WEIGHTS_NAME = "bc.safetensors"
LOG_COLUMNS = ("epoch", "rows", "kind", "opponent", "train_loss", "train_accuracy", "train_value_loss",
               "held_out_loss", "held_out_accuracy", "held_out_value_loss", "margin", "margin_ci95", "own_pips",
               "opponent_pips", "elapsed_s")
DEFAULTS = CloningSettings()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, metavar="ID",
                        help="the Minari dataset id that dominoes dataset wrote (under MINARI_DATASETS_PATH)")
    parser.add_argument("--episodes", type=validation.integer_argument, default=None,
                        help="use the dataset's first N episodes (default: all)")
    parser.add_argument("--epochs", type=validation.integer_argument, default=DEFAULTS.epochs,
                        help=f"passes over the training rows (1-{MAX_EPOCHS}, default %(default)s)")
    parser.add_argument("--batch-size", type=validation.integer_argument, default=DEFAULTS.batch_size,
                        help=f"rows per step (1-{MAX_BATCH}, default %(default)s)")
    parser.add_argument("--learning-rate", type=float, default=DEFAULTS.learning_rate,
                        help="Adam's step size, cosine-annealed to 0 (default %(default)s)")
    parser.add_argument("--weight-decay", type=float, default=DEFAULTS.weight_decay,
                        help="AdamW's weight decay (0-1, default %(default)s)")
    parser.add_argument("--value-weight", type=float, default=DEFAULTS.value_weight,
                        help="weight of the value head's loss (0-100, default %(default)s)")
    parser.add_argument("--held-out", type=float, default=DEFAULTS.held_out,
                        help="share of the hands held out (0-0.5, default %(default)s)")
    options.add_seed_option(parser, "the held-out hands, the initial weights and the order of the rows")
    add_dataclass_options(parser, PPOConfig, PPO_FIELDS)
    parser.add_argument("--eval-hands", type=validation.integer_argument, default=400,
                        help="hands per evaluation and opponent after every epoch (0: none; default %(default)s)")
    options.add_torch_run_options(parser, "runs/bc", "start from these ppo weights (a file of dominoes train ppo or "
                                  "bc, or 'ppo' for the table's shipped ones) instead of random ones; the network "
                                  "options must be theirs", "no progress bar")


def run(args: argparse.Namespace) -> int:
    settings = CloningSettings(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
                               weight_decay=args.weight_decay, value_weight=args.value_weight,
                               held_out=args.held_out, seed=options.seed(args))
    borrowed = read_dataclass_options(args, PPOConfig, PPO_FIELDS)
    eval_hands = options.count("--eval-hands", args.eval_hands, 0, 1_000_000)
    threads = options.count("--torch-threads", args.torch_threads, 1, 256)
    out = files.check_output_directory("--out", args.out, (WEIGHTS_NAME, LOG_NAME, CURVE_NAME, TORCH_RESUME_NAME))
    if eval_hands:
        check_opponents(set(borrowed.get("eval_opponents", PPOConfig().eval_opponents)), ())
    require_torch()
    from baselines.imitation.demonstrations import load_demonstrations

    begun = time.perf_counter()
    data = load_demonstrations(args.dataset, borrowed.get("reward", "zero_sum"), args.episodes)
    config = PPOConfig(game=data.config, **borrowed, eval_hands=max(eval_hands, data.config.num_players))
    import torch

    from baselines.imitation.train import RESUME_FORMAT, clone
    from baselines.ppo.run import evaluation_rows, initial_weights
    from baselines.ppo.weights import save_weights

    init = initial_weights(args.init, config) if args.init is not None else None
    identity = _identity(args, settings, config, data.rows, eval_hands)
    resume = load_torch_resume(out / TORCH_RESUME_NAME, RESUME_FORMAT, identity)
    done = int(resume.get("epoch", 0)) if resume is not None else 0
    torch.set_num_threads(threads)
    print(f"cloning {data.about.get('player')} at {describe_table(data.config)}: {data.rows:,} moves of "
          f"{len(set(data.hands.tolist())):,} hands" + (f"; going on after epoch {done}" if done else ""), flush=True)
    log = RunLog(out / LOG_NAME, LOG_COLUMNS)
    log.start(keep=(lambda row: isinstance(row["epoch"], int) and row["epoch"] <= done) if done else None,
              seconds_before=time.perf_counter() - begun)  # elapsed_s counts reading the dataset

    def report(row: dict[str, Any], weights: Any) -> None:
        measured = evaluation_rows(weights, config) if eval_hands else []
        for shown in ({"kind": "fit", **row}, *({"epoch": row["epoch"], "rows": row["rows"], **e} for e in measured)):
            log.append({key: f"{value:.5g}" if isinstance(value, float) else value for key, value in shown.items()})
        margins = ", ".join(f"{e['margin']:+.2f} against {e['opponent']}" for e in measured)
        print(f"epoch {row['epoch']}: held-out loss {row.get('held_out_loss', float('nan')):.4f}, accuracy "
              f"{row.get('held_out_accuracy', float('nan')):.3f}" + (f"; {margins}" if margins else ""), flush=True)

    best, chosen = clone(data, config, settings, report, progress=not args.no_progress, init=init, resume=resume,
                         save_resume=lambda state: save_torch_resume(out / TORCH_RESUME_NAME, RESUME_FORMAT,
                                                                     identity, state))
    info = {"command": _command(args, out), "dataset": args.dataset, "teacher": data.about.get("player"),
            "dataset_command": data.about.get("command"), "rows": data.rows, "epoch": chosen["epoch"],
            "held_out_accuracy": round(chosen.get("held_out_accuracy", float("nan")), 4),
            "seconds": round(log.elapsed(), 1)}
    path = save_weights(out / WEIGHTS_NAME, type(best)(best.weights, best.config, info))
    _plot(log.rows, out / CURVE_NAME, f"{data.about.get('player')} at {describe_table(data.config)}")
    print(f"wrote {path} (epoch {chosen['epoch']}), {LOG_NAME} and {CURVE_NAME} in {out}")
    return 0


def _identity(args: argparse.Namespace, settings: CloningSettings, config: PPOConfig, rows: int,
              eval_hands: int) -> str:
    """The run's settings as JSON: what a run that goes on from a ``resume.pt`` must share with the
    run that wrote it (the dataset's id and size, the fit, the network, the evaluations, the
    initial weights; not the threads, the progress bar or the directory)."""
    return json.dumps({"dataset": args.dataset, "episodes": args.episodes, "rows": rows, "fit": asdict(settings),
                       "ppo": config.to_dict(), "eval_hands": eval_hands, "init": args.init}, sort_keys=True)


def _command(args: argparse.Namespace, out: Path) -> str:
    """The command that repeats this run (every option, as given or defaulted)."""
    words = ["dominoes", "train", "bc", "--dataset", args.dataset]
    for name in ("episodes", "epochs", "batch_size", "learning_rate", "weight_decay", "value_weight", "held_out",
                 "seed", *PPO_FIELDS, "eval_hands", "init"):
        value = getattr(args, name, None)
        if value is not None:
            words += ["--" + name.replace("_", "-"), str(value)]
    return shlex.join([*words, "--out", str(out)])


def _plot(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    """Accuracy (training and held-out) and the evaluation margins, by epoch (the log's rows, read back)."""
    fits = [row for row in rows if row["kind"] == "fit"]
    figure, (left, right) = pyplot().subplots(1, 2, figsize=(11, 4))
    for key, label in (("train_accuracy", "training rows"), ("held_out_accuracy", "held-out hands")):
        shown = [row for row in fits if row[key] != ""]
        if shown:
            left.plot([row["epoch"] for row in shown], [row[key] for row in shown], marker="o", label=label)
    left.set_xlabel("epoch")
    left.set_ylabel("the teacher's move, share of decisions")
    left.legend()
    for opponent in dict.fromkeys(row["opponent"] for row in rows if row["kind"] == "eval"):
        mine = [row for row in rows if row["kind"] == "eval" and row["opponent"] == opponent]
        right.errorbar([row["epoch"] for row in mine], [row["margin"] for row in mine],
                       yerr=[row["margin_ci95"] for row in mine], marker="o", capsize=3, label=f"against {opponent}")
    right.axhline(0.0, color="grey", linewidth=0.8)
    right.set_xlabel("epoch")
    right.set_ylabel("pips per hand, clone minus opponents")
    if right.get_legend_handles_labels()[0]:
        right.legend()
    figure.suptitle(f"behaviour cloning of {title}")
    figure.tight_layout()
    save_curve(figure, path, dpi=90)
