// compass play: the instructions page's Start button, and the game page (long-polls the state,
// sends the person's keys and clicks, shows the frame, the keys, the team and the outcome).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const post = (url, body) =>
    fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) });

  if (typeof PARTICIPANT !== "undefined") {
    $("start").addEventListener("click", async () => {
      $("start").disabled = true;
      const r = await post("/api/play/start", { participant: PARTICIPANT });
      const j = await r.json();
      if (!r.ok) { $("start").disabled = false; alert(j.detail || "could not start"); return; }
      location.href = j.url;
    });
    return;
  }
  if (typeof SITTING === "undefined") return;

  const api = (what) => `/api/play/${SITTING}/${what}`;
  let version = 0, st = null, shownAt = 0, sentFor = null, pressedAt = null, finished = false;
  let keys = new Map();
  // Key press -> next frame on screen (ms), for the latency benchmark and anyone curious.
  window.compassLatencies = [];

  function setStatus(text, cls) { const s = $("status"); s.textContent = text; s.className = cls || ""; }

  function renderList(state) {
    const ol = $("actions"); ol.innerHTML = "";
    const seen = new Set();
    keys = new Map();
    for (const k of state.keys || []) {
      if (k.key) keys.set(k.key, k.action);
      if (seen.has(k.action)) continue;
      seen.add(k.action);
      const li = document.createElement("li");
      li.dataset.action = k.action;
      li.className = "act";
      li.textContent = (k.key ? `[${k.key === " " ? "space" : k.key}] ` : "") + k.label;
      li.addEventListener("click", () => send(k.action, null));
      ol.appendChild(li);
    }
    const tb = $("keymap"); tb.innerHTML = "";
    for (const k of state.keys || []) {
      if (!k.key) continue;
      const tr = document.createElement("tr");
      tr.innerHTML = "<td><kbd></kbd></td><td></td>";
      tr.children[0].firstChild.textContent = k.key === " " ? "space" : k.key;
      tr.children[1].textContent = k.label;
      tb.appendChild(tr);
    }
  }

  async function render(state) {
    st = state;
    if (state.phase === "play") {
      $("between").hidden = true;
      const img = $("frame");
      if (state.frame) img.src = state.frame;
      try { await img.decode(); } catch (e) { /* shown anyway */ }
      if (st !== state) return; // a newer state arrived while decoding
      await new Promise((r) => requestAnimationFrame(r));
      shownAt = performance.now();
      if (pressedAt !== null) { window.compassLatencies.push(shownAt - pressedAt); pressedAt = null; }
      window.compassState = state; // what is on screen (tests and the latency benchmark read it)
      document.body.dataset.t = String(state.t);
      document.body.dataset.episode = String(state.episode);
      const hp = Math.round(100 * state.health);
      $("hud").textContent = `episode ${state.episode + 1}/${state.episodes} · step ${state.t}` +
        (state.max_steps ? `/${state.max_steps}` : "") + ` · unit ${state.unit} · health ${hp}%` +
        (state.alive ? "" : " · your unit is down: watching");
      renderList(state);
      const team = $("team"); team.innerHTML = "";
      for (const m of state.team || []) {
        const d = document.createElement("div");
        d.textContent = `agent ${m.agent}: ${m.subtask}` + (m.skill ? ` (skill ${m.skill})` : "") + ` · since step ${m.since}`;
        team.appendChild(d);
      }
      if (!(state.team || []).length) team.textContent = "no messages heard yet";
      $("shared").textContent = state.shared || "";
      $("obs").textContent = state.text || "";
      setStatus(state.alive ? "your move" : "watching", "ok");
      document.body.dataset.phase = "play"; // last: the frame, keys and step are on screen
    } else if (state.phase === "between") {
      $("between").hidden = false;
      $("between-text").textContent = `Episode ${state.episode + 1} of ${state.episodes}: ${state.outcome} after ${state.steps} steps.` +
        (state.headline ? ` ${state.headline}` : "");
      setStatus("between episodes", "ok");
      document.body.dataset.phase = "between";
      $("next").focus();
    } else if (state.phase === "error") {
      setStatus(`error: ${state.message}`, "err");
      document.body.dataset.phase = "error";
    } else {
      setStatus("starting… (loading the game and the agents)", "");
    }
  }

  async function send(action, key) {
    if (!st || st.phase !== "play" || !st.alive || sentFor === st.t) return;
    sentFor = st.t;
    pressedAt = performance.now();
    const r = await post(api("act"), { t: st.t, action, key, rt_ms: pressedAt - shownAt });
    if (!r.ok) {
      const j = await r.json().catch(() => ({}));
      setStatus(`refused: ${j.detail || r.status}`, "err");
      pressedAt = null;
      sentFor = null;
    } else {
      setStatus("sent", "");
    }
  }

  async function poll() {
    while (!finished) {
      try {
        const r = await fetch(api(`state?after=${version}`));
        if (!r.ok) { setStatus(`server: ${r.status}`, "err"); await new Promise((x) => setTimeout(x, 1000)); continue; }
        const state = await r.json();
        if (state.version > version) { version = state.version; await render(state); }
        if (state.phase === "complete" || state.phase === "abandoned") {
          finished = true;
          location.href = `/play/s/${SITTING}/done`;
        } else if (state.phase === "error") {
          finished = true;
        }
      } catch (e) {
        await new Promise((x) => setTimeout(x, 500));
      }
    }
  }

  document.addEventListener("keydown", (ev) => {
    if (ev.key === "?") { $("help").hidden = !$("help").hidden; ev.preventDefault(); return; }
    if (ev.key === "Escape") { $("help").hidden = true; return; }
    if (st && st.phase === "between" && ev.key === "Enter") { ev.preventDefault(); nextEpisode(); return; }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (st && st.phase === "play" && keys.has(ev.key)) { ev.preventDefault(); send(keys.get(ev.key), ev.key); }
  });
  function nextEpisode() { $("between").hidden = true; post(api("next")); }
  $("next").addEventListener("click", nextEpisode);
  // A closed tab or a navigation away ends the episode now (recorded as abandoned); a dead
  // connection does so after the server's timeout.
  window.addEventListener("pagehide", () => { if (!finished) navigator.sendBeacon(api("leave")); });
  poll();
})();
