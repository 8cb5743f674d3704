"""The viewer in a real browser (Playwright driving Debian's chromium): open a recorded run, step
through the timeline with the keyboard, open a logged prompt, search the library, make a valid
edit and a refused one, revert it."""

from __future__ import annotations

import os

import pytest

CHROMIUM = "/usr/bin/chromium"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM),
        reason=f"{CHROMIUM} is absent: apt-get install -y chromium (README's test command installs it)",
    ),
]


@pytest.fixture(scope="module")
def page(viewer_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        pg.set_default_timeout(120_000)  # the first frame compiles SMAX on a busy machine
        yield pg
        browser.close()


def test_open_run_step_with_keyboard_and_open_a_logged_prompt(page, viewer_url, recorded):
    page.goto(viewer_url + "/")
    page.fill("#run-filter", "vlm")
    assert page.locator("#runs tbody tr:visible").count() == 1
    page.click("text=vlm-run")
    page.click("text=episode 0")
    page.wait_for_selector("#timeline .agent-col")
    assert page.input_value("#step") == "0"
    assert "race_adaptive_combat" in page.inner_text("#timeline")

    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("document.getElementById('t-label').textContent === '2'")
    assert page.input_value("#step") == "2" and "?t=2" in page.url
    page.wait_for_function("document.getElementById('global').naturalWidth > 0")
    page.keyboard.press("n")  # next decision
    page.wait_for_function("document.getElementById('t-label').textContent !== '2'")

    # Jump to the step whose perception prompt was logged, open it.
    page.goto(f"{viewer_url}/runs/vlm-run/episodes/0?t={recorded['prompt_t']}")
    button = page.locator(".open-prompt").first
    button.wait_for()
    button.click()
    page.wait_for_selector("#prompt:not([hidden]) pre")
    text = page.inner_text("#prompt")
    assert recorded["prompt_key"] in text and "##Game_situation##" in text
    page.keyboard.press("Escape")
    assert page.locator("#prompt").is_hidden()


def test_jump_to_an_event_and_see_the_error_with_its_line(page, viewer_url):
    page.goto(f"{viewer_url}/runs/vlm-run/episodes/0")
    page.wait_for_selector("#timeline .agent-col")
    error_option = page.locator("#events option", has_text="error").first
    t = error_option.get_attribute("value")
    page.select_option("#events", value=t)
    page.wait_for_function(f"document.getElementById('stepinfo').dataset.step === '{t}'")
    info = page.inner_text("#stepinfo")
    assert "zigzag table not initialised" in info and "line" in info


def test_k_jumps_to_the_next_kill_and_the_step_says_who_killed_whom(page, viewer_url):
    page.goto(f"{viewer_url}/runs/lib-run/episodes/0")
    page.wait_for_selector("#timeline .agent-col")
    kill = page.locator("#events option", has_text="kill").first
    t = kill.get_attribute("value")
    assert t and int(t) > 0
    page.keyboard.press("k")
    page.wait_for_function(f"document.getElementById('t-label').textContent === '{t}'")
    page.wait_for_function("document.getElementById('stepinfo').textContent.includes('kill:')")
    assert " killed " in page.inner_text("#stepinfo .event-kill")


def test_search_library_edit_refused_then_saved_then_reverted(page, viewer_url, recorded):
    page.goto(viewer_url + "/library")
    page.fill("#lib-query", "retreat when health is low")
    page.click("#lib-search")
    page.wait_for_selector("#lib-results li a")
    assert page.inner_text("#lib-results li >> nth=0").startswith("retreat_when_low")

    path = recorded["lib"] / "combat" / "attack_nearest.py"
    before = path.read_text()
    page.goto(viewer_url + "/library/combat/attack_nearest")
    page.fill("#code", before + "\n    return (\n")
    page.click("#save")
    page.wait_for_selector("#save-result.bad")
    assert "syntax error" in page.inner_text("#save-result") and "line" in page.inner_text("#save-result")
    assert path.read_text() == before

    edited = before.replace('"""', '"""Browser edit. ', 1)
    page.fill("#code", edited)
    page.fill("#reason", "clarify the description")
    page.click("#save")
    # Saved: the page reloads with the new version on top (a refusal would show in #save-result).
    page.wait_for_function(
        "document.querySelector('#save-result.bad') || "
        "document.getElementById('history').innerText.includes('clarify the description')"
    )
    assert page.locator("#save-result.bad").count() == 0
    assert path.read_text() == edited

    # Revert to the version before the edit (the second row, newest first): it asks first, and
    # a cancelled revert changes nothing.
    asked = []

    def answer(accept):
        def handle(dialog):
            asked.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()

        return handle

    page.once("dialog", answer(False))
    page.locator("#history tbody tr >> nth=1").locator("button.revert").click()
    page.wait_for_function("document.getElementById('diff').innerText.includes('revert cancelled')")
    assert asked and "Revert attack_nearest to version" in asked[0]
    assert path.read_text() == edited
    page.once("dialog", answer(True))
    page.locator("#history tbody tr >> nth=1").locator("button.revert").click()
    page.wait_for_function("document.getElementById('history').innerText.includes('revert attack_nearest')")
    assert len(asked) == 2 and path.read_text() == before


def test_compare_two_runs_of_the_same_seed(page, viewer_url):
    page.goto(f"{viewer_url}/compare?a=vlm-run&b=lib-run&episode=0")
    page.wait_for_function(
        "document.getElementById('frame-a').naturalWidth > 0 && document.getElementById('frame-b').naturalWidth > 0"
    )
    page.keyboard.press("ArrowRight")
    page.wait_for_function("document.getElementById('step').value === '1'")
    # Each side's info arrives with its own request: wait for step 1's on both.
    page.wait_for_function(
        "['a', 'b'].every((s) => document.getElementById('info-' + s).dataset.step === '1')"
    )
    assert "reward" in page.inner_text("#info-a") and "reward" in page.inner_text("#info-b")


def test_an_eval_result_opens_with_its_report_and_an_episode_replays(page, viewer_url):
    page.goto(viewer_url + "/")
    page.click("text=mini-eval")
    page.wait_for_selector("#report table")
    assert "comm=multihop" in page.inner_text("#report")
    page.wait_for_function("document.getElementById('report-plot').naturalWidth > 0")
    page.locator("#eval-episodes a", has_text="replay").first.click()
    page.wait_for_function("document.getElementById('global').naturalWidth > 0")
    assert "episode 0" in page.title()


def test_ego_frames_are_shown_at_their_size_under_a_readable_header(page, viewer_url):
    page.goto(viewer_url + "/runs/lib-run/episodes/0?t=3")
    page.wait_for_function("document.querySelector('#ego0 img').naturalWidth > 0")
    size = page.evaluate(
        "(() => { const i = document.querySelector('#ego0 img'); return [i.clientWidth, i.naturalWidth]; })()"
    )
    assert size[0] == size[1]  # not scaled down (the header drawn in the frame stays legible)
    head = page.locator("#ego0 .ego-head")
    assert head.inner_text().startswith("agent 0")
    px = float(page.evaluate("getComputedStyle(document.querySelector('#ego0 .ego-head')).fontSize")[:-2])
    assert px >= 14


def test_a_slow_first_frame_says_it_is_compiling(page, viewer_url):
    """A frame that takes long (the first compiles the game) shows what the page waits for."""
    import time

    def slow(route):
        time.sleep(4)
        route.continue_()

    page.route("**/frame/**/global.png", slow)
    try:
        page.goto(
            viewer_url + "/runs/lib-run/episodes/0?t=5", wait_until="commit"
        )  # not "load": it waits for the frame
        page.wait_for_function("document.getElementById('status').innerText.startsWith('compiling SMAX')")
        page.wait_for_function("document.getElementById('global').naturalWidth > 0")
        page.wait_for_function("document.getElementById('status').innerText === ''")
    finally:
        page.unroute("**/frame/**/global.png")
