"""What every learner's training run shares: its schedule, what it reports, and its evaluations.

A run goes through the curriculum's stages in order, in chunks of hands that end where a
periodic evaluation is due (:func:`chunks`); after each chunk it reports its statistics,
and at each evaluation the current weights play the fixed evaluation opponents through the
shared harness (:func:`evaluate_against`: same deals every time, seats rotated, "won" as
:mod:`baselines.harness.outcomes` defines it). The command line turns the reports into a CSV log, a
learning curve and a progress bar (:class:`TrainingLog`, :mod:`baselines.cli.train`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from baselines.harness.evaluate import EvaluationResult, evaluate
from baselines.learning.config import LearnerConfig
from baselines.learning.options import SELF_PLAY
from baselines.learning.tables import HandRecord
from baselines.policies.policy import Policy

EVALUATION_SEED = 12345  #: the deals of every periodic evaluation (the same ones each time)


@dataclass
class TrainingLog:
    """What a learner's ``train`` reports as it goes (the command line turns it into CSV, a plot and a bar).

    Attributes:
        on_hand: after every training hand.
        on_progress: after every chunk of training hands, with its statistics (hands,
            stage, own_pips, opponent_pips, hands_per_s, and the learner's own).
        on_evaluation: after every evaluation: (hands trained, opponent, the harness's
            result, the learner's current model: what the command line saves as the latest).
        on_round: after every complete round of evaluations, by a learner that can resume:
            (hands trained, its model, its random generator, and optionally a JSON dict of what
            else it carries between chunks), what a run resumed from there needs
            (:class:`~baselines.learning.recorder.ResumePoint`).
    """

    on_hand: Callable[[HandRecord], None] | None = None
    on_progress: Callable[[dict[str, Any]], None] | None = None
    on_evaluation: Callable[[int, str, EvaluationResult, Any], None] | None = None
    on_round: Callable[..., None] | None = None


@dataclass(frozen=True)
class Chunk:
    """Hands played in one go against one stage's opponents.

    Attributes:
        opponent: the stage's opponents (a policy name, names joined by "+", or "self").
        hands: hands in this chunk.
        done: hands trained once this chunk is played, over the whole run.
        evaluate: whether an evaluation is due after it.
    """

    opponent: str
    hands: int
    done: int
    evaluate: bool


def chunks(config: LearnerConfig, after: int = 0) -> Iterator[Chunk]:
    """The run's chunks: the curriculum's stages in order, cut where an evaluation is due
    (every ``eval_every`` hands, and at the end of the run); those done by `after` hands (where a
    resumed run goes on from) left out."""
    for chunk in _all_chunks(config):
        if chunk.done > after:
            yield chunk


def resume_generator(seed: int, state: dict[str, Any] | None) -> np.random.Generator:
    """The run's generator: from its seed, or as a resumed run's point left it."""
    rng = np.random.default_rng(seed)
    if state is not None:
        try:
            rng.bit_generator.state = state
        except (TypeError, ValueError, KeyError) as error:
            raise ValueError(f"the resume point's generator state is not numpy's ({error})") from None
    return rng


def _all_chunks(config: LearnerConfig) -> Iterator[Chunk]:
    done = 0
    for opponent, stage_hands in config.stage_hands():
        while stage_hands > 0:
            until_evaluation = config.eval_every - done % config.eval_every if config.eval_every > 0 else stage_hands
            hands = min(stage_hands, until_evaluation)
            done += hands
            stage_hands -= hands
            due = config.eval_every > 0 and done % config.eval_every == 0 or done == config.hands
            yield Chunk(opponent, hands, done, due)


def hand_statistics(records: list[HandRecord], stage: str) -> dict[str, float]:
    """Mean pips per hand of the learner's seats and of the others (nan in self-play)."""
    own = np.mean([r.scores[list(r.learner_seats)].mean() for r in records])
    rest = [np.delete(r.scores, list(r.learner_seats)).mean() for r in records if stage != SELF_PLAY]
    return {"own_pips": float(own), "opponent_pips": float(np.mean(rest)) if rest else float("nan")}


def evaluate_against(player: Policy, config: LearnerConfig, opponent: str, hands: int,
                     seed: int = EVALUATION_SEED) -> EvaluationResult:
    """`player` (the learner's current weights, acting greedily) in one seat against copies of
    `opponent` in the others, by the shared harness: every deal under all seat rotations.

    The learner is ``result.policies[0]`` (listed first; its label names its weights in
    memory, so it never shares a row with a shipped copy of itself), the opponents' copies
    (pooled) ``result.policies[1]``.
    """
    return evaluate([player] + [opponent] * (config.num_players - 1), hands, seed=seed, num_players=config.game)
