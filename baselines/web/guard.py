"""Which requests ``dominoes serve`` answers: those of its own pages, and which browser sent them.

A server on this machine is reachable by every web page its user opens: a page on another
site can send it a "simple" cross-site POST (``Content-Type: text/plain``, no preflight), and
a page whose name is made to resolve to 127.0.0.1 (DNS rebinding) can even read the answers.
The checks below are those of the development servers that closed these holes (Vite's and
webpack's allowed hosts, Jupyter's origin check):

- **Host**: the ``Host`` header names this server (the address it listens on, a localhost
  name, or a name given with ``--allowed-host``): a rebinding page's host is its own name.
- **Origin**: a request that carries an ``Origin`` comes from this server's own pages
  (``http://`` and the Host it named); an API request a browser marks as coming from another
  site (``Sec-Fetch-Site``) is refused too.
- **State-changing requests** (any method but GET and HEAD) are JSON
  (``Content-Type: application/json``): a cross-site page can send that only after a CORS
  preflight, which this server never approves.

No token is asked for: with these checks a page of another site can neither send a
state-changing request nor read an answer, and what a request may make the server do is
bounded anyway (:mod:`baselines.web.admission`). A token would guard against other users of
the same machine, who can reach a local port; the server runs no code a request names unless
started with ``--allow-imports``, which a non-local address refuses.

The same middleware tells browser sessions apart, for the places each may take and the games
it may see: a signed cookie (``HttpOnly``, ``SameSite=Lax``, so a link from another site keeps
the session) comes with the pages only; a request without a valid one belongs to the
anonymous session, which has one cap for all such clients. It also notes the address a request
comes from (the budget per address) and adds to every answer the headers of
:data:`SECURITY_HEADERS`.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import socket
from collections.abc import Iterable
from typing import Any

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from baselines.web.games import LOOPBACK

#: The names of this machine that only it can use: always answered.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
#: Addresses that listen on every interface: the machine's own names and addresses are answered too.
WILDCARD_HOSTS = ("0.0.0.0", "::", "")
SESSION_COOKIE = "dominoes_session"
ANONYMOUS = ""  #: the session of every request without a valid cookie
SAFE_METHODS = ("GET", "HEAD")
_FETCH_SITES = ("same-origin", "none")  # Sec-Fetch-Site values of a request this server's own pages make
#: The pages that give a browser its session; the API never does, so a script that drops its
#: cookie is one more anonymous client, not a new session.
PAGES = ("/", "/watch")
#: Sent with every answer: no other site may frame the pages (and click for the player), the
#: pages load nothing but this server's own files, a file is never read as another type than
#: the one it is served as, and no address of this server travels to another site.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; "
                               "object-src 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def is_local(host: str) -> bool:
    """Whether `host` is an address only this machine reaches: a localhost name or any loopback
    address (127.0.0.0/8, ::1), compared as addresses, not as text."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(_bare(host)).is_loopback
    except ValueError:  # a name: it may resolve anywhere
        return False


def answered_hosts(bind_host: str, allowed: Iterable[str] = ()) -> tuple[str, ...]:
    """The host names a request's ``Host`` may give: localhost names, the address listened on,
    the `allowed` names, and, on a wildcard address, this machine's names and addresses."""
    hosts = {*LOCAL_HOSTS, _bare(bind_host.lower()), *(_bare(name.lower()) for name in allowed)}
    if bind_host in WILDCARD_HOSTS:
        names = {socket.gethostname(), socket.getfqdn()}
        hosts |= {name.lower() for name in names if name}
        for name in names:
            try:
                hosts |= {str(info[4][0]).lower() for info in socket.getaddrinfo(name, None)}
            except OSError:  # a name that does not resolve: it is still answered by name
                pass
    hosts.discard("")
    return tuple(sorted(hosts))


