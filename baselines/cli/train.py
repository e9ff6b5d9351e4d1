"""``dominoes train LEARNER``: train a learning policy from the command line.

    dominoes train td-lambda --hands 200000 --checkpoint-dir runs/td
    dominoes train sarsa --hands 40000 --checkpoint-dir runs/sarsa
    dominoes train lookahead --hands 12000 --checkpoint-dir runs/lookahead
    dominoes train ppo --steps 20000000 --out runs/ppo     (baselines.ppo.cli: its own options and files)

Each learner (:data:`LEARNERS`) brings its configuration class, whose fields are its options
(flag, help and default come from the dataclass: :mod:`baselines.learning.options`), the
function that trains and saves it, the columns of its log and its default output directory.
Every run writes into its checkpoint directory: the final weights (``td_lambda.safetensors``,
``linear_sarsa.json``, ``lookahead.json``; ``latest.*`` after every evaluation), ``log.csv`` (one row per
learning chunk and per evaluation), and ``learning_curve.png`` (own mean pips per hand
against the opponents' over training). An evaluation row is the shared harness's
(:func:`baselines.harness.evaluate.evaluate`): ``win_rate`` is its ``won``, the share of hands won
as :mod:`baselines.harness.outcomes` defines it. Every value is checked before anything is written
or trained, and a bad one is reported on one line (exit status 2). A learner's heavy
dependencies (torch) are imported only when its run starts.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import importlib.util
import io
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baselines.cli import options
from baselines.harness.parallel import add_parallel_options
from baselines.learning.options import add_dataclass_options, read_dataclass_options
from dominoes_env import files

if TYPE_CHECKING:
    from baselines.harness.evaluate import EvaluationResult
    from baselines.learning.config import LearnerConfig
    from baselines.learning.linear_weights import LinearWeights
    from baselines.learning.run import TrainingLog


# --------------------------------------------------------------------------- the learners
@dataclass(frozen=True)
class Learner:
    """A learner ``dominoes train`` can run.

    Attributes:
        policy: the policy it trains (named in the learning curve).
        help: one line for ``dominoes train --help``.
        config: ``module:Class`` of its configuration (a
            :class:`~baselines.learning.config.LearnerConfig`), imported when its options are built.
        train: ``train(config, args, recorder) -> message``: checks what the run needs, trains
            (reporting to ``recorder.log()``), saves the final weights into ``recorder.out`` and
            says where they are.
        log_columns: the columns of its ``log.csv``.
        checkpoint_dir: where its run goes by default.
        weights_name: the file of its final weights in the run's directory.
    """

    policy: str
    help: str
    config: str
    train: Callable[[Any, argparse.Namespace, RunRecorder], str]
    log_columns: tuple[str, ...]
    checkpoint_dir: Path
    weights_name: str

    def config_class(self) -> type[LearnerConfig]:
        module, _, name = self.config.partition(":")
        config_class: type[LearnerConfig] = getattr(importlib.import_module(module), name)
        return config_class


def _train_td_lambda(config: Any, args: argparse.Namespace, recorder: RunRecorder) -> str:
    """TD(lambda): a safetensors checkpoint; torch is needed from here on."""
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("safetensors") is None:
        raise ValueError("training needs torch and safetensors: pip install 'dominoes-env[torch]'")
    from baselines import td_lambda

    initial = _initial(args, lambda path: td_lambda.load_checkpoint(path, expected=config.game))
    if initial is not None:
        previous = initial.config
        if (previous.hidden_sizes, previous.variant) != (config.hidden_sizes, config.variant):
            raise ValueError(f"--init-checkpoint holds a {previous.variant} network of hidden sizes "
                             f"{previous.hidden_sizes}; pass --variant {previous.variant} "
                             f"--hidden {','.join(map(str, previous.hidden_sizes))}")
    recorder.start(lambda path, network, info: td_lambda.save_checkpoint(path, network, config, info),
                   "latest.safetensors")
    network = None if initial is None else td_lambda.build_network(config, initial.theta)  # torch from here on
    network = recorder.run(lambda log: td_lambda.train(config, log, network=network))
    final = td_lambda.save_checkpoint(recorder.out / recorder.learner.weights_name, network, config,
                                      {**recorder.info(), "initialized_from": str(args.init_checkpoint or "")})
    return f"checkpoint {final}"


def _initial(args: argparse.Namespace, load: Callable[[str], Any]) -> Any:
    """The weights of ``--init-checkpoint`` (None without it); a bad file names the option."""
    if args.init_checkpoint is None:
        return None
    try:
        return load(args.init_checkpoint)
    except ValueError as error:
        raise ValueError(f"--init-checkpoint: {error}") from None


def _train_linear(config: Any, args: argparse.Namespace, recorder: RunRecorder, kind: type[LinearWeights],
                  learn: Callable[[Any, TrainingLog, Any], LinearWeights]) -> str:
    """A linear learner: a JSON weights file of `kind` (numpy only). ``learn(config, log, initial)``
    trains from `initial` (weights of `kind`, or None) and returns the trained weights.

    ``--init-checkpoint`` may hold weights trained for another table: the linear features are
    scaled by the table, so each weight means the same at every size and with every rule (at 6
    players the weights learned at 4 start far better than zeros; docs/learned_players.md)."""
    from baselines.learning.linear_weights import load_linear_weights, save_linear_weights

    initial = _initial(args, lambda path: load_linear_weights(path, kind))
    recorder.start(lambda path, trained, info: save_linear_weights(path, kind(trained.w, config, info)),
                   "latest.json")
    trained = recorder.run(lambda log: learn(config, log, initial))
    info = {**recorder.info(), "initialized_from": str(args.init_checkpoint or "")}
    return f"weights {save_linear_weights(recorder.out / recorder.learner.weights_name, kind(trained.w, config, info))}"


def _train_sarsa(config: Any, args: argparse.Namespace, recorder: RunRecorder) -> str:
    """Linear SARSA: a JSON weights file (numpy only)."""
    from baselines import linear_sarsa

    def learn(config: Any, log: TrainingLog, initial: Any) -> LinearWeights:
        return linear_sarsa.Weights(linear_sarsa.train(config, log, None if initial is None else initial.w), config)

    return _train_linear(config, args, recorder, linear_sarsa.Weights, learn)


def _train_lookahead(config: Any, args: argparse.Namespace, recorder: RunRecorder) -> str:
    """The look-ahead's evaluation: a JSON weights file (numpy only)."""
    from baselines.lookahead import learner, weights

    return _train_linear(config, args, recorder, weights.LookaheadWeights, learner.train)


