"""dominoes serve's API without a browser (Starlette's test client): a game played to its end
with a valid record, hints, records watched from a directory and uploaded, and every bad
request refused with a 4xx and one line, leaving every game unchanged."""

from __future__ import annotations

import json
import threading
import warnings

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")
with warnings.catch_warnings():  # Starlette's test client asks for httpx2, which is not on every index yet
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from baselines.policies.policy import Policy  # noqa: E402
from baselines.web.admission import Admission  # noqa: E402
from baselines.web.app import create_app  # noqa: E402
from baselines.web.games import GameStore  # noqa: E402
from dominoes_env.records import parse_record, write_record  # noqa: E402

#: The address the test client's requests name (the app answers localhost names only).
BASE_URL = "http://127.0.0.1:8000"
JSON = {"Content-Type": "application/json"}


def client_of(app, peer: str = "127.0.0.1") -> TestClient:
    """A test client whose requests name the server as its own pages do, sent from `peer`
    (this machine by default, as a local browser's)."""
    return TestClient(app, base_url=BASE_URL, client=(peer, 50000))


@pytest.fixture
def served(tmp_path):
    store = GameStore(max_games=60, max_per_session=60)
    with client_of(create_app(tmp_path, store, Admission(allow_imports=True))) as client:
        yield client, store, tmp_path


