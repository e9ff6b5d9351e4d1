"""``dominoes dataset``: a player's games as a Minari dataset, read back by Minari and replayed in the envs."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

minari = pytest.importorskip("minari")  # the minari extra; .ci/run installs it and runs this file again

from conftest import ROOT, run_library_snippets  # noqa: E402

import dominoes_env  # noqa: E402
from baselines.cli import main as dominoes  # noqa: E402
from baselines.datasets import make_plan, write, writer  # noqa: E402
from baselines.datasets.chunks import ChunkDamaged, chunk_name, read_chunk, write_chunk  # noqa: E402
from baselines.datasets.episodes import play_chunk  # noqa: E402
from baselines.datasets.minari_store import PARTIAL_FOLDER  # noqa: E402
from dominoes_env.core.config import make_config  # noqa: E402

TABLE = ["--players", "3", "--highest", "6"]
SMALL = ["greedy", *TABLE, "--hands", "5", "--seed", "3"]


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    """Minari's datasets folder for this test alone."""
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    return tmp_path / "minari"


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root` with its size and modification time: "nothing changed" made checkable."""
    return {path.relative_to(root).as_posix(): (path.stat().st_size, path.stat().st_mtime_ns)
            for path in root.rglob("*") if path.is_file()}


def _one_line_error(capsys, status: int, message: str) -> None:
    err = capsys.readouterr().err
    assert status == 2 and message in err and err.endswith("\n"), err
    assert [line for line in err.splitlines() if "error" in line] == [err.splitlines()[-1]], err
    assert "Traceback" not in err


def _episodes(dataset) -> list[tuple[object, dict]]:
    return list(zip(dataset.iterate_episodes(), dataset.storage.get_episode_metadata(range(dataset.total_episodes))))


def test_a_dataset_round_trips_through_minari_with_its_table_player_seeds_and_version(root, capsys):
    assert dominoes(["dataset", *SMALL, "--dataset-id", "dominoes/greedy-v0"]) == 0
    assert "wrote dominoes/greedy-v0: 15 episodes" in capsys.readouterr().out
    dataset = minari.load_dataset("dominoes/greedy-v0")
    config = make_config(3, 6)
    ours = dataset.storage.metadata["dominoes_env"]
    assert ours["table"] == config.options() and ours["player"] == "greedy" and ours["opponents"] is None
    assert (ours["hands"], ours["seed"], ours["episodes_left_out"]) == (5, 3, 0)
    assert ours["env"]["dominoes_env"] == dominoes_env.__version__ and ours["env"]["aec_env"] == "dominoes_v1"
    assert ours["command"] == f"dominoes dataset {' '.join(SMALL)} --dataset-id dominoes/greedy-v0"
    assert dataset.spec.env_spec.kwargs["opponents"] == ["greedy", "greedy"]
    assert dataset.total_episodes == 15 and dataset.storage.metadata["algorithm_name"] == "greedy"
    environment = dataset.recover_environment()  # the single-agent view, its spaces those of the episodes
    assert environment.observation_space == dataset.observation_space
    assert environment.action_space == dataset.action_space
    seats = []
    for episode, about in _episodes(dataset):
        steps = len(episode.actions)
        masks = episode.infos["action_mask"]
        assert episode.observations.shape == (steps + 1, dataset.observation_space.shape[0]) and steps >= 1
        assert all(masks[t, action] == 1 for t, action in enumerate(episode.actions))  # legal under its mask
        assert not masks[-1].any() and masks[:-1].any(axis=1).all()
        assert episode.terminations.tolist() == [False] * (steps - 1) + [True] and not episode.truncations.any()
        assert not episode.rewards[:-1].any() and episode.rewards[-1] == -about["hand_scores"][about["seat"]]
        assert set(episode.infos["seat"].tolist()) == {about["seat"]}
        seats.append((int(about["hand"]), int(about["seat"])))
    assert seats == [(hand, seat) for hand in range(5) for seat in range(3)]


class Scripted:
    """A seat that plays the moves it is given, in order (the other seats of a recorded hand)."""

    def __init__(self, actions) -> None:
        self.actions = [int(action) for action in actions]
        self.played = 0

    def reset(self) -> None:
        self.played = 0

    def act(self, observation, action_mask) -> int:
        self.played += 1
        return self.actions[self.played - 1]


def test_episodes_replay_move_for_move_in_the_aec_env_and_in_the_single_agent_view(root):
    assert dominoes(["dataset", *SMALL, "--dataset-id", "replay-v0"]) == 0
    by_hand: dict[int, dict[int, tuple]] = {}
    for episode, about in _episodes(minari.load_dataset("replay-v0")):
        by_hand.setdefault(int(about["hand"]), {})[int(about["seat"])] = (episode, about)
    for seats in by_hand.values():
        about = seats[0][1]
        env = dominoes_env.raw_env(3, 6)
        env.reset(seed=int(about["deal_seed"]))  # the deal's seed deals the hand again
        start = env.unwrapped.game.hand.copy()
        turns = dict.fromkeys(seats, 0)
        moves = []
        for agent in env.agent_iter():
            seat = env.possible_agents.index(agent)
            episode = seats[seat][0]
            observation, reward, termination, _, _ = env.last()
            turn = turns[seat]
            assert np.array_equal(observation["observation"], episode.observations[turn])
            assert np.array_equal(observation["action_mask"], episode.infos["action_mask"][turn])
            assert turn == 0 or reward == episode.rewards[turn - 1]  # the same reward at the same step
            if termination:
                assert turn == len(episode.actions)
                env.step(None)
                continue
            moves.append(int(episode.actions[turn]))
            env.step(moves[-1])
            turns[seat] += 1
        assert moves == about["moves"].tolist()
        for seat, (episode, _) in seats.items():  # each seat's episode is its single-agent view, step by step
            others = [Scripted(seats[(seat + k) % 3][0].actions) for k in (1, 2)]
            view = dominoes_env.SingleAgentEnv(opponents=others, num_players=3, highest_double=6)
            observation, info = view.reset(options={"position": start, "seat": seat})
            assert np.array_equal(observation, episode.observations[0])
            for step, action in enumerate(episode.actions):
                observation, reward, terminated, _, info = view.step(int(action))
                assert np.array_equal(observation, episode.observations[step + 1])
                assert np.array_equal(info["action_mask"], episode.infos["action_mask"][step + 1])
                assert (reward, terminated) == (episode.rewards[step], bool(episode.terminations[step]))


def test_against_named_opponents_the_player_takes_each_seat_in_turn_and_only_its_episodes_are_kept(root, capsys):
    arguments = ["dataset", "greedy", *TABLE, "--hands", "4", "--opponents", "random", "--dataset-id", "vs-v0"]
    assert dominoes(arguments) == 0
    dataset = minari.load_dataset("vs-v0")
    assert [(int(m["hand"]), int(m["seat"])) for _, m in _episodes(dataset)] == [(0, 0), (1, 1), (2, 2), (3, 0)]
    assert dataset.storage.metadata["dominoes_env"]["opponents"] == ["random", "random"]
    assert dataset.spec.env_spec.kwargs["opponents"] == ["random", "random"]


def test_a_killed_run_keeps_its_chunks_and_the_same_command_resumes_to_the_same_dataset(root, monkeypatch):
    plan = make_plan(make_config(3, 6), "random", None, hands=7, seed=5, chunk_hands=2)
    write(plan, "whole-v0")
    played = writer.play_chunk

    def killed_at_the_third_chunk(plan, chunk):
        if chunk == 2:
            raise KeyboardInterrupt
        return played(plan, chunk)

    monkeypatch.setattr(writer, "play_chunk", killed_at_the_third_chunk)
    told: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        write(plan, "resumed-v0", announce=told.append)
    assert "4 of 7 hands are kept" in told[-1] and "the same command resumes" in told[-1]
    partial = root / PARTIAL_FOLDER / "resumed-v0"
    assert sorted(path.name for path in partial.glob("chunk_*")) == [chunk_name(0), chunk_name(1)]
    assert "resumed-v0" not in minari.list_local_datasets()  # Minari never sees half a dataset
    monkeypatch.setattr(writer, "play_chunk", played)
    resumed = write(plan, "resumed-v0")
    assert resumed.resumed_hands == 4 and not (root / PARTIAL_FOLDER).exists()
    whole, again = (list(_episodes(minari.load_dataset(name))) for name in ("whole-v0", "resumed-v0"))
    assert len(whole) == len(again) == 21
    for (first, about_first), (second, about_second) in zip(whole, again):
        for field in ("observations", "actions", "rewards", "terminations"):
            assert np.array_equal(getattr(first, field), getattr(second, field))
        assert np.array_equal(first.infos["action_mask"], second.infos["action_mask"])
        assert about_first["deal_seed"] == about_second["deal_seed"]


def test_an_existing_id_is_refused_without_replace_and_nothing_changes(root, capsys):
    assert dominoes(["dataset", *SMALL, "--dataset-id", "taken-v0"]) == 0
    before = _tree(root)
    _one_line_error(capsys, dominoes(["dataset", *SMALL, "--seed", "4", "--dataset-id", "taken-v0"]),
                    "the dataset taken-v0 exists")
    assert _tree(root) == before
    assert dominoes(["dataset", *SMALL[:-1], "4", "--dataset-id", "taken-v0", "--replace"]) == 0
    assert minari.load_dataset("taken-v0").storage.metadata["dominoes_env"]["seed"] == 4
    assert sorted(path.name for path in root.iterdir()) == ["taken-v0"]  # nothing left beside it


def test_replace_refuses_a_foreign_or_damaged_dataset_in_one_line_and_changes_nothing(root, capsys):
    from gymnasium import spaces
    from minari.data_collector import EpisodeBuffer

    buffer = EpisodeBuffer(observations=np.zeros((3, 2), dtype=np.float32), actions=np.zeros(2, dtype=np.int64),
                           rewards=np.zeros(2), terminations=np.array([False, True]), truncations=np.zeros(2, bool))
    with pytest.warns(UserWarning):  # Minari asks for an author, a description, ...
        minari.create_dataset_from_buffers("someone/else-v0", [buffer], observation_space=spaces.Box(0, 1, (2,)),
                                           action_space=spaces.Discrete(2))
    before = _tree(root)
    _one_line_error(capsys, dominoes(["dataset", *SMALL, "--dataset-id", "someone/else-v0", "--replace"]),
                    "was not written by dominoes dataset")
    assert _tree(root) == before
    assert dominoes(["dataset", *SMALL, "--dataset-id", "damaged-v0"]) == 0
    (root / "damaged-v0" / "data" / "metadata.json").write_text("{not json")
    before = _tree(root)
    _one_line_error(capsys, dominoes(["dataset", *SMALL, "--dataset-id", "damaged-v0", "--replace"]), "is damaged")
    assert _tree(root) == before


def test_an_unfinished_run_of_other_arguments_or_with_a_damaged_chunk_is_refused_in_one_line(root, monkeypatch,
                                                                                             capsys):
    plan = make_plan(make_config(3, 6), "greedy", None, hands=5, seed=3, chunk_hands=2)
    played = writer.play_chunk

    def killed_at_the_second_chunk(plan, chunk):
        if chunk == 1:
            raise KeyboardInterrupt
        return played(plan, chunk)

    monkeypatch.setattr(writer, "play_chunk", killed_at_the_second_chunk)
    with pytest.raises(KeyboardInterrupt):
        write(plan, "unfinished-v0")
    monkeypatch.setattr(writer, "play_chunk", played)
    partial = root / PARTIAL_FOLDER / "unfinished-v0"
    before = _tree(root)
    _one_line_error(capsys, dominoes(["dataset", *SMALL, "--dataset-id", "unfinished-v0"]),
                    "an unfinished dataset unfinished-v0 was started by another command (dominoes dataset greedy")
    assert _tree(root) == before
    chunk = partial / chunk_name(0)
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0xFF
    chunk.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"chunk_000000.npz (cannot be read|is damaged).*--replace starts it again"):
        write(plan, "unfinished-v0")
    assert dominoes(["dataset", *SMALL, "--dataset-id", "unfinished-v0", "--replace"]) == 0
    assert minari.load_dataset("unfinished-v0").total_episodes == 15


def _illegal_first_move(arrays: dict) -> None:
    arrays["actions"][0] = int(np.flatnonzero(arrays["action_masks"][0] == 0)[0])


@pytest.mark.parametrize("damage, message", [
    (_illegal_first_move, "an action is not legal under the mask recorded with it"),
    (lambda arrays: arrays.pop("moves"), "not the arrays"),
    (lambda arrays: arrays.__setitem__("hands", arrays["hands"] + 2), "the seat-hands are not this chunk's"),
    (lambda arrays: arrays.__setitem__("observations", arrays["observations"] * 2), "other than 0 and 1"),
    (lambda arrays: arrays.__setitem__("steps", arrays["steps"][:1]), "has the shape"),
    (lambda arrays: arrays.__setitem__("rewards", arrays["rewards"].astype(np.int64)), "not numbers of the right kind"),
])
def test_a_chunk_read_back_is_checked_against_its_plan(tmp_path, damage, message):
    plan = make_plan(make_config(3, 6), "greedy", None, hands=3, seed=1, chunk_hands=2)
    episodes, left_out = play_chunk(plan, 1)
    write_chunk(tmp_path / "chunk.npz", episodes, left_out)
    again, _ = read_chunk(tmp_path / "chunk.npz", plan, 1)  # whole, it reads back as it was
    assert [(e.hand, e.seat, e.actions.tolist()) for e in again] == [(e.hand, e.seat, e.actions.tolist())
                                                                     for e in episodes]
    with np.load(tmp_path / "chunk.npz") as archive:
        arrays = {name: archive[name].copy() for name in archive.files}
    damage(arrays)
    np.savez(tmp_path / "damaged.npz", **arrays)
    with pytest.raises(ChunkDamaged, match=re.escape(message)):
        read_chunk(tmp_path / "damaged.npz", plan, 1)
    with pytest.raises(ChunkDamaged, match="is damaged: the seat-hands are not this chunk's"):
        read_chunk(tmp_path / "chunk.npz", plan, 0)  # another chunk's episodes


@pytest.mark.parametrize("place, message", [("file", "is a regular file, not a directory"),
                                            ("/dev/null", "is a character device, not a directory")])
def test_a_datasets_folder_that_is_no_folder_is_refused_in_one_line(tmp_path, monkeypatch, capsys, place, message):
    if place == "file":
        place = str(tmp_path / "file")
        Path(place).write_text("")
    monkeypatch.setenv("MINARI_DATASETS_PATH", place)
    _one_line_error(capsys, dominoes(["dataset", *SMALL, "--dataset-id", "ok-v0"]),
                    f"MINARI_DATASETS_PATH {place}: {message}")


@pytest.mark.parametrize("arguments, message", [
    ([*SMALL, "--hands", "0"], "--hands must be an integer from 1 to 1000000, got 0"),
    (["greedy", "--players", "9"], "--players must be an integer from 2 to 8, got 9"),
    ([*SMALL, "--seed", "-1"], "--seed must be an integer from 0"),
    (["greedy:2", *TABLE], "one player, without :COPIES"),
    (["oracle", *TABLE], "sees every hand"),
    (["no_such_player", *TABLE], "no_such_player"),
    (["greedy", *TABLE, "--opponents", "random", "random", "random"], "3 players need 2 opponents, got 3"),
    (["greedy(depth=3)", *TABLE], "no parameter(s) ['depth']"),
])
def test_bad_arguments_exit_2_with_one_line_and_write_nothing(root, capsys, arguments, message):
    _one_line_error(capsys, dominoes(["dataset", *arguments, "--dataset-id", "ok-v0"]), message)
    assert not root.exists() or _tree(root) == {}


@pytest.mark.parametrize("dataset_id", ["no spaces-v0", "../up-v0", "a//b-v0", "x" * 201 + "-v0", "/abs-v0"])
def test_an_id_outside_minari_s_grammar_is_refused_in_one_line(root, capsys, dataset_id):
    _one_line_error(capsys, dominoes(["dataset", *SMALL, "--dataset-id", dataset_id]), "--dataset-id")
    assert not root.exists() or _tree(root) == {}


def test_without_minari_the_command_says_what_to_install(root, monkeypatch, capsys):
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "minari" else found(name, *a))
    _one_line_error(capsys, dominoes(["dataset", *SMALL, "--dataset-id", "ok-v0"]),
                    "minari is not installed: pip install 'dominoes-env[minari]'")


def test_the_docs_snippets_load_the_dataset_of_the_docs_command(root):
    page = ROOT / "docs" / "datasets.md"
    command = next(line for line in page.read_text().splitlines() if line.startswith("dominoes dataset "))
    arguments = command.split()[1:]
    arguments[arguments.index("--hands") + 1] = "3"  # the page's dataset, fewer hands
    assert dominoes(arguments) == 0
    namespaces = run_library_snippets(page)
    assert json.loads(json.dumps(namespaces[0]["dataset"].storage.metadata["dominoes_env"]["table"]))
    assert namespaces[1]["observations"].shape[0] == namespaces[1]["actions"].shape[0] > 0
