"""The third hardening round of ``dominoes serve``, each case as it was found from outside:
an upload of crafted JSON, a client minting cookies, crafted specs, the wrong kind of
opponents, a game id used from another session, the headers, a bracketed ``Host`` with a tail,
and an empty ``--players-dir``. Each test failed before the round and passes after it.
"""

from __future__ import annotations

import http.client
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")
pytest.importorskip("uvicorn")
with warnings.catch_warnings():  # Starlette's test client asks for httpx2, which is not on every index yet
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: F401  (the clients below come from client_of)

from test_web_api import BASE_URL, client_of, start  # noqa: E402
from test_web_security import SMALL, ask, start_serve  # noqa: E402

import dominoes_env  # noqa: E402
from baselines.policies import specs  # noqa: E402
from baselines.web.app import MAX_RECORDS_AT_ONCE, create_app  # noqa: E402
from baselines.web.games import MAX_GAMES, MAX_GAMES_PER_SESSION, GameStore  # noqa: E402
from baselines.web.guard import SESSION_COOKIE  # noqa: E402
from baselines.web.watch import MAX_UPLOAD_BYTES  # noqa: E402
from dominoes_env import make_config  # noqa: E402
from dominoes_env.records import RecordGames, dumps_record, loads_within_budget  # noqa: E402

#: The most memory one record read may take, as a multiple of the upload cap (docs/serve.md).
MEMORY_PER_READ = 15