def _train_champion(config: Any, args: argparse.Namespace, recorder: RunRecorder) -> str:
    """The champion's network by expert iteration: a safetensors checkpoint in td_lambda's format;
    torch is needed from here on. A directory holding an unfinished run of the same configuration
    is resumed after its last finished generation."""
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("safetensors") is None:
        raise ValueError("training needs torch and safetensors: pip install 'dominoes-env[torch]'")
    from baselines import td_lambda
    from baselines.champion import trainer
    from baselines.harness.parallel import MAX_WORKERS, default_workers

    workers = default_workers() if args.workers is None else options.count("--workers", args.workers, 1, MAX_WORKERS)
    network = config.network_config()
    initial = _initial(args, lambda path: td_lambda.load_checkpoint(path, expected=config.game))
    if initial is not None and initial.config.architecture != network.architecture:
        raise ValueError(f"--init-checkpoint holds a {initial.config.variant} network of hidden sizes "
                         f"{initial.config.hidden_sizes}; pass --variant {initial.config.variant} "
                         f"--hidden {','.join(map(str, initial.config.hidden_sizes))}")
    resumed = trainer.read_progress(recorder.out, config)  # refuses a directory holding another run
    recorder.start(lambda path, theta, info: td_lambda.save_checkpoint(path, theta, network, info),
                   trainer.LATEST, resume=resumed > 0)
    recipe = {"champion": config.to_dict(), "initialized_from": str(args.init_checkpoint or "")}
    theta = recorder.run(lambda log: trainer.train(
        config, recorder.out, log, initial, trainer.Parallelism(args.backend, workers, args.ray_address),
        lambda path, weights, info: td_lambda.save_checkpoint(path, weights, network, {**info, **recipe})))
    final = td_lambda.save_checkpoint(recorder.out / recorder.learner.weights_name, theta, network,
                                      {**recorder.info(), **recipe})
    return f"checkpoint {final}" + (f" (resumed after {resumed} generations)" if resumed else "")


