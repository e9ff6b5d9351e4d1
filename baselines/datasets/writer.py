"""Writing a dataset: play the plan's hands chunk by chunk, then hand them to Minari whole.

Every chunk of hands is saved as it is played (:mod:`~baselines.datasets.chunks`) in a hidden
folder of Minari's root, beside the plan (``plan.json``). A killed run leaves that folder; the same
command finds it, checks that its plan is this one and its chunks are whole, and plays only the
chunks still missing. Once all are there, the Minari dataset is built beside them and renamed
into place (:mod:`~baselines.datasets.minari_store`), and the folder is removed: Minari never
sees half a dataset.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from baselines.datasets import minari_store
from baselines.datasets.chunks import chunk_name, read_chunk, write_chunk
from baselines.datasets.episodes import SeatEpisode, play_chunk
from baselines.datasets.plan import DatasetPlan
from dominoes_env import files

#: The largest ``plan.json`` read back from an unfinished dataset.
MAX_PLAN_BYTES = 1 << 16


@dataclass(frozen=True)
class Written:
    """What a run wrote."""

    dataset_id: str
    path: Path
    episodes: int
    left_out: int  #: seat-hands without a move, which are no episode
    resumed_hands: int  #: hands a killed run had played already
    seconds: float  #: playing and writing, this run
    size_bytes: int


def write(plan: DatasetPlan, dataset_id: str, *, replace: bool = False, progress: bool = False,
          announce: Callable[[str], None] | None = None) -> Written:
    """Play `plan` and write it as the Minari dataset `dataset_id` (resuming a killed run of the same plan).

    Raises:
        ValueError: one line: Minari missing, a bad id, an id taken (without `replace`) or not
            this command's to replace, an unfinished dataset of another plan, a damaged chunk.
    """
    minari_store.require_minari()
    dataset_id = minari_store.check_dataset_id(dataset_id)
    root = minari_store.datasets_root()
    minari_store.check_replaceable(root, dataset_id, replace)
    partial = root / minari_store.PARTIAL_FOLDER / dataset_id
    kept = _start(partial, plan, dataset_id, fresh=replace)
    tell = announce or (lambda text: None)
    played = sum(len(plan.chunk_range(c)) for c in kept)
    if kept:
        tell(f"resuming: {played:,} of {plan.hands:,} hands were played by an earlier run ({partial})")
    tell(f"{plan.hands - played:,} hands of {plan.describe()} to play, then written to {root / dataset_id}")
    started = time.perf_counter()
    _play(plan, partial, kept, progress, tell)
    built = partial / "dataset"
    shutil.rmtree(built, ignore_errors=True)  # a build that a killed run left unfinished
    episodes, left_out = minari_store.write_dataset(plan, dataset_id, _chunks(plan, partial), built)
    place = minari_store.put_in_place(built, root, dataset_id, partial / "replaced")
    _remove_partial(partial, root / minari_store.PARTIAL_FOLDER)
    size = sum(path.stat().st_size for path in place.rglob("*") if path.is_file())
    return Written(dataset_id, place, episodes, left_out, played, time.perf_counter() - started, size)


def _start(partial: Path, plan: DatasetPlan, dataset_id: str, fresh: bool) -> set[int]:
    """The chunks an earlier run of this plan kept (checked whole), after making the folder ready;
    `fresh` throws an earlier run away.

    Raises:
        ValueError: the folder holds another plan's run, or a damaged one.
    """
    wanted = {"plan": plan.to_json(), "command": plan.command(dataset_id)}
    if fresh:
        shutil.rmtree(partial, ignore_errors=True)
    if files.existing_kind(partial) is None:
        partial.mkdir(parents=True)
        files.write_atomically(partial / "plan.json", json.dumps(wanted, indent=1).encode())
        return set()
    found = _read_plan(partial / "plan.json")
    if found is None or found.get("plan") != wanted["plan"]:
        command = found.get("command") if isinstance(found, dict) else None
        other = f"by another command ({command})" if isinstance(command, str) else "and cannot be read back"
        raise ValueError(f"an unfinished dataset {dataset_id} was started {other} in {partial}: run that command "
                         f"to finish it, or add --replace to start this one")
    kept = {c for c in range(plan.chunks) if (partial / chunk_name(c)).exists()}
    for chunk in sorted(kept):
        try:
            read_chunk(partial / chunk_name(chunk), plan, chunk)
        except ValueError as error:
            raise ValueError(f"an unfinished dataset {dataset_id}: {error}; --replace starts it again") from None
    return kept


def _read_plan(path: Path) -> dict[str, Any] | None:
    try:
        found = json.loads(files.read_regular_file(path, MAX_PLAN_BYTES))
    except (OSError, ValueError):  # missing, not a regular file, too large, not JSON
        return None
    return found if isinstance(found, dict) else None


def _play(plan: DatasetPlan, partial: Path, kept: set[int], progress: bool, tell: Callable[[str], None]) -> None:
    """Play and save each chunk not kept; Ctrl-C (or a signal made one) keeps what is saved."""
    bar = _progress_bar(plan.hands, sum(len(plan.chunk_range(c)) for c in kept)) if progress else None
    try:
        for chunk in range(plan.chunks):
            if chunk in kept:
                continue
            episodes, left_out = play_chunk(plan, chunk)
            write_chunk(partial / chunk_name(chunk), episodes, left_out)
            kept.add(chunk)
            if bar is not None:
                bar.update(len(plan.chunk_range(chunk)))
    except KeyboardInterrupt:
        hands = sum(len(plan.chunk_range(c)) for c in kept)
        tell(f"{hands:,} of {plan.hands:,} hands are kept in {partial}; the same command resumes")
        raise
    finally:
        if bar is not None:
            bar.close()


def _chunks(plan: DatasetPlan, partial: Path) -> Iterator[tuple[list[SeatEpisode], int]]:
    for chunk in range(plan.chunks):
        yield read_chunk(partial / chunk_name(chunk), plan, chunk)


def _remove_partial(partial: Path, folder: Path) -> None:
    """Remove the run's folder, then its parents up to the partial folder itself that it leaves empty."""
    shutil.rmtree(partial, ignore_errors=True)
    for parent in [*partial.parents]:
        if parent == folder.parent:
            break
        try:
            parent.rmdir()
        except OSError:  # not empty: another id's unfinished run
            break


def _progress_bar(total: int, done: int) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm comes with the league/test extras; without it, no bar
        return None
    return tqdm(total=total, initial=done, unit="hand", dynamic_ncols=True, file=sys.stderr, desc="dataset")
