"""The games played in the browser: one per tab, each with its own state on the server.

A :class:`WebGame` seats the person and the opponents at a dominoes AEC env (recorded as
``dominoes play --record`` records), plays the opponents' moves up to the person's turn, and
hands back every position on the way (the frames the page animates). It stops between two
decisions once abandoned (the page went away, the game idled out, the server stops).

A :class:`GameStore` keeps the games and bounds what one browser can take: at most
`max_games` going on in all and `max_per_session` per browser session, dropped when left idle.
A finished game takes no place: it keeps its record for download until it idles out.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import dominoes_env
from baselines.advice import Hints
from baselines.policies import registry
from baselines.policies.policy import Policy
from baselines.web.admission import WebOpponent
from baselines.web.table import table_data
from dominoes_env.core import actions
from dominoes_env.core.config import GameConfig, describe_table
from dominoes_env.core.state import HandState
from dominoes_env.records import RecordGames, dumps_record

MAX_GAMES = 64  #: games going on at once; a new one beyond is refused until one ends or idles out
MAX_GAMES_PER_SESSION = 8  #: games going on at once in one browser session (the anonymous one too)
MAX_GAMES_PER_PEER = 16  #: games going on at once from one network address (this machine's excepted)
#: When the server is full, a game untouched this long gives its place to a new one.
FULL_IDLE_SECONDS = 2 * 60
#: The peer of every client on this machine: loopback addresses cannot tell local users apart.
LOOPBACK = "loopback"
MAX_FINISHED = 256  #: finished games kept for their records (the downloaded ones make room first)
IDLE_SECONDS = 30 * 60  #: a game nobody touched for this long is dropped
MAX_WEB_HANDS = 20  #: hands of a game started from the page


class GameRefused(ValueError):
    """A request about a game that cannot be done (the message is the one-line reason)."""


class ServerFull(GameRefused):
    """No room for another game now (answered 503)."""


class SessionFull(GameRefused):
    """This browser session holds as many games going on as it may (answered 429)."""


class NotYet(GameRefused):
    """What is asked exists only later, e.g. the record before the game is over (answered 409)."""


class Abandoned(GameRefused):
    """The game was abandoned while its opponents played: its page went away, it idled out, or
    the server stops (answered 503 to whoever still listens)."""


@dataclass(frozen=True)
class Client:
    """Who asks: the browser session (a signed cookie; "" for every client without one) and the
    network address it comes from (:data:`LOOPBACK` for this machine)."""

    session: str
    peer: str = LOOPBACK


@dataclass(frozen=True)
class Frame:
    """One position to show: the table as the person sees it, and the move that led to it."""

    table: dict[str, Any]
    move: dict[str, Any] | None

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "move": self.move}


class WebGame:
    """The person in `seat`, `opponents` in the other seats in seat order after it.

    Nothing is played when it is made: :meth:`start` plays the opponents up to the person's
    first turn (the server does that once the game has its place).
    """

    def __init__(self, config: GameConfig, num_hands: int, seed: int, seat: int,
                 opponents: Sequence[WebOpponent], hint_parameters: Mapping[str, Mapping[str, Any]] | None = None
                 ) -> None:
        n = config.num_players
        self.config, self.num_hands, self.seat, self.seed = config, num_hands, seat, seed
        self.labels = ["you" if s == seat else opponents[(s - seat - 1) % n].label for s in range(n)]
        seeds = np.random.SeedSequence(seed).generate_state(n, dtype=np.uint64)
        self.opponents: dict[int, Policy] = {
            s: registry.build(opponents[(s - seat - 1) % n].spec, config, seed=int(seeds[s]))
            for s in range(n) if s != seat}
        self.hints: Hints | None = Hints(config, int(seeds[seat]), hint_parameters)
        self.env = RecordGames(dominoes_env.raw_env(config, num_hands=num_hands), players=self.labels)
        self.env.reset(seed=seed)
        self.lock = threading.Lock()
        self.last_used = time.monotonic()
        self.broken: str | None = None  # why the game cannot go on (an opponent failed, it was abandoned)
        self.downloaded = False  # its record was given
        self.abandoned = threading.Event()  # set from another thread: the opponents stop before their next decision
        self.opening: list[Frame] = []

    def start(self) -> list[Frame]:
        """Play the opponents up to the person's first turn: the frames of their moves."""
        self.opening = self._play_opponents_or_break()
        return self.opening

    def abandon(self) -> None:
        """Stop the opponents before their next decision (a call from any thread)."""
        self.abandoned.set()

    @property
    def finished(self) -> bool:
        """Over, or unable to go on: the game no longer takes a place."""
        return self.over or self.broken is not None

    @property
    def _game(self) -> Any:
        return self.env.unwrapped.game

    @property
    def over(self) -> bool:
        return bool(self._game.is_over)

    def _frame(self, hand: HandState, totals_before: np.ndarray, hand_index: int, move: dict[str, Any] | None
               ) -> Frame:
        return Frame(table_data(hand, shown=[self.seat], labels=self.labels, game_scores=totals_before.tolist(),
                                hand_index=hand_index, num_hands=self.num_hands), move)

    def state(self) -> dict[str, Any]:
        """The game now: the table from the person's seat, and the game's own facts."""
        game = self._game
        hand = game.hand
        # over: the last hand's end, every hand shown, its scores added to the totals before it
        before = np.asarray(game.totals) - hand.scores() if self.over else np.asarray(game.scores_before_hand)
        table = self._frame(hand, before, game.hand_index, None).table
        your_turn = not self.over and table["to_move"] == self.seat
        return {"table": table, "seat": self.seat, "labels": self.labels, "your_turn": your_turn,
                "game_over": self.over, "totals": np.asarray(game.totals).tolist() if self.over else None,
                "moves_recorded": self.env.recorded.num_moves, "table_name": describe_table(self.config)}

    def _step(self, seat: int, action: int) -> list[Frame]:
        """Play `action` for `seat` through the env; the frames it makes (the finished hand, then the next deal)."""
        game = self._game
        hand, totals_before, hand_index = game.hand, np.array(game.scores_before_hand), game.hand_index
        text = actions.describe(self.config, action, seat)
        self.env.step(action)
        move = {"seat": seat, "action": int(action), "text": text, "label": self.labels[seat]}
        frames = [self._frame(hand, totals_before, hand_index, move)]
        if game.hand is not hand and not game.is_over:  # the next hand was dealt
            frames.append(self._frame(game.hand, np.asarray(game.scores_before_hand), game.hand_index, None))
            for policy in [*self.opponents.values()]:
                policy.reset()
            if self.hints is not None:
                self.hints.reset()
        return frames

    def _play_opponents(self) -> list[Frame]:
        frames: list[Frame] = []
        env = self.env
        while not self.over:
            agent = env.agent_selection
            seat = env.possible_agents.index(agent)
            if seat == self.seat:
                assert self.hints is not None
                self.hints.follow(env.observe(agent)["observation"])  # the champion's hint sees every turn
                break
            if self.abandoned.is_set():
                raise Abandoned("the game was abandoned while its opponents played (its page went away, it idled "
                                "out, or the server stops)")
            seen = env.observe(agent)
            action = int(self.opponents[seat].act(seen["observation"], seen["action_mask"]))
            frames += self._step(seat, action)
        return frames

    def _play_opponents_or_break(self) -> list[Frame]:
        """The opponents' moves; an opponent's failure or an abandon ends the game, which says why."""
        try:
            frames = self._play_opponents()
        except Abandoned as abandoned:
            self.broken = str(abandoned)
        except Exception as error:  # an opponent's own failure: the game cannot go on, and says why
            seat = self.env.possible_agents.index(self.env.agent_selection)
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            self.broken = f"the game cannot go on: {self.labels[seat]} (player_{seat}) failed: {reason}"
        if self.finished:
            self._release()
        if self.broken is not None:
            raise (Abandoned if self.abandoned.is_set() else GameRefused)(self.broken)
        return frames

    def _release(self) -> None:
        """A finished game keeps its table and record, not its players (networks, search trees)."""
        self.opponents.clear()
        self.hints = None

    def move(self, action: Any) -> list[Frame]:
        """Play the person's move, then the opponents' up to the person's next turn.

        Raises:
            GameRefused: not the person's turn, the game is over, or the move is illegal (the env's
                reason); the game is unchanged. Or an opponent failed, or the game was abandoned
                meanwhile: the game cannot go on (:class:`Abandoned` for the latter).
        """
        if self.broken is not None:
            raise GameRefused(self.broken)
        if self.over:
            raise GameRefused("the game is over: start a new one")
        if self.env.possible_agents.index(self.env.agent_selection) != self.seat:
            raise GameRefused("it is not your turn")
        if isinstance(action, bool) or not isinstance(action, int):
            raise GameRefused(f"an action is an integer from 0 to {self.config.num_actions - 1}, got {action!r}")
        try:
            frames = self._step(self.seat, action)
        except ValueError as error:  # IllegalActionError, or a number that is no action of the table
            raise GameRefused(str(error).splitlines()[0]) from None
        return frames + self._play_opponents_or_break()

    def hint(self) -> dict[str, Any]:
        """What the strongest shipped players would play here, td_lambda's predicted pips per move, and the
        tile count: the tiles each opponent (and the boneyard) most likely holds, from the beliefs."""
        if self.finished or self.env.possible_agents.index(self.env.agent_selection) != self.seat:
            raise GameRefused("a hint is for your turn")
        assert self.hints is not None
        seen = self.env.observe(self.env.agent_selection)
        observation, mask = seen["observation"], seen["action_mask"]
        legal = np.flatnonzero(mask).tolist()
        predicted = self.hints.predicted_pips(observation, mask)
        moves = [{"action": action, "text": actions.describe(self.config, action, self.seat),
                  "predicted_pips": None if predicted is None else round(float(predicted[k]), 2)}
                 for k, action in enumerate(legal)]
        return {"choices": self.hints.choices(observation, mask), "moves": moves,
                "unavailable": dict(self.hints.missing), "holdings": self.hints.holdings()}

    def record_text(self) -> str:
        """The finished game as a record (``dominoes replay`` and ``read_record`` read it).

        Raises:
            NotYet: the game goes on: a record holds every deal, the hidden hands and the
                boneyard's order included.
        """
        if not self.over:
            raise NotYet("the record is given when the game is over: it shows every hand and the boneyard")
        self.downloaded = True
        return dumps_record(self.env.recorded)


