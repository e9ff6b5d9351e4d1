"""The PettingZoo AEC environment: a thin adapter over :mod:`dominoes_env.core`.

The engine decides everything (legal moves, whose turn, when a hand ends); this module
translates it into agents, spaces, observations with action masks, and rewards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from dominoes_env.core import validation
from dominoes_env.core.config import MAX_HANDS_PER_GAME, GameConfig, TableRuleOptions, table_of
from dominoes_env.core.errors import IllegalActionError
from dominoes_env.core.game import Game, HandEnded
from dominoes_env.core.observation import Observer, layout_table
from dominoes_env.core.render import HandsShown
from dominoes_env.core.rewards import REWARD_MODES, hand_rewards, illegal_action_penalty
from dominoes_env.core.validation import as_integer
from dominoes_env.rendering import RENDER_MODES, TableRenderer

if TYPE_CHECKING:
    from typing_extensions import Unpack

ILLEGAL_ACTION_MODES = ("raise", "penalize")


class DominoesEnv(AECEnv):
    """Mexican-Train-style dominoes for 2-8 players (PettingZoo AEC API).

    Agents are ``"player_0"`` .. ``"player_{n-1}"`` by seat; the player who holds the
    engine moves first and, after playing a double, moves again (``agent_selection``
    follows the engine's current player, not a fixed rotation).

    Actions: ``Discrete((n+1)*T + 1)`` with ``action = line * T + tile``. ``line`` is
    egocentric (0 = own line, k = the line of the seat k places after me, n = the dummy
    line), ``tile`` the canonical index ((0|0)=0, (0|1)=1, ..., (N|N)=T-1). Action
    ``(n+1)*T`` passes and is legal only when nothing else is.

    Observations: ``Dict(observation=Box(0, 1, (D,), int8), action_mask=Box(0, 1, (A,), int8))``.
    The mask is the legal set for the agent to move and all zeros for everyone else. The
    vector is egocentric and binary; its layout (D = 479 for 4 players, double-nine, one
    hand) is, with n players, T tiles, V = N+1 values, M = ceil(T/n):

    | field | shape | meaning |
    |---|---|---|
    | ``hand`` | T | tiles I hold |
    | ``played`` | (n+1) x T | [k, tile]: tile lies on line k (own, next seats, dummy) |
    | ``open_values`` | (n+1) x V | one-hot open value of each line |
    | ``markers`` | n | marker of seat k is up |
    | ``lines_started`` | n | seat k's line holds a tile |
    | ``dummy_open`` | 1 | the dummy line is open |
    | ``hand_sizes`` | n x M | thermometer: seat k holds more than j tiles |
    | ``passed_last`` | n | seat k's latest action was a pass |
    | ``whose_turn`` | n | one-hot seat to move (0 = me) |
    | ``turns_until`` | n x n | one-hot: seat k moves j turns from now |
    | ``hand_number`` | V | one-hot h of this hand's engine (h, h) |
    | ``scores`` | n x B | multi-hand games: game score before this hand, binary, lowest bit first |

    :func:`dominoes_env.decode_observation` turns a vector back into named values and
    :func:`dominoes_env.layout_table` prints the exact indices.

    Rewards (``reward=``), paid to every agent when a hand ends:

    - ``"score"`` (default): minus the pips left in its hand.
    - ``"zero_sum"``: the mean of the other players' pips minus its own (sums to zero).
    - ``"rank"``: (opponents with more pips - opponents with fewer) / (n - 1), in [-1, 1].

    With ``num_hands > 1`` the episode is a game of that many hands with engines N, N-1,
    ..., each hand's rewards arriving as it ends; the episode ends after the last hand.

    Illegal actions (not an integer, out of range, masked out, or anything but None for a
    finished agent) raise :class:`IllegalActionError` (a ValueError) naming the action and
    the legal ones, and change nothing. ``illegal_action="penalize"`` instead ends the game
    with 0 for the others and, for the offender, a penalty worse than any legal outcome in
    every reward mode (:func:`dominoes_env.core.rewards.illegal_action_penalty`); its info
    holds ``illegal_action``, ``penalty`` and ``reason``.

    Table rules (keyword-only, the rule book's game by default; docs/RULES.md, "Table
    rules"): ``boneyard=True`` deals part of the set and keeps the rest face down (a player
    who cannot play draws: the action ``(n+1)*T + 1``; the observation adds the fields
    boneyard and drew); ``cover_doubles=True`` makes a double be covered before any other
    move (the observation adds the field double_to_cover); ``first_player="left_of_engine"``
    lets the player after the engine's holder start.

    Randomness: only ``reset(seed=...)``; the same seed gives the same deals.

    Rendering (``render_mode``): "ansi" returns the table as text, "human" prints it,
    "rgb_array" returns a picture of it (an (H, W, 3) uint8 array, the same size all
    episode; needs the ``image`` extra, pillow). ``render_hands`` says whose tiles are
    shown: "mover" (the player to move, default), "all" (spectators, replays) or a seat.

    ``reset(seed=None, options=None)`` deals a new episode. ``options={"position": HandState}``
    starts it from a given position instead (analysis, tests, replays), with
    ``"hand_index"``, its number in the game (default N - h for engine (h|h)).

    When a hand ends every agent's ``infos`` holds ``hand_index``, ``hand_scores`` (pips
    left by seat), ``game_scores`` (totals so far) and ``went_out`` (the seat that played
    its last tile, None if the hand was blocked), until the next hand ends.

    ``public_moves=True`` (off by default) adds what a person at the table sees: after every
    step each agent's ``infos`` hold ``public_moves``, the hand's moves so far in order, as
    ``(seat, action)`` pairs with the seat counted from that agent (0 = itself, 1 = the next
    seat) and the action in the mover's own encoding (:func:`dominoes_env.core.actions.decode`
    with the mover's frame): which tile went on which line, every pass and every draw (not the
    tile drawn). A hand begun from ``options={"position": ...}`` lists the moves from there; a
    finished hand's list stays until the next hand's first move.

    Version history (the environment's name is ``dominoes_v1``; any change to what an
    agent observes, its actions, rewards or the game's dynamics bumps the version):

    - v0, dominoes-env 0.1.0: the game of docs/RULES.md, as above.
    - v0, dominoes-env 0.2.0: same observations, actions, rewards and dynamics. The set's
      keyword is ``highest_double`` (``highest_dominoe`` worked, with a
      DeprecationWarning, until 0.3.0 removed it); ``reward`` and ``illegal_action`` are explicit
      keyword-only arguments; a finished hand's ``infos`` add ``went_out``; a bad seed, or
      ``step()`` before ``reset()`` or after the episode, is a ValueError that says so.
    - v1, dominoes-env 0.2.0: ``illegal_action="penalize"`` pays the offender a penalty worse
      than any legal outcome (it paid -1, which the "score" reward made a bargain); its info
      says ``penalty`` and ``reason``. Everything else as in v0. PettingZoo id
      ``dominoes/dominoes-v1``. New in the same version: the table-rule options
      ``boneyard``, ``cover_doubles`` and ``first_player``; with none of them set the game,
      its observations and its actions are exactly v0's. Later, in the same version: the
      ``public_moves`` option (off by default: nothing an agent receives changes without it).
    """

    metadata: dict[str, Any] = {"name": "dominoes_v1", "render_modes": RENDER_MODES, "is_parallelizable": False,
                                "render_fps": 2}
    np_random: np.random.Generator  # the deals' generator, seeded by reset()
    np_random_seed: int

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, num_hands: int = 1,
                 render_mode: str | None = None, *, reward: str = "score", illegal_action: str = "raise",
                 render_hands: HandsShown = "mover", public_moves: bool = False,
                 **table_rules: Unpack[TableRuleOptions]) -> None:
        super().__init__()
        if not isinstance(public_moves, bool):
            raise ValueError(f"public_moves must be True or False, got {public_moves!r}")
        self.public_moves = public_moves
        self._moves: list[tuple[int, int]] = []  # (absolute seat, action) of the hand being played
        self._moves_hand = -1
        self.config = table_of(num_players, highest_double, table_rules)
        self.num_hands = validation.integer("num_hands", num_hands, 1, MAX_HANDS_PER_GAME)
        self.reward_mode = validation.choice("reward", reward, REWARD_MODES)
        self.illegal_action = validation.choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        self.renderer = TableRenderer(self.config, self.num_hands, render_mode, render_hands)
        self.render_mode = render_mode
        self.observer = Observer(self.config, self.num_hands)
        #: the hand the last step ended (:class:`~dominoes_env.core.game.HandEnded`), None if it ended none
        self.hand_ended: HandEnded | None = None
        self.possible_agents = [f"player_{seat}" for seat in range(self.config.num_players)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        observation_space = spaces.Dict({
            "observation": spaces.Box(0, 1, (self.observer.size,), np.int8),
            "action_mask": spaces.Box(0, 1, (self.config.num_actions,), np.int8),
        })
        action_space = spaces.Discrete(self.config.num_actions)
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, action_space)
        self.game: Game | None = None
        self._mask = np.zeros(self.config.num_actions, dtype=np.int8)
        self._no_moves = np.zeros(self.config.num_actions, dtype=np.int8)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new episode.

        Args:
            seed: seeds the env's only random generator (the deals).
            options: ``{"position": HandState}`` starts the episode from that position
                instead of a deal (for analysis, tests and replays), optionally with
                ``"hand_index"``, its number in the game (default N - h, h its engine),
                and, to resume a multi-hand game in its middle, ``"hands_played"`` (hands of
                the episode already finished) and ``"game_scores"`` (their totals by seat);
                later hands of a multi-hand game are dealt from the seeded generator.
                Other keys are ignored, as PettingZoo's API test expects.
        """
        seed = validation.seed("seed", seed)
        options = dict(options or {})
        start = (options.get("position"), options.get("hand_index"), options.get("hands_played", 0),
                 options.get("game_scores"))
        Game.check_start(self.config, self.num_hands, *start)  # first: a refused reset leaves everything as it was
        if seed is not None or not hasattr(self, "np_random"):
            self.np_random, self.np_random_seed = _seeded(seed)
        self.game = Game(self.config, self.num_hands, self.np_random, *start)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.hand_ended = None
        self._rewards_pending = False
        self._moves, self._moves_hand = [], self.game.hand_index
        self._after_move()
        if self.render_mode == "human":
            self.render()

    @property
    def _game(self) -> Game:
        """The game being played (reset() must have been called)."""
        if self.game is None:
            raise IllegalActionError("no episode yet: call reset() first")
        return self.game

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat[agent]
        game = self._game
        observation = self.observer.encode(game.hand.state, seat, game.scores_before_hand)
        is_mover = agent == self.agent_selection and not self.terminations[agent]
        mask = self._mask.copy() if is_mover else self._no_moves.copy()
        return {"observation": observation, "action_mask": mask}

    def step(self, action: Any) -> None:
        if self.game is None or not self.agents:
            state = "no episode yet" if self.game is None else "the episode is over: every agent is done"
            raise IllegalActionError(f"step({action!r}) refused: {state}; call reset() to start an episode")
        agent = self.agent_selection
        self.hand_ended = None
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise IllegalActionError(f"{agent} is done: the only valid action is None, got {action!r}")
            self._was_dead_step(action)
            return
        if not self._is_legal(action):
            if self.illegal_action == "raise":
                raise IllegalActionError(f"{agent}: {self._game.hand.describe_illegal(action)}")
            self._penalize(agent, action)
            return
        game = self._game
        if self.public_moves:
            self._record_move(self._seat[agent], int(action))
        self.hand_ended = finished = game.apply(int(action), checked=True)
        if finished is not None or self._rewards_pending:
            # Only steps that end a hand pay anything; the others skip the bookkeeping.
            self._cumulative_rewards[agent] = 0.0
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewards_pending = finished is not None
            if finished is not None:
                self._pay_hand(finished)
            self._accumulate_rewards()
        else:
            self._cumulative_rewards[agent] = 0.0
        self._after_move()
        if self.render_mode == "human":
            self.render()

    def state(self) -> np.ndarray:
        """The whole state of the hand being played (every hand visible): a copy of the engine's array."""
        return self._game.hand.state.copy()

    def _is_legal(self, action: Any) -> bool:
        # The engine's notion of an integer action (0-d integer arrays included, bools not).
        value = action if type(action) is int else as_integer(action)
        return value is not None and 0 <= value < self._mask.shape[0] and self._mask[value] == 1

    def _pay_hand(self, ended: HandEnded) -> None:
        rewards = hand_rewards(np.array(ended.scores), self.reward_mode)
        info = ended.info()
        for seat, agent in enumerate(self.possible_agents):
            self.rewards[agent] = float(rewards[seat])
            self.infos[agent] = dict(info)
        if self._game.is_over:
            self.terminations = dict.fromkeys(self.agents, True)

    def _penalize(self, agent: str, action: Any) -> None:
        game = self._game
        penalty = illegal_action_penalty(self.config, self.reward_mode, game.hands_left)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = penalty
        self.terminations = dict.fromkeys(self.agents, True)
        self.infos[agent] = {"illegal_action": action, "penalty": penalty,
                             "reason": game.hand.describe_illegal(action)}
        self._mask[:] = 0
        self._rewards_pending = True
        self._accumulate_rewards()

    def _after_move(self) -> None:
        """Point agent_selection at the engine's player to move and cache its legal mask."""
        hand = self._game.hand
        self.agent_selection = self.possible_agents[hand.current_player]
        hand.legal_mask(out=self._mask)  # validates the next action and backs observe()
        if self.public_moves:
            n = self.config.num_players
            for seat, agent in enumerate(self.possible_agents):
                self.infos[agent]["public_moves"] = tuple(((mover - seat) % n, action) for mover, action in self._moves)

    def _record_move(self, seat: int, action: int) -> None:
        """Add a move to the public history of its hand (a new hand starts a new history)."""
        if self._game.hand_index != self._moves_hand:
            self._moves, self._moves_hand = [], self._game.hand_index
        self._moves.append((seat, action))

    # ------------------------------------------------------------------ display
    def render(self) -> str | np.ndarray | None:
        """The table: text ("ansi"), printed ("human", returns None), or a picture ("rgb_array")."""
        return self.renderer.render(self.game)

    def table_text(self) -> str:
        """The text picture of the table that render() shows."""
        return self.renderer.text(self.game)

    def layout_table(self) -> str:
        """The observation layout of this env as a Markdown index table."""
        return layout_table(self.config, self.num_hands)

    def close(self) -> None:
        pass


def _seeded(seed: int | None) -> tuple[np.random.Generator, int]:
    from gymnasium.utils import seeding
    return seeding.np_random(seed)


def raw_env(num_players: int | GameConfig = 4, highest_double: int = 9, num_hands: int = 1,
            render_mode: str | None = None, **options: Any) -> DominoesEnv:
    """The bare environment (no PettingZoo wrappers): fastest, no order checks. Takes
    :class:`DominoesEnv`'s arguments (the table rules as keywords, or a GameConfig)."""
    return DominoesEnv(num_players, highest_double, num_hands, render_mode, **options)


def env(num_players: int | GameConfig = 4, highest_double: int = 9, num_hands: int = 1,
        render_mode: str | None = None, **options: Any) -> AECEnv:
    """The environment wrapped in PettingZoo's OrderEnforcingWrapper (the recommended entry point).

    Illegal actions are the env's own business (an IllegalActionError, or the penalty),
    so PettingZoo's assert-based wrappers are not added.
    """
    return wrappers.OrderEnforcingWrapper(raw_env(num_players, highest_double, num_hands, render_mode, **options))
