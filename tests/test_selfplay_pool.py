"""The opponent pool: seeded draws under each sampling rule, frozen snapshots, the single-agent
env drawing from it at every reset, and its file."""

from __future__ import annotations

import json

import numpy as np
import pytest

from baselines import OpponentPool
from baselines.policies.policy import Policy
from dominoes_env import SingleAgentEnv, SingleAgentVectorEnv


class Counting(Policy):
    """Plays the first legal move and counts its moves; `weight` stands for a learner's parameters."""

    weight = 0.0
    moves = 0

    def act(self, observation, action_mask):
        self.moves += 1
        return int(np.flatnonzero(action_mask)[0])


def test_draws_are_seeded_and_follow_each_sampling_rule():
    members = ["random", "greedy", "double", "persistent_line"]
    pool = OpponentPool(members, seed=3)
    assert pool.draw_names(50) == OpponentPool(members, seed=3).draw_names(50)
    assert pool.draw_names(50, np.random.default_rng(1)) == pool.draw_names(50, np.random.default_rng(1))
    counts = np.unique(OpponentPool(members, seed=0).draw_names(40_000), return_counts=True)[1]
    assert np.all(np.abs(counts - 10_000) < 400)  # uniform, within 4.6 sigma
    latest = OpponentPool(members, sampling="latest", latest_share=0.7, seed=0)
    assert latest.weights() == pytest.approx([0.1, 0.1, 0.1, 0.7])
    assert abs(latest.draw_names(20_000).count("persistent_line") - 14_000) < 300
    hard = OpponentPool(members, sampling="prioritised", seed=0)
    assert hard.weights() == pytest.approx([0.25] * 4)  # no results yet: every member alike
    for _ in range(8):
        hard.report("random", 1.0)  # the learner beats random ...
        hard.report("persistent_line", 0.0)  # ... and loses to persistent_line
    won = np.array([9 / 10, 0.5, 0.5, 1 / 10])  # smoothed (wins + 1) / (games + 2)
    assert hard.weights() == pytest.approx((1 - won) ** 2 / ((1 - won) ** 2).sum())
    assert hard.record()["persistent_line"] == (0.0, 8)


def test_a_policy_added_is_frozen_and_training_the_learner_does_not_change_it():
    learner = Counting(4, 9)
    learner.weight = 1.0
    pool = OpponentPool(["random"])
    name = pool.add(learner, name="generation 1")
    learner.weight = 2.0  # the learner trains on
    assert pool.member("generation 1").weight == 1.0 and pool.member(name) is not learner
    pool.add(learner, name="generation 2")
    assert [pool.member(n).weight for n in pool.names[1:]] == [1.0, 2.0]


def test_the_single_agent_env_draws_from_the_pool_at_every_reset():
    snapshot = Counting(4, 9)
    pool = OpponentPool(["random"], seed=0)
    pool.add(snapshot, name="snapshot")
    env = SingleAgentEnv(opponents=pool.opponents(num_players=4))
    draws = []
    for seed in range(8):
        env.reset(seed=seed)
        draws.append(list(pool.last_drawn))
        assert len(pool.last_drawn) == 3 and set(pool.last_drawn) <= {"random", "snapshot"}
    env.reset(seed=3)
    assert pool.last_drawn == draws[3]  # a seeded reset repeats its draw
    env.reset(seed=next(seed for seed, drawn in enumerate(draws) if "snapshot" in drawn))
    frozen = pool.member("snapshot")
    for _ in range(200):
        mask = env.action_masks()
        *_, terminated, truncated, _ = env.step(int(np.flatnonzero(mask)[0]))
        if terminated or truncated:
            break
    assert frozen.moves > 0 and snapshot.moves == 0  # the frozen copy played, not the original


def test_the_pool_saves_and_loads_with_the_learners_results(tmp_path):
    pool = OpponentPool(["random", "best_line(max_line_length=6)"], sampling="prioritised", seed=0)
    pool.add("greedy", name="gen1")
    pool.report("gen1", 0.5)
    pool.report("random", 1.0)
    path = pool.save(tmp_path / "pool.json")
    loaded = OpponentPool.load(path, seed=0)
    assert loaded.names == pool.names and loaded.record() == pool.record() and loaded.sampling == "prioritised"
    assert np.allclose(loaded.weights(), pool.weights()) and loaded.draw_names(20) == pool.draw_names(20)
    pool.add(Counting(4, 9), name="in memory")
    with pytest.raises(ValueError, match=r"members \['in memory'\] are objects in memory and cannot be saved"):
        pool.save(tmp_path / "again.json")
    assert not (tmp_path / "again.json").exists()
    damaged = tmp_path / "damaged.json"
    content = json.loads(path.read_text())
    content["members"][0]["wins"] = 7  # more wins than games
    damaged.write_text(json.dumps(content))
    with pytest.raises(ValueError, match="opponent pool .*damaged.json: wins must be"):
        OpponentPool.load(damaged)
    damaged.write_text("[" * 100_000)
    with pytest.raises(ValueError, match="opponent pool .*damaged.json"):
        OpponentPool.load(damaged)


