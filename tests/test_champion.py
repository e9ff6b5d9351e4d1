"""The champion: its search over the information set, its weights files and its choices.

Training (torch) is in tests/test_champion_training.py.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("safetensors")

from baselines.champion import ChampionPolicy  # noqa: E402
from baselines.champion.network import NetworkGuide, softmax_of_pips  # noqa: E402
from baselines.champion.search import InformationSetSearch, SearchSettings, seat_utilities  # noqa: E402
from baselines.harness.evaluate import evaluate  # noqa: E402
from baselines.harness.play import play_game  # noqa: E402
from baselines.harness.timing import decision_times  # noqa: E402
from baselines.policies.registry import make_policy  # noqa: E402
from baselines.td_lambda.checkpoint import (  # noqa: E402
    Checkpoint,
    load_checkpoint,
    save_checkpoint,
    shipped_checkpoint,
)
from baselines.td_lambda.config import TDLambdaConfig  # noqa: E402
from dominoes_env import make_config  # noqa: E402
from dominoes_env.core import rules  # noqa: E402
from dominoes_env.core.state import HandState  # noqa: E402
from dominoes_env.env import DominoesEnv  # noqa: E402


def _legal(state: np.ndarray, config) -> list[int]:
    buffer = np.empty(config.num_actions, dtype=np.int64)
    return buffer[:rules.fill_legal_actions(state, config.tiles.tiles_with_value, buffer)].tolist()


def _play(state: np.ndarray, config, action: int) -> np.ndarray:
    after = state.copy()
    tiles = config.tiles
    rules.apply_action(after, tiles.low, tiles.high, tiles.tiles_with_value, action)
    return after


def _exact_value(state: np.ndarray, config, seat: int) -> float:
    """Two players, everything known: the final pips of `seat`'s opponent minus its own under best play."""
    if state[rules.HAND_OVER]:
        scores = np.empty(2, dtype=np.int64)
        rules.hand_scores(state, config.tiles.low, config.tiles.high, scores)
        return float(scores[1 - seat] - scores[seat])
    mover = int(state[rules.CURRENT_PLAYER])
    values = [_exact_value(_play(state, config, action), config, seat) for action in _legal(state, config)]
    return max(values) if mover == seat else min(values)


def _small_positions(config, count: int, tiles_left: int = 3) -> list[np.ndarray]:
    """Positions from random play where both hands are down to `tiles_left` tiles or fewer and the
    player to move has a real choice."""
    rng = np.random.default_rng(7)
    found = []
    while len(found) < count:
        state = HandState.deal(config, int(rng.integers(0, 7)), rng).state.copy()
        while not state[rules.HAND_OVER]:
            hand = HandState(config, state)
            if max(hand.hand_sizes) <= tiles_left and len(_legal(state, config)) > 1:
                found.append(state.copy())
                break
            legal = _legal(state, config)
            state = _play(state, config, legal[int(rng.integers(len(legal)))])
    return found


def test_with_one_world_and_nothing_hidden_the_search_finds_the_best_move_of_a_small_position():
    config = make_config(2, 6)  # no weights ship for this table: small random ones guide the search
    network = TDLambdaConfig(game=config, variant="line")
    theta = (np.random.default_rng(0).normal(size=network.architecture.num_weights) * 0.05).astype(np.float32)
    player = ChampionPolicy(config, seed=0, checkpoint=Checkpoint(theta, network))
    search = InformationSetSearch(config.tiles.low, config.tiles.high, config.tiles.tiles_with_value,
                                  config.num_actions, player.guide, SearchSettings(simulations=3000, worlds=1))
    checked = 0
    for state in _small_positions(config, 12):
        mover = int(state[rules.CURRENT_PLAYER])
        values = {action: _exact_value(_play(state, config, action), config, mover)
                  for action in _legal(state, config)}
        ordered = sorted(values.values(), reverse=True)
        if ordered[0] - ordered[1] < 1:  # two moves about as good: nothing to check
            continue
        children = search.run(state[None].copy(), np.random.default_rng(0))
        chosen = max(children, key=lambda action: children[action].visits)
        assert values[chosen] == ordered[0], (values, {a: c.visits for a, c in children.items()})
        checked += 1
    assert checked >= 4


