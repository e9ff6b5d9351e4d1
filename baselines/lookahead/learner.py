"""Learning the look-ahead's evaluation in stages (docs/baselines.md), read top to bottom.

The evaluation predicts the pips the player will hold when the hand ends: V(s) = w . f(s)
(:mod:`~baselines.lookahead.features`). The learner plays whole hands with the look-ahead
itself (its training search: ``train_samples`` worlds, ``train_depth``; epsilon-greedy), and
learns from the positions right after each of its own moves: when the hand ends with R pips
in its hand, each such position s of that hand gives the regression step

    w <- w + alpha_t * mean_s((R - w . f(s)) * f(s))

(Monte Carlo: the target is the hand's true outcome, so the evaluation learns what the
look-ahead's own play leads to; a move that ends the hand needs no value, it is exact). The
step size halves every ``alpha_half_life`` hands down to ``alpha_floor``. The original design moved
its weights by a fraction of their size after each game; a regression step on the outcome is the
same idea with a well-defined fixed point.

Stages, as the design of docs/baselines.md trained: against a baseline, then against its own previous version (the
weights frozen as that stage began, ``"previous"``), then in self-play (every seat learns,
each its own player with its own knowledge of the hand). Tables are played side by side on
the batched engine (:mod:`baselines.learning.tables`); the look-ahead decides at each table
in turn. Every ``eval_every`` hands the current weights play the fixed evaluation opponents
through the shared harness. Deterministic for a seed.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from baselines.learning.recorder import ResumePoint
from baselines.learning.run import TrainingLog, chunks, evaluate_against, hand_statistics, resume_generator
from baselines.learning.tables import HandRecord, Tables, play_learning_hands
from baselines.lookahead.config import PREVIOUS, LookaheadConfig
from baselines.lookahead.evaluation import LinearEvaluation
from baselines.lookahead.features import NUM_FEATURES
from baselines.lookahead.policy import LookaheadPolicy
from baselines.lookahead.weights import LookaheadWeights, save_weights
from dominoes_env.core import rules


# --------------------------------------------------------------------------- the update
class Regression:
    """The evaluation's Monte Carlo regression: the after-states of each learner's moves in the hand
    under way, and one step per hand when it ends."""

    def __init__(self, w: np.ndarray) -> None:
        self.w = w  # updated in place: every learner's player reads the same array
        self.pending: dict[tuple[int, int], list[np.ndarray]] = {}
        self.errors: list[float] = []  # mean |R - w . f| of each step, for the log

    def moved(self, table: int, slot: int, features: np.ndarray) -> None:
        self.pending.setdefault((table, slot), []).append(features)

    def end_hand(self, table: int, slot: int, final_pips: float, alpha: float) -> None:
        seen = self.pending.pop((table, slot), None)
        if not seen:
            return
        features = np.stack(seen)
        errors = final_pips - features @ self.w
        self.w += alpha * (errors @ features) / features.shape[0]
        self.errors.append(float(np.abs(errors).mean()))


# --------------------------------------------------------------------------- the hands
def play_hands(weights: LookaheadWeights, opponent: str, hands: int, config: LookaheadConfig,
               rng: np.random.Generator, regression: Regression | None = None, done_before: int = 0,
               on_hand: Callable[[HandRecord], None] | None = None) -> list[HandRecord]:
    """Play `hands` hands on ``config.parallel_hands`` tables with the look-ahead in the learner's
    seats (every seat in self-play); learn from them with `regression` when given."""
    game = config.game
    reset_due: set[tuple[int, int]] = set()
    finished = 0

    def end_hand(table: int, slot: int, pips: float) -> None:
        nonlocal finished
        reset_due.add((table, slot))
        if regression is not None:
            regression.end_hand(table, slot, pips, config.step_size(done_before + finished))

    def counted(record: HandRecord) -> None:
        nonlocal finished
        finished += 1
        if on_hand is not None:
            on_hand(record)

    tables = Tables(game, config.parallel_hands, opponent, hands, rng, end_hand, counted)
    slots = game.num_players if tables.self_play else 1
    players = [[LookaheadPolicy(game, seed=np.random.default_rng([config.seed, done_before, table, slot]),
                                samples=config.train_samples, depth=config.train_depth, checkpoint=weights,
                                epsilon=config.epsilon if regression is not None else 0.0)
                for slot in range(slots)] for table in range(config.parallel_hands)]
    evaluation = LinearEvaluation(game, weights.w)  # the learners' own: their features are what is learned
    return play_learning_hands(tables, _SearchLearner(players, reset_due, evaluation, tables, regression),
                               forced_draws=False)  # the search plays its draws (and learns nothing from them)


class _SearchLearner:
    """The look-ahead's side of the shared loop (:func:`~baselines.learning.tables.play_learning_hands`):
    each table's player searches its own move; with a regression, the after-state of each move
    that neither ends the hand nor draws is learned from."""

    def __init__(self, players: list[list[LookaheadPolicy]], reset_due: set[tuple[int, int]],
                 evaluation: LinearEvaluation, tables: Tables, regression: Regression | None) -> None:
        self.players, self.reset_due, self.evaluation = players, reset_due, evaluation
        self.tables, self.regression = tables, regression

    def round_start(self, hands_done: int) -> None:
        pass

    def choose(self, playing: np.ndarray, slots: np.ndarray, observations: np.ndarray, masks: np.ndarray,
               seats: np.ndarray) -> np.ndarray:
        actions = np.empty(playing.shape[0], dtype=np.int64)
        for k, (table, slot) in enumerate(zip(playing.tolist(), slots.tolist())):
            player = self.players[table][slot]
            if (table, slot) in self.reset_due:
                self.reset_due.discard((table, slot))
                player.reset()
            actions[k] = player.act(observations[k], masks[k])
        if self.regression is not None:
            self._learn(playing, slots, seats, actions)
        return actions

    def _learn(self, playing: np.ndarray, slots: np.ndarray, seats: np.ndarray, actions: np.ndarray) -> None:
        assert self.regression is not None
        game = self.tables.game
        tiles = game.tiles
        after = self.tables.engine.states[playing].copy()
        for k in range(playing.shape[0]):
            rules.apply_action(after[k], tiles.low, tiles.high, tiles.tiles_with_value, actions[k])
        learning = (after[:, rules.HAND_OVER] == 0) & (actions != (game.draw_action or -1))
        for k in np.flatnonzero(learning).tolist():
            features = self.evaluation.features(after[k:k + 1], int(seats[k]))[0]
            self.regression.moved(int(playing[k]), int(slots[k]), features)

    def done(self) -> None:
        pass


# --------------------------------------------------------------------------- training
def train(config: LookaheadConfig, log: TrainingLog | None = None,
          initial: LookaheadWeights | None = None, resume: ResumePoint | None = None) -> LookaheadWeights:
    """Learn the evaluation through the curriculum; returns the trained weights. `resume`: go on
    from a killed run's last round of evaluations (`initial` then holds its weights; its point
    keeps the weights a "previous" stage under way was frozen with).

    Raises:
        ValueError: an opponent that is not a registered policy (or "previous", or "self").
    """
    config.check_opponents()
    log = log or TrainingLog()
    rng = resume_generator(config.seed, resume.rng if resume is not None else None)
    w = np.zeros(NUM_FEATURES) if initial is None else initial.w.copy()
    weights = LookaheadWeights(w, config)
    regression = Regression(w)
    with tempfile.TemporaryDirectory(prefix="lookahead-previous-") as frozen_dir:
        stage, opponent_spec, frozen = None, "", None
        if resume is not None and resume.extra.get("stage") is not None:  # the stage under way, as it began
            stage, frozen = resume.extra["stage"], resume.extra.get("frozen")
            begun = LookaheadWeights(np.array(frozen, dtype=np.float64), config) if frozen is not None else weights
            opponent_spec = _stage_opponents(stage, begun, config, Path(frozen_dir))
        started = time.perf_counter()
        for chunk in chunks(config, after=resume.done if resume is not None else 0):
            if chunk.opponent != stage:
                stage = chunk.opponent
                frozen = w.tolist() if stage == PREVIOUS else None
                opponent_spec = _stage_opponents(stage, weights, config, Path(frozen_dir))
            chunk_start = time.perf_counter()
            done_before = chunk.done - chunk.hands
            regression.errors.clear()
            records = play_hands(weights, opponent_spec, chunk.hands, config, rng, regression, done_before,
                                 log.on_hand)
            elapsed = time.perf_counter() - chunk_start
            if not np.isfinite(w).all():
                raise FloatingPointError(f"the evaluation's weights diverged after {chunk.done} hands; lower alpha")
            if log.on_progress is not None:
                log.on_progress({"hands": chunk.done, "stage": stage, **hand_statistics(records, stage),
                                 "fit_error": float(np.mean(regression.errors or [np.nan])),
                                 "alpha": config.step_size(chunk.done), "hands_per_s": chunk.hands / elapsed})
            if chunk.evaluate:
                current = LookaheadWeights(w.copy(), config, {"hands_trained": chunk.done,
                                                               "seconds": round(time.perf_counter() - started, 1)})
                player = LookaheadPolicy(config.game, seed=0, checkpoint=current)
                for name in config.eval_opponents:
                    result = evaluate_against(player, config, name, config.eval_hands)
                    if log.on_evaluation is not None:
                        log.on_evaluation(chunk.done, name, result, current)
                if log.on_round is not None:
                    log.on_round(chunk.done, current, rng, {"stage": stage, "frozen": frozen})
    return LookaheadWeights(w.copy(), config, {"hands_trained": config.hands,
                                               "seconds": round(time.perf_counter() - started, 1)})


def _stage_opponents(stage: str, weights: LookaheadWeights, config: LookaheadConfig, frozen_dir: Path) -> str:
    """The spec of a stage's opponents: "previous" is the look-ahead with the weights as they are now,
    frozen in a file (its training search), so it stays that version for the whole stage."""
    if stage != PREVIOUS:
        return stage
    path = save_weights(frozen_dir / f"previous_{len(list(frozen_dir.iterdir()))}.json",
                        LookaheadWeights(weights.w.copy(), config))
    return f"lookahead(samples={config.train_samples}, depth={config.train_depth})@{path}"
