"""What ``dominoes serve`` trusts: each hole found from outside, tried again.

A web page the user visits must not make the server run code, tell which files exist, or
read its answers; one request must not hold a thread for as long as it likes; one client must
not take every place; a finished game keeps its record; and Ctrl-C or SIGTERM stops the server
within 2 s. The server is tried as started by ``dominoes serve`` (a process of its own, on its
default settings) where that is how the hole was found, and in this process where the test
must look inside (its games, their opponents).
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")
pytest.importorskip("uvicorn")
with warnings.catch_warnings():  # Starlette's test client asks for httpx2, which is not on every index yet
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: F401  (the clients below come from client_of)

from conftest import ROOT  # noqa: E402
from test_web_api import client_of, play_to_the_end, start  # noqa: E402

from baselines.td_lambda.checkpoint import shipped_checkpoint  # noqa: E402
from baselines.web.admission import Admission  # noqa: E402
from baselines.web.app import create_app  # noqa: E402
from baselines.web.cli import serve_in_background  # noqa: E402
from baselines.web.games import GameStore  # noqa: E402
from dominoes_env import make_config  # noqa: E402

MARKER_MODULE = """
from pathlib import Path
Path(__file__).with_name("marker-ran").write_text("the module ran")
from baselines.policies.handcrafted import GreedyPolicy as Marker
"""
SMALL = {"players": 3, "highest": 6, "seed": 5}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_serve(folder: Path, *options: str) -> tuple[subprocess.Popen, int]:
    """``dominoes serve`` as a user starts it, in `folder` (the directory a module could be
    imported from); the process and its port, once it listens."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "baselines.cli", "serve", "--port", str(port), *options],
                               cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process, port
        except OSError:
            if process.poll() is not None:
                raise AssertionError(f"dominoes serve exited: {process.stderr.read()}") from None
            time.sleep(0.1)
    process.kill()
    raise AssertionError("dominoes serve did not listen within 90 s")


def ask(port: int, method: str, path: str, body: str | dict | None = None, headers: dict | None = None,
        timeout: float = 60) -> tuple[int, dict]:
    """One request with the headers as given (Host included): the status and the JSON answer."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    sent = {"Host": f"127.0.0.1:{port}", **(headers or {})}
    if isinstance(body, dict):
        body = json.dumps(body)
        sent.setdefault("Content-Type", "application/json")
    connection.request(method, path, body=body, headers=sent)
    answer = connection.getresponse()
    text = answer.read().decode()
    connection.close()
    try:
        return answer.status, json.loads(text)
    except ValueError:
        return answer.status, {"text": text}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``dominoes serve`` on its defaults, started in a folder holding a module a request could name."""
    folder = tmp_path_factory.mktemp("served")
    (folder / "evilmod.py").write_text(MARKER_MODULE)
    process, port = start_serve(folder)
    yield port, folder
    process.terminate()
    process.wait(timeout=10)


def test_a_request_cannot_make_the_server_import_a_module(served):
    port, folder = served
    own = {"Origin": f"http://127.0.0.1:{port}"}
    status, answer = ask(port, "POST", "/api/games", {**SMALL, "opponents": ["evilmod.Marker"]}, own)
    assert status == 400 and "seats the shipped players" in answer["error"]
    cross_site = {"Origin": "http://evil.example", "Content-Type": "text/plain"}
    status, answer = ask(port, "POST", "/api/games", json.dumps({**SMALL, "opponents": ["evilmod.Marker"]}),
                         cross_site)
    assert status == 403 and "another site" in answer["error"]
    status, _ = ask(port, "POST", "/api/games", json.dumps({**SMALL, "opponents": ["evilmod.Marker"]}),
                    {"Content-Type": "text/plain"})  # a simple POST whose sender hides its origin
    assert status == 415
    assert not (folder / "marker-ran").exists()


@pytest.mark.parametrize("headers, status", [
    ({"Host": "evil.example"}, 400),  # a DNS-rebinding page reaches 127.0.0.1 under its own name
    ({"Host": "evil.example:{port}"}, 400),
    ({"Host": "127.0.0.1.evil.example"}, 400),
    ({"Origin": "http://evil.example"}, 403),
    ({"Origin": "null"}, 403),
    ({"Origin": "http://127.0.0.1:1"}, 403),  # another server on this machine
    ({"Sec-Fetch-Site": "cross-site"}, 403),
])
def test_requests_for_another_host_or_from_another_site_are_refused(served, headers, status):
    port, _ = served
    headers = {key: value.format(port=port) for key, value in headers.items()}
    for method, path, body in (("GET", "/api/players", None), ("POST", "/api/games", SMALL)):
        answered, answer = ask(port, method, path, body, headers)
        assert answered == status and "refused" in answer["error"] and "\n" not in answer["error"], (method, answer)