class GameStore:
    """The games being played, by id (an unguessable token), each owned by the browser session
    that made it: another session asking for it is told there is no such game.

    Places: at most `max_games` games going on in all, `max_per_session` in one session and
    `max_per_peer` from one network address other than this machine's (a client that drops its
    cookie to get a new session is still held to its address's budget). A game nobody touched
    for `idle_seconds` is dropped (and abandoned, should its opponents still play).

    A full server makes room rather than refuse, in this order: the least recently used game of
    a session that holds at least two more games than the one asking (so a client that mints
    sessions can at most bring every session down to one game, never take a newcomer's only
    game), then any game untouched for `full_idle_seconds`. Only when neither exists is the
    request refused. On this machine every client shares the loopback address, so the
    address budget cannot tell a local script from a local browser: there the fair share
    alone keeps a place for the browser.

    A finished game takes no place and keeps its record until it idles out; past
    `max_finished` of them, the downloaded ones, then the oldest, make room.
    """

    def __init__(self, max_games: int = MAX_GAMES, idle_seconds: float = IDLE_SECONDS,
                 max_per_session: int = MAX_GAMES_PER_SESSION, max_finished: int = MAX_FINISHED,
                 max_per_peer: int = MAX_GAMES_PER_PEER, full_idle_seconds: float = FULL_IDLE_SECONDS) -> None:
        self.max_games, self.idle_seconds = max_games, idle_seconds
        self.max_per_session, self.max_finished = max_per_session, max_finished
        self.max_per_peer, self.full_idle_seconds = max_per_peer, min(full_idle_seconds, idle_seconds)
        self._games: dict[str, WebGame] = {}
        self._owners: dict[str, Client] = {}  # game id -> who made it
        self._promised: dict[str, str] = {}  # a game being started -> the game whose place it takes once started
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def going_on(self, session: str | None = None) -> int:
        """Games going on (in `session`, if given)."""
        with self._lock:
            return self._count(session)

    def _going(self) -> list[str]:
        """The games going on that keep their place (not finished, not promised away to a game starting)."""
        promised = set(self._promised.values())
        return [key for key, game in self._games.items() if not game.finished and key not in promised]

    def _count(self, session: str | None = None, peer: str | None = None) -> int:
        return sum(1 for key in self._going() if (session is None or self._owners[key].session == session)
                   and (peer is None or self._owners[key].peer == peer))

    def _drop(self, key: str) -> None:
        self._games.pop(key).abandon()
        del self._owners[key]
        self._promised.pop(key, None)

    def _drop_idle(self) -> None:
        now = time.monotonic()
        for key in [key for key, game in self._games.items() if now - game.last_used > self.idle_seconds]:
            self._drop(key)
        finished = sorted((not game.downloaded, game.last_used, key) for key, game in self._games.items()
                          if game.finished)
        for _, _, key in finished[:max(0, len(finished) - self.max_finished)]:
            self._drop(key)

    def _room_to_make(self, session: str) -> str | None:
        """The game a full server gives up for `session` (see the class), or None."""
        going = [(self._games[key].last_used, key) for key in self._going() if key not in self._promised]
        held = Counter(self._owners[key].session for _, key in going)
        fair = [(used, key) for used, key in going if held[self._owners[key].session] >= held[session] + 2]
        now = time.monotonic()
        idle = [(used, key) for used, key in going if now - used >= self.full_idle_seconds]
        for candidates in (fair, idle):
            if candidates:
                return min(candidates)[1]
        return None

    def _refuse_when_full(self, client: Client, make_room: bool = False) -> str | None:
        self._drop_idle()
        if self._count(client.session) >= self.max_per_session:
            raise SessionFull(f"this browser has {self.max_per_session} games going on already; finish one, or wait "
                              f"until one idles out (after {self.idle_seconds / 60:g} minutes untouched)")
        if client.peer != LOOPBACK and self._count(peer=client.peer) >= self.max_per_peer:
            raise SessionFull(f"this address has {self.max_per_peer} games going on already; finish one, or wait "
                              f"until one idles out (after {self.idle_seconds / 60:g} minutes untouched)")
        if self._count() >= self.max_games:
            victim = self._room_to_make(client.session)
            if victim is None:
                raise ServerFull(f"the server is full: it holds {self.max_games} games going on already; try again "
                                 f"when one ends or idles out (after {self.full_idle_seconds / 60:g} minutes "
                                 f"untouched)")
            if make_room:
                return victim
        return None

    def room(self, client: Client) -> int:
        """How many more games `client` could start now (places free, or that a full server would make)."""
        with self._lock:
            self._drop_idle()
            own = self.max_per_session - self._count(client.session)
            if client.peer != LOOPBACK:
                own = min(own, self.max_per_peer - self._count(peer=client.peer))
            free = self.max_games - self._count()
            if free <= 0:
                free = int(self._room_to_make(client.session) is not None)
            return max(0, min(own, free))

    def check_room(self, client: Client) -> None:
        """Refuse at once when no game could be added for `client` (before a game is built).

        Raises:
            ServerFull: every place holds a game going on, and none can be given up for this session.
            SessionFull: the session, or its address, holds as many games going on as it may.
        """
        with self._lock:
            self._refuse_when_full(client)

    def add(self, game: WebGame, client: Client) -> str:
        """Give `game` a place for `client`: its id (or ServerFull, SessionFull as :meth:`check_room`).

        On a full server the place of another game is promised to it (see the class): that game
        goes on until :meth:`settle` (this one started) drops it, or :meth:`discard` (its start
        failed) gives its place back, so a start that fails costs nobody a game.
        """
        with self._lock:
            victim = self._refuse_when_full(client, make_room=True)
            key = secrets.token_urlsafe(12)
            self._games[key] = game
            self._owners[key] = client
            if victim is not None:
                self._promised[key] = victim
            return key

    def settle(self, key: str) -> None:
        """The game `key` started: the game whose place it was promised is dropped."""
        with self._lock:
            victim = self._promised.pop(key, None)
            if victim is not None and victim in self._games:
                self._drop(victim)

    def get(self, key: str, session: str | None = None) -> WebGame:
        """The game `key`, if `session` made it (None: whoever made it, for the server's own use).

        Raises:
            KeyError: no such game in this session (the same whether it never was, idled out,
                or belongs to another session).
        """
        with self._lock:
            self._drop_idle()
            game = self._games.get(key)
            if game is None or (session is not None and self._owners[key].session != session):
                raise KeyError(key)
            game.last_used = time.monotonic()
            return game

    def discard(self, key: str) -> None:
        """Drop a game nobody will see (its start failed)."""
        with self._lock:
            if key in self._games:
                self._drop(key)

    def abandon_all(self) -> None:
        """The server stops: every game's opponents stop before their next decision."""
        with self._lock:
            for game in self._games.values():
                game.abandon()
