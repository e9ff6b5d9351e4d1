"""The web app of ``dominoes serve``: the pages and a JSON API, on Starlette.

Only this server's own pages are answered (:mod:`baselines.web.guard`), and a request seats
only what the server was started to allow (:mod:`baselines.web.admission`).

API (every refusal is a 4xx with ``{"error": "one line"}`` and changes nothing):

- ``GET /api/players``: the shipped players an opponent can be, and the default one;
- ``POST /api/games`` ``{"players", "highest", "rules", "seat", "opponents", "hands", "seed"}``:
  a new game (``id``, its state, and the frames of the opponents' moves before your turn);
- ``GET /api/games/{id}``: its state; ``POST /api/games/{id}/move`` ``{"action": N}``: your move,
  then the opponents' up to your next turn (``frames``, ``state``); ``GET /api/games/{id}/hint``;
  ``GET /api/games/{id}/record``: the record, as a download;
- ``GET /api/records``: the records in ``--records``; ``GET /api/records/{name}?hand=K``: its
  summary and the frames of hand K; ``POST /api/records/upload?hand=K``: the same for an uploaded
  record (the request body).
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections.abc import Awaitable, Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from baselines.advice import Hints, default_opponent
from baselines.policies import registry, specs
from baselines.web.admission import SHIPPED, Admission
from baselines.web.games import (
    MAX_WEB_HANDS,
    Abandoned,
    Client,
    GameRefused,
    GameStore,
    NotYet,
    ServerFull,
    SessionFull,
    WebGame,
)
from baselines.web.guard import LOCAL_HOSTS, SECURITY_HEADERS, OwnOriginOnly, peer_of, session_of
from baselines.web.watch import MAX_UPLOAD_BYTES, RecordLibrary, hand_frames, parse_upload, summary
from dominoes_env.core import validation
from dominoes_env.core.config import (
    MAX_HIGHEST,
    MAX_PLAYERS,
    MIN_HIGHEST,
    MIN_PLAYERS,
    RULE_SETS,
    GameConfig,
    describe_table,
    make_config,
)
from dominoes_env.records import RecordError

STATIC = Path(str(resources.files("baselines.web") / "static"))
MAX_REQUEST_BYTES = 64 * 1024  #: a request that is not an upload
#: Records read at once (uploaded or from the directory): each takes memory up to a bounded
#: multiple of its size (:func:`dominoes_env.records.loads_within_budget`), so this bounds the total.
MAX_RECORDS_AT_ONCE = 2
#: How long a record request waits for its turn before it is told to try again (503).
RECORD_WAIT_SECONDS = 10.0
#: How long an upload's body may take to arrive once its turn came (408 past it): a client that
#: sends the headers and then stalls holds a turn no longer than this.
UPLOAD_SECONDS = 15.0
#: How often a request whose opponents are playing looks whether its client went away.
DISCONNECT_POLL_SECONDS = 0.2


class RequestTooLarge(GameRefused):
    """A request body over its limit (answered 413)."""


class Busy(GameRefused):
    """The server reads as many records as it may at once (answered 503)."""


class TooSlow(GameRefused):
    """A request body that did not arrive in time (answered 408)."""


#: The status of each kind of refusal; any other GameRefused or RecordError is a 400.
STATUS: dict[type[Exception], int] = {RequestTooLarge: 413, ServerFull: 503, SessionFull: 429, NotYet: 409,
                                      Abandoned: 503, Busy: 503, TooSlow: 408}


def refuse(reason: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": reason}, status_code=status)


def _refuse_declared_length(request: Request, limit: int) -> None:
    """Refuse a request whose declared length is over `limit` bytes, before any of it is read."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise RequestTooLarge(f"the request is more than the {limit:,} bytes it may be")