def _bare(host: str) -> str:
    """A host without its port, and an IPv6 address without its brackets. A bracketed address
    is followed by nothing or by ``:PORT``; anything else (``[::1]evil.example``) is kept whole,
    so it matches no answered name."""
    if host.startswith("["):
        address, bracket, rest = host[1:].partition("]")
        port = rest.removeprefix(":")
        return address if bracket and (rest == "" or (rest.startswith(":") and _is_port(port))) else host
    name, colon, port = host.rpartition(":")
    return name if colon and _is_port(port) and ":" not in name else host


def _is_port(text: str) -> bool:
    return text.isascii() and text.isdigit()


class OwnOriginOnly:
    """ASGI middleware: refuse what this server's own pages would not send (403, 400 or 415 with
    one line of JSON), and tag every request with its browser session (``scope["state"]["session"]``)."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str]) -> None:
        self.app = app
        self.hosts = frozenset(host.lower() for host in hosts)
        self._secret = secrets.token_bytes(32)  # per process: a restarted server forgets its sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self.refusal(scope, headers)
        if refusal is not None:
            reason, status = refusal
            await JSONResponse({"error": reason}, status_code=status, headers=SECURITY_HEADERS)(scope, receive, send)
            return
        session = self._session(headers.get("cookie", ""))
        state = scope.setdefault("state", {})
        state["session"] = session if session is not None else ANONYMOUS
        state["peer"] = peer_of(scope)
        cookie = None
        if session is None and scope["method"] == "GET" and scope["path"] in PAGES:
            cookie = f"{SESSION_COOKIE}={self._new_session()}; Path=/; HttpOnly; SameSite=Lax"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                sent = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    sent[name] = value
                if cookie is not None:
                    sent.append("set-cookie", cookie)
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def refusal(self, scope: Scope, headers: Headers) -> tuple[str, int] | None:
        """Why this request is not answered, with its status; None when it is."""
        host = headers.get("host", "")
        if _bare(host.lower()) not in self.hosts:
            return (f"refused: this server answers requests for {', '.join(sorted(self.hosts))}, not "
                    f"{host[:80]!r} (start it with --allowed-host NAME to add a name)"), 400
        origin = headers.get("origin")
        if origin is not None and origin.lower() != f"{scope['scheme']}://{host}".lower():
            return f"refused: a request from another site ({origin[:80]!r}): this server answers its own pages", 403
        if scope["path"].startswith("/api/") and headers.get("sec-fetch-site", "same-origin") not in _FETCH_SITES:
            return "refused: a request from another site: this server answers its own pages", 403
        if scope["method"] not in SAFE_METHODS:
            media = headers.get("content-type", "").split(";")[0].strip().lower()
            if media != "application/json":
                return f"refused: a {scope['method']} request sends JSON (Content-Type: application/json)", 415
        return None

    def _signature(self, nonce: str) -> str:
        return hmac.new(self._secret, nonce.encode(), hashlib.sha256).hexdigest()[:32]

    def _new_session(self) -> str:
        nonce = secrets.token_urlsafe(12)
        return f"{nonce}.{self._signature(nonce)}"

    def _session(self, cookies: str) -> str | None:
        """The session a cookie header names, if this process signed it."""
        for part in cookies.split(";"):
            name, _, value = part.strip().partition("=")
            if name == SESSION_COOKIE:
                nonce, _, signature = value.partition(".")
                if nonce and hmac.compare_digest(signature.encode(), self._signature(nonce).encode()):
                    return nonce
        return None


def session_of(scope: Any) -> str:
    """The browser session of a request the middleware let through."""
    return str(scope.get("state", {}).get("session", ANONYMOUS))


def peer_of(scope: Any) -> str:
    """The network address a request comes from: every address of this machine as one
    (:data:`baselines.web.games.LOOPBACK`: any local user can use any of them), and an IPv6
    address as its /64 network (what one host is usually given)."""
    client = scope.get("client")
    address = str(client[0]) if client else ""
    if not address or is_local(address):
        return LOOPBACK
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:  # not an address (a test client's name): itself
        return address.lower()
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))  # one host holds a whole /64: one peer
    return str(parsed)
