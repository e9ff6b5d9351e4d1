"""``dominoes train ppo``: the options come from :class:`~baselines.ppo.config.PPOConfig`'s fields.

    dominoes train ppo --steps 20000000 --out runs/ppo
    dominoes train ppo --players 6 --highest 12 --rules mexican_train --out runs/ppo_6p

Every value is checked before anything is written; run the same command again after a kill
and the run resumes from its last segment (:mod:`baselines.ppo.run`).
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from baselines.command_line import options
from baselines.command_line.learner import require_torch
from baselines.learning.options import add_dataclass_options, read_dataclass_options
from baselines.ppo.config import DEVICES, PPOConfig
from baselines.ppo.weights import checksum, load_weights
from dominoes_env.core import validation
from dominoes_env.core.config import table_arguments

#: One line for ``dominoes train --help``.
HELP = "PPO self-play on the batched engine (the observation alone, or with --features) (needs torch)"


def _threads_argument(text: str) -> int | str:
    """``--torch-threads``: ``auto`` or a count (ASCII digits)."""
    return "auto" if text == "auto" else validation.integer_argument(text)


#: PPO's fields that only another learner reads (PPO's trainer refuses them): not ppo's options
NOT_READ_BY_PPO = ("history",)


def _ppo_fields() -> tuple[str, ...]:
    return tuple(spec.name for spec in dataclasses.fields(PPOConfig) if spec.name not in NOT_READ_BY_PPO)


def add_arguments(parser: argparse.ArgumentParser, fields: Collection[str] | None = None,
                  out: str = "runs/ppo") -> None:
    """The table, `fields` of :class:`PPOConfig` (None: every one PPO reads) as options, and the run's
    own options (``dominoes train dmc`` takes those of PPO's fields it reads, with its own --out)."""
    options.add_table_options(parser)
    add_dataclass_options(parser, PPOConfig, only=_ppo_fields() if fields is None else fields)
    parser.add_argument("--out", default=out, help="where the weights, log.csv, learning_curve.png and the "
                                                          "resume state go (default %(default)s)")
    parser.add_argument("--device", choices=DEVICES, default="auto",
                        help="where the network runs (auto: CUDA if torch has it; the engine is on the CPU)")
    parser.add_argument("--torch-threads", type=_threads_argument, default="auto", metavar="N|auto",
                        help="torch's threads on the CPU. auto (the default) measures the updates as they run and "
                             "keeps the faster of one thread and one a core, trying the other again from time to time: "
                             "torch's own choice (one a core) is fastest on a quiet machine and collapses when "
                             "another process takes a core (0.06x its quiet rate on a 2-core machine; auto 0.54x, "
                             "docs/ppo.md)")
    parser.add_argument("--engine-threads", type=validation.integer_argument, default=1, metavar="N",
                        help="threads of the batched engine (the same games; more where the network is on a GPU)")
    parser.add_argument("--init", metavar="FILE", default=None,
                        help="start from these ppo weights instead of random ones (a file of dominoes train ppo, or "
                             "'ppo' for the table's shipped ones): a second stage of a run, with its own schedule; "
                             "the table, widths, activation, head and features must be this run's")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def config_from_arguments(args: argparse.Namespace, fields: Collection[str] | None = None) -> PPOConfig:
    """The run's configuration (fields not given keep their defaults).

    Raises:
        ValueError: a value out of bounds, named by its option.
    """
    return PPOConfig(game=options.table(args),
                     **read_dataclass_options(args, PPOConfig, only=_ppo_fields() if fields is None else fields))


def command_line(config: PPOConfig, out: Path, init: str | None = None, learner: str = "ppo",
                 extra: Sequence[str] = ()) -> str:
    """The command that repeats this run: the table, every option that differs from its default,
    the learner's `extra` options, --init, --out."""
    words = ["dominoes", "train", learner, *shlex.split(table_arguments(config.game))]
    for spec in dataclasses.fields(PPOConfig):
        option = spec.metadata.get("option")
        value = getattr(config, spec.name)
        if option is not None and value != spec.default:
            words += ["--" + spec.name.replace("_", "-") if not option.flag else option.flag, option.show(value)]
    words += extra
    if init is not None:
        words += ["--init", init]
    return shlex.join([*words, "--out", str(out)])


def run(args: argparse.Namespace) -> int:
    return train_from_arguments(args, config_from_arguments(args))


def train_from_arguments(args: argparse.Namespace, config: PPOConfig, learner: str = "ppo",
                         trainer_class: Callable[..., Any] | None = None, extra: Sequence[str] = ()) -> int:
    """Check the opponents, set torch up, train (or resume) the run in --out and say what it did:
    ``dominoes train ppo``'s, and ``dominoes train dmc``'s with DMC's trainer (`trainer_class`)."""
    from baselines.learning.options import check_opponents

    check_opponents({name for name in config.opponents if name != "self"} | set(config.eval_opponents), ())
    require_torch()
    import torch

    torch_threads = None if args.torch_threads == "auto" else options.count("--torch-threads", args.torch_threads,
                                                                             1, 1024)
    if torch_threads is not None:
        torch.set_num_threads(torch_threads)
    from baselines.learning.recorder import LOG_NAME
    from baselines.ppo.run import initial_weights, train_run

    out = Path(args.out)
    init = initial_weights(args.init, config) if args.init is not None else None
    info: dict[str, Any] = {"command": command_line(config, out, args.init, learner, extra), "learner": learner}
    if init is not None:
        info["init"] = {"file": args.init, "sha256": checksum(init.weights), "info": init.info}
    final = train_run(config, out, args.device, progress=not args.no_progress, info=info,
                      engine_threads=args.engine_threads, init=init, torch_threads=torch_threads,
                      **({} if trainer_class is None else {"trainer_class": trainer_class}))
    # the steps really taken: the run ends at the first whole rollout at or past --steps
    trained = int(load_weights(final).info.get("steps_trained", config.steps))
    rounded = f" (--steps {config.steps:,}, rounded up to whole rollouts)" if trained != config.steps else ""
    print(f"trained {trained:,} learner steps{rounded}; weights {final}, log {out / LOG_NAME}")
    return 0
