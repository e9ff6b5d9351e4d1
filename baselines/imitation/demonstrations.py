"""A dataset of ``dominoes dataset`` read back as rows to imitate: what the seat saw, what was legal,
what it played, and what the hand paid every seat.

Minari reads the dataset (``minari.load_dataset(ID)``, never downloading); everything after is
checked here, because a file on disk can be anything: the metadata must be this package's (its
``dominoes_env`` block, of a format this reader knows), the table real, the spaces that table's,
every episode's arrays of matching lengths and every move legal under its own mask. Anything
else is one ``ValueError`` line naming the dataset and what is wrong.

Each episode's last observation (after the hand, with no move) is dropped. The value targets are
the hand's rewards in a reward mode of the caller's choice (the dataset's own reward is
``score``; a ppo run learns ``zero_sum`` by default), computed from the pips each seat kept
(the episode's ``hand_scores``) and laid out in the mover's frame, as the ppo network's value head
reads them: entry k is the seat k places after the mover.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from baselines.datasets.minari_store import check_dataset_id, datasets_root, require_minari
from baselines.datasets.plan import FORMAT
from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig, describe_table, make_config
from dominoes_env.core.observation import Observer
from dominoes_env.core.rewards import REWARD_MODES, hand_rewards

#: The memory the rows may take (observations, masks and values together): more is refused, and
#: ``--episodes`` takes a part of the dataset instead.
MAX_BYTES = 6 * 2**30


@dataclass(frozen=True)
class Demonstrations:
    """One row per move of the dataset's episodes (S rows), with the table they were played at."""

    config: GameConfig
    observations: np.ndarray  #: (S, D) int8: what the mover saw (the one-hand observation)
    masks: np.ndarray  #: (S, A) bool: the legal moves
    actions: np.ndarray  #: (S,) int64: the move played
    values: np.ndarray  #: (S, n) float32: what the hand paid each seat, in the mover's frame
    hands: np.ndarray  #: (S,) int64: the hand each row belongs to (rows of one hand are held out together)
    about: dict[str, Any]  #: the dataset's ``dominoes_env`` metadata block (its player, seeds, command)

    @property
    def rows(self) -> int:
        return int(self.actions.shape[0])

    def split(self, held_out: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """Row indices of the training hands and of a random `held_out` share of the hands (whole hands:
        the moves of one hand are alike, so a row of a seen hand says little about fitting new ones)."""
        hands = np.unique(self.hands)
        count = int(round(held_out * hands.size))
        held = np.random.default_rng(seed).choice(hands, size=count, replace=False) if count else hands[:0]
        is_held = np.isin(self.hands, held)
        return np.flatnonzero(~is_held), np.flatnonzero(is_held)


def load_demonstrations(dataset_id: str, reward: str = "zero_sum", episodes: int | None = None) -> Demonstrations:
    """The rows of the Minari dataset `dataset_id` (its first `episodes` episodes; None: all).

    Raises:
        ValueError: Minari is missing, no dataset has this id, or it is not one ``dominoes dataset``
            wrote, or it is damaged, or its rows would take more than :data:`MAX_BYTES` (one line).
    """
    require_minari("dominoes train bc reads Minari datasets")
    reward = validation.choice("--reward", reward, REWARD_MODES)
    dataset = _open(check_dataset_id(dataset_id, "--dataset"))
    name = f"the dataset {dataset_id}"
    about, config = _ours(dataset, name)
    total = int(dataset.total_episodes)
    count = total if episodes is None else min(total, validation.integer("--episodes", episodes, 1, 10**9))
    size = Observer(config, 1).size
    row_bytes = size + config.num_actions + 4 * config.num_players + 16
    if int(dataset.total_steps) * count / max(total, 1) * row_bytes > MAX_BYTES:
        fit = int(MAX_BYTES / row_bytes / max(int(dataset.total_steps) / max(total, 1), 1))
        raise ValueError(f"{name} holds {int(dataset.total_steps):,} moves, more than fit in "
                         f"{MAX_BYTES / 2**30:.0f} GiB of rows; take part of it with --episodes (about {fit:,})")
    try:
        parts = [_episode_rows(episode, meta, config, size, reward, name)
                 for episode, meta in zip(dataset.iterate_episodes(range(count)),
                                          dataset.storage.get_episode_metadata(range(count)))]
    except (OSError, KeyError, TypeError, IndexError, AttributeError) as error:
        raise ValueError(f"{name} is damaged: {type(error).__name__}: {str(error)[:200]}") from None
    if not parts:
        raise ValueError(f"{name} holds no episode")
    observations, masks, actions, values, hands = (np.concatenate(column) for column in zip(*parts))
    return Demonstrations(config, observations, masks, actions, values, hands, about)


def _open(dataset_id: str) -> Any:
    import minari

    try:
        return minari.load_dataset(dataset_id, download=False)
    except FileNotFoundError:
        raise ValueError(f"--dataset {dataset_id}: no such dataset in {datasets_root()} (MINARI_DATASETS_PATH); "
                         f"dominoes dataset writes one") from None
    except Exception as error:  # Minari's own checks and h5py's read errors have no common base
        raise ValueError(f"the dataset {dataset_id} cannot be read: {type(error).__name__}: "
                         f"{str(error)[:200]}") from None


def _ours(dataset: Any, name: str) -> tuple[dict[str, Any], GameConfig]:
    """The ``dominoes_env`` block and the table, checked against the spaces Minari declares."""
    about = dataset.storage.metadata.get("dominoes_env")
    if not isinstance(about, dict) or about.get("format") != FORMAT or not isinstance(about.get("table"), dict):
        raise ValueError(f"{name} was not written by dominoes dataset (no dominoes_env block of format {FORMAT})")
    try:
        config = make_config(**about["table"])
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} names no table this package plays ({error})") from None
    size = Observer(config, 1).size
    observation_shape = getattr(dataset.observation_space, "shape", None)
    if observation_shape != (size,) or getattr(dataset.action_space, "n", None) != config.num_actions:
        raise ValueError(f"{name}'s spaces are not those of {describe_table(config)} (observations of {size}, "
                         f"{config.num_actions} actions): it is damaged")
    return about, config