async def _body(request: Request, limit: int) -> bytes:
    """The request body, refused past `limit` bytes without reading all of it."""
    _refuse_declared_length(request, limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise RequestTooLarge(f"the request is more than the {limit:,} bytes it may be")
    return bytes(body)


async def _json_object(request: Request) -> dict[str, Any]:
    body = await _body(request, MAX_REQUEST_BYTES)
    try:
        data = json.loads(body or b"{}")
    except (ValueError, RecursionError):  # not UTF-8 or JSON, nested too deep, an integer too long to read
        raise GameRefused("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise GameRefused("the request body is a JSON object")
    return data


def new_game(data: dict[str, Any], admission: Admission) -> WebGame:
    """A game from the page's choices, each checked (one-line GameRefused naming the field), not started."""
    try:
        players = validation.integer("players", data.get("players", 4), MIN_PLAYERS, MAX_PLAYERS)
        highest = validation.integer("highest", data.get("highest", 9), MIN_HIGHEST, MAX_HIGHEST)
        rules = validation.choice("rules", data.get("rules", "rule_book"), RULE_SETS)
        config = make_config(players, highest, rules=rules)
        seat = validation.integer("seat", data.get("seat", 0), 0, players - 1)
        hands = validation.integer("hands", data.get("hands", 1), 1, MAX_WEB_HANDS)
        seed = validation.seed("seed", data.get("seed"))
        texts = data.get("opponents")  # absent or null: the table's default opponent in every seat
        if texts is not None and (not isinstance(texts, list) or not texts
                                  or not all(isinstance(text, str) for text in texts)):
            raise ValueError(f"opponents is a non-empty list of policy specs (or left out for the default), got "
                             f"{validation.shown(texts)}")
        opponents = admission.opponents(texts, config)
    except ValueError as error:
        raise GameRefused(str(error).splitlines()[0]) from None
    return WebGame(config, hands, secrets.randbits(63) if seed is None else seed, seat, opponents,
                   admission.hint_parameters())


def _query_table(query: Any) -> GameConfig:
    """The table a query names (``?players=6&highest=12&rules=mexican_train``; 4 players, double-nine by default)."""
    def count(name: str, default: str, low: int, high: int) -> int:
        text = query.get(name, default)
        return validation.integer(name, int(text) if re.fullmatch("[0-9]{1,3}", text) else text, low, high)

    try:
        return make_config(count("players", "4", MIN_PLAYERS, MAX_PLAYERS), count("highest", "9", MIN_HIGHEST,
                                                                                   MAX_HIGHEST),
                           rules=validation.choice("rules", query.get("rules", "rule_book"), RULE_SETS))
    except ValueError as error:
        raise GameRefused(str(error).splitlines()[0]) from None


def client_of(scope: Any) -> Client:
    """Who sent a request: its browser session and its address."""
    return Client(session_of(scope), peer_of(scope))


def _locked(game: WebGame, work: Callable[[], Any]) -> Any:
    """`work()` under the game's lock, in a worker thread: a move in progress is never seen half done."""
    def run() -> Any:
        with game.lock:
            return work()

    return run_in_threadpool(run)


async def _watched(request: Request, game: WebGame, work: Callable[[], Any]) -> Any:
    """:func:`_locked`, and the game abandoned if the client goes away meanwhile: its opponents
    stop before their next decision instead of playing on for nobody."""
    task = asyncio.ensure_future(_locked(game, work))
    while not task.done():
        await asyncio.wait({task}, timeout=DISCONNECT_POLL_SECONDS)
        if not task.done() and await request.is_disconnected():
            game.abandon()
    return task.result()


class Api:
    """The API's handlers, over the games, the records directory and what requests may seat."""

    def __init__(self, games: GameStore, library: RecordLibrary, admission: Admission) -> None:
        self.games, self.library, self.admission = games, library, admission
        # uploads and the directory's records take turns apart: stalled uploads never keep the directory's
        # records from being watched
        self._uploading = asyncio.Semaphore(MAX_RECORDS_AT_ONCE)
        self._reading = asyncio.Semaphore(MAX_RECORDS_AT_ONCE)
        self._hints_by_table: dict[Any, Hints] = {}
        self._offers: dict[GameConfig, tuple[list[str], str]] = {}

    def _game(self, request: Request) -> WebGame:
        """The game the path names, if this request's session made it (404 otherwise)."""
        return self.games.get(request.path_params["game"], session_of(request.scope))

    @staticmethod
    async def _in_turn(turns: asyncio.Semaphore, read: Callable[[], Awaitable[Any]]) -> Any:
        """`read()` once one of the :data:`MAX_RECORDS_AT_ONCE` `turns` is free (503 after
        :data:`RECORD_WAIT_SECONDS`)."""
        try:
            await asyncio.wait_for(turns.acquire(), RECORD_WAIT_SECONDS)
        except asyncio.TimeoutError:
            raise Busy(f"the server is reading {MAX_RECORDS_AT_ONCE} records already; try again in a moment") from None
        try:
            return await read()
        finally:
            turns.release()

    def _hints_for(self, config: Any) -> Hints:
        if config not in self._hints_by_table:
            self._hints_by_table[config] = Hints(config, 0, self.admission.hint_parameters())
        return self._hints_by_table[config]

    async def players(self, request: Request) -> Response:
        """The opponents the page offers at the table its query names (4 players, double-nine by default):
        the shipped players that play it, the strongest of them as the default."""
        table = _query_table(request.query_params)
        offered, default = await run_in_threadpool(self._offered, table)
        room = self.games.room(client_of(request.scope))
        return JSONResponse({"players": offered, "default": default, "rule_sets": list(RULE_SETS),
                             "max_hands": MAX_WEB_HANDS, "room": room, "table": describe_table(table)})

    def _offered(self, table: GameConfig) -> tuple[list[str], str]:
        if table not in self._offers:
            playing = []
            for name in SHIPPED:
                try:
                    registry.check(specs.PolicySpec(name), table)
                except ValueError:  # no weights ship for this table
                    continue
                playing.append(name)
            self._offers[table] = (playing, default_opponent(table).label)
        return self._offers[table]

    async def create(self, request: Request) -> Response:
        data = await _json_object(request)
        client = client_of(request.scope)
        self.games.check_room(client)  # before a game is built
        game = await run_in_threadpool(new_game, data, self.admission)
        key = self.games.add(game, client)
        try:
            frames = await _watched(request, game, game.start)
        except GameRefused:
            self.games.discard(key)  # nobody was told its id; a game it was to take the place of keeps it
            raise
        self.games.settle(key)  # started: a game whose place it takes is dropped now
        return JSONResponse({"id": key, "frames": [frame.to_json() for frame in frames], "state": game.state()},
                            status_code=201)

    async def state(self, request: Request) -> Response:
        game = self._game(request)
        return JSONResponse(await _locked(game, game.state))

    async def move(self, request: Request) -> Response:
        game = self._game(request)
        data = await _json_object(request)
        if "action" not in data:
            raise GameRefused("give the move as {\"action\": N}")

        def play() -> dict[str, Any]:
            frames = game.move(data["action"])
            return {"frames": [frame.to_json() for frame in frames], "state": game.state()}

        return JSONResponse(await _watched(request, game, play))

    async def hint(self, request: Request) -> Response:
        game = self._game(request)
        return JSONResponse(await _locked(game, game.hint))

    async def record(self, request: Request) -> Response:
        game = self._game(request)
        text = await _locked(game, game.record_text)
        return Response(text, media_type="application/json",
                        headers={"Content-Disposition": 'attachment; filename="dominoes-game.json"'})

    def _frames_of(self, recorded: Any, request: Request) -> dict[str, Any]:
        raw = request.query_params.get("hand", "0")
        try:
            number = validation.integer("hand", int(raw) if re.fullmatch("[0-9]{1,7}", raw) else raw, 0,
                                        len(recorded.hands) - 1)
        except ValueError as error:
            raise GameRefused(str(error)) from None
        return {"summary": summary(recorded), "hand": number,
                "frames": hand_frames(recorded, number, self._hints_for(recorded.config))}

    async def record_list(self, request: Request) -> Response:
        library = self.library
        return JSONResponse({"records": await run_in_threadpool(library.names),  # the folder's name, not its path
                             "directory": None if library.root is None else library.root.name})

    async def record_frames(self, request: Request) -> Response:
        name = request.path_params["name"]
        return JSONResponse(await self._in_turn(
            self._reading, lambda: run_in_threadpool(lambda: self._frames_of(self.library.read(name), request))))

    async def upload(self, request: Request) -> Response:
        _refuse_declared_length(request, MAX_UPLOAD_BYTES)  # at once, before waiting for a turn

        async def read() -> Any:  # the body is read in its turn (waiting uploads hold no memory), in bounded time
            try:
                body = await asyncio.wait_for(_body(request, MAX_UPLOAD_BYTES), UPLOAD_SECONDS)
            except asyncio.TimeoutError:
                raise TooSlow(f"the upload did not arrive within {UPLOAD_SECONDS:g} s") from None
            return await run_in_threadpool(lambda: self._frames_of(parse_upload(body), request))

        return JSONResponse(await self._in_turn(self._uploading, read))

    def routes(self) -> list[Route | Mount]:
        return [
            Route("/", page), Route("/watch", page), Route("/favicon.ico", favicon),
            Route("/api/players", self.players),
            Route("/api/games", self.create, methods=["POST"]),
            Route("/api/games/{game}", self.state),
            Route("/api/games/{game}/move", self.move, methods=["POST"]),
            Route("/api/games/{game}/hint", self.hint),
            Route("/api/games/{game}/record", self.record),
            Route("/api/records", self.record_list),
            Route("/api/records/upload", self.upload, methods=["POST"]),
            Route("/api/records/{name:path}", self.record_frames),
            Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
        ]


async def page(request: Request) -> Response:
    """A page, revalidated at every visit: a page kept from before a restart would otherwise come
    without the session cookie this server signs now."""
    name = "watch.html" if request.url.path.rstrip("/") == "/watch" else "play.html"
    return FileResponse(STATIC / name, headers={"Cache-Control": "no-cache"})


async def favicon(request: Request) -> Response:
    """Browsers ask for /favicon.ico whatever the page names: the page's own icon."""
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")


async def not_found(request: Request, error: Exception) -> Response:
    if isinstance(error, KeyError):
        what = "game" if "game" in request.path_params else "record"
        return refuse(f"no such {what}: {request.path_params.get('game', request.path_params.get('name'))!r}", 404)
    return refuse(f"no such page: {request.url.path}", 404)


async def refused(request: Request, error: Exception) -> Response:
    return refuse(str(error).splitlines()[0] if str(error) else "refused", STATUS.get(type(error), 400))


async def failed(request: Request, error: Exception) -> Response:
    """Anything else: still one line of JSON (the page shows it), and the game as it was."""
    reason = str(error).splitlines()[0] if str(error) else ""
    answer = refuse(f"the server failed: {type(error).__name__}: {reason}".rstrip(": "), 500)
    answer.headers.update(SECURITY_HEADERS)  # this handler answers outside the middleware that adds them
    return answer


async def method_not_allowed(request: Request, error: Exception) -> Response:
    return refuse(f"{request.method} is not allowed on {request.url.path}", 405)


def create_app(records: str | Path | None = None, store: GameStore | None = None,
               admission: Admission | None = None, hosts: Sequence[str] = LOCAL_HOSTS) -> Starlette:
    """The app: pages under ``/`` (play) and ``/watch``, the API under ``/api``.

    `admission`: what a request may seat (default: the shipped players by name, the champion
    under a one-second clock); `hosts`: the host names it answers (see
    :func:`baselines.web.guard.answered_hosts`).
    """
    api = Api(store if store is not None else GameStore(), RecordLibrary(records), admission or Admission())
    handlers: dict[Any, Any] = {KeyError: not_found, 404: not_found, GameRefused: refused, RecordError: refused,
                                405: method_not_allowed, Exception: failed}
    return Starlette(routes=api.routes(), exception_handlers=handlers,
                     middleware=[Middleware(OwnOriginOnly, hosts=hosts)])
