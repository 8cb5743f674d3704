"""``compass play`` in a real browser (Playwright driving Debian's chromium): a person plays a SMAX
and an ALEM episode to the end with keys, the run is written and replays in the viewer, and a
closed tab is recorded as an abandoned episode."""

from __future__ import annotations

import json
import os

import pytest

from compass.episode.trace import read_trace
from compass.play.study import PlaySettings
from tests.play.conftest import serve

CHROMIUM = "/usr/bin/chromium"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM),
        reason=f"{CHROMIUM} is absent: apt-get install -y chromium (README's test command installs it)",
    ),
]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def _new_page(browser):
    pg = browser.new_page(viewport={"width": 1300, "height": 900})
    pg.set_default_timeout(120_000)  # the first episode loads the agents on a busy machine
    return pg


def play_with_keys(page, url: str, participant: str, keys: list[str]) -> list[tuple[int, str]]:
    """From the instructions page to the completion page, pressing ``keys`` in turn (skipping those
    not offered at the step), one per step; returns ``(t, key)`` pressed."""
    page.goto(f"{url}/play?participant={participant}")
    page.click("#start")
    page.wait_for_url("**/play/s/**")
    pressed: list[tuple[int, str]] = []
    last = None
    while True:
        page.wait_for_function(
            "last => location.pathname.endsWith('/done') || document.body.dataset.phase === 'between'"
            " || (document.body.dataset.phase === 'play' && document.body.dataset.t !== last)",
            arg=last,
        )
        if page.url.endswith("/done"):
            break
        if page.evaluate("document.body.dataset.phase") == "between":
            page.keyboard.press("Enter")
            page.wait_for_function("document.body.dataset.phase !== 'between'")
            continue
        last = page.evaluate("document.body.dataset.t")
        if "watching" in page.inner_text("#hud"):
            continue  # the person's unit is down: the episode plays on without them
        offered = page.evaluate("window.compassState.keys.map(k => k.key)")
        # In turn, the first of ``keys`` the game offers now (a unit at the map's edge cannot go on).
        start = len(pressed) % len(keys)
        key = next(k for k in keys[start:] + keys[:start] if k in offered)
        pressed.append((int(last), key))
        page.keyboard.press(key)
    page.wait_for_selector("#code")
    return pressed


def test_smax_played_with_keys_is_recorded_and_replays_in_the_viewer(browser, tmp_path):
    settings = PlaySettings(env="smax:protoss_5_vs_5", max_steps=10, out=tmp_path)
    with serve(settings) as (url, app):
        page = _new_page(browser)
        pressed = play_with_keys(page, url, "S1", ["ArrowDown", "x", "ArrowUp", "a", "d", "s"])
        code = page.inner_text("#code")
        (sitting,) = app.state.sittings.values()
        sitting.join(timeout=60)
        run = sitting.run_dir
        assert run.name.endswith(code)
        human = [r for r in read_trace(run) if r["kind"] == "human"]
        assert [(r["t"], r["key"]) for r in human] == pressed and len(pressed) >= 5
        assert len({r["action"] for r in human}) >= 2  # the keys made different actions
        assert all(r["via"] == "key" and r["page_reaction_ms"] >= 0 for r in human)
        assert json.loads((run / "manifest.json").read_text())["participant"] == "S1"
        # The same server's viewer replays it.
        page.goto(f"{url}/runs/{run.name}/episodes/0?t=5")
        page.wait_for_selector("#timeline .agent-col")
        page.wait_for_function("document.getElementById('global').naturalWidth > 0")
        page.wait_for_selector("#stepinfo .human")
        key5 = dict(pressed).get(5)
        info = page.inner_text("#stepinfo")
        assert "person (agent 0)" in info and "0:person" in info
        if key5 is not None:
            assert f'key "{key5}"' in info
        page.close()


def test_help_overlay_lists_the_keys_and_a_closed_tab_is_abandoned(browser, tmp_path):
    settings = PlaySettings(env="smax:protoss_5_vs_5", max_steps=50, out=tmp_path, abandon_after=5.0)
    with serve(settings) as (url, app):
        page = _new_page(browser)
        page.goto(f"{url}/play?participant=gone")
        page.click("#start")
        page.wait_for_function("document.body.dataset.phase === 'play'")
        page.keyboard.press("?")
        assert page.is_visible("#help")
        offered = page.evaluate("window.compassState.keys.map(k => k.key === ' ' ? 'space' : k.key)")
        shown = page.inner_text("#keymap")
        assert "stop" in shown and all(k in shown for k in offered)
        page.keyboard.press("Escape")
        page.keyboard.press("x")
        page.wait_for_function("document.body.dataset.t === '1'")
        page.close(run_before_unload=True)
        (sitting,) = app.state.sittings.values()
        sitting.join(timeout=60)
        summary = json.loads((sitting.run_dir / "summary.json").read_text())
        assert [e["outcome"] for e in summary["episodes"]] == ["abandoned"]
        assert summary["episodes"][0]["steps"] == 1


def test_alem_played_with_keys_to_the_end(browser, tmp_path):
    settings = PlaySettings(env="alem:easy", max_steps=8, out=tmp_path, unit=1)
    with serve(settings) as (url, app):
        page = _new_page(browser)
        pressed = play_with_keys(page, url, "A1", ["ArrowRight", " ", "ArrowDown", "z"])
        (sitting,) = app.state.sittings.values()
        sitting.join(timeout=60)
        trace = read_trace(sitting.run_dir)
        human = [r for r in trace if r["kind"] == "human"]
        assert [(r["t"], r["key"]) for r in human] == pressed and len(pressed) == 8
        # arrows move, space is Do, z sleeps: the game's own action indices, traced on the steps
        want = {"ArrowRight": 2, " ": 5, "ArrowDown": 4, "z": 6}
        steps = {r["t"]: r["actions"][1] for r in trace if r["kind"] == "step"}
        assert all(steps[t] == want[k] for t, k in pressed)
        summary = json.loads((sitting.run_dir / "summary.json").read_text())
        assert summary["episodes"][0]["steps"] == 8 and "alem" in summary
        page.close()
