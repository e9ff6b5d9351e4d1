"""TD(lambda) with eligibility traces, and the training loop (torch), read top to bottom.

Learning is TD(lambda) with eligibility traces as docs/baselines.md specifies, after the
reference (TD-Gammon's scheme):

- the states s_1, s_2, ... of one learner in one hand are the after-states of its own
  moves (passes and forced moves included; after a double it moves again, so two of its
  after-states follow each other). This is the standard choice for after-state TD: the
  value the player acts on (:mod:`~baselines.td_lambda.policy`) is the value it learns;
- at each of its moves: delta = V(s_{t+1}) - V(s_t); theta <- theta + alpha * delta * z;
  then z <- lambda * z + grad V(s_{t+1}) (z starts at grad V(s_1) each hand);
- when the hand ends: delta = R_final - V(s_K) with R_final its true final pips, one more
  update, and the trace is dropped. When its own move ends the hand, that after-state is
  terminal and V(terminal) = R_final, so the last delta is R_final - V(s_{K-1});
- no discounting; defaults lambda 0.5, alpha 3e-5 (the reference's).

Where this differs from the reference's loop, for speed: many hands are played side by
side (``parallel_hands`` tables on the batched engine, :mod:`~baselines.td_lambda.tables`), every learner keeps
its own trace, and the updates of all learners that moved in one round are summed into one
parameter update (each learner's delta is still computed from values under the
parameters of that round). The reference updated on every player's turn; here a learner
updates on its own moves. Because every learner's update is applied, one round moves
theta by up to ``parallel_hands`` updates: alpha and the number of tables must be chosen
together (alpha 7e-5 with 40 tables learns well; alpha 3e-5 with 128 tables diverged in
self-play), and self-play stages, where every seat learns, use ``self_play_alpha``
(default alpha / players). Exploration is epsilon-greedy over legal moves and off by
default (the reference had none; the dealt tiles already make play varied).

Every ``eval_every`` hands the current weights play the fixed evaluation opponents through
the shared harness (:func:`baselines.harness.evaluate.evaluate`: same deals, seats rotated, "won"
as :mod:`baselines.harness.outcomes` defines it).

The shipped checkpoint (``baselines/checkpoints``, see TRAINING.md there) is a line-variant
network trained this way for 420,000 hands in 40 minutes on two shared cores.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from baselines.harness.evaluate import EvaluationResult
from baselines.learning.options import SELF_PLAY
from baselines.learning.recorder import ResumePoint
from baselines.learning.run import (
    EVALUATION_SEED,
    TrainingLog,
    chunks,
    evaluate_against,
    hand_statistics,
    resume_generator,
)
from baselines.td_lambda.checkpoint import Checkpoint
from baselines.td_lambda.config import TDLambdaConfig
from baselines.td_lambda.features import make_features
from baselines.td_lambda.network import ValueNetwork, build_network
from baselines.td_lambda.policy import TDLambdaPolicy
from baselines.td_lambda.tables import play_hands

__all__ = ["EVALUATION_SEED", "Traces", "TrainingLog", "evaluate_network", "seed_everything", "train"]


def seed_everything(seed: int) -> np.random.Generator:
    """Seed torch (weights) and return the run's numpy generator; torch runs on one thread."""
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------- TD(lambda) with traces
class Traces:
    """Eligibility traces of many concurrent learners (one per table and learner seat) and the update."""

    def __init__(self, network: ValueNetwork, td_lambda: float, alpha: float, tables: int, seats: int) -> None:
        self.network, self.td_lambda, self.alpha = network, td_lambda, alpha
        self.z = torch.zeros(tables, seats, network.theta.numel())
        self.previous_value = np.zeros((tables, seats), dtype=np.float32)
        self.has_previous = np.zeros((tables, seats), dtype=bool)
        self.pending_delta = np.zeros((tables, seats), dtype=np.float32)  # final deltas of finished hands
        self.mean_abs_errors: list[float] = []  # mean |delta| of each update, for the log

    def end_hand(self, table: int, slot: int, final_pips: float) -> None:
        """The hand is over for this learner: queue delta = R_final - V(s_K) for the next update."""
        if self.has_previous[table, slot]:
            self.pending_delta[table, slot] = final_pips - self.previous_value[table, slot]
            self.has_previous[table, slot] = False

    def flush(self) -> None:
        """Apply the queued final deltas (theta += alpha * delta * z) of learners with no move left."""
        flat_delta = self.pending_delta.reshape(-1)
        queued = np.flatnonzero(flat_delta)
        if queued.size:
            flat_z = self.z.view(-1, self.z.shape[-1])
            rows = torch.from_numpy(queued)
            change = torch.from_numpy(flat_delta[queued]) @ flat_z.index_select(0, rows)
            with torch.no_grad():
                self.network.theta.add_(change, alpha=self.alpha)
            self.mean_abs_errors.append(float(np.abs(flat_delta[queued]).mean()))
            flat_z.index_fill_(0, rows, 0.0)
        self.pending_delta[:] = 0.0

    def step(self, tables: np.ndarray, slots: np.ndarray, next_values: np.ndarray, terminal: np.ndarray,
             next_features: np.ndarray) -> None:
        """One move of each learner (tables[i], slots[i]) to the after-state with value next_values[i].

        Applies theta += alpha * sum(delta * z) for these moves and the queued final deltas,
        then z <- lambda z + grad V(s_{t+1}) for the moves that did not end the hand
        (`next_features` holds every move's after-state features; a move that ended the
        hand drops its trace).
        """
        delta = self.pending_delta
        had = self.has_previous[tables, slots]
        delta[tables[had], slots[had]] += next_values[had] - self.previous_value[tables[had], slots[had]]
        flat_delta = delta.reshape(-1)
        flat_z = self.z.view(-1, self.z.shape[-1])
        movers = tables * self.z.shape[1] + slots
        every_table_in_order = self.z.shape[1] == 1 and movers.size == self.z.shape[0]
        mover_index = torch.from_numpy(movers)
        mover_z = flat_z if every_table_in_order else flat_z.index_select(0, mover_index)
        change = torch.from_numpy(flat_delta[movers]) @ mover_z
        others = np.setdiff1d(np.flatnonzero(flat_delta), movers)  # final deltas of learners not moving now
        if others.size:
            change += torch.from_numpy(flat_delta[others]) @ flat_z.index_select(0, torch.from_numpy(others))
        nonzero = flat_delta[flat_delta != 0]
        if nonzero.size:
            with torch.no_grad():
                self.network.theta.add_(change, alpha=self.alpha)
            self.mean_abs_errors.append(float(np.abs(nonzero).mean()))
        delta[:] = 0.0
        going_on = ~terminal
        decay = torch.from_numpy(np.where(had & going_on, self.td_lambda, 0.0).astype(np.float32))
        mover_z.mul_(decay[:, None])
        values = self.network.add_gradients_(torch.from_numpy(next_features), mover_z).numpy()
        if terminal.any():
            mover_z[torch.from_numpy(terminal)] = 0.0
        if not every_table_in_order:
            flat_z.index_copy_(0, mover_index, mover_z)
        self.previous_value[tables[going_on], slots[going_on]] = values[going_on]
        self.has_previous[tables, slots] = going_on


