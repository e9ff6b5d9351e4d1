"""Pictures of the table: render_mode="rgb_array" in every view, every table size and rule, the
hands shown, and a clear error without pillow. (PettingZoo's render_test runs the rgb_array
mode too: tests/test_env_api.py.)"""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

import dominoes_env
from dominoes_env import SingleAgentEnv
from dominoes_env.core import HandState, make_config
from dominoes_env.core.render import render_table

pytest.importorskip("PIL")
from dominoes_env.image import TablePainter, pip_positions  # noqa: E402 - after the skip

TABLES = [(2, 6, {}), (4, 9, {}), (3, 12, {"boneyard": True, "cover_doubles": True}), (8, 18, {"boneyard": True}),
          (2, 18, {}), (5, 15, {"cover_doubles": True, "first_player": "left_of_engine"})]


def frames_of_a_game(env, seed: int, moves: int) -> list[np.ndarray]:
    """The frames of the first `moves` steps of an episode of random play (the first before any move)."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    frames = [env.render()]
    for _ in env.agent_iter(moves):
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        frames.append(env.render())
    return frames


@pytest.mark.parametrize("players, highest, rules", TABLES, ids=lambda case: str(case))
def test_every_frame_of_a_game_is_one_size_and_each_move_changes_it(players, highest, rules):
    env = dominoes_env.env(players, highest, 2, render_mode="rgb_array", **rules)
    frames = frames_of_a_game(env, seed=players * highest, moves=200 if highest < 12 else 60)
    height, width = frames[0].shape[:2]
    assert env.unwrapped.renderer.image(None).shape == (height, width, 3)  # before any reset too
    for before, after in zip(frames, frames[1:]):
        assert after.shape == (height, width, 3) and after.dtype == np.uint8
        assert not np.array_equal(before, after)  # every move shows: a tile, a marker, a hand size, whose turn
    assert 300 < width < 1500 and 200 < height < 2000


def test_the_picture_shows_whose_hands_are_asked_for():
    config = make_config(4, 9)
    rng = np.random.default_rng(0)
    hand = HandState.deal(config, 0, rng)
    mover, everyone = TablePainter(config, show_hands="mover"), TablePainter(config, show_hands="all")
    assert everyone.size[1] > mover.size[1] and everyone.size[0] == mover.size[0]
    own = TablePainter(config, show_hands=(hand.current_player + 1) % 4).draw(hand)
    assert not np.array_equal(own, mover.draw(hand))  # another seat's tiles
    with pytest.raises(ValueError, match="show_hands must be 'mover', 'all' or a seat from 0 to 3, got 4"):
        TablePainter(config, show_hands=4)
    with pytest.raises(ValueError, match="draws 4 players, double-9, not 3 players"):
        mover.draw(HandState.deal(make_config(3, 9), 0, rng))


def test_every_view_renders_pictures():
    single = SingleAgentEnv(render_mode="rgb_array", opponents="greedy", render_hands="all")
    single.reset(seed=1)
    first = single.render()
    single.step(int(np.flatnonzero(single.action_masks())[0]))
    assert first.shape == single.render().shape and first.ndim == 3
    parallel = dominoes_env.parallel_env(3, 6, render_mode="rgb_array")
    parallel.reset(seed=2)
    assert parallel.render().dtype == np.uint8


def test_a_caption_wider_than_the_picture_is_cut_at_its_edge():
    config = make_config(2, 6)
    painter = TablePainter(config, num_hands=1000, captions=True)
    hand = HandState.deal(config, 0, np.random.default_rng(1))
    frame = painter.draw(hand, 999, [123456, 654321], caption="x" * 500)
    assert frame.shape == (painter.size[1], painter.size[0], 3)


def test_render_hands_is_checked_in_every_view():
    for make in (dominoes_env.env, dominoes_env.parallel_env, lambda **kw: SingleAgentEnv(**kw)):
        with pytest.raises(ValueError, match="render_hands must be 'mover', 'all' or a seat"):
            make(render_hands="some")


def test_without_pillow_the_picture_is_a_one_line_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)  # as if pillow were not installed
    monkeypatch.delitem(sys.modules, "dominoes_env.image")
    with pytest.raises(ImportError, match=r"^pictures of the table need pillow: pip install 'dominoes-env\[image\]'$"):
        dominoes_env.env(render_mode="rgb_array")
    env = dominoes_env.env(render_mode="ansi")  # everything else works without it
    env.reset(seed=0)
    assert "To move" in env.render()
    monkeypatch.undo()
    importlib.import_module("dominoes_env.image")


@pytest.mark.parametrize("value", range(19))
def test_every_value_has_its_pips_inside_the_face(value):
    positions = pip_positions(value)
    assert len(positions) == value and len(set(positions)) == value
    assert all(0.1 < x < 0.9 and 0.1 < y < 0.9 for x, y in positions)


def test_the_text_shows_lines_as_chains_and_only_the_hands_asked_for():
    config = make_config(3, 6)
    tile = config.tiles.index
    hand = HandState.from_position(config, [[tile(2, 6)], [tile(6, 4)], [tile(0, 3)]], 6,
                                   lines={1: [tile(6, 5), tile(5, 2)]})
    assert "open  2 : (6|5) (5|2)" in render_table(hand)  # each tile turned as it lies
    own = render_table(hand, show_hands=2)
    assert "player_2 holds (0|3)" in own and "(2|6)" not in own and "(4|6)" not in own
    everyone = render_table(hand, show_hands="all")
    assert all(f"player_{seat} holds" in everyone for seat in range(3))


def test_the_readmes_picture_comes_from_its_example(tmp_path, monkeypatch):
    import runpy
    from pathlib import Path

    from PIL import Image

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "table.png"
    monkeypatch.setattr(sys, "argv", ["table_image.py", "--seed", "8", "--hands", "3", "--moves", "72",
                                      "--out", str(out)])
    runpy.run_path(str(root / "examples" / "table_image.py"), run_name="__main__")
    with Image.open(out) as drawn, Image.open(root / "docs" / "images" / "table.png") as shipped:
        assert drawn.size == shipped.size


def test_a_finished_hand_shows_the_game_score_with_it_and_the_last_hand_the_result():
    from dominoes_env.image import _after_hand, _result

    env = dominoes_env.raw_env(3, 6)  # one hand: when it ends the env keeps its final position
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    before = np.array([3, 1, 7])
    assert _after_hand(env.game.hand, before).tolist() == [3, 1, 7]  # a hand in play: the scores before it
    while env.hand_ended is None:
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    hand = env.game.hand
    assert hand.is_over and _after_hand(hand, before).tolist() == (before + np.array(env.hand_ended.scores)).tolist()
    assert _result(np.array([5, 2, 2])) == "Game over: player_1 and player_2 tie with 2"
    assert _result(np.array([5, 2, 9])) == "Game over: player_1 wins with 2"


def test_the_closed_dummy_line_carries_no_ring():
    """The ring means anyone may play there; the dummy is open only once every line is started."""
    from dominoes_env.core import rules
    from dominoes_env.image import _open_to_all

    env = dominoes_env.raw_env(3, 6)
    env.reset(seed=0)
    hand = env.game.hand
    assert not hand.dummy_open and not _open_to_all(hand, 3)
    opened = hand.copy()
    opened.state[rules.DUMMY_OPEN] = 1
    assert _open_to_all(opened, 3)
    assert _open_to_all(hand, 0) == bool(hand.marker_up[0])
