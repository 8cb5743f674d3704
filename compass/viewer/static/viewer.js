// compass viewer: a few functions the server-rendered pages call. No build step, no framework.
"use strict";
const compass = (() => {
  const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const getJSON = async (url, opts) => {
    const r = await fetch(url, opts);
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.detail || r.statusText);
    return body;
  };

  function filterRows(inputId, tableId) {
    const input = document.getElementById(inputId), rows = document.querySelectorAll(`#${tableId} tbody tr`);
    input.addEventListener("input", () => {
      const q = input.value.toLowerCase();
      rows.forEach((tr) => { tr.hidden = q && !(tr.dataset.search || tr.textContent.toLowerCase()).includes(q); });
    });
  }

  // --- replay ---------------------------------------------------------------------------------
  // What a first frame waits for (quiet machine, warm compilation cache; issue 25's measurements).
  const FIRST_FRAME = {
    combat: "compiling SMAX for the replay (first use, ~5 s; longer under load)…",
    alem: "compiling ALEM for the replay (first use, ~20 s; longer under load)…",
    default: "compiling the game for the replay (first use)…",
  };
  function replay() {
    const root = document.getElementById("replay");
    const run = root.dataset.run, ep = +root.dataset.episode, total = +root.dataset.steps, nAgents = +root.dataset.agents;
    const family = root.dataset.family, base = `/api/runs/${encodeURIComponent(run)}/episodes/${ep}`;
    const WINDOW = 100, windows = new Map();
    let t = Math.min(+root.dataset.t || 0, Math.max(0, total - 1)), decisionSteps = [], events = [], panelTimer = null;
    const stepInput = document.getElementById("step"), status = document.getElementById("status");
    const egos = document.getElementById("egos");
    for (let i = 0; i < nAgents; i++) {
      egos.insertAdjacentHTML("beforeend", `<div class="ego" id="ego${i}"><h3 class="ego-head">agent ${i}</h3><img alt="agent ${i} ego frame"><pre class="obs"></pre><pre class="minimap"></pre></div>`);
    }
    const win = (start) => {
      if (!windows.has(start)) windows.set(start, getJSON(`${base}/steps?start=${start}&count=${WINDOW}`));
      if (windows.size > 20) windows.delete(windows.keys().next().value);
      return windows.get(start);
    };
    const stepAt = async (s) => (await win(Math.floor(s / WINDOW) * WINDOW)).steps[s % WINDOW];

    function renderRecord(r) {
      const skip = new Set(["module", "kind", "key_prompt", "response", "parsed", "tag", "prompt_tokens", "completion_tokens", "cached", "n_images"]);
      let out = `<div class="rec"><b>${esc(r.module)}</b> ${esc(r.kind)}`;
      if (r.kind === "vlm") {
        out += ` · ${r.prompt_tokens ?? 0}+${r.completion_tokens ?? 0} tokens${r.cached ? " (cached)" : ""}${r.n_images ? ` · ${r.n_images} image(s)` : ""}`;
        for (const [k, v] of Object.entries(r.parsed || {})) out += `<div>${esc(k)}: ${esc(typeof v === "string" ? v : JSON.stringify(v))}</div>`;
      }
      if (r.kind === "retrieval") {
        out += `<div>query: ${esc(r.query)}</div><ol>${(r.hits || []).map(([n, s]) => `<li>${esc(n)} (${(+s).toFixed(3)})</li>`).join("")}</ol>`;
      } else {
        for (const [k, v] of Object.entries(r)) {
          if (skip.has(k)) continue;
          const cls = k === "error" ? "err" : "";
          out += `<div class="${cls}">${esc(k)}: ${esc(typeof v === "string" ? v : JSON.stringify(v))}</div>`;
        }
      }
      return out + "</div>";
    }
    function renderDecision(d, current) {
      const prompts = (d.prompts || []).map((p) => `<button class="open-prompt" data-path="${esc(p.path)}" data-images="${esc(JSON.stringify(p.images || []))}" data-response="${esc(p.response || "")}">prompt: ${esc(p.module)}</button>`).join(" ");
      return `<div class="decision${current ? " current" : ""}" data-t="${d.t}"><div>t=${d.t} · <b>${esc(d.trigger)}</b> → <a href="/library/${esc(family)}/${esc(d.skill)}" class="skill-link" data-skill="${esc(d.skill)}" data-hash="${esc(d.code_hash)}">${esc(d.skill)}</a></div>
        <div>sub-task: ${esc(d.subtask)}</div>${(d.records || []).map(renderRecord).join("")}${prompts}
        <div><button class="show-code" data-skill="${esc(d.skill)}" data-hash="${esc(d.code_hash)}">code at this moment</button></div></div>`;
    }

    async function renderTimeline() {
      // The decisions of the window holding t (and the previous one), per agent; the latest ≤ t is current.
      const start = Math.floor(t / WINDOW) * WINDOW;
      const pages = await Promise.all([start - WINDOW, start].filter((s) => s >= 0).map(win));
      const byAgent = Array.from({ length: nAgents }, () => []);
      for (const p of pages) for (const s of p.steps) for (const d of s.decisions) if (d.t <= t + 20) byAgent[d.agent]?.push(d);
      const cols = byAgent.map((ds, i) => {
        // The current decision (latest at or before t), three before it and four after it.
        const past = ds.filter((d) => d.t <= t), cur = past.length ? past[past.length - 1] : null;
        const at = past.length - 1, shown = ds.slice(Math.max(0, at - 3), at + 5);
        return `<div class="agent-col"><h3>agent ${i}</h3>${shown.map((d) => renderDecision(d, d === cur)).join("") || "<i>no decision in this window</i>"}</div>`;
      });
      document.getElementById("timeline").innerHTML = cols.join("");
    }

    async function renderStep() {
      const at = t;
      const s = await stepAt(at);
      if (!s || at !== t) return; // the user moved on while this step loaded
      const st = s.step;
      const hu = s.human; // a person's action (compass play): their unit runs no skill
      let h = `<div>reward ${esc(st.reward)} · actions ${esc(JSON.stringify(st.actions))}</div><div>skills: ${(st.skills || []).map((k, i) => `${i}:${esc(k ?? (hu && hu.agent === i ? "person" : "dead"))}`).join(" · ")}</div>`;
      if (hu) h += `<div class="human">person (agent ${esc(hu.agent)}): ${hu.key ? `key ${esc(JSON.stringify(hu.key))}` : esc(hu.via)} → action ${esc(hu.action)}${hu.reaction_ms != null ? `, reaction ${esc(hu.reaction_ms)} ms` : ""}</div>`;
      for (const e of st.events || []) h += `<div class="event event-${esc(e.kind)}">${esc(e.kind)}: ${esc(e.text)}</div>`;
      for (const e of st.errors || []) h += `<div class="err">agent ${e.agent} ${esc(e.skill)} [${esc(e.kind)}] ${esc(e.message)}\n${esc(e.traceback || "")}</div>`;
      const info = document.getElementById("stepinfo");
      info.innerHTML = h;
      info.dataset.step = at;
    }

    function loadFrames() {
      const g = document.getElementById("global");
      g.onerror = async () => {
        const r = await fetch(g.src);
        const body = await r.json().catch(() => ({}));
        status.textContent = `frames unavailable: ${body.detail || r.statusText}`;
      };
      // The first frame re-simulates with a freshly compiled game: say so, or the page looks hung.
      const slow = setTimeout(() => {
        if (!g.complete && !status.textContent) status.textContent = FIRST_FRAME[family] || FIRST_FRAME.default;
      }, 1500);
      g.onload = () => {
        clearTimeout(slow);
        if (status.textContent.startsWith("frames unavailable") || status.textContent.startsWith("compiling")) status.textContent = "";
      };
      g.src = `${base}/frame/${t}/global.png`;
      for (let i = 0; i < nAgents; i++) document.querySelector(`#ego${i} img`).src = `${base}/frame/${t}/agent${i}.png`;
      clearTimeout(panelTimer);
      panelTimer = setTimeout(async () => {
        try {
          const p = await getJSON(`${base}/agents/${t}`);
          if (p.diverged_at != null) status.textContent = `replay diverged from the trace at step ${p.diverged_at}: frames after it are not what happened`;
          for (const a of p.agents) {
            const el = document.getElementById(`ego${a.agent}`);
            el.querySelector(".obs").textContent = a.alive ? a.text : "(dead)";
            el.querySelector(".ego-head").textContent = `agent ${a.agent}${a.alive ? "" : " (dead)"}`;
            el.querySelector(".minimap").textContent = a.minimap;
          }
        } catch (e) { /* shown by the frame's error */ }
      }, 150);
    }

    async function go(n) {
      t = Math.max(0, Math.min(total - 1, n));
      stepInput.value = t;
      document.getElementById("t-label").textContent = t;
      history.replaceState(null, "", `?t=${t}`);
      loadFrames();
      await Promise.all([renderStep(), renderTimeline()]);
    }
    const nextOf = (arr) => arr.find((x) => x > t), prevOf = (arr) => [...arr].reverse().find((x) => x < t);
    document.getElementById("prev").onclick = () => go(t - 1);
    document.getElementById("next").onclick = () => go(t + 1);
    document.getElementById("prev-decision").onclick = () => { const x = prevOf(decisionSteps); if (x != null) go(x); };
    document.getElementById("next-decision").onclick = () => { const x = nextOf(decisionSteps); if (x != null) go(x); };
    stepInput.onchange = () => go(+stepInput.value);
    document.getElementById("events").onchange = (e) => { if (e.target.value !== "") go(+e.target.value); };
    document.addEventListener("keydown", (e) => {
      if (e.target.tagName === "INPUT" || e.target.tagName === "TEXTAREA" || e.target.tagName === "SELECT") return;
      if (e.key === "ArrowRight") { e.preventDefault(); go(t + 1); }
      else if (e.key === "ArrowLeft") { e.preventDefault(); go(t - 1); }
      else if (e.key === "n" || e.key === "PageDown") { const x = nextOf(decisionSteps); if (x != null) go(x); }
      else if (e.key === "p" || e.key === "PageUp") { const x = prevOf(decisionSteps); if (x != null) go(x); }
      else if (e.key === "e") { const x = nextOf(events.map((v) => v.t)); if (x != null) go(x); }
      else if (e.key === "k") { const x = nextOf(events.filter((v) => v.kind === "kill").map((v) => v.t)); if (x != null) go(x); }
      else if (e.key === "Escape") document.getElementById("prompt").hidden = true;
    });
    document.getElementById("timeline").addEventListener("click", async (e) => {
      const b = e.target.closest("button");
      if (!b) return;
      const panel = document.getElementById("prompt");
      panel.hidden = false;
      panel.innerHTML = "<p>loading…</p>";
      try {
        if (b.classList.contains("open-prompt")) {
          const file = (p) => `/api/runs/${encodeURIComponent(run)}/file?path=${encodeURIComponent(p)}`;
          let h = await promptHTML(file(b.dataset.path), b.dataset.path);
          h += JSON.parse(b.dataset.images || "[]").map((p) => `<img src="${file(p)}" alt="${esc(p)}">`).join("");
          if (b.dataset.response) h += `<h3>response</h3><pre>${esc(await (await fetch(file(b.dataset.response))).text())}</pre>`;
          panel.innerHTML = h;
        }
        else {
          const c = await getJSON(`/api/library/${family}/skills/${encodeURIComponent(b.dataset.skill)}/code?hash=${b.dataset.hash}`);
          panel.innerHTML = `<h3>${esc(b.dataset.skill)} (version ${esc(c.version)})</h3><pre class="code">${esc(c.text)}</pre>`;
        }
      } catch (err) { panel.innerHTML = `<p class="err">${esc(err.message)}</p>`; }
      panel.insertAdjacentHTML("afterbegin", `<button onclick="this.parentNode.hidden=true">close (Esc)</button>`);
    });
    getJSON(base).then((info) => { decisionSteps = info.decision_steps; events = info.events; });
    go(t);
  }

  async function promptHTML(url, path) {
    const r = await fetch(url);
    if (!r.ok) throw new Error((await r.json().catch(() => ({}))).detail || r.statusText);
    if ((r.headers.get("content-type") || "").startsWith("image/")) return `<h3>${esc(path)}</h3><img src="${url}">`;
    const text = await r.text();
    let body = `<pre>${esc(text)}</pre>`;
    try {
      const j = JSON.parse(text), imgs = [];
      const walk = (v) => {
        if (typeof v === "string" && v.startsWith("data:image/")) imgs.push(v);
        else if (v && typeof v === "object") Object.values(v).forEach(walk);
      };
      walk(j);
      const shown = JSON.stringify(j, (k, v) => (typeof v === "string" && v.startsWith("data:image/") ? "[image]" : v), 1);
      body = `<pre>${esc(shown)}</pre>` + imgs.map((s) => `<img src="${s}">`).join("");
    } catch (e) { /* plain text */ }
    return `<h3>${esc(path)}</h3>${body}`;
  }

  // --- library --------------------------------------------------------------------------------
  function librarySearch() {
    const q = document.getElementById("lib-query"), fam = document.getElementById("lib-family"), out = document.getElementById("lib-results");
    const run = async () => {
      if (!q.value.trim()) return;
      out.innerHTML = "<li>searching…</li>";
      try {
        const hits = await getJSON(`/api/library/${encodeURIComponent(fam.value)}/search?q=${encodeURIComponent(q.value)}&k=5`);
        out.innerHTML = hits.map((h) => `<li><a href="/library/${esc(fam.value)}/${esc(h.name)}">${esc(h.name)}</a> <span class="score">${h.score.toFixed(3)}</span> ${esc(h.description)}</li>`).join("");
      } catch (e) { out.innerHTML = `<li class="err">${esc(e.message)}</li>`; }
    };
    document.getElementById("lib-search").onclick = run;
    q.addEventListener("keydown", (e) => { if (e.key === "Enter") run(); });
  }

  function skillPage() {
    const root = document.getElementById("skill"), fam = root.dataset.family, name = root.dataset.name;
    const api = `/api/library/${encodeURIComponent(fam)}/skills/${encodeURIComponent(name)}`;
    const save = document.getElementById("save"), result = document.getElementById("save-result");
    if (save) save.onclick = async () => {
      result.className = "result";
      result.textContent = "validating…";
      try {
        const r = await getJSON(api, { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ text: document.getElementById("code").value, reason: document.getElementById("reason").value || null }) });
        result.className = "result ok";
        result.textContent = `saved as version ${r.version}`;
        setTimeout(() => location.reload(), 400);
      } catch (e) { result.className = "result bad"; result.textContent = `refused, nothing saved: ${e.message}`; }
    };
    document.getElementById("history").addEventListener("click", async (e) => {
      const b = e.target.closest("button");
      if (!b) return;
      const out = document.getElementById("diff");
      try {
        if (b.classList.contains("diff")) {
          out.textContent = (await getJSON(`${api}/diff?a=${b.dataset.v}`)).diff || "no difference";
        } else if (b.classList.contains("revert")) {
          // A revert rewrites the skill every later run uses: ask first.
          if (!confirm(`Revert ${name} to version ${b.dataset.v}? It becomes the current code (recorded as a new version).`)) {
            out.textContent = "revert cancelled";
            return;
          }
          const r = await getJSON(`${api}/revert`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ version: b.dataset.v }) });
          out.textContent = `reverted: now version ${r.version}`;
          setTimeout(() => location.reload(), 400);
        }
      } catch (err) { out.textContent = `error: ${err.message}`; }
    });
  }

  // --- compare --------------------------------------------------------------------------------
  function compare() {
    const root = document.getElementById("compare"), ep = +root.dataset.episode, total = +root.dataset.steps;
    const input = document.getElementById("step");
    let t = 0;
    const show = async (side, run) => {
      const at = t;
      document.getElementById(`frame-${side}`).src = `/api/runs/${encodeURIComponent(run)}/episodes/${ep}/frame/${at}/global.png`;
      try {
        const w = await getJSON(`/api/runs/${encodeURIComponent(run)}/episodes/${ep}/steps?start=${at}&count=1`);
        if (at !== t) return; // the user moved on while this step loaded: its info would be stale
        const s = w.steps[0];
        document.getElementById(`info-${side}`).dataset.step = at;
        document.getElementById(`info-${side}`).innerHTML = s ? `reward ${esc(s.step.reward)} · skills ${esc((s.step.skills || []).join(", "))}${s.decisions.map((d) => `<div>agent ${d.agent}: ${esc(d.trigger)} → ${esc(d.skill)} (${esc(d.subtask)})</div>`).join("")}` : "(episode over)";
      } catch (e) { if (at === t) document.getElementById(`info-${side}`).textContent = e.message; }
    };
    const go = (n) => { t = Math.max(0, Math.min(total - 1, n)); input.value = t; show("a", root.dataset.a); show("b", root.dataset.b); };
    document.getElementById("prev").onclick = () => go(t - 1);
    document.getElementById("next").onclick = () => go(t + 1);
    input.onchange = () => go(+input.value);
    document.addEventListener("keydown", (e) => { if (e.target.tagName === "INPUT") return; if (e.key === "ArrowRight") go(t + 1); if (e.key === "ArrowLeft") go(t - 1); });
    go(0);
  }

  return { filterRows, replay, librarySearch, skillPage, compare };
})();
