"""The Minari side of a dataset: where datasets live, which ids may be (re)written, and the writing.

Minari keeps each dataset in ``ROOT/ID/data`` (``ROOT``: ``MINARI_DATASETS_PATH``, else
``~/.minari/datasets``), a ``metadata.json`` beside its storage (HDF5, Minari's default format).
A dataset is built in a hidden folder of the same root (Minari lists no hidden folder) and renamed
into place once whole, so ``minari.load_dataset(ID)`` finds the finished dataset or none.

Minari is imported inside the functions: the package and its command load without the extra.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium.envs.registration import EnvSpec

import dominoes_env
from baselines.datasets.episodes import SeatEpisode
from baselines.datasets.plan import FORMAT, DatasetPlan
from dominoes_env import files
from dominoes_env.core.observation import Observer

#: Where unfinished datasets are built, inside Minari's root (hidden: Minari's listings skip it).
PARTIAL_FOLDER = ".dominoes-partial"
#: The longest dataset id taken (a namespace, a name and a version fit many times over).
MAX_ID_CHARS = 200
#: The largest ``metadata.json`` read back when an existing dataset is to be replaced.
MAX_METADATA_BYTES = 1 << 20
#: What ``pip`` installs for this module.
INSTALL = "pip install 'dominoes-env[minari]'"


def require_minari(needs: str = "dominoes dataset writes Minari datasets") -> None:
    """Refuse, in one line that starts with `needs`, a Python without Minari or its HDF5 storage."""
    missing = [name for name in ("minari", "h5py", "PIL") if importlib.util.find_spec(name) is None]
    if missing:
        raise ValueError(f"{needs}, and {', '.join(missing)} is not installed: {INSTALL}")


def check_dataset_id(text: str, option: str = "--dataset-id") -> str:
    """A dataset id in Minari's grammar, ``[NAMESPACE/]NAME[-vVERSION]`` (letters, digits, ``-``, ``_``).

    Raises:
        ValueError: one line showing the id and the grammar.
    """
    from minari.dataset.minari_dataset import parse_dataset_id

    if not isinstance(text, str) or not 0 < len(text) <= MAX_ID_CHARS or "//" in text:
        raise ValueError(f"{option} {text!r}: an id of 1 to {MAX_ID_CHARS} characters such as "
                         f"dominoes/greedy-4p-d9-v0")
    try:
        parse_dataset_id(text)
    except ValueError:
        raise ValueError(f"{option} {text!r}: Minari's ids are [NAMESPACE/]NAME-vVERSION in letters, digits, "
                         f"- and _, e.g. dominoes/greedy-4p-d9-v0") from None
    return text


def datasets_root() -> Path:
    """Minari's datasets folder (``MINARI_DATASETS_PATH``, else Minari's default), created if needed
    and proven to take new files.

    Raises:
        FileRefused: one line naming the folder and why.
    """
    from minari.storage import get_dataset_path

    configured = os.environ.get("MINARI_DATASETS_PATH")
    if configured:  # checked before Minari creates it, so that a file or a device there is named as such
        return files.check_output_directory("MINARI_DATASETS_PATH", configured)
    try:
        root = get_dataset_path()
    except OSError as error:
        raise files.FileRefused(f"Minari's datasets folder cannot be created: {error.strerror or error}") from None
    return files.check_output_directory("Minari's datasets folder", root)


def check_replaceable(root: Path, dataset_id: str, replace: bool) -> bool:
    """Whether a dataset of this id exists (and may be replaced, with `replace`).

    Raises:
        ValueError: it exists and `replace` is not given; or it is not a dataset this command wrote
            (another's, or damaged), which is never replaced.
    """
    place = root / dataset_id
    if files.existing_kind(place) is None:
        return False
    if not replace:
        raise ValueError(f"the dataset {dataset_id} exists ({place}); --replace writes it again")
    metadata = place / "data" / "metadata.json"
    try:
        written = json.loads(files.read_regular_file(metadata, MAX_METADATA_BYTES))
    except (OSError, files.FileRefused) as error:
        raise ValueError(f"{place} is not a Minari dataset (its data/metadata.json {files.why_unreadable(error)}): "
                         f"--replace replaces only what dominoes dataset wrote; remove it yourself") from None
    except ValueError as error:
        raise ValueError(f"{metadata} is damaged ({error}): --replace replaces only what dominoes dataset wrote; "
                         f"remove it yourself") from None
    ours = written.get("dominoes_env") if isinstance(written, dict) else None
    if not isinstance(ours, dict) or ours.get("format") != FORMAT or written.get("dataset_id") != dataset_id:
        raise ValueError(f"the dataset {dataset_id} ({place}) was not written by dominoes dataset (format {FORMAT}): "
                         f"--replace replaces only what it wrote; remove it yourself (minari delete {dataset_id})")
    return True


def spaces(plan: DatasetPlan) -> tuple[gymnasium.spaces.Box, gymnasium.spaces.Discrete]:
    """The single-agent view's spaces (its "vector" observation): what every episode's steps are."""
    size = Observer(plan.config, 1).size
    return gymnasium.spaces.Box(0, 1, (size,), np.int8), gymnasium.spaces.Discrete(plan.config.num_actions)


def write_dataset(plan: DatasetPlan, dataset_id: str, chunks: Iterable[tuple[list[SeatEpisode], int]],
                  destination: Path) -> tuple[int, int]:
    """Write the chunks' episodes as a Minari dataset in `destination` (its ``data`` folder, which
    must not exist); (episodes, seat-hands left out)."""
    from minari.data_collector import EpisodeBuffer
    from minari.dataset.minari_storage import MinariStorage

    observation_space, action_space = spaces(plan)
    destination.mkdir()
    storage = MinariStorage.new(destination / "data", observation_space=observation_space, action_space=action_space,
                                env_spec=env_spec(plan), data_format="hdf5")
    storage.update_metadata(_metadata(plan, dataset_id))
    episodes = left_out = 0
    for chunk, left in chunks:
        storage.update_episodes([EpisodeBuffer(
            observations=e.observations, actions=e.actions, rewards=e.rewards,
            terminations=np.arange(e.steps) == e.steps - 1, truncations=np.zeros(e.steps, dtype=bool),
            infos={"action_mask": e.action_masks, "seat": np.full(e.steps + 1, e.seat, dtype=np.int64)},
        ) for e in chunk])
        storage.update_episode_metadata([_episode_metadata(e) for e in chunk],
                                        range(episodes, episodes + len(chunk)))
        episodes, left_out = episodes + len(chunk), left_out + left
    ours = {**plan.to_json(), "command": plan.command(dataset_id), "episodes_left_out": left_out}
    storage.update_metadata({"dominoes_env": ours})
    return episodes, left_out


def put_in_place(built: Path, root: Path, dataset_id: str, spare: Path) -> Path:
    """Rename the dataset built in `built` to its id's place (an old one moves to `spare` first and
    is removed after), creating the id's namespace as Minari does."""
    from minari.dataset.minari_dataset import parse_dataset_id
    from minari.namespace import create_namespace, list_local_namespaces

    namespace = parse_dataset_id(dataset_id)[0]
    if namespace is not None and namespace not in list_local_namespaces():
        create_namespace(namespace)
    place = root / dataset_id
    if files.existing_kind(place) is not None:
        shutil.rmtree(spare, ignore_errors=True)
        os.replace(place, spare)
    os.replace(built, place)
    shutil.rmtree(spare, ignore_errors=True)
    return place


