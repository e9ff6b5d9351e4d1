"""DAgger (Ross, Gordon and Bagnell, 2011) on ppo's network: imitation on the states the learner reaches.

Behaviour cloning (:mod:`baselines.imitation.train`) fits the teacher's moves on the positions
the *teacher* reaches. The clone then errs, and its errors take it to positions the teacher
rarely sees and the dataset hardly covers, where it errs more: the compounding error DAgger was
made for. Here the learner plays itself on the batched engine, as PPO's trainer does (its moves
sampled from its own policy), and the teacher says, at every decision with a choice, which move
it would have played there; the update is the cross-entropy of the teacher's move under the
learner's policy. The data never runs out (every rollout is new positions, labelled afresh), so
the fit does not overfit a dataset; it is DAgger with the newest data only, each rollout
learned from ``epochs`` times and dropped.

The teacher is any player that keeps nothing between moves and acts on many games at once (a
:class:`~baselines.policies.policy.BatchPolicy`: ``td_lambda``, ``linear_sarsa``, a ``ppo`` file):
it labels a rollout's positions in one call (:mod:`baselines.ppo.teachers`). The value head's own
layer is not trained; the trunk it sits on is, so its outputs drift from where they started.
:class:`DAggerTrainer` replaces PPO's collection and update and keeps everything else of the PPO
run (:func:`baselines.ppo.run.train_run`: segments, evaluations, log, curve, resume).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from baselines.ppo.config import PPOConfig
from baselines.ppo.teachers import DEFAULT_TEACHER, make_teacher
from baselines.ppo.trainer import Trainer, segment_seed


@dataclass
class Lessons:
    """A rollout's decisions with a choice, each with the move the teacher would have played there."""

    positions: np.ndarray  # (K, D) int8: what the mover saw
    inputs: torch.Tensor  # (K, I): the network's input of it, for the action head (width 0 for the after-state head)
    store: Any  # the head's candidates of the rollout (PolicyHead.stack), by flat row (step x B + game)
    flat_rows: torch.Tensor  # (K,) each decision's flat row in `store`
    teacher: torch.Tensor  # (K,) the teacher's move
    agreed: int  # decisions where the learner's sampled move was the teacher's
    steps: int  # decisions of the rollout, forced moves included (the learner steps, as PPO counts them)


class DAggerTrainer(Trainer):
    """PPO's trainer with DAgger's collection (the learner plays, the teacher labels) and update (the
    cross-entropy of the teacher's moves)."""

    warms_value = False

    def __init__(self, config: PPOConfig, device: torch.device | str = "cpu", engine_threads: int = 1,
                 teacher: str = DEFAULT_TEACHER) -> None:
        """Raises:
            ValueError: a pool of opponents, or a teacher :func:`~baselines.ppo.teachers.make_teacher`
                refuses (one line)."""
        if not config.self_play:
            raise ValueError("dagger's learner plays every seat (--opponents self); the teacher only labels")
        self.teacher_spec = teacher
        self.teacher = make_teacher(teacher, config.game, seed=config.seed)
        super().__init__(config, device, engine_threads)

    def start_segment(self, segment: int) -> None:
        """Deal anew (PPO's) and make the teacher afresh, seeded from (seed, segment): a teacher that draws
        (``td_lambda(epsilon=...)``) labels a resumed run's segments as it labelled the unbroken run's."""
        super().start_segment(segment)
        seed = segment_seed(self.config.seed, segment) + 2
        self.teacher = make_teacher(self.teacher_spec, self.config.game, seed=seed)

    def resume_identity(self) -> str:
        """The configuration, the learner's name and its teacher: another learner's run, or this one's with
        another teacher, is refused, never resumed as this run."""
        return json.dumps({"learner": "dagger", "teacher": self.teacher_spec,
                           "config": json.loads(self.config.to_json())}, sort_keys=True)

    @torch.no_grad()
    def collect(self) -> Lessons:  # type: ignore[override]
        """`rollout_steps` steps of every game with the learner's policy, the teacher's move noted where
        there was a choice."""
        config, engine, b = self.config, self.engine, self.config.num_envs
        records, positions, seen_rows, flat_rows, taught = [], [], [], [], []
        agreed = 0
        for step in range(config.rollout_steps):
            full, masks = self.observation["observation"], self.observation["action_mask"]
            observations = full[:, :self.one_hand]
            seen = np.zeros((b, 0), dtype=np.float32) if self.head.with_afterstates else self.inputs(observations)
            features = self._features(torch.from_numpy(seen).to(self.device))
            actions, record = self.head.sample(self.network, features, observations, masks, self.generator)
            records.append(record)
            choosing = np.flatnonzero(masks.sum(axis=1) > 1)
            played = actions.cpu().numpy()
            if choosing.size:
                teacher = np.asarray(self.teacher.act_batch(full[choosing], masks[choosing]), dtype=np.int64)
                agreed += int((teacher == played[choosing]).sum())
                positions.append(observations[choosing])
                seen_rows.append(seen[choosing])
                flat_rows.append(step * b + choosing)
                taught.append(teacher)
            self.observation, _, _, _, infos = engine.step(played)
            self._count_hands(infos)
        store = self.head.stack(records, b)
        return Lessons(np.concatenate(positions) if positions else np.zeros((0, self.one_hand), dtype=np.int8),
                       _tensor(seen_rows, (0, seen.shape[1]), seen.dtype.type, self.device), store,
                       _tensor(flat_rows, (0,), np.int64, self.device), _tensor(taught, (0,), np.int64, self.device),
                       agreed, b * config.rollout_steps)

    def learn(self, rollout: Lessons, learning_rate: float) -> dict[str, float]:  # type: ignore[override]
        """`epochs` passes of `minibatches` minibatches on the cross-entropy of the teacher's moves; its mean
        (the log's ``policy_loss``) and the share of the rollout's decisions where the learner's sampled
        move was the teacher's (``agreement``)."""
        rows = rollout.teacher.shape[0]
        if rows == 0:
            return {}

        def loss_of(batch: torch.Tensor) -> torch.Tensor:
            features = self._features(rollout.inputs.index_select(0, batch))
            log_probs, _ = self.head.evaluate(self.network, rollout.store, features,
                                              rollout.flat_rows.index_select(0, batch),
                                              rollout.teacher.index_select(0, batch))
            return -log_probs.mean()

        return {"policy": self.descend(rows, learning_rate, loss_of), "agreement": rollout.agreed / rows}

    def _features(self, seen: torch.Tensor) -> torch.Tensor:
        """The trunk's features of the positions' network inputs, for the action head. The after-state
        head scores each move from its after-state alone, so its rows carry no input (width 0) and the
        observation's own pass, and its best-chain search, are not made at all."""
        return seen if self.head.with_afterstates else self.network.trunk(seen.float())

    def learner_steps(self, rollout: Lessons) -> int:  # type: ignore[override]
        """Every decision the rollout stepped, as PPO counts in self-play (the curves compare like with like)."""
        return rollout.steps


def _tensor(parts: list[np.ndarray], empty: tuple[int, ...], dtype: type, device: torch.device) -> torch.Tensor:
    array = np.concatenate(parts) if parts else np.zeros(empty, dtype=dtype)
    return torch.from_numpy(np.ascontiguousarray(array, dtype=dtype)).to(device)