_COLUMNS = ("hands", "kind", "opponent", "own_pips", "opponent_pips", "win_rate", "td_error")
LEARNERS: dict[str, Learner] = {
    "td-lambda": Learner("td_lambda", "TD(lambda) after-state value network (needs torch)",
                         "baselines.td_lambda.config:TDLambdaConfig", _train_td_lambda,
                         (*_COLUMNS, "hands_per_s", "elapsed_s"), Path("runs/td_lambda"), "td_lambda.safetensors"),
    "sarsa": Learner("linear_sarsa", "linear SARSA over hand-made move features (numpy only)",
                     "baselines.linear_sarsa.config:LinearSarsaConfig", _train_sarsa,
                     (*_COLUMNS, "alpha", "hands_per_s", "elapsed_s"), Path("runs/linear_sarsa"), "linear_sarsa.json"),
    "lookahead": Learner("lookahead", "the look-ahead's linear evaluation, learned in stages (numpy only)",
                         "baselines.lookahead.config:LookaheadConfig", _train_lookahead,
                         (*_COLUMNS[:-1], "fit_error", "alpha", "hands_per_s", "elapsed_s"), Path("runs/lookahead"),
                         "lookahead.json"),
    "champion": Learner("champion", "the champion's network by expert iteration: search in self-play (needs torch)",
                        "baselines.champion.config:ChampionConfig", _train_champion,
                        ("hands", "kind", "opponent", "own_pips", "opponent_pips", "win_rate", "value_loss",
                         "policy_loss", "hands_per_s", "elapsed_s"), Path("runs/champion"), "champion.safetensors"),
}


#: Learners whose package owns its entry: ``module`` with ``add_arguments(parser)`` and ``run(args)``.
OWN_ENTRIES: dict[str, tuple[str, str]] = {
    "ppo": ("baselines.ppo.cli", "PPO self-play on the batched engine, from the observation alone (needs torch)"),
}


