"""One learning seat against policies in the other seats: the game as a Gymnasium environment.

Most single-agent libraries (Stable-Baselines3, Tianshou, CleanRL-style loops) expect a
``gymnasium.Env``: one agent, ``step(action) -> (observation, reward, terminated,
truncated, info)``. This view gives them one seat of the table. Between two of the
learner's moves the other seats are played by the opponents, so the reward of a step is
everything the learner earned from its move up to its next one, including the end of a
hand that an opponent's move brought about.

It is a thin adapter over the rules core, as the AEC env is; rewards and the penalty for
an illegal action come from :mod:`dominoes_env.core.rewards`, so a reward mode means the
same thing in every view.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np
from gymnasium import spaces

from dominoes_env.core import validation
from dominoes_env.core.config import MAX_HANDS_PER_GAME, GameConfig, TableRuleOptions, table_of
from dominoes_env.core.errors import IllegalActionError
from dominoes_env.core.game import Game
from dominoes_env.core.observation import Observer
from dominoes_env.core.render import HandsShown
from dominoes_env.core.rewards import REWARD_MODES, hand_rewards, illegal_action_penalty
from dominoes_env.core.state import HandState
from dominoes_env.opponent_seats import report_game
from dominoes_env.players import Player, PlayerFactory, by_name, resolve_opponent
from dominoes_env.rendering import RENDER_MODES, TableRenderer

if TYPE_CHECKING:
    from typing_extensions import Unpack

OBSERVATION_MODES = ("vector", "dict")
ILLEGAL_ACTION_MODES = ("penalize", "raise")


#: An opponent: a policy spec (``"random"``, ``"best_line(max_line_length=6)"``,
#: ``"td_lambda@run.safetensors"``; names are resolved by an installed package,
#: :data:`dominoes_env.players.NAME_RESOLVERS`), a ``baselines.policies.specs.PolicySpec``, a factory
#: with ``make(config, seed)`` (:class:`~dominoes_env.players.PlayerFactory`), or a ready
#: object with ``act(observation, action_mask)`` and ``reset()`` (a ``baselines.Policy``).
Opponent = Any
#: The opponents: one spec for every other seat (``"random"`` or ``"random:3"``), a
#: sequence of n - 1 opponents, or a callable ``opponents(rng) -> sequence`` called at every
#: reset with the env's generator (curricula, self-play against frozen copies); a callable
#: with a ``report_game(drawn, seat, game_scores)`` method is told how each episode ended
#: (:func:`dominoes_env.opponent_seats.report_game`).
Opponents = str | Sequence[Opponent] | Callable[[np.random.Generator], Sequence[Opponent]]


class SingleAgentEnv(gymnasium.Env):
    """Mexican-Train dominoes for one learning seat (Gymnasium API); the others play policies.

    Args:
        opponents: the other seats' players (see :data:`Opponents`); default ``"random"``, a
            random player in every other seat (``("random", "random", "random")`` at 4
            players). Named policies are built afresh at every reset, seeded from the env's
            generator, so ``reset(seed=...)`` fixes them too; ready objects are used as they
            are (their own generator is not reseeded). Opponent k sits k seats after the
            learner.
        num_players: seats at the table, as in :func:`dominoes_env.env` (or a GameConfig).
        highest_double: N of the double-N set.
        num_hands: hands in an episode.
        seat: the learner's seat, or None (default) for a random seat at every reset. With
            one-hand episodes the player who is dealt fewer tiles sits in a fixed seat, so
            a fixed learning seat flatters (or handicaps) the learner.
        reward: "score", "zero_sum" or "rank" (see :mod:`dominoes_env.core.rewards`), from
            the learner's point of view; paid at the step after which a hand ended.
        observation: "vector" (default: the int8 observation vector) or "dict"
            (``{"observation": vector, "action_mask": mask}``).
        illegal_action: "penalize" (default) ends the episode with a penalty worse than any
            legal outcome (in every reward mode) and says so in ``info["illegal_action"]``,
            ``info["penalty"]`` and ``info["reason"]``, so Gymnasium's ``check_env`` and
            other checkers that send unmasked random actions run; "raise" raises
            :class:`~dominoes_env.IllegalActionError` and changes nothing. A value that is not
            an action of the space at all (a float, -1, too large) always raises.
        render_mode: None, "ansi" (text), "human" (printed) or "rgb_array" (a picture; the
            ``image`` extra).
        render_hands: whose tiles the picture shows: "mover" (default: the learner, whenever it
            is to move), "all", or a seat number.
        table_rules: the table rules as keywords (:class:`~dominoes_env.core.config.TableRuleOptions`,
            see :func:`dominoes_env.make_config`), or a GameConfig in place of `num_players`; the
            rule book's game by default.

    Legal moves: ``action_masks()`` (a bool array, as sb3-contrib's MaskablePPO expects) and
    ``info["action_mask"]`` (int8). ``info`` also holds ``seat`` and, at the step after
    which a hand ended, ``hand_scores``, ``game_scores`` and ``went_out``.
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 2}

    def __init__(self, opponents: Opponents = "random", num_players: int | GameConfig = 4,
                 highest_double: int = 9, seat: int | None = None, num_hands: int = 1, *, reward: str = "score",
                 observation: str = "vector", illegal_action: str = "penalize",
                 render_mode: str | None = None, render_hands: HandsShown = "mover",
                 **table_rules: Unpack[TableRuleOptions]) -> None:
        self.config = table_of(num_players, highest_double, table_rules)
        n = self.config.num_players
        self.fixed_seat = None if seat is None else validation.integer("seat", seat, 0, n - 1)
        self.num_hands = validation.integer("num_hands", num_hands, 1, MAX_HANDS_PER_GAME)
        self.reward_mode = validation.choice("reward", reward, REWARD_MODES)
        self.observation_mode = validation.choice("observation", observation, OBSERVATION_MODES)
        self.illegal_action = validation.choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        self.renderer = TableRenderer(self.config, self.num_hands, render_mode, render_hands)
        self.render_mode = render_mode
        self._opponents = opponents
        if not callable(opponents) or isinstance(opponents, str):
            self._check_opponents(_opponent_list(opponents, n), build=True)
        self.observer = Observer(self.config, self.num_hands)
        vector = spaces.Box(0, 1, (self.observer.size,), np.int8)
        mask = spaces.Box(0, 1, (self.config.num_actions,), np.int8)
        self.observation_space = vector if self.observation_mode == "vector" else \
            spaces.Dict({"observation": vector, "action_mask": mask})
        self.action_space = spaces.Discrete(self.config.num_actions)
        self.game: Game | None = None
        self._drawn: Any = None  # what a per-episode opponents callable returned for this episode
        self.seat = 0
        self.players: list[Player | None] = []
        self._mask = np.zeros(self.config.num_actions, dtype=np.int8)

    # ------------------------------------------------------------------ opponents
    def _check_opponents(self, opponents: list[Opponent], build: bool = False) -> list[Player]:
        """The n - 1 opponents as players (named ones built, seeded from the env's generator)."""
        n = self.config.num_players
        if len(opponents) != n - 1:
            raise ValueError(f"{n} players need {n - 1} opponents, got {len(opponents)}")
        seeds = (np.random.default_rng(0) if build else self.np_random).integers(2**63, size=len(opponents))
        return [_player(opponent, self.config, int(seed)) for opponent, seed in zip(opponents, seeds)]

    def _episode_opponents(self) -> list[Player]:
        chosen = self._opponents
        if callable(chosen) and not isinstance(chosen, str):
            chosen = chosen(self.np_random)
            self._drawn = chosen
        return self._check_opponents(_opponent_list(chosen, self.config.num_players))

    def _report_game(self) -> None:
        """The episode is over: tell a per-episode opponents callable how it ended (:func:`report_game`)."""
        scores = None if "illegal_action" in self._finished else self._game.totals.copy()
        report_game(self._opponents, self._drawn, self.seat, scores)
        self._drawn = None

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Any, dict[str, Any]]:
        """Deal a new episode (a random learner seat unless fixed) and play the opponents up
        to the learner's first move.

        ``options``: ``{"position": HandState, "hand_index": k}`` starts from a position, with
        ``"hands_played"`` and ``"game_scores"`` to resume a multi-hand game in its middle, as
        the AEC env's reset does; ``{"seat": s}`` fixes the learner's seat for this episode.
        """
        # every option is checked before the generator or the episode changes: a refused reset
        # leaves the game in progress, its seat, its players and the deals to come as they were
        seed = validation.seed("seed", seed)
        options = dict(options or {})
        n = self.config.num_players
        chosen_seat = validation.integer("seat", options["seat"], 0, n - 1) if "seat" in options else None
        position = options.get("position")
        if position is not None and not isinstance(position, HandState):
            raise ValueError(f"options['position'] must be a HandState, got {position!r}")
        start = (position, options.get("hand_index"), options.get("hands_played", 0), options.get("game_scores"))
        Game.check_start(self.config, self.num_hands, *start)
        super().reset(seed=seed)
        if chosen_seat is not None:
            seat = chosen_seat
        elif self.fixed_seat is not None:
            seat = self.fixed_seat
        else:
            seat = int(self.np_random.integers(n))
        players: list[Player | None] = [None] * n
        for k, player in enumerate(self._episode_opponents(), start=1):
            players[(seat + k) % n] = player
        self.seat, self.players = seat, players
        self.game = Game(self.config, self.num_hands, self.np_random, *start)
        self._reset_opponents()
        self._finished: dict[str, Any] = {}
        self._play_opponents()
        if self.game.is_over:  # the opponents ended it before the learner's first move
            self._report_game()
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        game = self._game
        if game.is_over:
            raise IllegalActionError(f"step({action!r}) refused: the episode is over; call reset()")
        value = validation.as_integer(action)
        if value is None or not 0 <= value < self.config.num_actions:
            raise IllegalActionError(f"action {action!r} is not an action of this env: actions are integers "
                                     f"0..{self.config.num_actions - 1}; {game.hand.describe_illegal(action)}")
        if self._mask[value] != 1:
            if self.illegal_action == "raise":
                raise IllegalActionError(f"seat {self.seat}: {game.hand.describe_illegal(value)}")
            return self._penalize(value)
        self._finished = {}
        reward = self._apply(value) + self._play_opponents()
        if game.is_over:
            self._report_game()
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, game.is_over, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a bool array (all False once the episode is over)."""
        return self._mask.astype(bool)

    # ------------------------------------------------------------------ playing
    @property
    def _game(self) -> Game:
        if self.game is None:
            raise IllegalActionError("no episode yet: call reset() first")
        return self.game

    def _apply(self, action: int) -> float:
        """Play `action` for the seat to move; the learner's reward if it ended a hand (whose
        result then goes into the step's info)."""
        game = self._game
        finished = game.apply(action, checked=True)
        if finished is None:
            return 0.0
        self._finished = finished.info()
        if not game.is_over:
            self._reset_opponents()
        return float(hand_rewards(np.array(finished.scores), self.reward_mode)[self.seat])

    def _play_opponents(self) -> float:
        """Opponents move until the learner's turn or the end of the episode; the learner's reward."""
        game = self._game
        reward = 0.0
        while not game.is_over and game.hand.current_player != self.seat:
            seat = game.hand.current_player
            hand = game.hand
            player = self.players[seat]
            assert player is not None
            action = player.act(self.observer.encode(hand.state, seat, game.scores_before_hand),
                                hand.legal_mask())
            if not hand.is_legal(action):
                raise IllegalActionError(f"the opponent in seat {seat} ({player!r}) played an illegal action: "
                                         f"{hand.describe_illegal(action)}")
            reward += self._apply(int(action))
        if game.is_over:
            self._mask[:] = 0
        else:
            game.hand.legal_mask(out=self._mask)
        return reward

    def _reset_opponents(self) -> None:
        for player in self.players:
            if player is not None:
                player.reset()

    def _penalize(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        game = self._game
        penalty = illegal_action_penalty(self.config, self.reward_mode, game.hands_left)
        reason = game.hand.describe_illegal(action)
        game.end()
        self._mask[:] = 0
        self._finished = {"illegal_action": action, "penalty": penalty, "reason": reason}
        self._report_game()
        return self._observation(), penalty, True, False, self._info()

    def _observation(self) -> Any:
        game = self._game
        vector = self.observer.encode(game.hand.state, self.seat, game.scores_before_hand)
        if self.observation_mode == "vector":
            return vector
        return {"observation": vector, "action_mask": self._mask.copy()}

    def _info(self) -> dict[str, Any]:
        return {"seat": self.seat, "action_mask": self._mask.copy(), **self._finished}

    # ------------------------------------------------------------------ display
    def render(self) -> str | np.ndarray | None:
        """The table: text ("ansi"), printed ("human", returns None), or a picture ("rgb_array")."""
        return self.renderer.render(self.game, note=f"(learner: player_{self.seat})")


def _opponent_list(opponents: Any, num_players: int) -> list[Opponent]:
    """A spec string stands for every other seat (``"random"``) or says how many (``"random:3"``)."""
    if isinstance(opponents, str):
        found = by_name(opponents, default_copies=num_players - 1)
        assert found is not None  # a text is resolved or refused
        factory, copies = found
        return [factory] * copies
    if isinstance(opponents, Sequence):
        return list(opponents)
    raise ValueError(f"opponents must be a policy spec, a sequence of {num_players - 1} opponents, or a "
                     f"callable returning one per episode; got {opponents!r}")


def _player(opponent: Opponent, config: GameConfig, seed: int) -> Player:
    """A ready player: built from a spec (a name, a PolicySpec) or a factory, or an object with act()
    and reset()."""
    opponent = resolve_opponent(opponent, config)
    if isinstance(opponent, PlayerFactory):
        return opponent.make(config, seed=seed)
    if callable(getattr(opponent, "act", None)) and callable(getattr(opponent, "reset", None)):
        return opponent
    raise ValueError(f"cannot seat {opponent!r} as an opponent: give a policy spec ('random', "
                     f"'best_line(max_line_length=6)'), a factory with make(config, seed), or an object with act() "
                     f"and reset()")
