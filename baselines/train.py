"""``dominoes train``: train a learning policy from the command line.

    dominoes train td-lambda --hands 200000 --checkpoint-dir runs/td

writes into the checkpoint directory: ``td_lambda.safetensors`` (the final weights and
configuration; ``latest.safetensors`` after every evaluation), ``log.csv`` (one row per
learning chunk and per evaluation), and ``learning_curve.png`` (own mean pips per hand
against the opponents' over training). An evaluation row is the shared harness's
(:func:`baselines.evaluate.evaluate`): ``win_rate`` is its ``won``, the share of hands won
as :mod:`baselines.outcomes` defines it. The options are derived from
:class:`baselines.td_lambda.TDLambdaConfig`; every value is checked before anything is
written or trained, and a bad one is reported on one line. torch is imported only when a
run starts.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from baselines.evaluate import EvaluationResult
    from baselines.td_lambda import TDLambdaConfig

LEARNERS = ("td-lambda",)
LOG_COLUMNS = ("hands", "kind", "opponent", "own_pips", "opponent_pips", "win_rate", "td_error",
               "hands_per_s", "elapsed_s")
DEFAULT_CHECKPOINT_DIR = Path("runs/td_lambda")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The learner, one option per field of :class:`~baselines.td_lambda.config.TDLambdaConfig`
    (flag, help and default come from the dataclass), and where the run goes.

    Values are read as text and checked by the configuration itself in :func:`run`, so a bad
    value is one ``dominoes train: error: ...`` line that names the option.
    """
    from baselines.td_lambda.config import command_line_options

    parser.add_argument("learner", choices=LEARNERS, help="what to train")
    for name, option, default in command_line_options():
        if option.switch:
            parser.add_argument(option.flag, dest=name, default=None, action="store_const", const="true",
                                help=option.help)
            continue
        metavar = option.flag.lstrip("-").upper().replace("-", "_")
        parser.add_argument(option.flag, dest=name, default=None, metavar=metavar,
                            help=f"{option.help} (default {option.show(default)})")
    parser.add_argument("--checkpoint-dir", default=str(DEFAULT_CHECKPOINT_DIR),
                        help="where checkpoints, log.csv and learning_curve.png go (default %(default)s)")
    parser.add_argument("--init-checkpoint", default=None,
                        help="start from these weights (its network shape and table size must match)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def config_from_arguments(args: argparse.Namespace) -> TDLambdaConfig:
    """The TDLambdaConfig the options ask for (fields not given keep the dataclass defaults).

    Raises:
        ValueError: a value out of bounds, named by its option (or, for checks that tie
            several fields together, by the fields).
    """
    from baselines.td_lambda.config import TDLambdaConfig, command_line_options

    values = {}
    for name, option, _ in command_line_options():
        text = getattr(args, name)
        if text is not None:
            values[name] = option.check(option.flag, option.parse(text))
    return TDLambdaConfig(**values)


def run(args: argparse.Namespace) -> int:
    try:
        return _train_td_lambda(args)
    except (ValueError, FloatingPointError, OSError) as error:  # bad arguments, a diverged run, a full disk
        print(f"dominoes train: error: {error}", file=sys.stderr)
        return 2


def _train_td_lambda(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("safetensors") is None:
        raise ValueError("training needs torch and safetensors: pip install 'dominoes-env[torch]'")
    from baselines import td_lambda

    config = config_from_arguments(args)
    td_lambda.check_opponents(config)
    initial = None
    if args.init_checkpoint is not None:
        try:
            initial = td_lambda.load_checkpoint(args.init_checkpoint, expected=config.game)
        except ValueError as error:
            raise ValueError(f"--init-checkpoint: {error}") from None
        previous = initial.config
        if (previous.hidden_sizes, previous.variant) != (config.hidden_sizes, config.variant):
            raise ValueError(f"--init-checkpoint holds a {previous.variant} network of hidden sizes "
                             f"{previous.hidden_sizes}; pass --variant {previous.variant} "
                             f"--hidden {','.join(map(str, previous.hidden_sizes))}")
    out = prepare_directory(Path(args.checkpoint_dir))
    network = None if initial is None else td_lambda.build_network(config, initial.theta)  # torch from here on
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


def prepare_directory(path: Path) -> Path:
    """Create the checkpoint directory and make sure a file can be written there, before any training.

    Raises:
        ValueError: the path is a file, or the directory cannot be created or written to.
    """
    if path.exists() and not path.is_dir():
        raise ValueError(f"--checkpoint-dir {str(path)!r} is a file, not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        raise ValueError(f"--checkpoint-dir {str(path)!r} cannot be written to: {error.strerror or error}") from None
    return path


class RunRecorder:
    """Progress bar, CSV rows, intermediate checkpoints and the learning-curve plot of one run."""

    def __init__(self, out: Path, config: TDLambdaConfig, td_lambda: Any, progress: bool) -> None:
        self.out, self.config, self.td_lambda = out, config, td_lambda
        self.start = time.perf_counter()
        self.rows: list[dict[str, Any]] = []
        self.file = open(out / "log.csv", "w", newline="")  # open for the whole run: close() closes it
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

    def on_evaluation(self, hands: int, opponent: str, result: EvaluationResult, network: Any) -> None:
        """One evaluation by the shared harness: the learner was listed first, the opponents' copies second."""
        learner, opponents = result.policies[0], result.policies[1]
        self._write({"hands": hands, "kind": "eval", "opponent": opponent,
                     "own_pips": round(learner.mean_pips, 3), "opponent_pips": round(opponents.mean_pips, 3),
                     "win_rate": round(learner.won, 4)})
        message = (f"[{hands} hands] vs {opponent}: own {learner.mean_pips:.2f} pips/hand, "
                   f"opponents {opponents.mean_pips:.2f}, won {100 * learner.won:.1f}%")
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