def test_the_servers_own_pages_are_answered_by_every_local_name(served):
    port, _ = served
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost"):
        status, answer = ask(port, "POST", "/api/games", {**SMALL, "opponents": ["greedy"]},
                             {"Host": host, "Origin": f"http://{host}", "Sec-Fetch-Site": "same-origin"})
        assert status == 201, answer
    page = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    page.request("GET", "/", headers={"Sec-Fetch-Site": "cross-site"})  # a link from another site opens the page
    assert page.getresponse().status == 200


@pytest.mark.parametrize("specs", [
    ("td_lambda@/etc/passwd", "td_lambda@/etc/no-such-file"),
    ("td_lambda(checkpoint='/etc/hostname')", "td_lambda(checkpoint='/etc/no-such-file')"),
    ("champion@../../../etc/passwd", "champion@../../../etc/nothing"),
])
def test_no_answer_tells_whether_a_file_exists(served, specs):
    port, _ = served
    errors = []
    for spec in specs:
        status, answer = ask(port, "POST", "/api/games", {"opponents": [spec]})
        assert status == 400
        errors.append(answer["error"].replace(spec.split("@")[-1].split("=")[-1].strip("')"), "FILE"))
    assert errors[0] == errors[1] and "--players-dir" in errors[0]


def test_weights_files_are_taken_by_name_from_the_players_directory_only(tmp_path):
    players = tmp_path / "players"
    players.mkdir()
    shutil.copy(shipped_checkpoint(make_config(4, 9)), players / "mine.safetensors")
    shutil.copy(shipped_checkpoint(make_config(4, 9)), tmp_path / "outside.safetensors")
    (players / "link.safetensors").symlink_to(tmp_path / "outside.safetensors")
    table = {"players": 4, "highest": 9, "seed": 1}
    with client_of(create_app(None, GameStore(), Admission(players_dir=players))) as client:
        created = client.post("/api/games", json={**table, "opponents": ["td_lambda@mine.safetensors"]})
        assert created.status_code == 201, created.text
        assert created.json()["state"]["labels"][1:] == ["td_lambda@mine.safetensors"] * 3
        errors = []
        for name in ("../outside.safetensors", "../nothing.safetensors", "link.safetensors", "nothing.safetensors",
                     str(players / "mine.safetensors")):
            answer = client.post("/api/games", json={**table, "opponents": [f"td_lambda@{name}"]})
            assert answer.status_code == 400
            error, _, echoed = answer.json()["error"].partition(", got ")
            assert repr(name).startswith(echoed.rstrip(".")) and "\n" not in echoed  # the name asked for, as asked
            errors.append(error)
        assert len(set(errors)) == 1 and "(mine.safetensors)" in errors[0] and str(tmp_path) not in errors[0]


def test_a_request_over_budget_is_answered_at_once(served):
    port, _ = served
    over_budget = {
        "champion(simulations=100000)": "champion's simulations must be an integer from 1 to 10000",
        "champion(milliseconds=60000)": "champion's milliseconds must be a finite number in [0.1, 1000] (the server's",
        "champion(worlds=4096)": "champion's worlds must be an integer from 1 to 256",
        "lookahead(samples=4096, depth=64)": "lookahead's samples must be an integer from 1 to 256",
    }
    for spec, refusal in over_budget.items():
        began = time.monotonic()
        status, answer = ask(port, "POST", "/api/games", {"opponents": [spec]}, timeout=10)
        assert time.monotonic() - began < 10 and status == 400, (spec, answer)
        assert refusal in answer["error"] and "\n" not in answer["error"], answer


def test_the_champions_search_stops_on_the_servers_clock():
    """A request may ask for many simulations: each decision still ends at --max-decision-ms."""
    store = GameStore()
    with client_of(create_app(None, store, Admission(max_decision_ms=50))) as client:
        began = time.monotonic()
        created = client.post("/api/games", json={"players": 4, "highest": 9, "seat": 3, "seed": 2,
                                                  "opponents": ["champion(simulations=10000)"]})
        elapsed = time.monotonic() - began
        assert created.status_code == 201, created.text
        game = store.get(created.json()["id"])
        clocks = {policy.settings.milliseconds for policy in game.opponents.values()}
        assert clocks == {50} and game.hints is not None
        assert game.hints.policies["champion"].settings.milliseconds == 50
        assert elapsed < 10  # without the clock, three decisions of 10,000 simulations take tens of seconds


