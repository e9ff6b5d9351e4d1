"""The game in OpenSpiel: importing this module registers ``python_dominoes_env`` with pyspiel.

    import pyspiel
    import dominoes_env.openspiel  # registers the game
    game = pyspiel.load_game("python_dominoes_env", {"players": 4, "highest_double": 9})

The rules are the compiled engine's (:class:`~dominoes_env.core.state.HandState`); this module
only translates, as the PettingZoo env does. Choices, and why:

- **Chance is explicit**: a hand is dealt by T chance nodes (T the set's tiles), each drawing
  one of the tiles left uniformly; the engine deals the shuffle that results
  (:func:`dominoes_env.core.rules.deal_hand`: hands, boneyard order, draws for the engine).
  Algorithms that enumerate or sample chance (IS-MCTS, exploitability tools on tiny tables)
  then see the deal as the game's only randomness, which it is.
- **Rewards are general-sum**: a hand pays each seat minus its pips, the env's "score" reward,
  once: ``rewards()`` gives it at the first state after the hand's end that is not a chance node
  (the next hand's first decision, or the end of the game) and is 0 at every chance node. That is
  where OpenSpiel reads rewards (``random_sim_test`` and ``rl_environment`` sum them at decisions
  and at the end), and a loop that sums them after every transition counts each hand once too.
  ``returns()`` is the sum over the hands finished so far.
- **Table rules**: the parameters are the table's (:func:`game_parameters` makes them from a
  table), one per rule of :data:`~dominoes_env.core.config.TABLE_RULES`; a rule off the rule
  book's value that the game does not implement (:data:`IMPLEMENTED_RULES`) is refused in one line.
- **Observations** (``observation_tensor``, ``observation_string``) are the env's binary
  observation of that seat and its text. The **information state** is the same observation,
  not the whole history: the observation holds what matters to a player (its hand, every
  line, markers, who passed last, every seat's hand size, whose turn), and a search that
  samples worlds (IS-MCTS) needs the sampled states to share their key with the real one.
  It is not perfect recall; tabular algorithms that need perfect recall (CFR) are for games
  far smaller than any table here anyway.
- **Resampling** (``resample_from_infostate``) deals the tiles the player cannot see with the
  package's sampler (:mod:`dominoes_env.core.hidden`): uniform over the deals that agree with
  what the player's observations proved (every pass it saw), the tiles it can see untouched.
- ``state_from_position(game, position)`` puts a state at any engine position (of
  :class:`~dominoes_env.vector.VectorDominoes`, a record, an env); such a state has no
  history before it, and serialises with :func:`pyspiel.serialize_game_and_state` (which
  keeps a Python state's attributes) or its own :meth:`DominoesState.serialize`.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pyspiel

from dominoes_env.core import actions, rules
from dominoes_env.core import config as tables
from dominoes_env.core.config import GameConfig, describe_table, make_config
from dominoes_env.core.hidden import BONEYARD, KnowledgeTracker, knowledge_of_sizes, sample_deals
from dominoes_env.core.observation import Observer, observation_layout
from dominoes_env.core.render import render_table
from dominoes_env.core.state import HandState, engine_value_for_hand

SHORT_NAME = "python_dominoes_env"
#: The game's parameters and their defaults (4 players, double-nine, the rule book, one hand).
PARAMETERS: dict[str, Any] = {"players": 4, "highest_double": 9, "rules": "rule_book",
                              **{rule.name: rule.default for rule in tables.TABLE_RULES}, "hands": 1}

#: The table rules the game implements (tests/test_openspiel.py plays each against the engine); a
#: table with any other rule off the rule book's value is refused (:func:`refuse_unimplemented`).
IMPLEMENTED_RULES = frozenset({"boneyard", "cover_doubles", "first_player"})

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="dominoes-env: Mexican-Train-style dominoes",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.REWARDS,
    max_num_players=tables.MAX_PLAYERS,
    min_num_players=tables.MIN_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS)


def refuse_unimplemented(config: GameConfig) -> GameConfig:
    """The table, if the game implements each of its rules that is off the rule book's value.

    Raises:
        ValueError: a rule the game does not implement (one line).
    """
    missing = [f"{rule.name}={value!r}" for rule, value in config.rules_set() if rule.name not in IMPLEMENTED_RULES]
    if missing:
        raise ValueError(f"{SHORT_NAME}: the game does not implement {', '.join(missing)}; "
                         f"it implements {sorted(IMPLEMENTED_RULES)}")
    return config


def game_parameters(config: GameConfig, hands: int = 1) -> dict[str, Any]:
    """The game's parameters for a table (every table rule, from the table) and `hands` hands.

    Raises:
        ValueError: a table rule the game does not implement (one line).
    """
    refuse_unimplemented(config)
    return {"players": config.num_players, "highest_double": config.highest_double,
            "rules": config.rule_set or "rule_book", **config.rules(), "hands": int(hands)}


def table_of(params: dict[str, Any]) -> tuple[GameConfig, int]:
    """The table and the number of hands the game's parameters ask for.

    Raises:
        ValueError: a parameter out of range or table rules that disagree (one line).
    """
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(f"{SHORT_NAME}: unknown parameter(s) {unknown}; its parameters: {sorted(PARAMETERS)}")
    values = {**PARAMETERS, **params}
    rules_name = values["rules"]
    if rules_name not in tables.RULE_SETS:
        raise ValueError(f"{SHORT_NAME}: rules={rules_name!r} is not a rule set; known: {sorted(tables.RULE_SETS)}")
    # A rule at the rule book's value is left to the preset, so that rules=mexican_train stands.
    given = {rule.name: values[rule.name] for rule in tables.TABLE_RULES if values[rule.name] != rule.default}
    if not 1 <= int(values["hands"]) <= tables.MAX_HANDS_PER_GAME:
        raise ValueError(f"{SHORT_NAME}: hands must be from 1 to {tables.MAX_HANDS_PER_GAME}, got {values['hands']}")
    for name, low, high in (("players", tables.MIN_PLAYERS, tables.MAX_PLAYERS),
                            ("highest_double", tables.MIN_HIGHEST, tables.MAX_HIGHEST)):
        if not low <= int(values[name]) <= high:
            raise ValueError(f"{SHORT_NAME}: {name} must be from {low} to {high}, got {values[name]}")
    if not (rules_name == "rule_book" and given):  # the rule book's preset is no preset beside a rule
        given["rules"] = rules_name
    try:
        config = make_config(int(values["players"]), int(values["highest_double"]), **given)
    except ValueError as error:
        raise ValueError(f"{SHORT_NAME}: {str(error).splitlines()[0]}") from None
    return refuse_unimplemented(config), int(values["hands"])


def _moves_bound(config: GameConfig) -> int:
    """The most moves one hand can take: between two plays or draws at most two rounds of passes (a
    round of passes puts every marker up; a second one means nothing can be played: blocked)."""
    return (config.num_tiles + config.boneyard_at_deal + 1) * (2 * config.num_players + 1)


class DominoesGame(pyspiel.Game):
    """The game at one table (its parameters: :data:`PARAMETERS`)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.config, self.hands = table_of(dict(params or {}))
        config = self.config
        info = pyspiel.GameInfo(
            num_distinct_actions=config.num_actions, max_chance_outcomes=config.num_tiles,
            num_players=config.num_players, min_utility=-float(self.hands * config.max_hand_pips),
            max_utility=0.0, utility_sum=None, max_game_length=self.hands * _moves_bound(config))
        super().__init__(GAME_TYPE, info, {**PARAMETERS, **dict(params or {})})
        self.observer_of = Observer(config, self.hands)

    def new_initial_state(self) -> DominoesState:
        return DominoesState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> DominoesObserver:
        if params:
            raise ValueError(f"{SHORT_NAME}: observer parameters are not supported, got {params}")
        return DominoesObserver(self)

    def deserialize_state(self, text: str) -> DominoesState:
        """A state written by :meth:`DominoesState.serialize`."""
        return DominoesState.from_text(self, text)


