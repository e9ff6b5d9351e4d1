"""A PPO run on disk: its segments, evaluations, log, learning curve, weights and resume state.

``dominoes train ppo --out DIR`` writes into DIR:

- ``log.csv``: a ``train`` row every :data:`REPORT_STEPS` learner steps and at every segment's
  end (``steps_per_second`` is the rate over the interval since the previous row, the
  evaluations left out), and an ``eval`` row per evaluation opponent at every segment's end
  (``margin``: the player's pips per hand minus the opponents', paired on the same held-out
  deals with seats rotated, and its 95% interval); ``elapsed_s`` goes on across the sessions
  of a resumed run;
- ``learning_curve.png``: the margins against learner steps and against wall time;
- ``latest.safetensors`` (every segment) and ``ppo.safetensors`` (the end): the ``ppo`` player's weights;
- ``resume.pt``: the network, the optimiser and the pool at the last segment's end. Run the
  same command again after a kill and the run goes on from there, repeating exactly what
  followed (the log's rows after it are written again, the timings aside).

The log and the curve's file are written as every learner's are
(:class:`~baselines.learning.recorder.RunLog`, :func:`~baselines.learning.recorder.save_curve`);
what is PPO's own is here: the columns, which rows a resumed run keeps, and what the curve shows.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from baselines.harness.evaluate import evaluate
from baselines.harness.threads import ThreadChooser, thread_candidates
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
from baselines.learning.run import EVALUATION_SEED
from baselines.policies import registry, specs
from baselines.ppo.config import PPOConfig
from baselines.ppo.policy import PPOHistoryPolicy, PPOPolicy
from baselines.ppo.trainer import Trainer
from baselines.ppo.weights import PPOWeights, load_weights, save_weights, shipped_weights
from dominoes_env import files
from dominoes_env.core.config import describe_table

LATEST_NAME, WEIGHTS_NAME, RESUME_NAME = "latest.safetensors", "ppo.safetensors", TORCH_RESUME_NAME
LOG_COLUMNS = ("steps", "kind", "opponent", "steps_per_second", "margin", "margin_ci95", "own_pips", "opponent_pips",
               "won", "entropy", "policy_loss", "value_loss", "approx_kl", "clip_fraction", "agreement",
               "learning_rate", "elapsed_s")
TIMING_COLUMNS = ("steps_per_second", "elapsed_s")  #: the columns a resumed run does not repeat
REPORT_STEPS = 250_000  #: learner steps between train rows
RESUME_FORMAT = "dominoes-ppo-resume/1"


def resolve_device(device: str) -> torch.device:
    """`device` as torch's: "auto" takes CUDA where torch has it, else the CPU.

    Raises:
        ValueError: "cuda" where torch has no CUDA device.
    """
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: torch sees no CUDA device here (use --device cpu or auto)")
    return torch.device(device)


def open_log(out: Path, resumed_steps: int) -> RunLog:
    """The run's log (:class:`~baselines.learning.recorder.RunLog`, the shared learners' too) in `out`,
    keeping the rows up to `resumed_steps`: a resumed run repeats exactly what followed its last
    segment, so it writes those rows again rather than keep the killed session's."""
    log = RunLog(out / LOG_NAME, LOG_COLUMNS)
    log.start(keep=(lambda row: isinstance(row["steps"], int) and row["steps"] <= resumed_steps)
              if resumed_steps > 0 else None)
    return log


def _shown(value: Any) -> Any:
    """A figure as the log shows it: five significant digits, a NaN as an empty cell."""
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.5g}"
    return value


def evaluation_rows(weights: PPOWeights, config: PPOConfig) -> list[dict[str, Any]]:
    """The player against each evaluation opponent that plays the table: copies in every other seat,
    the same held-out deals every time (:data:`~baselines.learning.run.EVALUATION_SEED`), seats rotated."""
    rows = []
    player = (PPOPolicy if config.history == "none" else PPOHistoryPolicy)(config.game, checkpoint=weights)
    for opponent in config.eval_opponents:
        spec = specs.parse(opponent)[0]
        try:
            registry.check(spec, config.game)
        except ValueError:  # no weights ship for this table: nothing to measure against
            continue
        result = evaluate([player] + [opponent] * (config.num_players - 1), config.eval_hands, seed=EVALUATION_SEED,
                          num_players=config.game)
        margin, spread, _ = result.difference(result.policies[0].label, result.policies[1].label)
        rows.append({"kind": "eval", "opponent": opponent, "margin": margin, "margin_ci95": spread,
                     "own_pips": result.policies[0].mean_pips, "opponent_pips": result.policies[1].mean_pips,
                     "won": result.policies[0].won})
    return rows


def save_resume(path: Path, trainer: Trainer, steps: int, segment: int) -> None:
    """Write the trainer's state at a segment's end (:func:`~baselines.learning.recorder.save_torch_resume`)."""
    save_torch_resume(path, RESUME_FORMAT, trainer.resume_identity(),
                      {"steps": steps, "segment": segment, "network": trainer.network.state_dict(),
                       "optimiser": trainer.optimiser.state_dict(),
                       "pool": _tensors(trainer.seats.state()) if trainer.seats is not None else {}})