def test_the_search_spends_exactly_its_simulations_and_only_legal_moves_reach_the_root():
    config = make_config(4, 9)
    player = ChampionPolicy(config, seed=1, simulations=50, worlds=8)
    from dominoes_env import env as make_env

    game = make_env()
    game.reset(seed=3)
    searched = 0
    for agent in game.agent_iter():
        observation, _, terminated, truncated, _ = game.last()
        if terminated or truncated:
            game.step(None)
            continue
        mask = observation["action_mask"]
        if agent == "player_0":
            legal, visits, _ = player.visits(observation["observation"], mask)
            assert set(legal.tolist()) == set(np.flatnonzero(mask).tolist())
            if legal.shape[0] > 1:
                assert visits.sum() == 50
                searched += 1
            action = int(legal[np.argmax(visits)])
        else:
            action = int(np.flatnonzero(mask)[0])
        game.step(action)
    assert searched > 0


def test_a_time_budget_stops_the_search():
    import time

    config = make_config(4, 9)
    player = ChampionPolicy(config, seed=2, simulations=100_000, milliseconds=20)
    observation, mask = _first_choice(config, player_seed=2)
    ChampionPolicy(config, seed=2, simulations=2).visits(observation, mask)  # compiles, on a cold cache
    start = time.perf_counter()
    _, visits, _ = player.visits(observation, mask)
    assert time.perf_counter() - start < 2.0  # 20 ms asked; generous for a busy machine
    assert 1 < visits.sum() < 100_000


