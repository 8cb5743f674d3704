"""The one place for who may talk to compass's web servers: the Host check (DNS rebinding) and
the token, as ``compass view`` installs them."""

from __future__ import annotations

from fastapi.testclient import TestClient

from compass.viewer.access import allowed_hosts, host_name
from compass.viewer.app import create_app


def test_the_names_a_bind_answers_to():
    assert host_name("Evil.Example") == "evil.example"
    assert allowed_hosts("127.0.0.1") >= {"127.0.0.1", "localhost", "::1"}
    assert allowed_hosts("0.0.0.0") is None  # a wildcard bind relies on the token
    assert allowed_hosts("10.1.2.3") == {"10.1.2.3"}


def test_viewer_answers_only_its_own_host_and_asks_for_the_token(tmp_path):
    app = create_app(tmp_path, None, token="s3cret", hosts=allowed_hosts("127.0.0.1"))
    c = TestClient(app, base_url="http://127.0.0.1:8765")
    assert c.get("/api/runs", headers={"Host": "evil.example"}).status_code == 400
    assert c.get("/api/runs").status_code == 401
    assert c.get("/api/runs", params={"token": "s3cret"}).status_code == 200
    assert c.get("/api/runs").status_code == 200  # the cookie from the first visit
    assert c.get("/api/runs", headers={"Host": "localhost:8765"}).status_code == 200
