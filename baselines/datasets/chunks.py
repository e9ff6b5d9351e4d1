"""A chunk of episodes on disk while a dataset is written: one ``.npz`` file per chunk of hands.

Each file is written whole (:func:`dominoes_env.files.write_atomically`), so a killed run keeps
every chunk it finished and nothing else; a resumed run reads them back, checked against its plan,
before they all go into the Minari dataset. The episodes of a chunk are stored end to end (their
lengths in ``steps``), as numpy arrays only: no pickles.
"""

from __future__ import annotations

import io
import os
import zipfile
import zlib

import numpy as np

from baselines.datasets.episodes import SeatEpisode
from baselines.datasets.plan import DatasetPlan
from dominoes_env import files
from dominoes_env.core.observation import Observer

#: The largest chunk file read back (a chunk of 100 hands at 8 players, double-18 compresses to a few MB).
MAX_CHUNK_BYTES = 1 << 30
_PER_STEP = ("actions", "rewards")
_PER_OBSERVATION = ("observations", "action_masks")
_PER_EPISODE = ("steps", "hands", "seats", "deal_seeds", "hand_scores", "went_out", "move_counts")
ARRAYS = (*_PER_OBSERVATION, *_PER_STEP, *_PER_EPISODE, "moves", "left_out")


class ChunkDamaged(ValueError):
    """A chunk file that cannot be read back, or whose episodes are not those of its plan's chunk."""


def chunk_name(chunk: int) -> str:
    return f"chunk_{chunk:06d}.npz"


def write_chunk(path: str | os.PathLike[str], episodes: list[SeatEpisode], left_out: int) -> None:
    """Write a chunk's episodes (and the count of seat-hands left out) as one file, whole."""
    arrays = {
        "observations": _joined([e.observations for e in episodes], np.int8),
        "action_masks": _joined([e.action_masks for e in episodes], np.int8),
        "actions": _joined([e.actions for e in episodes], np.int64),
        "rewards": _joined([e.rewards for e in episodes], np.float64),
        "moves": _joined([e.moves for e in episodes], np.int64),
        "steps": np.array([e.steps for e in episodes], dtype=np.int64),
        "hands": np.array([e.hand for e in episodes], dtype=np.int64),
        "seats": np.array([e.seat for e in episodes], dtype=np.int64),
        "deal_seeds": np.array([e.deal_seed for e in episodes], dtype=np.int64),
        "hand_scores": np.array([e.hand_scores for e in episodes], dtype=np.int64),
        "went_out": np.array([e.went_out for e in episodes], dtype=np.int64),
        "move_counts": np.array([len(e.moves) for e in episodes], dtype=np.int64),
        "left_out": np.array(left_out, dtype=np.int64),
    }
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
    files.write_atomically(path, buffer.getvalue())


def read_chunk(path: str | os.PathLike[str], plan: DatasetPlan, chunk: int) -> tuple[list[SeatEpisode], int]:
    """The episodes of chunk `chunk` of `plan`, and its count of seat-hands left out.

    Raises:
        ChunkDamaged: the file cannot be read, or does not hold that chunk's episodes (the reason).
    """
    try:
        data = files.read_regular_file(path, MAX_CHUNK_BYTES)
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            arrays = {name.removesuffix(".npy"): archive[name] for name in archive.files}
    except (OSError, files.FileRefused) as error:
        raise ChunkDamaged(f"{os.fspath(path)} {files.why_unreadable(error)}") from None
    except (ValueError, EOFError, zipfile.BadZipFile, zlib.error) as error:  # a damaged archive, or not one
        raise ChunkDamaged(f"{os.fspath(path)} cannot be read: {error}") from None
    try:
        return _episodes(arrays, plan, chunk)
    except ChunkDamaged as error:
        raise ChunkDamaged(f"{os.fspath(path)} is damaged: {error}") from None