class DominoesState(pyspiel.State):
    """A game in progress: the hand being dealt (chance) or played, and the scores so far."""

    def __init__(self, game: DominoesGame) -> None:
        super().__init__(game)
        self.config, self.hands = game.config, game.hands
        self.hand_index = 0
        self.dealt: list[int] = []  # the tiles drawn so far by the chance nodes of this hand's deal
        self.hand: HandState | None = None
        self.totals = np.zeros(self.config.num_players, dtype=np.int64)
        self.last_rewards = np.zeros(self.config.num_players)
        self.trackers: list[KnowledgeTracker] | None = None  # None: the hand began elsewhere (no earlier facts)
        self.finished = False

    # ------------------------------------------------------------------ the game
    def current_player(self) -> int:
        if self.finished:
            return pyspiel.PlayerId.TERMINAL
        if self.hand is None:
            return pyspiel.PlayerId.CHANCE
        return int(self.hand.current_player)

    def _legal_actions(self, player: int) -> list[int]:
        assert self.hand is not None and player == self.hand.current_player
        return self.hand.legal_actions().tolist()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        left = sorted(set(range(self.config.num_tiles)) - set(self.dealt))
        return [(tile, 1.0 / len(left)) for tile in left]

    def _apply_action(self, action: int) -> None:
        if self.hand is None:  # a hand's pay waits through the next deal: OpenSpiel reads it at the next decision
            self._deal_one(int(action))
            return
        self.last_rewards = np.zeros(self.config.num_players)
        hand = self.hand
        if self.trackers is not None:  # the mover's tracker sees each of its decisions, in order
            self.trackers[hand.current_player].observe(self.observation_vector(hand.current_player))
        hand.apply(int(action))
        if hand.is_over:
            scores = hand.scores().astype(np.int64)
            self.totals += scores
            self.last_rewards = -scores.astype(float)
            self.hand_index += 1
            if self.hand_index == self.hands:
                self.finished = True
            else:
                self.hand, self.dealt = None, []

    def _deal_one(self, tile: int) -> None:
        self.dealt.append(tile)
        if len(self.dealt) < self.config.num_tiles:
            return
        config = self.config
        engine_value = engine_value_for_hand(config, self.hand_index)
        state = np.empty(rules.state_size(config.num_players, config.num_tiles), dtype=np.int16)
        rules.deal_hand(state, np.asarray(self.dealt, dtype=np.int16), config.num_players, self.hand_index,
                        engine_value, config.tiles.double(engine_value), config.rule_flags, config.deal_size,
                        np.empty(2 * config.num_tiles, dtype=np.int16))
        self.hand = HandState(config, state)
        self.trackers = [KnowledgeTracker(config) for _ in range(config.num_players)]

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {self.config.tiles.name(int(action))}"
        return actions.describe(self.config, int(action), int(player))

    def is_terminal(self) -> bool:
        return self.finished

    def rewards(self) -> list[float]:
        """What the transitions since the last decision or terminal state paid each seat: minus its
        pips at the first state after a hand's end that is not a chance node (the next hand's first
        decision, or the end of the game), 0 at every chance node. OpenSpiel reads rewards there
        (``random_sim_test``, ``rl_environment``), and summed over every state they pay each hand once."""
        if self.hand is None and not self.finished:
            return [0.0] * self.config.num_players
        return self.last_rewards.tolist()

    def returns(self) -> list[float]:
        """Minus each seat's pips over the hands finished so far."""
        return (-self.totals.astype(float)).tolist()

    def __str__(self) -> str:
        if self.hand is None:
            return (f"{describe_table(self.config)}: hand {self.hand_index + 1} of {self.hands} being dealt "
                    f"({len(self.dealt)} of {self.config.num_tiles} tiles); game scores {self.totals.tolist()}")
        return render_table(self.hand, self.hand_index, self.hands, self._scores_before(), "all")

    # ------------------------------------------------------------------ what a seat sees
    def _scores_before(self) -> np.ndarray:
        """The game scores before the hand on the table (the totals include a finished last hand)."""
        if self.hand is not None and self.hand.is_over:
            return self.totals - self.hand.scores()
        return self.totals

    def observation_vector(self, player: int | None = None) -> np.ndarray:
        """The env's observation of `player` (int8; default the player to move): its view of the hand on
        the table (zeros while a hand is dealt)."""
        player = self.current_player() if player is None else player
        game: DominoesGame = self.get_game()
        if self.hand is None:
            return np.zeros(game.observer_of.size, dtype=np.int8)
        return game.observer_of.encode(self.hand.state, int(player), self._scores_before())

    def observation_string(self, player: int | None = None) -> str:
        player = self.current_player() if player is None else player
        if self.hand is None:
            return f"hand {self.hand_index + 1} being dealt; game scores {self.totals.tolist()}"
        table = render_table(self.hand, self.hand_index, self.hands, self._scores_before(), int(player))
        return f"player_{player} sees:\n{table}"

    def information_state_string(self, player: int | None = None) -> str:
        """The player's observation, packed (a search's key: fast, and the same for every world it cannot
        tell apart); ``observation_string`` is the readable form."""
        player = self.current_player() if player is None else player
        return f"{self.hand_index}:{len(self.dealt)}:" + np.packbits(self.observation_vector(player)).tobytes().hex()

    def observation_tensor(self, player: int | None = None) -> list[float]:
        return self.observation_vector(player).astype(np.float32).tolist()

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        return self.observation_tensor(player)

    # ------------------------------------------------------------------ worlds a player cannot tell apart
    def resample_from_infostate(self, player: int, probability_sampler: Any) -> DominoesState:
        """A state `player` cannot tell from this one: the tiles it cannot see dealt anew by the
        package's sampler (uniform over the deals that agree with what its observations proved),
        the boneyard's order shuffled. Its information state is this one's."""
        if self.hand is None:
            return self.clone()
        knowledge = self._knowledge(int(player))
        rng = np.random.default_rng(int(probability_sampler() * 2**62))
        places = sample_deals(knowledge, rng, 1)[0]
        world = self.clone()
        assert world.hand is not None
        hand, n = world.hand, self.config.num_players
        pile = []
        for tile, place in zip(knowledge.hidden.tolist(), places.tolist()):
            if place == BONEYARD:
                hand.owner[tile] = rules.IN_BONEYARD
                pile.append(tile)
            else:
                hand.owner[tile] = (int(player) + place) % n
        if pile:
            hand._lay_boneyard(rng.permutation(np.asarray(pile, dtype=np.int16)))
        world.trackers = None  # a sampled world is searched, not resampled: its later samples use the sizes
        return world

    def _knowledge(self, player: int) -> Any:
        """What `player` knows of the tiles it cannot see: its tracker's facts at its own decision, or
        (another seat's turn, a hand begun elsewhere) what its observation shows alone."""
        vector = self.observation_vector(player)
        assert self.hand is not None
        if self.trackers is None or player != self.hand.current_player:
            return knowledge_of_sizes(self.config, vector)
        return copy.deepcopy(self.trackers[player]).observe(vector)

    # ------------------------------------------------------------------ text
    def serialize(self) -> str:
        """The state as one line of JSON (the hand's engine state, the deal so far, the scores)."""
        return json.dumps({"hand_index": self.hand_index, "dealt": self.dealt, "totals": self.totals.tolist(),
                           "hand": None if self.hand is None else self.hand.state.tolist(),
                           "finished": self.finished, "rewards": self.last_rewards.tolist(),
                           "tracked": self.trackers is not None})

    @classmethod
    def from_text(cls, game: DominoesGame, text: str) -> DominoesState:
        """Read :meth:`serialize`'s text (the trackers start afresh: the facts before are not kept).

        Raises:
            ValueError: text that is not such a state (one line).
        """
        try:
            data = json.loads(text)
            state = cls(game)
            state.hand_index, state.dealt = int(data["hand_index"]), [int(tile) for tile in data["dealt"]]
            state.totals = np.asarray(data["totals"], dtype=np.int64)
            state.last_rewards = np.asarray(data["rewards"], dtype=float)
            state.finished = bool(data["finished"])
            if data["hand"] is not None:
                array = np.asarray(data["hand"], dtype=np.int16)
                if array.shape != (rules.state_size(game.config.num_players, game.config.num_tiles),):
                    raise ValueError("the hand's state has the wrong size for this table")
                state.hand = HandState(game.config, array)
                state.trackers = None
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{SHORT_NAME}: not a serialised state: {str(error).splitlines()[0]}") from None
        return state