def start(client, **choices):
    body = {"players": 3, "highest": 6, "opponents": ["greedy"], "seed": 5, **choices}
    answer = client.post("/api/games", json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()


def play_to_the_end(client, created):
    key, state = created["id"], created["state"]
    moves = 0
    while not state["game_over"]:
        assert state["your_turn"]
        legal = state["table"]["legal"]
        answer = client.post(f"/api/games/{key}/move", json={"action": legal[-1]["action"]})
        assert answer.status_code == 200, answer.text
        state = answer.json()["state"]
        moves += 1
    return state, moves


def test_a_game_is_played_to_its_end_and_its_record_reads_back(served):
    client, store, _ = served
    created = start(client, hands=2)
    game = store.get(created["id"])
    state, moves = play_to_the_end(client, created)
    assert moves > 5 and state["totals"] == game.env.unwrapped.game.totals.tolist()
    assert all(seat["hand"] is not None for seat in state["table"]["seats"])  # the end is public
    record = client.get(f"/api/games/{created['id']}/record")
    assert record.status_code == 200 and "attachment" in record.headers["content-disposition"]
    recorded = parse_record(record.json())
    assert len(recorded.hands) == 2 and recorded.players[0] == "you" and recorded.players[1] == "greedy"
    assert recorded.game_scores == tuple(state["totals"])


def test_the_table_shown_is_the_engines_position_from_your_seat(served):
    client, store, _ = served
    created = start(client, seat=1)
    hand = store.get(created["id"]).env.unwrapped.game.hand
    table = created["state"]["table"]
    assert table["to_move"] == hand.current_player == 1
    for line in table["lines"]:
        assert [tile["tile"] for tile in line["tiles"]] == hand.line(line["line"])
        assert line["open_value"] == hand.open_values[line["line"]]
    seats = table["seats"]
    assert [tile["tile"] for tile in seats[1]["hand"]] == hand.hand(1)
    assert seats[0]["hand"] is None and seats[2]["hand"] is None  # the others' tiles stay hidden
    assert [seat["tiles_held"] for seat in seats] == hand.hand_sizes.tolist()
    assert sorted(move["action"] for move in table["legal"]) == hand.legal_actions().tolist()
    # the opponent's moves before your turn came back as frames, each after one move
    assert all(frame["move"]["seat"] == 0 for frame in created["frames"])


def test_a_hint_names_the_strongest_players_choice_with_predicted_pips(served):
    client, _, _ = served
    created = start(client, players=4, highest=9, opponents=["random"])
    while True:
        hint = client.get(f"/api/games/{created['id']}/hint").json()
        legal = [move["action"] for move in created["state"]["table"]["legal"]]
        if len(legal) > 1:
            break
        created["state"] = client.post(f"/api/games/{created['id']}/move", json={"action": legal[0]}).json()["state"]
    assert [move["action"] for move in hint["moves"]] == legal
    assert set(hint["choices"]) == {"champion", "td_lambda", "persistent_line"}
    assert all(choice in legal for choice in hint["choices"].values())
    assert all(isinstance(move["predicted_pips"], float) for move in hint["moves"])
    holdings = hint["holdings"]  # the tile count: each opponent's likeliest tiles
    assert [place["seat_offset"] for place in holdings] == [1, 2, 3]
    sizes = [hand["tiles"] for hand in created["state"]["table"]["hands"]] if "hands" in created["state"]["table"] \
        else None
    for place in holdings:
        assert 1 <= len(place["likeliest"]) <= 5 and place["tiles_held"] >= 1
        probabilities = [tile["probability"] for tile in place["likeliest"]]
        assert probabilities == sorted(probabilities, reverse=True) and 0 < probabilities[-1] <= probabilities[0] <= 1
    assert sizes is None or len(sizes) == 4


@pytest.mark.parametrize("method, path, body, status, reason", [
    ("post", "/api/games", {"players": 9}, 400, "players must be an integer from 2 to 8"),
    ("post", "/api/games", {"rules": "poker"}, 400, "rules='poker' is not supported"),
    ("post", "/api/games", {"opponents": ["nosuch"]}, 400, "nosuch"),
    ("post", "/api/games", {"opponents": ["random", "greedy"]}, 400, "opponents: 4 players need 3 opponents, got 2"),
    ("post", "/api/games", {"seat": 4}, 400, "seat must be an integer from 0 to 3"),
    ("post", "/api/games", {"hands": 10**9}, 400, "hands must be an integer from 1 to"),
    ("post", "/api/games", "[1, 2]", 400, "a JSON object"),
    ("post", "/api/games", "{not json", 400, "not JSON"),
    ("get", "/api/games/nosuchgame", None, 404, "no such game"),
    ("post", "/api/games/nosuchgame/move", {"action": 1}, 404, "no such game"),
    ("get", "/api/records/../../etc/passwd", None, 404, "no such"),
    ("get", "/api/records/%2e%2e/secret.json", None, 404, "no such record"),
    ("get", "/api/records/link.json", None, 404, "no such record"),
    ("post", "/api/records/upload", "{}", 400, "upload"),
    ("post", "/api/records/upload", "x" * 40_000_000, 413, "more than"),
    ("post", "/api/games", '{"a":' * 10_000, 400, "not JSON"),
    ("post", "/api/games", '{"seed": ' + "9" * 5000 + "}", 400, "not JSON"),
    ("post", "/api/records/upload", "[" * 10_000, 400, "not JSON"),
    ("delete", "/api/games", None, 405, "DELETE is not allowed"),
])
def test_bad_requests_get_a_4xx_with_one_line(served, method, path, body, status, reason):
    client, store, directory = served
    (directory.parent / "secret.json").write_text("{}")
    (directory / "link.json").symlink_to(directory.parent / "secret.json")
    keyword = {} if body is None else ({"json": body} if isinstance(body, dict) else {"content": body})
    answer = getattr(client, method)(path, **keyword, **({} if method == "get" else {"headers": JSON}))
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert reason in error and "\n" not in error
    assert len(store) == 0


@pytest.mark.parametrize("body, reason", [
    ({"action": 10**6}, "action"), ({"action": "3"}, "an action is an integer"), ({}, "give the move"),
    ({"action": True}, "an action is an integer"),
])
def test_a_refused_move_leaves_the_game_unchanged(served, body, reason):
    client, store, _ = served
    created = start(client)
    game = store.get(created["id"])
    before, moves = game.env.unwrapped.game.hand.state.copy(), game.env.recorded.num_moves
    answer = client.post(f"/api/games/{created['id']}/move", json=body)
    assert answer.status_code == 400 and reason in answer.json()["error"]
    assert (game.env.unwrapped.game.hand.state == before).all() and game.env.recorded.num_moves == moves


def test_an_illegal_move_is_refused_as_the_env_refuses_it(served):
    client, store, _ = served
    created = start(client)
    legal = {move["action"] for move in created["state"]["table"]["legal"]}
    illegal = next(action for action in range(store.get(created["id"]).config.num_actions) if action not in legal)
    answer = client.post(f"/api/games/{created['id']}/move", json={"action": illegal})
    assert answer.status_code == 400 and f"action {illegal} " in answer.json()["error"]
    assert "is not legal for seat 0" in answer.json()["error"]
    assert client.get(f"/api/games/{created['id']}").json() == created["state"]


def test_records_in_the_directory_and_uploads_are_watched_hand_by_hand(served):
    client, store, directory = served
    created = start(client, hands=2)
    play_to_the_end(client, created)
    recorded = store.get(created["id"]).env.recorded
    (directory / "league").mkdir()
    write_record(recorded, directory / "league" / "game_00000001.json")
    (directory / "notes.txt").write_text("not a record")
    assert client.get("/api/records").json()["records"] == ["league/game_00000001.json"]
    watched = client.get("/api/records/league/game_00000001.json?hand=1").json()
    assert watched["summary"]["hands"] == 2 and watched["hand"] == 1
    frames = watched["frames"]
    assert len(frames) == len(recorded.hands[1].moves) + 1 and frames[0]["move"] is None
    for frame, move in zip(frames[1:], recorded.hands[1].moves):
        assert frame["move"]["action"] == move.action and frame["move"]["text"] == move.text
        assert move.action in [option["action"] for option in frame["move"]["alternatives"]]
    assert frames[-1]["table"]["hand_over"]
    uploaded = client.post("/api/records/upload?hand=1", content=json.dumps(recorded.to_json()), headers=JSON)
    assert uploaded.status_code == 200 and uploaded.json()["frames"] == frames
    for hand in ("2", "-1", "abc", "\u0661", "9" * 50):  # no such hand, or not a number in ASCII digits
        answer = client.get(f"/api/records/league/game_00000001.json?hand={hand}")
        assert answer.status_code == 400 and "hand must be an integer from 0 to 1" in answer.json()["error"], hand


def test_a_full_server_refuses_new_games_until_one_ends_or_idles_out(tmp_path):
    store = GameStore(max_games=2, idle_seconds=3600)
    with client_of(create_app(None, store)) as client:
        first, _ = start(client), start(client)
        answer = client.post("/api/games", json={"players": 3, "highest": 6, "opponents": ["greedy"]})
        assert answer.status_code == 503 and "the server is full: it holds 2 games going on" in answer.json()["error"]
        assert client.get("/api/players").json()["room"] == 0  # the page says so when it opens
        play_to_the_end(client, first)  # a finished game gives its place up, and keeps its record
        third = start(client)
        assert len(store) == 3 and client.get(f"/api/games/{first['id']}/record").status_code == 200
        store.idle_seconds = -1  # every game is now idle
        start(client)
        assert len(store) == 1 and client.get(f"/api/games/{third['id']}").status_code == 404


def test_the_record_is_given_when_the_game_is_over(served):
    """A record holds every deal: before the end it would show the hidden hands and the boneyard."""
    client, _, _ = served
    created = start(client)
    answer = client.get(f"/api/games/{created['id']}/record")
    assert answer.status_code == 409 and "when the game is over" in answer.json()["error"]
    play_to_the_end(client, created)
    assert client.get(f"/api/games/{created['id']}/record").status_code == 200


def test_no_frame_tells_another_seats_legal_moves(served):
    client, _, _ = served
    created = start(client, seat=2, players=4, highest=9, opponents=["random"])
    frames = list(created["frames"])
    while len(frames) < 12 and not created["state"]["game_over"]:
        legal = created["state"]["table"]["legal"]
        answer = client.post(f"/api/games/{created['id']}/move", json={"action": legal[0]["action"]}).json()
        frames += answer["frames"]
        created["state"] = answer["state"]
    hidden = [frame["table"] for frame in frames if frame["table"]["to_move"] not in (None, 2)]
    assert hidden and all(table["legal"] == [] for table in hidden)
    assert created["state"]["table"]["legal"]  # yours are given


def test_by_default_the_server_seats_the_shipped_players_only(tmp_path, capsys):
    with client_of(create_app(None, GameStore())) as client:
        for spec in ("this.Zen", "this"):
            answer = client.post("/api/games", json={"players": 3, "highest": 6, "opponents": [spec]})
            assert answer.status_code == 400 and "seats the shipped players" in answer.json()["error"], spec
            assert "--allow-imports" in answer.json()["error"]
        assert "Zen of Python" not in capsys.readouterr().out  # nothing was imported
        assert start(client, opponents=["best_line(max_line_length=6)"])["state"]["labels"][1] == \
            "best_line(max_line_length=6)"
        assert start(client, opponents=["greedy:2"])["state"]["labels"][1:] == ["greedy", "greedy"]


class FailsOnItsThirdMove(Policy):
    """An opponent that raises on its third move: the game says why it cannot go on."""

    def act(self, observation, action_mask):
        self.moves = getattr(self, "moves", 0) + 1
        if self.moves == 3:
            raise RuntimeError("out of luck")
        return int(np.flatnonzero(action_mask)[0])


def test_an_opponent_that_fails_ends_the_game_with_its_reason_in_one_line(served):
    client, _, _ = served
    created = start(client, players=2, opponents=["test_web_api.FailsOnItsThirdMove"])
    reasons = []
    for _ in range(10):
        legal = created["state"]["table"]["legal"]
        answer = client.post(f"/api/games/{created['id']}/move", json={"action": legal[0]["action"]})
        if answer.status_code != 200:
            reasons.append(answer.json()["error"])
            if len(reasons) == 2:
                break
            continue
        created["state"] = answer.json()["state"]
    assert reasons[0] == reasons[1] == ("the game cannot go on: test_web_api.FailsOnItsThirdMove (player_1) "
                                        "failed: out of luck")


def test_a_hint_with_one_move_needs_no_prediction(served):
    """A forced draw has no after-state to value: the hint gives the move, no predicted pips."""
    client, store, _ = served
    for seed in range(40):
        created = start(client, players=2, highest=12, rules="mexican_train", opponents=["random"], seed=seed)
        for _ in range(60):
            legal = created["state"]["table"]["legal"]
            if len(legal) == 1 and legal[0]["kind"] == "draw":
                hint = client.get(f"/api/games/{created['id']}/hint")
                assert hint.status_code == 200, hint.text
                assert hint.json()["moves"] == [{"action": legal[0]["action"], "text": "draw", "predicted_pips": None}]
                return
            if created["state"]["game_over"]:
                break
            answer = client.post(f"/api/games/{created['id']}/move", json={"action": legal[-1]["action"]})
            created["state"] = answer.json()["state"]
    pytest.fail("no forced draw met")


def test_fifty_games_played_at_once_finish_with_valid_records(served):
    client, store, _ = served
    errors, records = [], []

    def one(seed):
        try:
            created = start(client, seed=seed, opponents=["random"])
            play_to_the_end(client, created)
            records.append(parse_record(client.get(f"/api/games/{created['id']}/record").json()))
        except Exception as error:  # collected: an assert in a thread would be lost
            errors.append(repr(error))

    threads = [threading.Thread(target=one, args=(seed,)) for seed in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors and len(records) == 50
    assert all(record.hands[0].scores is not None for record in records)


def test_the_pages_are_served_with_their_test_hooks(served):
    client, _, _ = served
    play, watch = client.get("/").text, client.get("/watch").text
    assert 'id="new-game"' in play and "/static/play.js" in play
    assert 'id="records"' in watch and "/static/watch.js" in watch
    assert "dataset.action = m.action" in client.get("/static/play.js").text
    assert "drawTable" in client.get("/static/table.js").text


@pytest.mark.parametrize("arguments, message", [
    (["--port", "0"], "--port must be an integer from 1 to 65535"),
    (["--port", "70000"], "--port must be an integer from 1 to 65535"),
    (["--records", "/no/such/directory"], "--records: '/no/such/directory' is not a directory"),
    (["--idle-minutes", "0"], "--idle-minutes must be an integer from 1 to 1440"),
])
def test_bad_serve_options_are_one_line_errors(arguments, message, capsys):
    from baselines.cli import main as dominoes

    assert dominoes(["serve", *arguments]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dominoes serve: error: ") and message in err and err.count("\n") == 1


@pytest.mark.parametrize("players, highest, rules", [
    (4, 9, "rule_book"), (3, 9, "rule_book"), (2, 6, "rule_book"), (4, 12, "rule_book"), (6, 12, "mexican_train"),
    (8, 12, "mexican_train"), (5, 15, "mexican_train"), (8, 18, "rule_book"),
])
def test_the_pages_default_opponent_plays_every_table(served, players, highest, rules):
    """The page asks for the table's offers when the table changes; its default never makes a refusal."""
    client, _, _ = served
    offered = client.get(f"/api/players?players={players}&highest={highest}&rules={rules}").json()
    assert offered["default"] in offered["players"] and "persistent_line" in offered["players"]
    seat = players - 1  # every opponent moves before the person
    created = client.post("/api/games", json={"players": players, "highest": highest, "rules": rules, "seat": seat,
                                              "opponents": [offered["default"]], "seed": 1})
    assert created.status_code == 201, created.text
    assert set(created.json()["state"]["labels"]) == {"you", offered["default"]}


def test_the_offers_name_the_strongest_player_of_the_table(served):
    client, _, _ = served
    assert client.get("/api/players").json()["default"] == "champion"  # 4 players, double-nine
    three = client.get("/api/players?players=3&highest=9").json()
    assert three["default"] == "persistent_line" and "champion" not in three["players"]
    for query, reason in (("players=9", "players must be an integer from 2 to 8"), ("rules=poker", "rules='poker'"),
                          ("highest=\u0661\u0662", "highest must be an integer")):
        answer = client.get(f"/api/players?{query}")
        assert answer.status_code == 400 and reason in answer.json()["error"], query


def test_the_favicon_is_served_and_the_records_folder_is_named_not_shown(served):
    client, _, directory = served
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert client.get("/api/records").json()["directory"] == directory.name
