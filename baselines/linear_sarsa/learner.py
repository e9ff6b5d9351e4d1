"""Linear SARSA: the update rule and the training loop (numpy only), read top to bottom.

Q(s, a) = w . f(s, a) (:mod:`~baselines.linear_sarsa.features`). The learner's steps are
its own moves in one hand: s_t is what it observes when it is to move, a_t the move it
makes (passes and forced moves included; a draw, whose tile is unknown, is not a step: the
move after it is). On-policy SARSA (docs/baselines.md, after Sutton and Barto):

- the reward is the hand's result, and nothing before it: r = minus the pips the learner
  holds when the hand ends (the env's "score" reward; 0 for going out). Pips are what the
  game scores and what the harness reports, so Q reads in pips: Q(s, a) is about minus the
  pips left at the end, discounted by gamma for each later move of one's own. (Shaping the
  reward with the pips of each tile played was the alternative; it rewards shedding pips,
  which the discount already favours, and is not the game's own measure.)
- at each move of the learner after its first in the hand: delta = gamma * Q(s', a') - Q(s, a),
  where a' is the move it actually makes in s' (epsilon-greedy: on-policy);
- when the hand ends: delta = r - Q(s_K, a_K) for its last move. A move that ends the hand
  itself (going out, or blocking it) has its value exactly, Q = r, so the step before it
  has delta = gamma * r - Q(s, a), and the hand-ending move needs no update of its own;
- w <- w + alpha_t * delta * f(s, a), with alpha_t halving every ``alpha_half_life`` hands down
  to ``alpha_floor`` (the seed decayed it by 0.9 per update down to 1e-4, which reaches the
  floor within a hundred updates; a half-life in hands keeps a chosen part of the run at a
  larger step).

Many tables are played side by side (``parallel_hands``, on the batched engine:
:mod:`baselines.learning.tables`). Each round, every learner that moves or whose hand ended
since the last round contributes its update, computed with the weights of that round, and
the contributions are averaged into one step: ``w <- w + alpha_t * mean_i(delta_i * f_i)``.
With one table this is the textbook update, one step per move.

Exploration: while learning, a uniformly random legal move with probability epsilon; the
policy itself (:mod:`~baselines.linear_sarsa.policy`) is greedy. Every ``eval_every`` hands the
current weights play the fixed evaluation opponents through the shared harness
(:func:`baselines.learning.run.evaluate_against`). Deterministic for a seed: every random
draw comes from the run's one generator.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

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
from baselines.learning.tables import HandRecord, Tables, choose_by_value, play_learning_hands
from baselines.linear_sarsa.config import LinearSarsaConfig
from baselines.linear_sarsa.features import FEATURES, MoveFeatures, Moves
from baselines.linear_sarsa.policy import LinearSarsaPolicy, move_values
from baselines.linear_sarsa.weights import Weights


# --------------------------------------------------------------------------- the update
class Sarsa:
    """The SARSA updates of many concurrent learners (one per table and learner slot) on shared weights.

    Args:
        w: the weights, updated in place.
        gamma: the discount per own move.
        tables, slots: learners are (table, slot) pairs; a slot is a seat in self-play, else 0.
    """

    def __init__(self, w: np.ndarray, gamma: float, tables: int, slots: int) -> None:
        self.w, self.gamma = w, gamma
        self.previous = np.zeros((tables, slots, w.shape[0]))  # f(s, a) of each learner's last move
        self.has_previous = np.zeros((tables, slots), dtype=np.bool_)  # ... when that move did not end the hand
        self.features: list[np.ndarray] = []  # f(s, a) and delta of the updates not yet applied
        self.deltas: list[np.ndarray] = []
        self.mean_abs_errors: list[float] = []  # mean |delta| of each step, for the log

    def move(self, tables: np.ndarray, slots: np.ndarray, features: np.ndarray, values: np.ndarray,
             ends_hand: np.ndarray) -> None:
        """Learners (tables[i], slots[i]) make the move a' of features `features[i]` and value
        ``Q(s', a') = values[i]``: queue delta = gamma * Q(s', a') - Q(s, a) for their last moves,
        and remember these moves (those that end the hand need no update: their value is exact)."""
        had = self.has_previous[tables, slots]
        before = self.previous[tables[had], slots[had]]
        self.features.append(before)
        self.deltas.append(self.gamma * values[had] - before @ self.w)
        self.previous[tables, slots] = features
        self.has_previous[tables, slots] = ~ends_hand

    def end_hand(self, table: int, slot: int, final_pips: float) -> None:
        """The hand is over for this learner, holding `final_pips`: queue delta = r - Q(s_K, a_K) for
        its last move, with the reward r = -final_pips."""
        if self.has_previous[table, slot]:
            before = self.previous[table, slot][None]
            self.features.append(before)
            self.deltas.append(-final_pips - before @ self.w)
            self.has_previous[table, slot] = False

    def apply(self, alpha: float) -> None:
        """w <- w + alpha * mean(delta * f(s, a)) over the queued updates (computed with the weights
        they were queued under), then empty the queue."""
        if not self.deltas:
            return
        deltas, features = np.concatenate(self.deltas), np.concatenate(self.features)
        self.deltas.clear()
        self.features.clear()
        if deltas.size:
            self.w += alpha * (deltas @ features) / deltas.size
            self.mean_abs_errors.append(float(np.abs(deltas).mean()))


# --------------------------------------------------------------------------- playing and learning
def play_hands(w: np.ndarray, features: MoveFeatures, opponent: str, hands: int, config: LinearSarsaConfig,
               rng: np.random.Generator, sarsa: Sarsa | None = None, hands_before: int = 0,
               on_hand: Callable[[HandRecord], None] | None = None) -> list[HandRecord]:
    """Play `hands` freshly dealt hands on ``config.parallel_hands`` tables side by side.

    The learner (greedy on Q, epsilon-greedy when learning) moves in its seats with the
    features of every legal move at every table computed at once; the other seats are
    `opponent` policies (:class:`~baselines.learning.tables.Tables`), or the learner too in
    self-play (``opponent == "self"``). With `sarsa` given it learns as it plays, at the step
    size of the run's hands so far (`hands_before` plus the hands finished here).
    """
    tables = Tables(config.game, config.parallel_hands, opponent, hands, rng,
                    end_hand=None if sarsa is None else sarsa.end_hand, on_hand=on_hand)
    return play_learning_hands(tables, _MoveLearner(w, features, config, rng, sarsa, hands_before))


class _MoveLearner:
    """SARSA's side of the shared loop (:func:`~baselines.learning.tables.play_learning_hands`):
    Q of every legal move from its features at once, the highest chosen; the step size follows
    the run's hands."""

    def __init__(self, w: np.ndarray, features: MoveFeatures, config: LinearSarsaConfig, rng: np.random.Generator,
                 sarsa: Sarsa | None, hands_before: int) -> None:
        self.w, self.features, self.config, self.rng, self.sarsa = w, features, config, rng, sarsa
        self.hands_before = hands_before
        self.epsilon = config.epsilon if sarsa is not None else 0.0

    def round_start(self, hands_done: int) -> None:
        if self.sarsa is not None:
            self.sarsa.apply(self.config.step_size(self.hands_before + hands_done))

    def choose(self, tables: np.ndarray, slots: np.ndarray, observations: np.ndarray, masks: np.ndarray,
               seats: np.ndarray) -> np.ndarray:
        valued: dict[str, Moves] = {}

        def value_moves(rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
            valued["moves"] = moves = self.features(observations, rows, actions)
            return -move_values(self.w, moves)  # lower is better: the highest Q first

        choice = choose_by_value(masks, value_moves, self.rng, self.epsilon)
        if self.sarsa is not None:
            moves, chosen = valued["moves"], choice.chosen
            self.sarsa.move(tables, slots, moves.features[chosen], -choice.values[chosen], moves.ends_hand[chosen])
        return choice.chosen_actions

    def done(self) -> None:
        pass


def evaluate_weights(w: np.ndarray, config: LinearSarsaConfig, opponent: str, hands: int,
                     seed: int = EVALUATION_SEED) -> EvaluationResult:
    """Greedy play of the weights `w` in one seat against copies of `opponent` in the others
    (:func:`baselines.learning.run.evaluate_against`: the learner is ``result.policies[0]``)."""
    player = LinearSarsaPolicy(config.game, seed=seed, checkpoint=Weights(w.copy(), config))
    return evaluate_against(player, config, opponent, hands, seed)


def train(config: LinearSarsaConfig, log: TrainingLog | None = None, initial: np.ndarray | None = None,
          resume: ResumePoint | None = None) -> np.ndarray:
    """Learn w by linear SARSA through the curriculum, from `initial` (default: all zeros); returns w.

    Deterministic for a seed. `resume`: go on from a killed run's last round of evaluations
    (`initial` then holds its weights).

    Raises:
        ValueError: an opponent that is not a registered policy, or `initial` of the wrong size.
        FloatingPointError: the weights diverged (non-finite).
    """
    config.check_opponents()
    log = log or TrainingLog()
    rng = resume_generator(config.seed, resume.rng if resume is not None else None)
    w = np.zeros(len(FEATURES)) if initial is None else np.array(initial, dtype=np.float64)
    if w.shape != (len(FEATURES),):
        raise ValueError(f"initial weights must be {len(FEATURES)} numbers (one per feature), got shape {w.shape}")
    features = MoveFeatures(config.game)
    for chunk in chunks(config, after=resume.done if resume is not None else 0):
        slots = config.num_players if chunk.opponent == SELF_PLAY else 1
        sarsa = Sarsa(w, config.gamma, config.parallel_hands, slots)
        start = time.perf_counter()
        records = play_hands(w, features, chunk.opponent, chunk.hands, config, rng, sarsa, chunk.done - chunk.hands,
                             log.on_hand)
        elapsed = time.perf_counter() - start
        if not np.isfinite(w).all():
            raise FloatingPointError(f"linear SARSA diverged after {chunk.done} hands (non-finite weights): lower "
                                     f"--alpha (now {config.alpha})")
        if log.on_progress is not None:
            log.on_progress({"hands": chunk.done, "stage": chunk.opponent, **hand_statistics(records, chunk.opponent),
                             "td_error": float(np.mean(sarsa.mean_abs_errors or [np.nan])),
                             "alpha": config.step_size(chunk.done), "hands_per_s": chunk.hands / elapsed})
        if chunk.evaluate:
            for name in config.eval_opponents:
                result = evaluate_weights(w, config, name, config.eval_hands)
                if log.on_evaluation is not None:
                    log.on_evaluation(chunk.done, name, result, Weights(w.copy(), config))
            if log.on_round is not None:
                log.on_round(chunk.done, Weights(w.copy(), config), rng)
    return w