class DominoesObserver:
    """OpenSpiel's observer interface (``make_observation``): the env's observation of a seat."""

    def __init__(self, game: DominoesGame) -> None:
        size = observation_layout(game.config, game.hands).size
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: DominoesState, player: int) -> None:
        self.tensor[:] = state.observation_vector(player)

    def string_from(self, state: DominoesState, player: int) -> str:
        return state.observation_string(player)


def state_from_position(game: DominoesGame, position: HandState, hand_index: int = 0,
                        totals: Any = None) -> DominoesState:
    """A state of `game` at `position` (a copy): the hand on the table, `hand_index` (its number in the
    game) and the game scores before it. Nothing before the position is known: a search from it
    samples the hidden tiles from what the observation shows alone.

    Raises:
        ValueError: a position of another table, or a hand number or scores that do not fit the game.
    """
    if not isinstance(position, HandState) or position.config != game.config:
        raise ValueError(f"position must be a HandState of {describe_table(game.config)}, got {position!r}")
    if not 0 <= hand_index < game.hands:
        raise ValueError(f"hand_index must be from 0 to {game.hands - 1}, got {hand_index}")
    state = game.new_initial_state()
    state.hand, state.hand_index, state.dealt = position.copy(), int(hand_index), []
    if totals is not None:
        state.totals = np.asarray(totals, dtype=np.int64).copy()
        if state.totals.shape != (game.config.num_players,) or (state.totals < 0).any():
            raise ValueError(f"totals must be {game.config.num_players} non-negative scores, got {totals!r}")
    if position.is_over:
        raise ValueError("the position's hand is over: give a position of a hand in play")
    return state


pyspiel.register_game(GAME_TYPE, DominoesGame)
