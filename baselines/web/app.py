"""The web app of ``dominoes serve``: the pages and a JSON API, on Starlette.

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

import json
import re
import secrets
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from baselines.harness.advice import Hints, default_opponent, opponent_specs
from baselines.policies import specs
from baselines.web.games import MAX_WEB_HANDS, GameRefused, GameStore, NotYet, ServerFull, WebGame
from baselines.web.watch import RecordLibrary, hand_frames, parse_upload, summary
from dominoes_env.core import validation
from dominoes_env.core.config import MAX_HIGHEST, MAX_PLAYERS, MIN_HIGHEST, MIN_PLAYERS, RULE_SETS, make_config
from dominoes_env.records import MAX_RECORD_BYTES, RecordError

STATIC = Path(str(resources.files("baselines.web") / "static"))
MAX_REQUEST_BYTES = 64 * 1024  #: a request that is not an upload
#: The players the page offers as opponents (any spec the league takes is accepted too).
OFFERED = ("td_lambda", "lookahead", "linear_sarsa", "persistent_line", "best_line", "double", "greedy", "random")


class RequestTooLarge(GameRefused):
    """A request body over its limit (answered 413)."""


#: The status of each kind of refusal; any other GameRefused or RecordError is a 400.
STATUS: dict[type[Exception], int] = {RequestTooLarge: 413, ServerFull: 503, NotYet: 409}


def refuse(reason: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": reason}, status_code=status)


async def _body(request: Request, limit: int) -> bytes:
    """The request body, refused past `limit` bytes without reading all of it."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RequestTooLarge(f"the request is more than the {limit:,} bytes it may be")
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


def new_game(data: dict[str, Any], any_spec: bool = True) -> WebGame:
    """A game from the page's choices, each checked (one-line GameRefused naming the field).

    With `any_spec` False (a server others can reach) an opponent is one of :data:`OFFERED` by
    its plain name: a spec may import a module, read a file or ask for minutes of search a move.
    """
    try:
        players = validation.integer("players", data.get("players", 4), MIN_PLAYERS, MAX_PLAYERS)
        highest = validation.integer("highest", data.get("highest", 9), MIN_HIGHEST, MAX_HIGHEST)
        rules = validation.choice("rules", data.get("rules", "rule_book"), RULE_SETS)
        config = make_config(players, highest, rules=rules)
        seat = validation.integer("seat", data.get("seat", 0), 0, players - 1)
        hands = validation.integer("hands", data.get("hands", 1), 1, MAX_WEB_HANDS)
        seed = validation.seed("seed", data.get("seed"))
        texts = data.get("opponents") or []
        if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
            raise ValueError("opponents is a list of policy specs")
        if not any_spec:
            for text in texts:
                spec, copies = specs.parse(text)
                if spec.name not in OFFERED or spec.params or text.strip() != spec.name:
                    raise ValueError(f"opponents: this server takes the shipped players by name only "
                                     f"({', '.join(OFFERED)}), got {text!r}")
        opponents = opponent_specs(texts, config, what="opponents")
    except ValueError as error:
        raise GameRefused(str(error).splitlines()[0]) from None
    return WebGame(config, hands, secrets.randbits(63) if seed is None else seed, seat, opponents)