# --------------------------------------------------------------------------- the command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One sub-command per learner, with the table options every command shares and one option per
    other field of its configuration (flag, help and default come from the dataclass), and where
    the run goes.

    Values are read as text and checked by the configuration itself in :func:`run`, so a bad
    value is one ``dominoes train: error: ...`` line that names the option.
    """
    learners = parser.add_subparsers(dest="learner", metavar="LEARNER", required=True,
                                     help=", ".join([*LEARNERS, *OWN_ENTRIES]))
    for name, (module, help_text) in OWN_ENTRIES.items():
        sub = learners.add_parser(name, help=help_text, description=f"dominoes train {name}: {help_text}")
        importlib.import_module(module).add_arguments(sub)
    for name, learner in LEARNERS.items():
        sub = learners.add_parser(name, help=learner.help, description=f"dominoes train {name}: {learner.help}")
        options.add_table_options(sub)  # the table: the options every dominoes command shares
        add_dataclass_options(sub, learner.config_class())
        sub.add_argument("--checkpoint-dir", default=str(learner.checkpoint_dir),
                         help="where the weights, log.csv and learning_curve.png go (default %(default)s)")
        sub.add_argument("--init-checkpoint", default=None,
                         help="start from these weights (td-lambda: trained for the same table and network "
                              "shape; the linear learners: any table)")
        sub.add_argument("--no-progress", action="store_true", help="no progress bar")
        if name == "champion":  # its self-play runs on workers (the result does not depend on them)
            add_parallel_options(sub)


def config_from_arguments(args: argparse.Namespace) -> LearnerConfig:
    """The configuration the options ask for (fields not given keep the dataclass defaults).

    Raises:
        ValueError: a value out of bounds, named by its option (or, for checks that tie
            several fields together, by the fields).
    """
    config_class = LEARNERS[args.learner].config_class()
    return config_class(game=options.table(args), **read_dataclass_options(args, config_class))


def run(args: argparse.Namespace) -> int:
    if args.learner in OWN_ENTRIES:
        return int(importlib.import_module(OWN_ENTRIES[args.learner][0]).run(args))
    try:
        learner = LEARNERS[args.learner]
        config = config_from_arguments(args)
        config.check_opponents()  # every opponent known before anything is written
        recorder = RunRecorder(Path(args.checkpoint_dir), learner, config, progress=not args.no_progress)
        message = learner.train(config, args, recorder)
    except (ValueError, FloatingPointError, OSError) as error:  # bad arguments, a diverged run, a full disk
        print(f"dominoes train: error: {error}", file=sys.stderr)
        return 2
    print(f"trained {config.hands} hands in {recorder.elapsed():.0f} s; {message}, log {recorder.out / LOG_NAME}, "
          f"curve {recorder.out / CURVE_NAME}")
    return 0


def prepare_directory(path: Path, outputs: tuple[str, ...] = ()) -> Path:
    """Make sure the checkpoint directory can be created and written to, and that none of the
    `outputs` the run writes there is anything but a regular file, before any training.

    Raises:
        ValueError: the path is not a directory, cannot be created or written to, or holds an
            output that is a device, a FIFO, a link or a directory.
    """
    return files.check_output_directory("--checkpoint-dir", path, outputs)


# --------------------------------------------------------------------------- what a run writes
LOG_NAME, CURVE_NAME = "log.csv", "learning_curve.png"
_DIGITS = {"own_pips": 3, "opponent_pips": 3, "win_rate": 4, "td_error": 4, "fit_error": 4, "hands_per_s": 1,
           "value_loss": 4, "policy_loss": 4}


class RunRecorder:
    """Progress bar, CSV rows, intermediate weights and the learning-curve plot of one run.

    A learner's train function calls :meth:`start` (how to save the latest weights) once its
    own checks have passed, so that nothing is written for a run that is refused, then
    :meth:`run` with its training call.
    """

    def __init__(self, out: Path, learner: Learner, config: LearnerConfig, progress: bool) -> None:
        self.out, self.learner, self.config, self.progress = out, learner, config, progress
        self.begun = time.perf_counter()
        self.rows: list[dict[str, Any]] = []
        self.save_latest: Callable[[Path, Any, dict[str, Any]], Any] | None = None
        self.latest_name = ""
        self.latest_saved_at = -1  # hands trained when the latest model was written
        self.file: Any = None
        self.writer: Any = None
        self.bar: Any = None

    def start(self, save_latest: Callable[[Path, Any, dict[str, Any]], Any], latest_name: str,
              resume: bool = False) -> None:
        """Create the directory and open the log (and the progress bar): the run's checks have passed
        and it is about to train. `save_latest(path, model, info)` writes the model an evaluation
        reports as ``latest_name``. `resume`: the run goes on from the directory's earlier rows
        (they are read back, and new rows are appended).

        Raises:
            ValueError: the directory cannot be created or written to.
        """
        prepare_directory(self.out, (LOG_NAME, CURVE_NAME, latest_name, self.learner.weights_name))
        self.save_latest, self.latest_name = save_latest, latest_name
        self.begun = time.perf_counter()
        log_path = self.out / LOG_NAME
        if resume and log_path.is_file():
            with open(log_path, newline="") as earlier:
                self.rows = [_read_row(row) for row in csv.DictReader(earlier)]
        # open for the whole run: close() closes it
        self.file = io.TextIOWrapper(files.open_for_writing(log_path, append=bool(self.rows)), newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=self.learner.log_columns)
        if not self.rows:
            self.writer.writeheader()
        if self.progress:
            from tqdm import tqdm
            done = max((row["hands"] for row in self.rows), default=0)
            self.bar = tqdm(total=self.config.hands, initial=done, unit="hand", smoothing=0.05)

    def log(self) -> TrainingLog:
        from baselines.learning.run import TrainingLog

        return TrainingLog(on_hand=self.on_hand, on_progress=self.on_progress, on_evaluation=self.on_evaluation)

    def run(self, train: Callable[[TrainingLog], Any]) -> Any:
        """`train(log)`, closing the log and drawing the curve however it ends (the rows so far are
        kept, even when the run diverges)."""
        try:
            return train(self.log())
        finally:
            self.close()

    def elapsed(self) -> float:
        return time.perf_counter() - self.begun

    def info(self) -> dict[str, Any]:
        return {"hands_trained": self.config.hands, "seconds": round(self.elapsed(), 1)}

    def on_hand(self, record: Any) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def _write(self, row: dict[str, Any]) -> None:
        columns = self.learner.log_columns
        row = {**{column: "" for column in columns}, **{k: v for k, v in row.items() if k in columns},
               "elapsed_s": round(self.elapsed(), 1)}
        self.rows.append(row)
        self.writer.writerow(row)
        self.file.flush()

    def on_progress(self, stats: dict[str, Any]) -> None:
        numbers = {key: _rounded(key, value) for key, value in stats.items() if key not in ("hands", "stage")}
        self._write({"hands": stats["hands"], "kind": "train", "opponent": stats["stage"], **numbers})

    def on_evaluation(self, hands: int, opponent: str, result: EvaluationResult, model: Any) -> None:
        """One evaluation by the shared harness: the learner was listed first, the opponents' copies second."""
        learner, opponents = result.policies[0], result.policies[1]
        self._write({"hands": hands, "kind": "eval", "opponent": opponent,
                     "own_pips": round(learner.mean_pips, 3), "opponent_pips": round(opponents.mean_pips, 3),
                     "win_rate": round(learner.won, 4)})
        message = (f"[{hands} hands] vs {opponent}: own {learner.mean_pips:.2f} pips/hand, "
                   f"opponents {opponents.mean_pips:.2f}, won {100 * learner.won:.1f}%")
        (self.bar.write if self.bar is not None else print)(message)
        assert self.save_latest is not None
        if hands != self.latest_saved_at:  # one model per round of evaluations, whatever the opponents
            self.save_latest(self.out / self.latest_name, model,
                             {"hands_trained": hands, "seconds": round(self.elapsed(), 1)})
            self.latest_saved_at = hands
        evaluated = sum(row["kind"] == "eval" and row["hands"] == hands for row in self.rows)
        if evaluated == len(self.config.eval_opponents):  # the round is complete: draw it once
            plot_learning_curve(self.rows, self.out / CURVE_NAME, self.learner.policy)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        if self.file is not None:
            self.file.close()
        plot_learning_curve(self.rows, self.out / CURVE_NAME, self.learner.policy)