def load_resume(path: Path, trainer: Trainer) -> tuple[int, int]:
    """Put the trainer where the resume file left it: (steps done, next segment); (0, 0) without one.

    Raises:
        ValueError: the file is damaged, or holds a run of another configuration.
    """
    state = load_torch_resume(path, RESUME_FORMAT, trainer.resume_identity(), trainer.device)
    if state is None:
        return 0, 0
    trainer.network.load_state_dict(state["network"])
    trainer.optimiser.load_state_dict(state["optimiser"])
    if trainer.seats is not None:
        trainer.seats.load_state(_arrays(state["pool"]),
                                 lambda weights: PPOWeights(weights, trainer.config))
    return int(state["steps"]), int(state["segment"])


def _tensors(value: Any) -> Any:
    """Numpy arrays as tensors, nested (what torch.load(weights_only=True) reads back)."""
    if isinstance(value, dict):
        return {key: _tensors(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_tensors(item) for item in value]
    return torch.from_numpy(value) if isinstance(value, np.ndarray) else value


def _arrays(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _arrays(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_arrays(item) for item in value]
    return value.numpy() if isinstance(value, torch.Tensor) else value


#: What a run started from other weights must share with them: the network's shape and meaning
INIT_FIELDS = ("hidden", "activation", "policy_head", "history", "features")


def initial_weights(source: str, config: PPOConfig) -> PPOWeights:
    """The weights `source` names (a ppo weights file, or "ppo": the table's shipped ones) for a run
    of `config` to start from: a second stage of training, with its own schedule and seed.

    Raises:
        ValueError: the file is refused, or its network is of another table or shape than the run's.
    """
    path = shipped_weights(config.game) if source == "ppo" else source
    weights = load_weights(path)
    if weights.config.game != config.game:
        raise ValueError(f"--init: {source} was trained for another table ({describe_table(weights.config.game)}) than "
                         f"this run's ({describe_table(config.game)})")
    for name in INIT_FIELDS:
        theirs, ours = getattr(weights.config, name), getattr(config, name)
        if theirs != ours:
            raise ValueError(f"--init: {source} has {name} {theirs!r}, this run {ours!r}; give the run the same "
                             f"--{name.replace('_', '-')}")
    return weights


def learning_rate(config: PPOConfig, steps: int) -> float:
    """The step size after `steps` learner steps: annealed linearly to 0 at the run's end, or constant."""
    if not config.anneal or config.steps == 0:
        return config.learning_rate
    return config.learning_rate * max(0.0, 1.0 - steps / config.steps)


def _threads_of_the_round(chooser: ThreadChooser | None, fixed: int | None) -> int | None:
    """Set torch's threads for the next update: the chooser's, or the fixed count (None: as they are)."""
    threads = chooser.next() if chooser is not None else fixed
    if threads is not None and threads != torch.get_num_threads():
        torch.set_num_threads(threads)
    return threads


def train_run(config: PPOConfig, out: Path, device: str = "auto", progress: bool = True,
              info: dict[str, Any] | None = None, on_row: Callable[[dict[str, Any]], None] | None = None,
              engine_threads: int = 1, init: PPOWeights | None = None, torch_threads: int | None = None,
              trainer_class: Callable[..., Trainer] = Trainer) -> Path:
    """Train (or resume) the run in `out`; the final weights' path. `on_row` sees every log row as
    it is written; `engine_threads`: the batched engine's threads; `init`: weights the run starts
    from (:func:`initial_weights`) instead of random ones (a resumed run goes on from its own);
    `torch_threads`: torch's threads, or None to choose them by measuring the updates as they run
    (:class:`~baselines.harness.threads.ThreadChooser`: fast on a quiet machine, and on a busy one);
    `trainer_class`: what collects and learns, called as ``trainer_class(config, device, engine_threads)``
    (PPO's :class:`~baselines.ppo.trainer.Trainer`, or DMC's :class:`~baselines.ppo.dmc.DMCTrainer`).

    Raises:
        ValueError: `out` cannot hold the run, its resume file is damaged or of another
            configuration, or the device is not there.
    """
    files.check_output_directory("--out", out, (LOG_NAME, CURVE_NAME, LATEST_NAME, WEIGHTS_NAME, RESUME_NAME))
    trainer = trainer_class(config, resolve_device(device), engine_threads)
    steps, segment = load_resume(out / RESUME_NAME, trainer)
    if init is not None and steps == 0:
        trainer.network.load_named_weights(dict(init.weights))
    log = open_log(out, steps)
    segment_steps = config.eval_every or max(config.steps, 1)
    bar = _progress_bar(config.steps, steps) if progress else None
    report_from, clock, totals, counts = steps, time.perf_counter(), dict[str, float](), dict[str, int]()
    chooser = ThreadChooser(thread_candidates()) if torch_threads is None and trainer.device.type == "cpu" else None
    next_snapshot = (steps // config.snapshot_every + 1) * config.snapshot_every if config.snapshot_every else 0

    def write(row: dict[str, Any]) -> None:
        log.append({key: _shown(value) for key, value in row.items()})
        if on_row is not None:
            on_row(row)
        if bar is not None and row["kind"] == "eval":
            bar.write(f"[{steps:,} steps] vs {row['opponent']}: margin {row['margin']:+.2f} "
                      f"+- {row['margin_ci95']:.2f} pips per hand, won {100 * row['won']:.1f}%")

    def report() -> None:
        nonlocal report_from, clock, totals, counts
        now = time.perf_counter()
        rate = (steps - report_from) / max(now - clock, 1e-9)
        means = {name: value / counts[name] for name, value in totals.items()}
        diagnostics = {name: means.get(name) for name in ("entropy", "approx_kl", "clip_fraction", "agreement")}
        write({"steps": steps, "kind": "train", "opponent": "self" if config.self_play else "pool",
               "steps_per_second": rate, **trainer.take_hands(), "learning_rate": learning_rate(config, steps),
               "policy_loss": means.get("policy"), "value_loss": means.get("value"), **diagnostics})
        report_from, clock, totals, counts = steps, time.perf_counter(), {}, {}

    while steps < config.steps:
        trainer.start_segment(segment)
        end = min((segment + 1) * segment_steps, config.steps)
        while steps < end:
            threads, began = _threads_of_the_round(chooser, torch_threads), time.perf_counter()
            rollout = trainer.collect()
            trainer.value_only = steps < config.value_warmup
            stats = trainer.learn(rollout, learning_rate(config, steps))
            done = trainer.learner_steps(rollout)
            if chooser is not None and threads is not None:
                chooser.record(threads, (time.perf_counter() - began) / max(done, 1))
            steps += done
            _add_figures(totals, counts, stats)
            if bar is not None:
                bar.update(done)
            if next_snapshot and steps >= next_snapshot and trainer.seats is not None:
                trainer.seats.add_snapshot(trainer.weights(), f"snapshot at {steps} steps")
                next_snapshot += config.snapshot_every
            if steps - report_from >= REPORT_STEPS and steps < end:
                report()
        report()
        segment += 1
        weights = trainer.weights({**(info or {}), "steps_trained": steps, "seconds": round(log.elapsed(), 1)})
        for row in evaluation_rows(weights, config):
            write({"steps": steps, **row})
        save_weights(out / LATEST_NAME, weights)
        save_resume(out / RESUME_NAME, trainer, steps, segment)
        clock = time.perf_counter()  # the evaluation is not the trainer's time
        plot_learning_curve(log.rows, out / CURVE_NAME)
    if bar is not None:
        bar.close()
    final = trainer.weights({**(info or {}), "steps_trained": steps, "seconds": round(log.elapsed(), 1)})
    return save_weights(out / WEIGHTS_NAME, final)


def _add_figures(totals: dict[str, float], counts: dict[str, int], stats: dict[str, float]) -> None:
    """Add one update's figures to the report's sums and counts: each figure is averaged over the updates
    that gave it (a value-only update, within value_warmup, gives no policy figures)."""
    for name, value in stats.items():
        totals[name], counts[name] = totals.get(name, 0.0) + value, counts.get(name, 0) + 1


def _progress_bar(total: int, done: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="step", unit_scale=True, smoothing=0.05)


def plot_learning_curve(rows: list[dict[str, Any]], path: Path) -> None:
    """The evaluation margins (with their 95% intervals) against learner steps and against wall time:
    PPO's own curve, written as every learner's is (:func:`~baselines.learning.recorder.save_curve`)."""
    plt = pyplot()
    evaluations = [row for row in rows if row["kind"] == "eval" and row["margin"] not in ("", None)]
    figure, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for opponent in dict.fromkeys(row["opponent"] for row in evaluations):
        mine = [row for row in evaluations if row["opponent"] == opponent]
        margin = np.array([float(row["margin"]) for row in mine])
        spread = np.array([float(row["margin_ci95"] or 0) for row in mine])
        for axis, key, scale in ((axes[0], "steps", 1e6), (axes[1], "elapsed_s", 3600)):
            x = np.array([float(row[key]) for row in mine]) / scale
            axis.plot(x, margin, marker="o", label=f"against {opponent}")
            axis.fill_between(x, margin - spread, margin + spread, alpha=0.2)
    for axis, label in ((axes[0], "learner steps (millions)"), (axes[1], "wall time (hours)")):
        axis.axhline(0.0, color="grey", linewidth=0.8)
        axis.set_xlabel(label)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("pips per hand, player minus opponents (lower is better)")
    axes[0].legend()
    figure.suptitle("ppo: held-out deals, seats rotated, 95% intervals")
    figure.tight_layout()
    save_curve(figure, path, dpi=100)