def test_one_browser_cannot_take_every_place():
    store = GameStore(max_games=7, max_per_session=2)
    app = create_app(None, store)
    with client_of(app) as first, client_of(app) as second, client_of(app) as scripted:
        for browser in (first, second):
            browser.get("/")  # the page gives its browser a session
            start(browser), start(browser)
            refused = browser.post("/api/games", json=SMALL)
            assert refused.status_code == 429 and "this browser has 2 games going on" in refused.json()["error"]
        anonymous = []
        for _ in range(3):
            scripted.cookies.clear()  # a client that keeps no cookie: every such client shares one session
            anonymous.append(scripted.post("/api/games", json={**SMALL, "opponents": ["greedy"]}))
        assert [answer.status_code for answer in anonymous] == [201, 201, 429]
        scripted.cookies.clear()
        scripted.cookies.set("dominoes_session", "forged.0123456789abcdef0123456789abcdef")
        assert scripted.post("/api/games", json=SMALL).status_code == 429  # a forged session is anonymous
        with client_of(app) as late:
            late.get("/")
            start(late)  # the last place
            full = late.post("/api/games", json=SMALL)
            assert full.status_code == 503 and "the server is full" in full.json()["error"]
            assert late.get("/api/players").json()["room"] == 0


def test_a_finished_games_record_outlives_a_full_store():
    store = GameStore(max_games=2, max_per_session=2)
    with client_of(create_app(None, store)) as client:
        client.get("/")
        finished = start(client)
        play_to_the_end(client, finished)
        start(client), start(client)  # every place is taken
        assert client.post("/api/games", json=SMALL).status_code in (429, 503)
        record = client.get(f"/api/games/{finished['id']}/record")
        assert record.status_code == 200 and record.json()["players"][0] == "you"
        game = store.get(finished["id"])
        assert game.opponents == {} and game.hints is None  # a finished game holds no players


def test_finished_games_beyond_the_bound_make_room_downloaded_first():
    store = GameStore(max_games=4, max_per_session=4, max_finished=2)
    with client_of(create_app(None, store)) as client:
        client.get("/")
        games = [start(client) for _ in range(3)]
        for game in games:
            play_to_the_end(client, game)
        assert client.get(f"/api/games/{games[1]['id']}/record").status_code == 200  # downloaded
        start(client)  # a fourth finished game would exceed the bound: the downloaded one goes first
        play_to_the_end(client, start(client))
        kept = [client.get(f"/api/games/{game['id']}").status_code for game in games]
        assert kept[1] == 404 and len([status for status in kept if status == 200]) <= 2


def test_a_game_whose_page_went_away_stops_its_opponents():
    """The client leaves while seven champions play: they stop before their next decision."""
    store = GameStore()
    url, stop = serve_in_background(create_app(None, store, Admission(max_decision_ms=400)),
                                    abandon_all=store.abandon_all)
    port = int(url.rsplit(":", 1)[1])
    try:
        body = json.dumps({"players": 8, "highest": 12, "rules": "mexican_train", "seat": 7, "seed": 3,
                           "opponents": ["champion(simulations=10000)"]}).encode()
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            deadline = time.monotonic() + 60
            while len(store) == 0 and time.monotonic() < deadline:  # the game is built, its opponents play
                time.sleep(0.05)
            time.sleep(0.5)
        left = time.monotonic()
        game = next(iter(store._games.values()))
        while game.broken is None and time.monotonic() < left + 10:
            time.sleep(0.05)
        assert game.broken is not None and "abandoned" in game.broken
        assert time.monotonic() - left < 2.5  # the decision under way ends, and no other starts
        moves = game.env.recorded.num_moves
        time.sleep(1)
        assert game.env.recorded.num_moves == moves and not game.over
    finally:
        stop()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_ctrl_c_stop_the_server_within_two_seconds(tmp_path, signum):
    """A request whose opponents search hard is in flight; the server stops within 2 s anyway."""
    process, port = start_serve(tmp_path)
    body = {"players": 4, "highest": 9, "seat": 3, "seed": 4, "opponents": ["champion(simulations=10000)"]}
    asking = threading.Thread(target=lambda: _ignore_errors(lambda: ask(port, "POST", "/api/games", body)),
                              daemon=True)
    asking.start()
    time.sleep(1.5)  # the game is built and its champions think
    stopped = time.monotonic()
    process.send_signal(signum)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError("the server was still running 10 s after the signal") from None
    assert time.monotonic() - stopped < 2.0


def _ignore_errors(call):
    try:
        call()
    except OSError:  # the server stopped before it answered
        pass


@pytest.mark.parametrize("host, local", [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("localhost", True),
                                         ("0.0.0.0", False), ("192.168.1.5", False), ("example.org", False)])
def test_a_loopback_address_is_local_whatever_its_spelling(host, local):
    from baselines.web.guard import is_local

    assert is_local(host) == local