@pytest.mark.parametrize("make, message", [
    (lambda: OpponentPool(sampling="elo"), "sampling='elo' is not supported"),
    (lambda: OpponentPool(latest_share=2), "latest_share must be"),
    (lambda: OpponentPool("random"), "members must be a sequence"),
    (lambda: OpponentPool([42]), "a pool member is a policy spec or an object with act"),
    (lambda: OpponentPool(["random", "random"]), "has a member named 'random' already"),
    (lambda: OpponentPool(["best_line(max_line_length="]), "cannot read policy"),
    (lambda: OpponentPool([]).draw(3), "the pool is empty"),
    (lambda: OpponentPool(["random"]).report("greedy", 1.0), "no member named 'greedy'"),
    (lambda: OpponentPool(["random"]).report("random", 2.0), "learner_won must be"),
    (lambda: OpponentPool(["random"]).opponents(9), "num_players must be"),
])
def test_bad_input_is_one_line(make, message):
    with pytest.raises((ValueError, KeyError), match=message):
        make()


def test_the_vector_env_draws_each_games_opponents_from_the_pool_and_reports_every_result():
    pool = OpponentPool(["random", "persistent_line"], seed=0)
    pool.add(Counting(4, 9), name="snapshot")  # no act_batch: deep-copied into each game
    vec = SingleAgentVectorEnv(16, pool.opponents(num_players=4))
    observations, infos = vec.reset(seed=4)
    drawn = [list(vec.opponents.drawn[game].names) for game in range(16)]
    assert all(len(names) == 3 and set(names) <= set(pool.names) for names in drawn)
    assert len({tuple(names) for names in drawn}) > 4  # each game has its own draw
    assert len(vec.opponents.players) <= 9  # each member built once per seat offset for the whole batch
    rng = np.random.default_rng(0)
    ended, seats = 0, []
    for _ in range(300):
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in vec.action_masks()])
        before = [list(vec.opponents.drawn[game].names) for game in range(16)]
        observations, rewards, terminations, truncations, infos = vec.step(actions)
        for game in np.flatnonzero(terminations).tolist():
            ended += 1
            seats.append((before[game], int(infos["final_info"]["seat"][game]),
                           infos["final_info"]["game_scores"][game].copy()))
    assert ended > 50
    expected = OpponentPool(list(pool.names))
    for names, seat, scores in seats:
        expected.report_game(names, seat, scores)
    assert pool.record() == expected.record()  # every game reported once, against the members it seated
    assert sum(games for _, games in pool.record().values()) == 3 * ended
    snapshot_games = [game for game in range(16) if "snapshot" in vec.opponents.drawn[game].names]
    snapshot = pool.member("snapshot")
    copies = [copy for players, (member, _) in zip(vec.opponents.players, vec.opponents.built_from)
              if member is snapshot for copy in players.copies]
    assert sum(copy.moves for copy in copies) > 0
    assert pool.member("snapshot").moves == 0 and snapshot_games  # the copies played, not the member
    vec.reset(seed=4)
    assert [list(vec.opponents.drawn[game].names) for game in range(16)] == drawn  # a seeded reset repeats


def test_the_single_agent_env_reports_each_episode_and_an_illegal_action_as_a_loss():
    pool = OpponentPool(["random", "greedy"], seed=0)
    env = SingleAgentEnv(opponents=pool.opponents(num_players=4))
    env.reset(seed=0)
    names = list(pool.last_drawn)
    env.step(int(np.flatnonzero(env.action_masks() == 0)[0]))  # illegal: penalized, and lost to everyone
    assert sum(wins for wins, _ in pool.record().values()) == 0
    assert sum(games for _, games in pool.record().values()) == 3
    assert {name: games for name, (_, games) in pool.record().items() if games} == \
        {name: names.count(name) for name in set(names)}
    terminated = False
    env.reset(seed=1)
    while not terminated:
        *_, terminated, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert sum(games for _, games in pool.record().values()) == 6
    scores = info["game_scores"]
    expected = sum(1.0 if scores[env.seat] < scores[(env.seat + k) % 4] else
                   0.5 if scores[env.seat] == scores[(env.seat + k) % 4] else 0.0 for k in (1, 2, 3))
    assert sum(wins for wins, _ in pool.record().values()) == expected


def test_a_callable_returning_new_objects_every_game_does_not_fill_the_memory():
    from dominoes_env import opponent_seats as seating

    vec = SingleAgentVectorEnv(4, lambda rng: [Counting(4, 9) for _ in range(3)])
    vec.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(2000):
        vec.step(np.array([rng.choice(np.flatnonzero(mask)) for mask in vec.action_masks()]))
    assert len(vec.opponents.players) <= seating.MAX_SEATED