def env_spec(plan: DatasetPlan) -> EnvSpec:
    """Gymnasium's spec of the single-agent view with this dataset's table and players: what
    ``dataset.recover_environment()`` makes (the player's opponents seated by name)."""
    return dataclasses.replace(gymnasium.spec(dominoes_env.GYMNASIUM_ID), kwargs=plan.env_kwargs())


def _metadata(plan: DatasetPlan, dataset_id: str) -> dict[str, Any]:
    """Minari's own keys (what its listings show)."""
    import minari

    metadata = {"dataset_id": dataset_id, "minari_version": minari.__version__, "algorithm_name": plan.player.label,
                "description": f"{plan.describe()}: {plan.hands:,} hands, one episode per recorded seat and hand "
                               f"(the single-agent view of dominoes_env, {plan.to_json()['reward']} reward)"}
    if dominoes_env.__version__[0].isdigit() and "+" not in dominoes_env.__version__:
        metadata["requirements"] = [f"dominoes-env=={dominoes_env.__version__}"]
    return metadata


def _episode_metadata(episode: SeatEpisode) -> dict[str, Any]:
    return {"hand": episode.hand, "seat": episode.seat, "deal_seed": episode.deal_seed,
            "hand_scores": episode.hand_scores, "went_out": episode.went_out, "moves": episode.moves}
