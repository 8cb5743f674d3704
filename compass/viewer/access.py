"""Who may talk to a compass web server (``compass view``, ``compass play``): one place for the rules.

- **Host check** (DNS rebinding): a page on ``evil.example`` whose name is re-pointed at 127.0.0.1
  reaches a loopback server with ``Host: evil.example``; only the names the server is reached by
  are answered (400 otherwise).
- **Token**: with a token set (any bind beyond loopback), every request carries it (``?token=``
  once, then an HTTP-only same-site cookie).
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Collection

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

#: The names a server bound to loopback answers to (a ``Host`` header, port aside).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` serves only this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(bind: str) -> frozenset[str] | None:
    """The Host names a server bound to ``bind`` answers: loopback names for a loopback bind, the
    bound name otherwise; None (any) for a wildcard bind, which requires the token instead."""
    if bind in ("0.0.0.0", "::", ""):
        return None
    if is_loopback(bind):
        return frozenset({*LOOPBACK_HOSTS, bind})
    return frozenset({bind.lower()})


def host_name(header: str) -> str:
    """The host of a ``Host`` header, without its port: ``[::1]:8765`` -> ``::1``."""
    h = header.strip().lower()
    if h.startswith("["):
        return h[1 : h.find("]")] if "]" in h else h
    return h.rsplit(":", 1)[0] if h.count(":") == 1 else h


def protect(app: FastAPI, token: str | None = None, hosts: Collection[str] | None = LOOPBACK_HOSTS) -> None:
    """Install the Host check (``hosts``; None: any Host, for a wildcard bind where the token
    guards) and the token check (``token``) on ``app``."""
    if token:

        @app.middleware("http")
        async def require_token(request: Request, call_next):
            given = request.query_params.get("token") or request.cookies.get("compass_token")
            if not given or not secrets.compare_digest(given, token):
                return JSONResponse({"detail": "token required: open the URL the server printed"}, 401)
            response = await call_next(request)
            response.set_cookie("compass_token", token, httponly=True, samesite="strict")
            return response

    if hosts is not None:  # added last: runs first, before the token is even looked at
        allowed = {host_name(h) for h in hosts}

        @app.middleware("http")
        async def require_host(request: Request, call_next):
            if host_name(request.headers.get("host", "")) not in allowed:
                return JSONResponse(
                    {"detail": "unknown Host: this server answers only to its own address"}, 400
                )
            return await call_next(request)
