"""The learners' one loop (baselines.learning.tables.play_learning_hands): a new learner plugs into it."""

from __future__ import annotations

import numpy as np

from baselines.learning.tables import Tables, choose_by_value, play_learning_hands
from baselines.policies.policy import explore_per_run
from dominoes_env import make_config


class FirstLegal:
    """The smallest learner: the first legal move; it records what the loop showed it."""

    def __init__(self, draw_action: int | None) -> None:
        self.draw_action = draw_action
        self.rounds, self.moves, self.finished, self.draw_only = 0, 0, False, 0

    def round_start(self, hands_done: int) -> None:
        self.rounds += 1

    def choose(self, tables, slots, observations, masks, seats):
        assert observations.shape[0] == masks.shape[0] == tables.shape[0] == seats.shape[0]
        if self.draw_action is not None:
            self.draw_only += int((masks[:, self.draw_action] == 1).sum())
        self.moves += tables.shape[0]
        return masks.argmax(axis=1)

    def done(self) -> None:
        self.finished = True


def test_a_new_learner_plugs_into_the_loop_and_plays_every_hand():
    for rules, forced_draws in [({}, True), ({"boneyard": True}, True), ({"boneyard": True}, False)]:
        game = make_config(3, 6, **rules)
        tables = Tables(game, 4, "random", 10, np.random.default_rng(0))
        learner = FirstLegal(game.draw_action)
        records = play_learning_hands(tables, learner, forced_draws=forced_draws)
        assert len(records) == 10 and learner.finished and learner.moves > 0 and learner.rounds > 1
        if forced_draws:
            assert learner.draw_only == 0  # the loop played the learner's draws itself
        elif rules:
            assert learner.draw_only > 0  # the learner was given its draws


def test_choosing_by_value_takes_the_first_lowest_and_explores_like_acting():
    masks = np.array([[1, 1, 0, 1], [0, 1, 0, 0], [1, 0, 1, 1]], dtype=np.int8)
    values = {(0, 0): 2.0, (0, 1): 1.0, (0, 3): 1.0, (1, 1): 5.0, (2, 0): 0.5, (2, 2): 3.0, (2, 3): 0.5}
    choice = choose_by_value(masks, lambda rows, actions: np.array([values[r, a] for r, a in zip(rows, actions)]),
                             np.random.default_rng(0), 0.0)
    assert choice.chosen_actions.tolist() == [1, 1, 0]  # ties go to the lowest action
    explored = choose_by_value(masks, lambda rows, actions: np.zeros(rows.shape[0]), np.random.default_rng(7), 1.0)
    counts = masks.sum(axis=1)
    explore, picked = explore_per_run(counts, np.random.default_rng(7), 1.0)
    assert explore.all() and explored.chosen.tolist() == picked.tolist()  # the same draws as acting's
