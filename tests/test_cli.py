"""The ``dominoes`` command's shared behaviour, ``dominoes demo``, and the shared game loop."""

from __future__ import annotations

import re

import numpy as np
import pytest

import dominoes_env
from baselines import make_policy
from baselines.cli import main as dominoes
from baselines.harness.play import play_game


def test_demo_plays_a_seeded_hand_and_prints_the_scores(capsys):
    assert dominoes(["demo", "--seed", "3"]) == 0
    first = capsys.readouterr().out
    assert first.count("Hand 1 over (") == 1 and "Game scores (pips left" in first
    assert re.search(r"player_\d plays \(\d\|\d\) on (the dummy line|player_\d's line)", first)
    assert dominoes(["demo", "--seed", "3"]) == 0
    assert capsys.readouterr().out == first  # the same seed plays the same game


def test_demo_plays_several_hands_of_a_game(capsys):
    assert dominoes(["demo", "--players", "3", "--highest", "6", "--hands", "3", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    for hand in (1, 2, 3):
        assert f"Hand {hand} over (" in out
    engines = re.findall(r"engine \((\d)\|\d\)", out)
    assert engines[0] == "6" and "5" in engines and "4" in engines  # engines N, N-1, N-2
    totals = [int(p) for p in re.findall(r"player_\d (\d+)", re.search(r"Game scores.*", out).group(0))]
    hands = [[int(p) for p in re.findall(r"player_\d: (\d+)", line)]
             for line in re.findall(r"Hand \d+ over \(.*?\)\. Pips left: .*", out)]
    assert totals == np.sum(hands, axis=0).tolist()  # the game score adds the hands' scores


@pytest.mark.parametrize("arguments, message", [
    (["--players", "9"], "--players must be an integer from 2 to 8, got 9"),
    (["--highest", "19"], "--highest must be an integer from 6 to 18, got 19"),
    (["--seed", "-1"], "--seed must be an integer from 0"),
    (["--hands", "0"], "--hands must be an integer from 1 to 1000, got 0"),
    (["--players", "8", "--highest", "6", "--hands", "10000"], "--hands must be an integer from 1 to 1000"),
])
def test_demo_refuses_bad_input_in_one_line(capsys, arguments, message):
    assert dominoes(["demo", *arguments]) == 2
    err = capsys.readouterr().err
    assert err == f"dominoes demo: error: {message}\n" or (message in err and err.count("\n") == 1)


@pytest.mark.parametrize("make", [dominoes_env.raw_env, dominoes_env.env])
def test_play_game_uses_the_aec_api_and_reports_every_hand(make):
    def players():
        return [make_policy(name, 4, 9, seed=k) for k, name in enumerate(["greedy", "random", "double", "stupid"])]

    result = play_game(make(4, 9, 4), players(), seed=7)
    assert result.hand_scores.shape == (4, 4) and len(result.went_out) == 4
    for scores, seat in zip(result.hand_scores, result.went_out):
        assert seat is None or scores[seat] == 0
    again = play_game(dominoes_env.raw_env(4, 9, 4), players(), seed=7)
    assert np.array_equal(again.hand_scores, result.hand_scores) and again.went_out == result.went_out


@pytest.mark.parametrize("arguments, table", [
    ([], {}),
    (["--players", "6", "--highest", "12", "--boneyard", "--cover-doubles"],
     {"num_players": 6, "highest_double": 12, "boneyard": True, "cover_doubles": True}),
    (["--players", "3", "--highest", "6", "--first-player", "left_of_engine"],
     {"num_players": 3, "highest_double": 6, "first_player": "left_of_engine"}),
])
def test_table_shows_the_numbers_the_env_has(arguments, table, capsys):
    """dominoes table computes from the rules; each number is checked against a real env and deal."""
    assert dominoes(["table", *arguments]) == 0
    out = capsys.readouterr().out
    config = dominoes_env.make_config(**table)
    full = config.default_num_hands
    for num_hands in (1, full):
        env = dominoes_env.raw_env(**table, num_hands=num_hands)
        env.reset(seed=0)
        observed = env.observe(env.agent_selection)
        size = observed["observation"].shape[0]
        wanted = f"observation: {size} values in a one-hand game" if num_hands == 1 else f", {size} in a full game"
        assert wanted in out
    assert f"actions: {observed['action_mask'].shape[0]} (" in out
    held, face_down = env.game.hand.starting_deal()
    sizes = [len(tiles) for tiles in held]
    assert sum(sizes) + len(face_down) == config.num_tiles
    if config.boneyard:  # a seat that drew for the engine holds more than it was dealt
        assert f"deal: {min(sizes)} tiles to each seat; {config.num_tiles - len(sizes) * min(sizes)} face down" in out
    else:
        assert f"deal: every tile, {min(sizes)} to each seat" in out
    assert f"a full game: {full} hands" in out
    assert out.splitlines()[0].startswith(dominoes_env.core.config.describe_table(config))


def test_table_refuses_a_bad_table_in_one_line(capsys):
    assert dominoes(["table", "--highest", "5"]) == 2
    err = capsys.readouterr().err
    assert err == "dominoes table: error: --highest must be an integer from 6 to 18, got 5\n"


def test_demo_tells_passes_and_draws_in_words_and_draws_the_final_board(capsys):
    assert dominoes(["demo", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "plays pass" not in out and "plays draw" not in out and " passes (no tile fits: marker up)" in out
    assert "[ 1 tiles]" not in out and "[ 1 tile ]" in out
    board = out.rpartition("\nHand 1/1 - engine")[2]  # the final board, with the hand's result
    assert board.startswith(" (9|9)") and "Hand 1 over (" in board and " holds " in board  # every hand open
    assert dominoes(["demo", "--players", "3", "--highest", "6", "--boneyard", "--seed", "4"]) == 0
    with_boneyard = capsys.readouterr().out
    assert "plays draw" not in with_boneyard and with_boneyard.count(" draws (no tile fits)") == 3


def test_the_program_exits_with_main_s_status_and_without_the_final_collection(monkeypatch, capsys):
    """``dominoes`` (the script and ``python -m baselines.cli``) runs main, freezes the heap so the
    interpreter's last collection skips it, and exits with main's status; main alone, as the tests
    call it, leaves the collector alone."""
    import gc

    from baselines.cli import main_and_exit

    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    for argv, status in ((["dominoes", "--version"], 0), (["dominoes", "table", "--players", "9"], 2)):
        monkeypatch.setattr("sys.argv", argv)
        with pytest.raises(SystemExit) as exited:
            main_and_exit()
        assert exited.value.code == status
    assert frozen == [True, True]
    assert dominoes(["--version"]) == 0 and frozen == [True, True]
    capsys.readouterr()


def test_the_version_is_the_installed_one(capsys):
    import importlib.metadata

    assert dominoes(["--version"]) == 0
    assert capsys.readouterr().out == f"dominoes-env {importlib.metadata.version('dominoes-env')}\n"
    assert dominoes_env.__version__ == importlib.metadata.version("dominoes-env")


@pytest.mark.parametrize("arguments", [
    ["table", "--players", "\u0663"],  # an Arabic-Indic three: int() reads it as 3
    ["demo", "--seed", "\u0661\u0662"],
    ["demo", "--hands", "\uff12"],  # a fullwidth two
    ["league", "--games", "\u0967\u0966"],  # Devanagari ten
    ["evaluate", "random", "--hands", "\u0665"],
    ["serve", "--max-decision-ms", "\u0665\u0660\u0660"],
])
def test_numbers_on_the_command_line_are_written_in_ascii_digits(arguments, capsys):
    with pytest.raises(SystemExit) as exited:
        dominoes(arguments)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1
    assert re.search(r"is not (an integer|a number) written in ASCII", err), err


def test_ascii_numbers_are_read_as_before():
    from dominoes_env.core import validation

    assert [validation.read_integer(text) for text in ("3", " 12 ", "-4", "+5", "1_000", "3.0", "")] == \
        [3, 12, -4, 5, None, None, None]
    assert [validation.read_number(text) for text in ("2", "0.5", ".5", "1e-3", "inf", "nan", "\u0661.5")] == \
        [2, 0.5, 0.5, 0.001, None, None, None]
