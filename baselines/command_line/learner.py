"""One learner's ``dominoes train`` command, built from its :class:`~baselines.learning.recorder.Learner`:
the options (the table every command shares, one per field of its configuration, where the run
goes) and the run (check everything, then train with a recorder, then say where the files are).

Each learner's own ``cli.py`` declares its :class:`~baselines.learning.recorder.Learner` and its
train function and hands them to :func:`add_learner_arguments` and :func:`run_learner`;
:mod:`baselines.cli.train` only dispatches to them.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baselines.command_line import options
from baselines.harness.parallel import add_parallel_options
from baselines.learning.options import add_dataclass_options, read_dataclass_options
from baselines.learning.recorder import CURVE_NAME, LOG_NAME, Learner, ResumePoint, RunRecorder

if TYPE_CHECKING:
    from baselines.learning.config import LearnerConfig
    from baselines.learning.linear_weights import LinearWeights
    from baselines.learning.run import TrainingLog


def add_learner_arguments(parser: argparse.ArgumentParser, learner: Learner) -> None:
    """The table options every command shares, one option per other field of the learner's
    configuration (flag, help and default come from the dataclass), and where the run goes.

    Values are read as text and checked by the configuration itself in :func:`run_learner`, so a
    bad value is one ``dominoes train: error: ...`` line that names the option.
    """
    options.add_table_options(parser)
    add_dataclass_options(parser, learner.config)
    options.add_renamed(parser, "--out", "--checkpoint-dir", dest="checkpoint_dir",
                        default=str(learner.checkpoint_dir),
                        help="where the weights, log.csv and learning_curve.png go (default %(default)s)")
    options.add_renamed(parser, "--init", "--init-checkpoint", dest="init_checkpoint", default=None, metavar="FILE",
                        help="start from these weights (td-lambda: trained for the same table and network "
                             "shape; the linear learners: any table)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    if learner.parallel:
        add_parallel_options(parser)


def config_from_arguments(args: argparse.Namespace, learner: Learner) -> LearnerConfig:
    """The configuration the options ask for (fields not given keep the dataclass defaults).

    Raises:
        ValueError: a value out of bounds, named by its option (or, for checks that tie
            several fields together, by the fields).
    """
    return learner.config(game=options.table(args), **read_dataclass_options(args, learner.config))


def run_learner(args: argparse.Namespace, learner: Learner) -> int:
    """Check every value and opponent before anything is written, train, and say where it went;
    a bad value, a diverged run or a full disk is one line and exit status 2."""
    try:
        config = config_from_arguments(args, learner)
        config.check_opponents()
        recorder = RunRecorder(Path(args.checkpoint_dir), learner, config, progress=not args.no_progress)
        message = learner.train(config, args, recorder)
    except (ValueError, FloatingPointError, OSError) as error:
        print(f"dominoes train: error: {error}", file=sys.stderr)
        return 2
    print(f"trained {config.hands} hands in {recorder.elapsed():.0f} s; {message}, log {recorder.out / LOG_NAME}, "
          f"curve {recorder.out / CURVE_NAME}")
    return 0


def require_torch() -> None:
    """Torch and safetensors are installed, or one line that says how to get them."""
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("safetensors") is None:
        raise ValueError("training needs torch and safetensors: pip install 'dominoes-env[torch]'")


def initial_weights(args: argparse.Namespace, load: Callable[[str], Any]) -> Any:
    """The weights of ``--init`` (None without it); a bad file names the option."""
    if args.init_checkpoint is None:
        return None
    try:
        return load(args.init_checkpoint)
    except ValueError as error:
        raise ValueError(f"--init: {error}") from None


def refuse_other_shape(initial: Any, architecture_matches: bool) -> None:
    """``--init`` holds a td_lambda network of another shape: say which options fit it."""
    if initial is not None and not architecture_matches:
        raise ValueError(f"--init holds a {initial.config.variant} network of hidden sizes "
                         f"{initial.config.hidden_sizes}; pass --variant {initial.config.variant} "
                         f"--hidden {','.join(map(str, initial.config.hidden_sizes))}")


LINEAR_LATEST = "latest.json"  #: a linear learner's weights at its last round of evaluations


def train_linear(config: Any, args: argparse.Namespace, recorder: RunRecorder, kind: type[LinearWeights],
                 learn: Callable[[Any, TrainingLog, Any, ResumePoint | None], LinearWeights]) -> str:
    """A linear learner: a JSON weights file of `kind` (numpy only). ``learn(config, log, initial,
    resume)`` trains from `initial` (weights of `kind`, or None), going on from a killed run's
    :class:`~baselines.learning.recorder.ResumePoint` where the directory holds one, and returns
    the trained weights.

    ``--init`` may hold weights trained for another table: the linear features are
    scaled by the table, so each weight means the same at every size and with every rule (at 6
    players the weights learned at 4 start far better than zeros; docs/learned_players.md)."""
    from baselines.learning.linear_weights import load_linear_weights, save_linear_weights

    point = recorder.resume_point(LINEAR_LATEST)
    initial = (load_linear_weights(point.weights, kind) if point is not None
               else initial_weights(args, lambda path: load_linear_weights(path, kind)))
    recorder.start(lambda path, trained, info: save_linear_weights(path, kind(trained.w, config, info)),
                   LINEAR_LATEST, resume=point)
    trained = recorder.run(lambda log: learn(config, log, initial, point))
    info = {**recorder.info(), "initialized_from": str(args.init_checkpoint or "")}
    final = save_linear_weights(recorder.out / recorder.learner.weights_name, kind(trained.w, config, info))
    return f"weights {final}" + (f" (resumed after {point.done} hands)" if point is not None else "")
