"""``dominoes train beliefs``: the tile-location network of a table, from self-play positions.

    dominoes train beliefs --positions 1000000 --seed 20000000 --out runs/beliefs_4p_d9
    dominoes train beliefs --players 6 --highest 12 --rules mexican_train --out runs/beliefs_6p

It plays hands with the `--player` in every seat (seeds from `--seed` on), keeps every decision of
every seat with the true deal as its label (:mod:`baselines.inference.data`), and trains the
network on them (:mod:`baselines.inference.train`). It writes, in `--out`: the weights
(``beliefs_TABLE.safetensors``, the name the package ships them under), ``log.csv`` (the held-out
score against the uniform kind's, ten times an epoch), ``learning_curve.png`` and ``resume.pt``
(the training's state after its last finished epoch). Run the same command again after a kill and
it plays the same positions again (the same seeds, the same players; or reads them back, with
``--data`` where ``--save-data`` kept them: their checksum is part of the run's settings), then
goes on from that epoch to the weights an unbroken run ends with; a directory holding a run of
other settings is refused in one line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from baselines.command_line import options
from baselines.command_line.learner import require_torch
from baselines.inference.data import MAX_POSITIONS, Positions, self_play_positions
from baselines.inference.network import (
    MAX_LAYERS,
    MAX_WIDTH,
    SHIPPED_NAME,
    load_weights,
    save_weights,
    shipped_weights_file,
)
from baselines.inference.train import RESUME_FORMAT, TrainingSettings, train
from baselines.learning.files import table_tag
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
from baselines.policies import registry, specs
from dominoes_env import files
from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig, describe_table, table_arguments

#: One line for ``dominoes train --help``.
HELP = "the beliefs' tile-location network, supervised on self-play deals (needs torch)"
DEFAULTS = TrainingSettings()
#: ``log.csv``'s columns: the held-out score against the uniform kind's, ten times an epoch.
LOG_COLUMNS = ("epoch", "positions", "train_log_p", "held_out_log_p", "held_out_uniform_log_p", "best_held_out_log_p",
               "seconds")


def _widths(text: str) -> tuple[int, ...]:
    widths = tuple(validation.integer_argument(part) for part in text.split(",") if part.strip())
    if not 1 <= len(widths) <= MAX_LAYERS or not all(1 <= width <= MAX_WIDTH for width in widths):
        raise argparse.ArgumentTypeError(f"1 to {MAX_LAYERS} widths from 1 to {MAX_WIDTH}, comma-separated, "
                                         f"got {text!r}")
    return widths


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_table_options(parser)
    options.add_seed_option(parser, "the self-play hands (hand k is dealt with seed + k) and of training")
    parser.add_argument("--positions", type=validation.integer_argument, default=1_000_000,
                        help=f"labelled positions to play (whole hands; 1-{MAX_POSITIONS:,}, default %(default)s)")
    parser.add_argument("--keep", type=float, default=1.0,
                        help="the share of decisions kept as positions (0.01-1, default 1: every one); below 1, "
                             "the same positions come from more hands")
    parser.add_argument("--player", default="td_lambda", help="the policy spec in every seat (default %(default)s)")
    parser.add_argument("--hidden", type=_widths, default=DEFAULTS.hidden, metavar="W,W",
                        help=f"hidden widths (default {','.join(map(str, DEFAULTS.hidden))})")
    parser.add_argument("--epochs", type=validation.integer_argument, default=DEFAULTS.epochs,
                        help="passes over the positions (1-100, default %(default)s)")
    parser.add_argument("--batch-size", type=validation.integer_argument, default=DEFAULTS.batch_size,
                        help="positions per step (1-65536, default %(default)s)")
    parser.add_argument("--learning-rate", type=float, default=DEFAULTS.learning_rate,
                        help="Adam's step size, cosine-annealed to 0 (default %(default)s)")
    parser.add_argument("--dropout", type=float, default=DEFAULTS.dropout,
                        help="share of each hidden layer's units dropped while training (0-0.9, default %(default)s)")
    parser.add_argument("--weight-decay", type=float, default=DEFAULTS.weight_decay,
                        help="AdamW's weight decay (0-1, default %(default)s)")
    parser.add_argument("--data", default=None, metavar="FILE.npz",
                        help="train on positions saved by --save-data instead of playing new ones")
    parser.add_argument("--save-data", default=None, metavar="FILE.npz", help="also keep the positions played")
    options.add_torch_run_options(parser, "runs/beliefs", "start from these beliefs weights (a file of this "
                                  "command, or 'beliefs' for the table's shipped ones) instead of the uniform kind; "
                                  "--hidden must be theirs", "no progress bar while playing")


def run(args: argparse.Namespace) -> int:
    config = options.table(args)
    seed = options.seed(args)
    positions = options.count("--positions", args.positions, 1, MAX_POSITIONS)
    settings = TrainingSettings(hidden=args.hidden, epochs=options.count("--epochs", args.epochs, 1, 100),
                                batch_size=options.count("--batch-size", args.batch_size, 1, 65536),
                                learning_rate=validation.real("--learning-rate", args.learning_rate, 1e-7, 1.0),
                                dropout=validation.real("--dropout", args.dropout, 0.0, 0.9),
                                weight_decay=validation.real("--weight-decay", args.weight_decay, 0.0, 1.0),
                                seed=seed)
    threads = options.count("--torch-threads", args.torch_threads, 1, 256)
    keep = validation.real("--keep", args.keep, 0.01, 1.0)
    tag = table_tag(config)
    if tag is None:
        raise ValueError(f"beliefs networks are named for the rule book's game or the Mexican Train rules, not "
                         f"{describe_table(config)}")
    spec = specs.parse(args.player)[0]
    registry.refuse_seeing_every_hand(spec, "dominoes train beliefs")
    registry.check(spec, config)
    init = None
    if args.init is not None:
        init = load_weights(shipped_weights_file(config) if args.init == "beliefs" else args.init, expected=config)
        if tuple(init.hidden) != tuple(settings.hidden):
            raise ValueError(f"--init {args.init}: its hidden widths are {','.join(map(str, init.hidden))}, this run's "
                             f"{','.join(map(str, settings.hidden))}; give --hidden {','.join(map(str, init.hidden))}")
    require_torch()
    out = files.check_output_directory("--out", args.out, (LOG_NAME, CURVE_NAME, f"{SHIPPED_NAME}_{tag}.safetensors",
                                                           TORCH_RESUME_NAME))
    if args.save_data is not None:
        files.check_output_file("--save-data", args.save_data)
    import torch

    torch.set_num_threads(threads)
    started = time.perf_counter()
    data = _positions(args, config, positions, seed, keep)
    played = time.perf_counter() - started
    identity = _identity(args, config, settings, data)
    resume_path = out / TORCH_RESUME_NAME
    resume = load_torch_resume(resume_path, RESUME_FORMAT, identity)
    done = int(resume.get("epoch", 0)) if resume is not None else 0
    if done:
        print(f"going on after epoch {done} ({resume_path})", flush=True)
    run_log = RunLog(out / LOG_NAME, LOG_COLUMNS)
    run_log.start(keep=(lambda row: isinstance(row["epoch"], (int, float)) and row["epoch"] <= done) if done else None)

    def log(row: dict[str, Any]) -> None:
        run_log.append({key: round(value, 5) if isinstance(value, float) else value for key, value in row.items()})
        print(f"epoch {row['epoch']:.2f}: held-out log p {row['held_out_log_p']:.4f} "
              f"(uniform {row['held_out_uniform_log_p']:.4f}), {row['seconds']:.0f} s", flush=True)

    weights = train(config, data, settings, log, init, resume=resume,
                    save_resume=lambda state: save_torch_resume(resume_path, RESUME_FORMAT, identity, state))
    command = shlex.join(["dominoes", "train", "beliefs", *shlex.split(table_arguments(config)), "--seed", str(seed),
                          "--positions", str(positions), "--keep", str(keep), "--player", args.player,
                          "--hidden", ",".join(map(str, settings.hidden)), "--epochs", str(settings.epochs),
                          "--dropout", str(settings.dropout), "--weight-decay", str(settings.weight_decay),
                          *(["--init", args.init] if args.init is not None else []), "--out", str(out)])
    last = run_log.rows[-1]  # as the log holds it (a resumed run's earlier epochs included)
    info = {"command": command, "positions": int(data.places.shape[0]), "hands": int(data.hands.max()) + 1,
            "seconds_playing": round(played, 1), "seconds_training": round(last["seconds"], 1),
            "held_out_log_p": round(last["best_held_out_log_p"], 5),
            "held_out_uniform_log_p": round(last["held_out_uniform_log_p"], 5)}
    weights = type(weights)(weights.config, weights.hidden, weights.layers, info)
    path = save_weights(out / f"{SHIPPED_NAME}_{tag}.safetensors", weights)
    _plot(run_log.rows, out / CURVE_NAME, describe_table(config))
    print(f"wrote {path}, log.csv and learning_curve.png in {out}")
    return 0


def _positions(args: argparse.Namespace, config: GameConfig, positions: int, seed: int, keep: float) -> Positions:
    """The run's positions: read from ``--data``, or played (the same ones every time for the same
    options: hand k dealt with seed + k, every player seeded), and kept where ``--save-data`` says.

    Raises:
        ValueError: ``--data`` holds positions of another table.
    """
    if args.data is not None:
        data = Positions.load(args.data)
        if data.places.shape[1] != config.num_tiles:
            raise ValueError(f"--data {args.data!r} holds positions of another table than {describe_table(config)}")
        return data
    from tqdm import tqdm

    print(f"playing {positions:,} positions of {describe_table(config)} ({args.player} in every seat)...")
    with tqdm(total=positions, unit=" positions", disable=args.no_progress) as bar:
        data = self_play_positions(config, positions, seed, args.player, keep, bar.update)
    if args.save_data:
        data.save(args.save_data)
    return data


def _identity(args: argparse.Namespace, config: GameConfig, settings: TrainingSettings, data: Positions) -> str:
    """The run's settings as JSON: what a run that goes on from a ``resume.pt`` must share with the
    run that wrote it: the table, the positions (their checksum, however they came: played again,
    or read back with ``--data``), the training and the initial weights; not the threads, the
    progress bar or the directory."""
    digest = hashlib.sha256()
    for array in (data.observations, data.marginals, data.places, data.hands):
        digest.update(np.ascontiguousarray(array).data)
    return json.dumps({"table": table_arguments(config), "positions_sha256": digest.hexdigest(),
                       "training": asdict(settings), "init": args.init}, sort_keys=True)


def _plot(rows: list[dict[str, Any]], path: Path, table: str) -> None:
    figure, axis = pyplot().subplots(figsize=(6, 3.8))
    epochs = [row["epoch"] for row in rows]
    axis.plot(epochs, [row["held_out_log_p"] for row in rows], marker=".", label="network (held-out hands)")
    axis.plot(epochs, [row["train_log_p"] for row in rows], marker=".", alpha=0.6, label="network (training batches)")
    axis.plot(epochs, [row["held_out_uniform_log_p"] for row in rows], linestyle=":", label="uniform (held-out)")
    axis.set_xlabel("epochs")
    axis.set_ylabel("mean log p(true place)")
    axis.set_title(f"beliefs network, {table}")
    axis.legend(fontsize=8)
    figure.tight_layout()
    save_curve(figure, path, dpi=90)
