"""Golden hands: 200 recorded deals with every legal set, move and final score.

The hands come from the original implementation, replayed under RULES.md; how they were
produced, and their format, are written down next to them in tests/data/README.md. Each
one is replayed twice: through the engine (HandState) and through the wrapped PettingZoo env.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from conftest import DATA, load_golden_hands, start_env_from_hand

import dominoes_env
from dominoes_env.core import HandState, make_config

GOLDEN = load_golden_hands()
IDS = [f"{i}-{g['num_players']}p-d{g['highest_dominoe']}-h{g['hand_number']}-{g['end']}" for i, g in enumerate(GOLDEN)]


def golden_start(record: dict) -> HandState:
    config = make_config(record["num_players"], record["highest_dominoe"])
    hand = HandState.from_position(config, record["hands"], record["hand_number"],
                                   current_player=record["first_player"])
    assert not hand.is_over
    return hand


def test_golden_set_covers_what_it_promises():
    configs = {(g["num_players"], g["highest_dominoe"]) for g in GOLDEN}
    assert configs == {(3, 6), (4, 9), (6, 12), (2, 9), (8, 12)}
    assert len(GOLDEN) == 200
    for n, highest in configs:
        numbers = {g["hand_number"] for g in GOLDEN if (g["num_players"], g["highest_dominoe"]) == (n, highest)}
        assert numbers == set(range(highest + 1))
    # the table of tests/data/README.md: (players, N) -> (hands, went out, blocked)
    documented = {(3, 6): (40, 35, 5), (4, 9): (40, 33, 7), (6, 12): (40, 35, 5), (2, 9): (40, 10, 30),
                  (8, 12): (40, 35, 5)}
    for (n, highest), (hands, out, blocked) in documented.items():
        ends = [g["end"] for g in GOLDEN if (g["num_players"], g["highest_dominoe"]) == (n, highest)]
        assert (len(ends), ends.count("out"), ends.count("blocked")) == (hands, out, blocked)


def test_golden_file_is_the_recorded_one_unchanged():
    """Its provenance (tests/data/README.md) names the recorded file by its checksum."""
    digest = hashlib.sha256((DATA / "golden_hands.jsonl").read_bytes()).hexdigest()
    assert digest in (DATA / "README.md").read_text()


@pytest.mark.parametrize("record", GOLDEN, ids=IDS)
def test_golden_deal_is_a_rule_two_deal(record):
    """Hand sizes follow rule 2 with hand index k = N - h, the engine gone from the first player."""
    config = make_config(record["num_players"], record["highest_dominoe"])
    n, t = config.num_players, config.num_tiles
    k = config.highest_double - record["hand_number"]
    engine = config.tiles.double(record["hand_number"])
    sizes = [t // n + (((seat - k) % n) < t % n) for seat in range(n)]
    sizes[record["first_player"]] -= 1
    assert [len(h) for h in record["hands"]] == sizes
    assert sorted(x for h in record["hands"] for x in h) == [x for x in range(t) if x != engine]


@pytest.mark.parametrize("record", GOLDEN, ids=IDS)
def test_golden_hand_through_the_engine(record):
    hand = golden_start(record)
    for number, step in enumerate(record["steps"]):
        assert not hand.is_over, f"the hand ended before step {number}"
        assert hand.current_player == step["player"], f"step {number}"
        assert hand.legal_actions().tolist() == step["legal"], f"step {number}"
        assert np.flatnonzero(hand.legal_mask()).tolist() == step["legal"], f"step {number}"
        hand.apply(step["action"])
    assert hand.is_over, "the hand must end exactly after the last recorded step"
    assert hand.scores().tolist() == record["scores"]
    if record["end"] == "out":
        assert hand.went_out == record["steps"][-1]["player"]
        assert record["scores"][hand.went_out] == 0
    else:
        assert record["end"] == "blocked"
        assert hand.went_out is None


@pytest.mark.parametrize("record", GOLDEN, ids=IDS)
def test_golden_hand_through_the_env(record):
    n, highest = record["num_players"], record["highest_dominoe"]
    env = dominoes_env.env(num_players=n, highest_double=highest)
    start_env_from_hand(env, golden_start(record), hand_index=highest - record["hand_number"])
    agents = env.possible_agents
    for number, step in enumerate(record["steps"]):
        mover = agents[step["player"]]
        assert env.agent_selection == mover, f"step {number}"
        assert not any(env.terminations.values()), f"the episode ended before step {number}"
        observation, reward, termination, truncation, _ = env.last()
        assert np.flatnonzero(observation["action_mask"]).tolist() == step["legal"], f"step {number}"
        assert reward == 0 and not termination and not truncation
        env.step(step["action"])
    assert all(env.terminations.values()), "the episode must end exactly after the last recorded step"
    for seat, agent in enumerate(agents):
        assert env.rewards[agent] == -record["scores"][seat]
        assert env.infos[agent]["hand_scores"] == record["scores"]
    while env.agents:  # PettingZoo's finishing loop: each agent collects its reward and leaves
        agent = env.agent_selection
        _, reward, termination, _, _ = env.last()
        assert termination and reward == -record["scores"][agents.index(agent)]
        env.step(None)