def _first_choice(config, player_seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The first observation of a seeded game where the player to move has a choice."""
    from dominoes_env import env as make_env

    game = make_env()
    game.reset(seed=player_seed)
    for _ in game.agent_iter():
        observation, *_ = game.last()
        mask = observation["action_mask"]
        if mask.sum() > 1:
            return observation["observation"], mask
        game.step(int(np.flatnonzero(mask)[0]))
    raise AssertionError("no choice in the game")


def test_champion_plays_only_legal_moves_at_every_table_rule(tmp_path):
    for config in (make_config(4, 9), make_config(4, 12, boneyard=True, cover_doubles=True)):
        result = evaluate(["champion(simulations=8,worlds=4)", "random", "greedy", "double"][:config.num_players],
                          config.num_players, seed=4, num_players=config)
        assert result.num_hands == config.num_players


def test_utilities_are_each_seats_pips_below_the_others_average():
    utilities = seat_utilities(np.array([0.0, 10.0, 20.0, 30.0]), 10.0)
    np.testing.assert_allclose(utilities, [2.0, 2 / 3, -2 / 3, -2.0])
    assert utilities.sum() == pytest.approx(0.0)


def test_the_prior_prefers_moves_that_leave_fewer_pips():
    prior = softmax_of_pips(np.array([3.0, 5.0, 3.0]), 2.0)
    assert prior.sum() == pytest.approx(1.0)
    assert prior[0] == pytest.approx(prior[2]) and prior[0] > prior[1]


def test_a_weights_file_round_trips_and_a_damaged_one_is_refused_in_one_line(tmp_path):
    config = make_config(4, 9)
    shipped = load_checkpoint(shipped_checkpoint(config))
    path = save_checkpoint(tmp_path / "champion.safetensors", shipped.theta, shipped.config, {"note": "test"})
    assert np.array_equal(load_checkpoint(path).theta, shipped.theta)
    observation, mask = _first_choice(config, player_seed=5)
    from_file = ChampionPolicy(config, seed=9, checkpoint=path, simulations=40)
    in_memory = ChampionPolicy(config, seed=9, checkpoint=shipped, simulations=40)
    assert np.array_equal(from_file.visits(observation, mask)[1], in_memory.visits(observation, mask)[1])
    data = bytearray(path.read_bytes())
    data[-100] ^= 0xFF
    damaged = tmp_path / "damaged.safetensors"
    damaged.write_bytes(bytes(data))
    with pytest.raises(ValueError) as refused:
        make_policy(f"champion@{damaged}", num_players=4, highest_double=9)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("players", [6, 8])
def test_the_champion_searches_with_its_own_network_where_one_ships_else_with_td_lambdas(players):
    """6 and 8 players, double-12, Mexican Train: its own file (trained for the table; a different
    network from td_lambda's there), read by the checked loader; 4 players, double-nine: td_lambda's."""
    from baselines.champion.policy import shipped_weights

    table = make_config(players, 12, rules="mexican_train")
    own = shipped_weights(table)
    assert own.name == f"champion_{players}p_d12_mexican_train.safetensors"
    assert shipped_weights(make_config(4, 9)) == shipped_checkpoint(make_config(4, 9))
    network = load_checkpoint(own)
    assert network.config.game == table
    assert network.theta.shape == load_checkpoint(shipped_checkpoint(table)).theta.shape
    assert not np.array_equal(network.theta, load_checkpoint(shipped_checkpoint(table)).theta)
    state = HandState.deal(table, 0, np.random.default_rng(3)).state
    default = ChampionPolicy(table, seed=0).guide.seat_pips(state)
    assert np.array_equal(default, ChampionPolicy(table, seed=0, checkpoint=own).guide.seat_pips(state))
    with_td_lambdas = ChampionPolicy(table, seed=0, checkpoint=shipped_checkpoint(table))
    assert not np.allclose(default, with_td_lambdas.guide.seat_pips(state))


def test_bad_settings_are_refused_in_one_line():
    for spec, words in (("champion(simulations=0)", "simulations"), ("champion(worlds=-1)", "worlds"),
                        ("champion(milliseconds=0)", "milliseconds"), ("champion(temperature=0)", "temperature")):
        with pytest.raises(ValueError, match=words) as refused:
            make_policy(spec)
        assert "\n" not in str(refused.value)


def test_the_guide_values_every_seat_of_a_position():
    config = make_config(4, 9)
    player = ChampionPolicy(config, seed=0)
    state = HandState.deal(config, 0, np.random.default_rng(1)).state
    pips = player.guide.seat_pips(state)
    assert pips.shape == (4,) and np.isfinite(pips).all()
    assert isinstance(player.guide, NetworkGuide)


def test_seeing_an_observation_twice_adds_nothing_to_what_the_champion_knows():
    """A hint giver is told every turn and asked only now and then: the same observation twice
    must not be read as a turn in which every other seat passed again."""
    from dominoes_env import env as make_env
    from dominoes_env.core.hidden import KnowledgeTracker

    config = make_config(4, 9)
    player = ChampionPolicy(config, seed=0, simulations=8)
    reference = KnowledgeTracker(config)
    game = make_env()
    game.reset(seed=11)
    for agent in game.agent_iter():
        observation, _, terminated, truncated, _ = game.last()
        if terminated or truncated:
            game.step(None)
            continue
        if agent == "player_0":
            vector = observation["observation"]
            expected = reference.observe(vector)
            player.observe(vector)
            player.observe(vector)
            np.testing.assert_array_equal(player.observe(vector).forbidden, expected.forbidden)
        game.step(int(np.flatnonzero(observation["action_mask"])[-1]))


def test_the_champion_gives_hints_and_is_the_default_opponent_where_a_network_ships():
    from baselines.advice import Hints, default_opponent

    config = make_config(4, 9)
    assert default_opponent(config).name == "champion"
    hints = Hints(config, seed=0)
    observation, mask = _first_choice(config, player_seed=6)
    hints.follow(observation)
    choices = hints.choices(observation, mask)
    assert list(choices)[0] == "champion" and mask[choices["champion"]] == 1


# --------------------------------------------------------------------------- the oracle
def _recording(cls):
    """A subclass of a policy class that keeps, at each of its decisions, what it saw and chose
    (and, when it is the oracle, the state it was shown)."""

    def act(self, observation, action_mask):
        shown = getattr(self, "_shown", None)  # only the oracle is ever shown a state
        shown = None if shown is None else shown.copy()
        action = cls.act(self, observation, action_mask)
        self.decisions.append((observation.tobytes(), int(action_mask.sum()), action, shown))
        return action

    return type(f"Recording{cls.__name__}", (cls,), {"act": act, "decisions": None})


class _FromPosition(DominoesEnv):
    """The env, started at one position whatever the seed (play_game resets it with a seed)."""

    position: HandState

    def reset(self, seed=None, options=None):
        super().reset(seed=seed, options={"position": HandState(self.config, self.position.state.copy())})


def _first_decisions(cls, position: HandState, seed: int) -> list[tuple[bytes, int, int, object]]:
    """Seat 0's decisions (observation, legal moves, action, state shown) in one hand from
    `position`, three greedy players in the other seats."""
    env = _FromPosition(position.config)
    env.position = position
    player = _recording(cls)(position.config, seed=seed, simulations=48, worlds=8)
    player.decisions = []
    others = [make_policy("greedy", position.config, seed=k) for k in range(1, 4)]
    play_game(env, [player, *others], seed=0)
    return player.decisions


def _swapped_hidden_tiles(config, seed: int) -> tuple[HandState, HandState]:
    """Two deals that differ only in one tile of seat 1 and one of seat 2 traded (seat 0 cannot
    tell them apart: same hands for it, same sizes, and nothing played yet)."""
    dealt = HandState.deal(config, 0, np.random.default_rng(seed))
    hands, boneyard = dealt.starting_deal()
    engine = config.tiles.double(dealt.engine_value)
    one, two = (next(t for t in hands[k] if t != engine) for k in (1, 2))
    traded = [list(hand) for hand in hands]
    traded[1] = sorted([t for t in traded[1] if t != one] + [two])
    traded[2] = sorted([t for t in traded[2] if t != two] + [one])
    return (HandState.from_deal(config, hands, dealt.engine_value, boneyard),
            HandState.from_deal(config, traded, dealt.engine_value, boneyard))


def test_the_champion_never_reads_a_hidden_hand_and_the_oracle_does():
    """Through play_game (which shows the oracle the deal): two deals that differ only in tiles
    hidden from seat 0 give the champion the same decisions for as long as its observations are
    the same; the oracle, shown the deal, decides differently in some of them."""
    from baselines.champion import OraclePolicy

    config = make_config(4, 9)
    compared, oracle_differs = 0, 0
    for seed in range(6):
        first, second = _swapped_hidden_tiles(config, seed)
        for cls in (ChampionPolicy, OraclePolicy):
            runs = [_first_decisions(cls, position, seed=5) for position in (first, second)]
            same_sight = [(a, b) for a, b in zip(*runs) if a[0] == b[0] and a[1] > 1]
            if cls is ChampionPolicy:
                assert all(a[3] is None and b[3] is None for a, b in zip(*runs))  # never shown a state
                assert [a[2] for a, _ in same_sight] == [b[2] for _, b in same_sight]
                compared += len(same_sight)
            else:
                assert all(a[3] is not None for a in runs[0])  # shown the deal at every move
                oracle_differs += any(a[2] != b[2] for a, b in same_sight)
    assert compared >= 6 and oracle_differs >= 1


def _expected_value(state: np.ndarray, config, seat: int) -> float:
    """Two players, the hands known, the boneyard's order not: the final pips of `seat`'s opponent
    minus its own under best play, a draw worth the mean over the tiles it may bring."""
    if state[rules.HAND_OVER]:
        return _exact_value(state, config, seat)
    legal = _legal(state, config)
    if legal == [config.num_actions - 1] and config.boneyard and state[rules.PILE_COUNT] > 0 \
            and not state[rules.DREW]:
        pile = rules.pile_of(state)
        count = int(state[rules.PILE_COUNT])
        outcomes = []
        for k in range(count):  # tile k drawn: put it on top
            drawn = state.copy()
            top = rules.pile_of(drawn)
            top[k], top[count - 1] = pile[count - 1], pile[k]
            outcomes.append(_expected_value(_play(drawn, config, legal[0]), config, seat))
        return float(np.mean(outcomes))
    values = [_expected_value(_play(state, config, action), config, seat) for action in legal]
    return max(values) if int(state[rules.CURRENT_PLAYER]) == seat else min(values)


def test_the_oracle_finds_the_best_move_of_small_positions_an_exhaustive_search_confirms():
    """Two players with a boneyard: the oracle knows which hidden tiles its opponent holds and which
    lie face down (the champion does not). At each of its decisions with both hands and the boneyard
    down to three tiles and moves whose worth, found by an exhaustive search over the hands and every order of the
    boneyard, differs by a pip or more, it plays a move of the best worth."""
    from baselines.champion import OraclePolicy

    config = make_config(2, 6, boneyard=True)  # no weights ship for this table: small random ones guide it
    network = TDLambdaConfig(game=config, variant="line")
    theta = (np.random.default_rng(0).normal(size=network.architecture.num_weights) * 0.05).astype(np.float32)
    checked = 0

    class Checked(OraclePolicy):
        def act(self, observation, action_mask):
            nonlocal checked
            state = self._shown
            small = max(HandState(config, state.copy()).hand_sizes) <= 3 and state[rules.PILE_COUNT] <= 3
            if not small or int(action_mask.sum()) == 1:
                self.observe(observation)  # what it knows is built from every observation
                self._shown = None
                return int(np.flatnonzero(action_mask)[0])  # not a position to check: spend no search
            action = super().act(observation, action_mask)
            mover = int(state[rules.CURRENT_PLAYER])
            values = {a: _expected_value(_play(state, config, a), config, mover) for a in _legal(state, config)}
            ordered = sorted(values.values(), reverse=True)
            if ordered[0] - ordered[1] >= 1:
                assert values[action] == ordered[0], values
                checked += 1
            return action

    evaluate([lambda n, d, seed: Checked(config, seed=seed, simulations=3000, worlds=24,
                                         checkpoint=Checkpoint(theta, network)), "greedy"], 200, seed=2,
             num_players=config)
    assert checked >= 10


def test_the_oracle_plays_only_where_it_is_shown_the_deal():
    from baselines.advice.hints import opponent_specs
    from dominoes_env import env as make_env
    from dominoes_env.single_agent import SingleAgentEnv

    for refused_loop in (lambda: SingleAgentEnv(opponents="oracle").reset(seed=0),
                         lambda: opponent_specs(["oracle"], make_config(4, 9))):
        with pytest.raises(ValueError, match="'oracle' sees every hand: it plays in dominoes evaluate"):
            refused_loop()
    oracle = make_policy("oracle", 4, 9, seed=0, simulations=8)
    assert not oracle.plays_by_default(make_config(4, 9))
    assert (decision_times("oracle(simulations=8)", 1) > 0).all()  # the timing loop shows it the deal
    game = make_env()
    game.reset(seed=1)
    observation = game.observe(game.agent_selection)
    with pytest.raises(ValueError, match="shown the deal") as refused:
        oracle.act(observation["observation"], observation["action_mask"])
    assert "\n" not in str(refused.value)
    stale = game.state()
    game.step(int(np.flatnonzero(observation["action_mask"])[0]))
    while int(game.observe(game.agent_selection)["action_mask"].sum()) < 2:
        game.step(int(np.flatnonzero(game.observe(game.agent_selection)["action_mask"])[0]))
    oracle.reset()
    oracle.show(stale)
    now = game.observe(game.agent_selection)
    with pytest.raises(ValueError, match="not the position"):
        oracle.act(now["observation"], now["action_mask"])


def test_a_champion_at_a_table_without_its_own_network_says_which_it_uses():
    four = ChampionPolicy(make_config(4, 12, rules="mexican_train"), seed=0, simulations=8)
    assert four.network_source == ("td_lambda's network (td_lambda_4p_d12_mexican_train.safetensors): "
                                   "no champion network ships for this table")
    assert "searching with td_lambda's network" in repr(four)
    six = ChampionPolicy(make_config(6, 12, rules="mexican_train"), seed=0, simulations=8)
    assert six.network_source == "its own network (champion_6p_d12_mexican_train.safetensors)"