def _joined(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


def _episodes(arrays: dict[str, np.ndarray], plan: DatasetPlan, chunk: int) -> tuple[list[SeatEpisode], int]:
    """The checked episodes of a chunk's arrays (:func:`_check` first: everything indexed here is in bounds)."""
    _check(arrays, plan, chunk)
    steps = arrays["steps"]
    step_ends = np.cumsum(steps)
    observation_ends = np.cumsum(steps + 1)
    move_ends = np.cumsum(arrays["move_counts"])
    episodes = []
    for e in range(len(steps)):
        steps_at = slice(step_ends[e] - steps[e], step_ends[e])
        seen_at = slice(observation_ends[e] - steps[e] - 1, observation_ends[e])
        episodes.append(SeatEpisode(
            hand=int(arrays["hands"][e]), seat=int(arrays["seats"][e]), deal_seed=int(arrays["deal_seeds"][e]),
            observations=arrays["observations"][seen_at], action_masks=arrays["action_masks"][seen_at],
            actions=arrays["actions"][steps_at], rewards=arrays["rewards"][steps_at],
            hand_scores=arrays["hand_scores"][e], went_out=int(arrays["went_out"][e]),
            moves=arrays["moves"][move_ends[e] - arrays["move_counts"][e]:move_ends[e]]))
    return episodes, int(arrays["left_out"])


def _check(arrays: dict[str, np.ndarray], plan: DatasetPlan, chunk: int) -> None:
    """Shapes, types and bounds, then the meaning: the chunk's seat-hands, legal moves under their masks.

    Raises:
        ChunkDamaged: the first thing wrong, in words.
    """
    if set(arrays) != set(ARRAYS):
        raise ChunkDamaged(f"it holds {sorted(arrays)}, not the arrays {sorted(ARRAYS)}")
    config = plan.config
    size, n = Observer(config, 1).size, config.num_players
    expected_kind = {"observations": "i", "action_masks": "i", "rewards": "f"}
    for name, array in arrays.items():
        if array.dtype.kind != expected_kind.get(name, "i"):
            raise ChunkDamaged(f"{name} holds {array.dtype}, not numbers of the right kind")
    if arrays["steps"].ndim != 1 or arrays["move_counts"].ndim != 1:
        raise ChunkDamaged("steps and move_counts are not lists of counts")
    steps, episodes = arrays["steps"], len(arrays["steps"])
    shapes = {"observations": (int(steps.sum()) + episodes, size),
              "action_masks": (int(steps.sum()) + episodes, config.num_actions),
              "actions": (int(steps.sum()),), "rewards": (int(steps.sum()),), "hand_scores": (episodes, n),
              "moves": (int(arrays["move_counts"].sum()),), "left_out": (),
              **{name: (episodes,) for name in _PER_EPISODE if name != "hand_scores"}}
    for name, shape in shapes.items():
        if arrays[name].shape != shape:
            raise ChunkDamaged(f"{name} has the shape {arrays[name].shape}, not {shape}")
    _check_bounds(arrays, plan, chunk)
    first_seen = np.cumsum(steps + 1) - (steps + 1)  # the row of each episode's first observation
    first_step = np.cumsum(steps) - steps  # and of its first step
    seen_at = np.repeat(first_seen - first_step, steps) + np.arange(int(steps.sum()))  # each step's observation
    if np.any(arrays["action_masks"][seen_at, arrays["actions"]] != 1):
        raise ChunkDamaged("an action is not legal under the mask recorded with it")


def _check_bounds(arrays: dict[str, np.ndarray], plan: DatasetPlan, chunk: int) -> None:
    """Each value within its bounds, and the episodes those of the chunk's seat-hands.

    Raises:
        ChunkDamaged: what is wrong.
    """
    config, hands = plan.config, plan.chunk_range(chunk)
    n, actions, went_out = config.num_players, arrays["actions"], arrays["went_out"]
    faults = [
        ("an observation or a mask holds a value other than 0 and 1",
         not all(np.isin(arrays[name], (0, 1)).all() for name in _PER_OBSERVATION)),
        ("an action is not an action of the table", bool(np.any((actions < 0) | (actions >= config.num_actions)))),
        ("a reward is not a finite number", not np.isfinite(arrays["rewards"]).all()),
        ("an episode has no step, or more steps than its hand has moves",
         bool(np.any(arrays["steps"] < 1) or np.any(arrays["move_counts"] < arrays["steps"]))),
        ("pips left below 0, or who went out is not a seat or -1",
         bool(np.any(arrays["hand_scores"] < 0) or np.any((went_out < -1) | (went_out >= n)))),
        ("the seat-hands are not this chunk's, in order", not _in_order(arrays, plan, hands)),
        ("seat-hands are missing (neither an episode nor counted as left out)",
         len(arrays["steps"]) + int(arrays["left_out"]) != sum(len(plan.recorded_seats(h)) for h in hands)),
    ]
    for what, wrong in faults:
        if wrong:
            raise ChunkDamaged(what)


def _in_order(arrays: dict[str, np.ndarray], plan: DatasetPlan, hands: range) -> bool:
    """The episodes' (hand, seat) are seat-hands of these hands, each once, in the order they are played."""
    order = {(h, s): k for k, (h, s) in enumerate((h, s) for h in hands for s in plan.recorded_seats(h))}
    places = [order.get((int(h), int(s)), -1) for h, s in zip(arrays["hands"], arrays["seats"])]
    return all(place >= 0 for place in places) and all(a < b for a, b in zip(places, places[1:]))