def _read_row(row: dict[str, str]) -> dict[str, Any]:
    """A log row read back: numbers as numbers, the rest as text."""
    def value(text: str) -> Any:
        try:
            number = float(text)
        except ValueError:
            return text
        return int(number) if number.is_integer() and "." not in text else number

    return {key: value(text) for key, text in row.items()}


def _rounded(column: str, value: Any) -> Any:
    """A log value as written: a fixed number of decimals, or four significant digits (step sizes)."""
    return round(value, _DIGITS[column]) if column in _DIGITS else float(f"{value:.4g}")


def plot_learning_curve(rows: list[dict[str, Any]], path: Path, learner: str = "td_lambda") -> None:
    """Own mean pips per hand and the opponents' against hands trained: one panel per opponent."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    evaluations = [r for r in rows if r["kind"] == "eval"]
    training = [r for r in rows if r["kind"] == "train"]
    opponents = sorted({r["opponent"] for r in evaluations})
    losses = [column for column in ("value_loss", "policy_loss")
              if any(r.get(column) not in (None, "") for r in training)]
    panels = len(opponents) + 1 + bool(losses)
    figure, axes = plt.subplots(1, panels, figsize=(4.5 * panels, 3.6), squeeze=False)
    for axis, opponent in zip(axes[0], opponents):
        points = [r for r in evaluations if r["opponent"] == opponent]
        hands = [r["hands"] for r in points]
        axis.plot(hands, [r["own_pips"] for r in points], marker="o", label=learner)
        axis.plot(hands, [r["opponent_pips"] for r in points], marker="s", label=f"{opponent} (mean of 3)")
        axis.set_title(f"evaluation vs 3x {opponent}")
        axis.set_xlabel("hands trained")
        axis.set_ylabel("mean pips per hand (lower is better)")
        axis.legend(fontsize=8)
    if losses:  # a learner that reports its losses (the champion's expert iteration)
        axis = axes[0][-2]
        for column in losses:
            points = [r for r in training if r.get(column) not in (None, "")]
            axis.plot([r["hands"] for r in points], [r[column] for r in points], marker=".", label=column)
        axis.set_title("training losses")
        axis.set_xlabel("hands trained")
        axis.legend(fontsize=8)
    axis = axes[0][-1]
    axis.plot([r["hands"] for r in training], [r["own_pips"] for r in training], marker=".", label=learner)
    axis.plot([r["hands"] for r in training], [r["opponent_pips"] for r in training], marker=".",
              label="training opponents")
    axis.set_title("while learning (curriculum)")
    axis.set_xlabel("hands trained")
    axis.legend(fontsize=8)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    files.write_atomically(path, buffer.getvalue())  # whole, and only over a regular file
    plt.close(figure)