# --------------------------------------------------------------------------- evaluation by the shared harness
def evaluate_network(network: ValueNetwork, config: TDLambdaConfig, opponent: str, hands: int,
                     seed: int = EVALUATION_SEED) -> EvaluationResult:
    """Greedy play of the current weights in one seat against copies of `opponent` in the others
    (:func:`baselines.learning.run.evaluate_against`: the learner is ``result.policies[0]``)."""
    player = TDLambdaPolicy(config.game, seed=seed, checkpoint=Checkpoint(network.weights(), config))
    return evaluate_against(player, config, opponent, hands, seed)


# --------------------------------------------------------------------------- training
def train(config: TDLambdaConfig, log: TrainingLog | None = None, network: ValueNetwork | None = None,
          resume: ResumePoint | None = None) -> ValueNetwork:
    """Learn V by TD(lambda) through the curriculum; returns the trained network.

    Deterministic for a seed (one torch thread, every draw from the run's generator). `resume`:
    go on from a killed run's last round of evaluations (`network` then holds its weights).

    Raises:
        ValueError: an opponent that is not a registered policy.
        FloatingPointError: the weights diverged (non-finite).
    """
    config.check_opponents()
    log = log or TrainingLog()
    rng = seed_everything(config.seed)
    if resume is not None:
        rng = resume_generator(config.seed, resume.rng)
    network = network or build_network(config)
    features = make_features(config)
    for chunk in chunks(config, after=resume.done if resume is not None else 0):
        self_play = chunk.opponent == SELF_PLAY
        seats = config.num_players if self_play else 1
        alpha = (config.self_play_alpha or config.alpha / config.num_players) if self_play else config.alpha
        traces = Traces(network, config.td_lambda, alpha, config.parallel_hands, seats)
        start = time.perf_counter()
        try:
            records = play_hands(network, features, chunk.opponent, chunk.hands, config, rng, traces, log.on_hand)
        except FloatingPointError:  # values went non-finite within the chunk
            records = None
        elapsed = time.perf_counter() - start
        if records is None or not torch.isfinite(network.theta).all():
            raise FloatingPointError(
                f"TD(lambda) diverged by {chunk.done} hands (non-finite weights): one round applies up to "
                f"parallel_hands={config.parallel_hands} updates of alpha={alpha}; lower either")
        if log.on_progress is not None:
            log.on_progress({"hands": chunk.done, "stage": chunk.opponent, **hand_statistics(records, chunk.opponent),
                             "td_error": float(np.mean(traces.mean_abs_errors or [np.nan])),
                             "hands_per_s": chunk.hands / elapsed})
        if chunk.evaluate:
            for name in config.eval_opponents:
                result = evaluate_network(network, config, name, config.eval_hands)
                if log.on_evaluation is not None:
                    log.on_evaluation(chunk.done, name, result, network)
            if log.on_round is not None:
                log.on_round(chunk.done, network, rng)
    return network