def peak_memory(pid: int) -> int:
    """The process's peak resident memory so far, in bytes (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc")


def upload(port: int, body: bytes, *, chunked: bool = False) -> int:
    """POST `body` to the upload endpoint (with a length, or streamed in chunks without one): the status,
    or 0 when the server closed the connection before the body was sent (it refused to read more)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.putrequest("POST", "/api/records/upload?hand=0", skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", f"127.0.0.1:{port}")
        connection.putheader("Content-Type", "application/json")
        connection.putheader(*(("Transfer-Encoding", "chunked") if chunked else ("Content-Length", str(len(body)))))
        connection.endheaders()
        step = 1 << 16
        for offset in range(0, len(body), step):
            part = body[offset:offset + step]
            connection.send(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
        if chunked:
            connection.send(b"0\r\n\r\n")
        return connection.getresponse().status
    except OSError:
        return 0
    finally:
        connection.close()


def four_at_once(send: Callable[[], int]) -> list[int]:
    """`send()` from four threads at once: the statuses."""
    statuses: list[int] = []
    threads = [threading.Thread(target=lambda: statuses.append(send())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return statuses


def a_real_record(players: int = 2, highest: int = 18) -> bytes:
    """A whole game (one hand more than the double's value) at one of the largest tables, as written."""
    config = make_config(players, highest, rules="mexican_train")
    env = RecordGames(dominoes_env.raw_env(config, num_hands=highest + 1))
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    while not env.unwrapped.game.is_over:
        seen = env.observe(env.agent_selection)
        env.step(int(rng.choice(np.flatnonzero(seen["action_mask"]))))
    return dumps_record(env.recorded).encode()


def test_a_record_as_written_fits_the_budget_and_crafted_json_does_not():
    real = a_real_record()
    assert len(real) < MAX_UPLOAD_BYTES / 8 and isinstance(loads_within_budget(real), dict)
    for crafted in (b"[" + b"{}," * 100_000 + b"{}]", b"[" + b"0," * 100_000 + b"0]",
                    b"[" * 40 + b"]" * 40, b"[" + b"[]   ," * 100_000 + b"[]]"):
        with pytest.raises(ValueError, match="a record takes at least|nested more than"):
            loads_within_budget(crafted)


def test_uploads_hold_memory_within_a_bounded_multiple_of_the_cap(tmp_path):
    """Four at once of the costliest bodies found: 30 MiB of empty objects (the case found:
    1,930 MB before), streamed without a length too, and bodies under the cap that pass the
    budget's counts but parse to the most memory a byte (floats, short strings)."""
    process, port = start_serve(tmp_path)
    try:
        assert upload(port, a_real_record()) == 200  # every import and compilation is done
        before = peak_memory(process.pid)
        under_cap = MAX_UPLOAD_BYTES - 64
        bodies = [
            (b"[" + b"{}," * (10 * 2**20) + b"{}]", False, (413, 0)),
            (b"[" + b"{}," * (10 * 2**20) + b"{}]", True, (413, 0)),
            (b"[" + b"{}   ," * (under_cap // 6) + b"{}]", False, (400,)),
            (b"[" + b"1.5," * (under_cap // 4) + b"1.5]", False, (400,)),
            (b"[" + b'"a",' * (under_cap // 4) + b'"a"]', True, (400,)),  # over the strings' budget
            (b"[" + b'"ab",    ' * (under_cap // 9) + b'"a"]', True, (400,)),  # short strings within it
            (("[" + '"\u0100",' * (under_cap // 12) + '"a"]').encode(), False, (400,)),  # non-ASCII, sent raw
            (b"[" + b'{"a":1}         ,' * (under_cap // 17) + b"{}]", False, (400,)),  # small objects within it
        ]
        for body, chunked, expected in bodies:
            statuses = four_at_once(lambda b=body, c=chunked: upload(port, b, chunked=c))
            assert len(statuses) == 4 and set(statuses) <= set(expected), (len(body), chunked, statuses)
        grown = peak_memory(process.pid) - before
        assert grown < MAX_RECORDS_AT_ONCE * MEMORY_PER_READ * MAX_UPLOAD_BYTES, f"{grown / 2**20:.0f} MiB"
        assert upload(port, a_real_record()) == 200  # and the server still reads a record
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_client_minting_cookies_cannot_keep_a_browser_out():
    """8 page loads without a cookie, 8 games with each session: every place was taken, and every
    new browser got 503 for 30 minutes. Now a newcomer's game takes the place of the largest
    holder's least recently used one, and no minted session can take the newcomer's only game."""
    store = GameStore()
    app = create_app(None, store)
    with client_of(app) as minter, client_of(app) as browser:
        minted = []
        for _ in range(MAX_GAMES // MAX_GAMES_PER_SESSION):
            minter.cookies.clear()
            minter.get("/")
            minted.append(minter.cookies[SESSION_COOKIE])
            for _ in range(MAX_GAMES_PER_SESSION):
                start(minter)
        assert len(set(minted)) == 8 and store.going_on() == MAX_GAMES
        browser.get("/")
        assert browser.get("/api/players").json()["room"] >= 1
        mine = start(browser)["id"]
        assert store.going_on() == MAX_GAMES
        for _ in range(3):  # fresh sessions of the minter take places from the minter's fullest sessions
            minter.cookies.clear()
            minter.get("/")
            start(minter)
        assert browser.get(f"/api/games/{mine}").status_code == 200


def test_the_api_gives_no_session_and_a_script_without_a_cookie_is_one_client():
    store = GameStore()
    with client_of(create_app(None, store)) as script:
        assert SESSION_COOKIE not in script.get("/api/players").headers.get("set-cookie", "")
        for _ in range(MAX_GAMES_PER_SESSION):
            script.cookies.clear()
            start(script)
        script.cookies.clear()
        assert script.post("/api/games", json=SMALL).status_code == 429


def test_an_address_other_than_this_machines_has_a_budget_of_its_own():
    store = GameStore(max_per_peer=3)
    app = create_app(None, store, hosts=("127.0.0.1", "192.0.2.1"))
    with client_of(app, peer="192.0.2.7") as remote, client_of(app) as local:
        for _ in range(3):
            remote.cookies.clear()
            remote.get("/")
            start(remote)
        remote.cookies.clear()
        remote.get("/")
        refused = remote.post("/api/games", json=SMALL)
        assert refused.status_code == 429 and "this address has 3 games" in refused.json()["error"]
        local.get("/")
        start(local)


def test_a_full_server_frees_a_game_left_idle_sooner_than_the_idle_limit():
    store = GameStore(max_games=2, full_idle_seconds=0.0)
    with client_of(create_app(None, store)) as first, client_of(create_app(None, store)) as second:
        first.get("/")
        start(first)
        second.get("/")
        start(second)
        assert start(second)["id"] and store.going_on() == 2  # the first's game, untouched, gave its place


@pytest.mark.parametrize("spec", ["random(x=" + "-" * 30_000 + "1)", "random(x=" + "1+" * 20_000 + "1)",
                                  "random(x=" + "not " * 15_000 + "1)", "greedy" + " " * 2_000])
def test_a_crafted_spec_is_a_one_line_400(spec):
    with client_of(create_app(None, GameStore())) as client:
        answer = client.post("/api/games", json={**SMALL, "opponents": [spec]})
        assert answer.status_code == 400, answer.text
        error = answer.json()["error"]
        assert f"at most {specs.MAX_SPEC_CHARS:,} characters" in error and "\n" not in error and len(error) < 300


@pytest.mark.parametrize("text", ["random(x=" + "-" * 1000 + "1)", "random(x=" + "[" * 500 + "]" * 500 + ")",
                                  "random(x=" + "not " * 250 + "1)", "random(x=" + "(" * 400 + "1" + ")" * 400 + ")"])
def test_a_deep_spec_under_the_cap_is_read_or_refused_as_a_spec(text):
    try:
        specs.parse(text)
    except specs.SpecError as error:
        assert "\n" not in str(error)


@pytest.mark.parametrize("opponents", [{}, "", 0, [], "greedy", [1], {"greedy": 1}])
def test_opponents_of_the_wrong_kind_are_refused(opponents):
    store = GameStore()
    with client_of(create_app(None, store)) as client:
        answer = client.post("/api/games", json={**SMALL, "opponents": opponents})
        assert answer.status_code == 400 and "opponents is a non-empty list of policy specs" in answer.json()["error"]
        assert len(store) == 0
        assert client.post("/api/games", json={**SMALL, "opponents": None}).status_code == 201  # null: the default


def test_a_game_belongs_to_the_session_that_made_it():
    app = create_app(None, GameStore())
    with client_of(app) as owner, client_of(app) as other:
        owner.get("/")
        created = start(owner)
        key = created["id"]
        other.get("/")
        legal = created["state"]["table"]["legal"][0]["action"]
        for method, path, body in (("get", f"/api/games/{key}", None), ("get", f"/api/games/{key}/hint", None),
                                   ("get", f"/api/games/{key}/record", None),
                                   ("post", f"/api/games/{key}/move", {"action": legal})):
            answer = getattr(other, method)(path, **({} if body is None else {"json": body}))
            assert answer.status_code == 404 and "no such game" in answer.json()["error"], (path, answer.text)
        other.cookies.clear()  # nor does a client without a session see it
        assert other.get(f"/api/games/{key}").status_code == 404
        assert owner.get(f"/api/games/{key}").json()["moves_recorded"] == created["state"]["moves_recorded"]
        assert owner.post(f"/api/games/{key}/move", json={"action": legal}).status_code == 200


def test_every_answer_carries_the_headers_of_a_careful_server():
    with client_of(create_app(None, GameStore())) as client:
        answers = [client.get("/"), client.get("/watch"), client.get("/static/play.js"), client.get("/api/players"),
                   client.get("/api/games/nosuch"), client.get("/api/players", headers={"Host": "evil.example"})]
        for answer in answers:
            headers = answer.headers
            policy = headers["content-security-policy"]
            assert "frame-ancestors 'none'" in policy and "default-src 'self'" in policy, answer.url
            assert headers["x-content-type-options"] == "nosniff" and headers["x-frame-options"] == "DENY"
            assert headers["referrer-policy"] == "no-referrer"
    pages = Path(__file__).parents[1] / "baselines" / "web" / "static"
    for page in pages.glob("*.html"):  # the policy forbids inline code and styles: the pages need none
        text = page.read_text()
        assert "style=" not in text and "<style" not in text and "onclick" not in text
        assert all("src=" in line for line in text.splitlines() if "<script" in line)


@pytest.mark.parametrize("host, status", [("[::1]evil.example", 400), ("[::1]:80evil", 400), ("[::1", 400),
                                          ("[::1]:8000", 200), ("[::1]", 200)])
def test_a_bracketed_host_is_read_strictly(host, status):
    with client_of(create_app(None, GameStore())) as client:
        assert client.get(f"{BASE_URL}/api/players", headers={"Host": host}).status_code == status


def test_a_bracketed_host_is_read_strictly_by_the_served_app(tmp_path):
    process, port = start_serve(tmp_path)
    try:
        status, answer = ask(port, "GET", "/api/players", headers={"Host": "[::1]evil.example"})
        assert status == 400 and "refused" in answer["error"]
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize("option", ["--players-dir", "--records"])
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_directory_name_is_refused(option, value, capsys):
    from baselines.cli import main as dominoes

    assert dominoes(["serve", option, value]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dominoes serve: error: ") and "an empty name is no directory" in err
    assert err.count("\n") == 1


def test_a_spec_python_cannot_build_is_a_one_line_400_with_the_headers():
    with client_of(create_app(None, GameStore())) as client:
        for spec in ("random(x={[1]})", "random(x={{}:1})"):
            answer = client.post("/api/games", json={**SMALL, "opponents": [spec]})
            assert answer.status_code == 400 and "not a value Python can build" in answer.json()["error"], answer.text


def test_a_failure_of_the_server_still_carries_the_headers(monkeypatch):
    from baselines.web import app as web_app

    def broken(*_, **__):
        raise TypeError("broken on purpose")

    monkeypatch.setattr(web_app, "new_game", broken)
    with TestClient(create_app(None, GameStore()), base_url=BASE_URL, client=("127.0.0.1", 50000),
                    raise_server_exceptions=False) as client:
        answer = client.post("/api/games", json=SMALL)
        assert answer.status_code == 500 and answer.json()["error"] == "the server failed: TypeError: broken on purpose"
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
        assert answer.headers["x-content-type-options"] == "nosniff"


def test_the_pages_are_revalidated_so_a_restarted_server_gives_its_new_session():
    with client_of(create_app(None, GameStore())) as client:
        for path in ("/", "/watch"):
            assert client.get(path).headers["cache-control"] == "no-cache"


def test_a_start_that_fails_costs_nobody_a_game(monkeypatch):
    """On a full server a new game is promised another's place; if its start fails, that game goes on."""
    store = GameStore(max_games=2)
    app = create_app(None, store)
    with client_of(app) as holder, client_of(app) as newcomer:
        holder.get("/")
        kept = [start(holder)["id"] for _ in range(2)]
        from baselines.web.games import Abandoned, WebGame

        def fails(self):
            raise Abandoned("the page went away")

        monkeypatch.setattr(WebGame, "start", fails)
        newcomer.get("/")
        assert newcomer.post("/api/games", json=SMALL).status_code == 503
        assert store.going_on() == 2 and all(holder.get(f"/api/games/{key}").status_code == 200 for key in kept)
        monkeypatch.undo()
        start(newcomer)  # started: now one of the holder's games gives its place
        assert store.going_on() == 2 and sum(holder.get(f"/api/games/{key}").status_code == 200 for key in kept) == 1


def test_stalled_uploads_keep_no_one_from_the_records_directory(tmp_path):
    """Two uploads that send their headers and stall hold the upload turns, not the directory's."""
    records = tmp_path / "records"
    records.mkdir()
    (records / "game.json").write_bytes(a_real_record(2, 9))
    process, port = start_serve(tmp_path, "--records", str(records))
    stalled = []
    try:
        for _ in range(MAX_RECORDS_AT_ONCE):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            connection.putrequest("POST", "/api/records/upload", skip_host=True, skip_accept_encoding=True)
            for name, value in (("Host", f"127.0.0.1:{port}"), ("Content-Type", "application/json"),
                                ("Content-Length", "1000")):
                connection.putheader(name, value)
            connection.endheaders()
            connection.send(b"{")
            stalled.append(connection)
        status, answer = ask(port, "GET", "/api/records/game.json?hand=0", timeout=30)
        assert status == 200 and answer["hand"] == 0
        assert upload(port, b"x" * (MAX_UPLOAD_BYTES + 1)) in (413, 0)  # an over-long body: refused without a turn
    finally:
        for connection in stalled:
            connection.close()
        process.terminate()
        process.wait(timeout=10)


def test_an_ipv6_host_counts_as_its_network():
    from baselines.web.guard import peer_of

    assert peer_of({"client": ("2001:db8::1", 1)}) == peer_of({"client": ("2001:db8::ffff:1", 1)}) == "2001:db8::/64"
    assert peer_of({"client": ("::ffff:192.0.2.7", 1)}) == "192.0.2.7"
    assert peer_of({"client": ("127.0.0.5", 1)}) == peer_of({"client": ("::1", 1)}) == "loopback"