def _episode_rows(episode: Any, meta: dict[str, Any], config: GameConfig, size: int, reward: str, name: str
                  ) -> tuple[np.ndarray, ...]:
    """One episode's rows, every array checked against the others and the table (`size`: its observations')."""
    actions = np.asarray(episode.actions)
    steps = actions.shape[0]
    observations = np.asarray(episode.observations)
    masks = np.asarray(episode.infos.get("action_mask") if isinstance(episode.infos, dict) else None)
    scores = np.asarray(meta.get("hand_scores"))
    seat, hand = (int(value) if isinstance(value := meta.get(key), (int, np.integer)) else -1
                  for key in ("seat", "hand"))
    shapes_fit = (actions.ndim == 1 and steps > 0 and observations.shape == (steps + 1, size)
                  and masks.shape == (steps + 1, config.num_actions) and scores.shape == (config.num_players,)
                  and 0 <= seat < config.num_players and hand >= 0)
    if not shapes_fit:
        raise ValueError(f"{name}: episode {episode.id} has arrays of mismatched shapes: it is damaged")
    if actions.min() < 0 or actions.max() >= config.num_actions or not masks[np.arange(steps), actions].all():
        raise ValueError(f"{name}: episode {episode.id} has a move its own mask forbids: it is damaged")
    paid = np.roll(hand_rewards(scores, reward), -seat).astype(np.float32)
    return (observations[:-1].astype(np.int8, copy=False), masks[:-1].astype(bool), actions.astype(np.int64),
            np.tile(paid, (steps, 1)), np.full(steps, hand, dtype=np.int64))