def create_app(records: str | Path | None = None, store: GameStore | None = None, any_spec: bool = True
               ) -> Starlette:
    """The app: pages under ``/`` (play) and ``/watch``, the API under ``/api``.

    `any_spec`: opponents may be any spec the league takes (import paths, checkpoints,
    parameters), for a server only its own user reaches; False takes the shipped players by name.
    """
    games = store if store is not None else GameStore()
    library = RecordLibrary(records)
    hints_by_table: dict[Any, Hints] = {}

    def game_of(request: Request) -> WebGame:
        return games.get(request.path_params["game"])

    def hints_for(config: Any) -> Hints:
        if config not in hints_by_table:
            hints_by_table[config] = Hints(config, 0)
        return hints_by_table[config]

    async def players(request: Request) -> Response:
        table = make_config(4, 9)
        return JSONResponse({"players": list(OFFERED), "default": default_opponent(table).label,
                             "rule_sets": list(RULE_SETS), "max_hands": MAX_WEB_HANDS})

    async def create(request: Request) -> Response:
        data = await _json_object(request)
        games.check_room()  # before a game is built
        game = await run_in_threadpool(new_game, data, any_spec)
        key = games.add(game)
        return JSONResponse({"id": key, "frames": [frame.to_json() for frame in game.opening], "state": game.state()},
                            status_code=201)

    def locked(game: WebGame, work: Any) -> Any:
        """`work()` under the game's lock, in a worker thread: a move in progress is never seen half done."""
        def run() -> Any:
            with game.lock:
                return work()

        return run_in_threadpool(run)

    async def state(request: Request) -> Response:
        game = game_of(request)
        return JSONResponse(await locked(game, game.state))

    async def move(request: Request) -> Response:
        game = game_of(request)
        data = await _json_object(request)
        if "action" not in data:
            raise GameRefused("give the move as {\"action\": N}")

        def play() -> dict[str, Any]:
            frames = game.move(data["action"])
            return {"frames": [frame.to_json() for frame in frames], "state": game.state()}

        return JSONResponse(await locked(game, play))

    async def hint(request: Request) -> Response:
        game = game_of(request)
        return JSONResponse(await locked(game, game.hint))

    async def record(request: Request) -> Response:
        game = game_of(request)
        text = await locked(game, game.record_text)
        return Response(text, media_type="application/json",
                        headers={"Content-Disposition": 'attachment; filename="dominoes-game.json"'})

    def frames_of(recorded: Any, request: Request) -> dict[str, Any]:
        raw = request.query_params.get("hand", "0")
        try:
            number = validation.integer("hand", int(raw) if re.fullmatch("[0-9]{1,7}", raw) else raw, 0,
                                        len(recorded.hands) - 1)
        except ValueError as error:
            raise GameRefused(str(error)) from None
        return {"summary": summary(recorded), "hand": number,
                "frames": hand_frames(recorded, number, hints_for(recorded.config))}

    async def record_list(request: Request) -> Response:
        return JSONResponse({"records": await run_in_threadpool(library.names),
                             "directory": None if library.root is None else str(library.root)})

    async def record_frames(request: Request) -> Response:
        name = request.path_params["name"]

        def load() -> dict[str, Any]:
            return frames_of(library.read(name), request)

        return JSONResponse(await run_in_threadpool(load))

    async def upload(request: Request) -> Response:
        body = await _body(request, MAX_RECORD_BYTES)
        return JSONResponse(await run_in_threadpool(lambda: frames_of(parse_upload(body), request)))

    async def page(request: Request) -> Response:
        name = "watch.html" if request.url.path.rstrip("/") == "/watch" else "play.html"
        return FileResponse(STATIC / name)

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
        return refuse(f"the server failed: {type(error).__name__}: {reason}".rstrip(": "), 500)

    async def method_not_allowed(request: Request, error: Exception) -> Response:
        return refuse(f"{request.method} is not allowed on {request.url.path}", 405)

    routes = [
        Route("/", page), Route("/watch", page),
        Route("/api/players", players),
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games/{game}", state),
        Route("/api/games/{game}/move", move, methods=["POST"]),
        Route("/api/games/{game}/hint", hint),
        Route("/api/games/{game}/record", record),
        Route("/api/records", record_list),
        Route("/api/records/upload", upload, methods=["POST"]),
        Route("/api/records/{name:path}", record_frames),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    handlers: dict[Any, Any] = {KeyError: not_found, 404: not_found, GameRefused: refused, RecordError: refused,
                                405: method_not_allowed, Exception: failed}
    return Starlette(routes=routes, exception_handlers=handlers)
