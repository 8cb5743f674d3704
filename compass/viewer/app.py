"""The ``compass view`` web app: FastAPI, server-rendered pages plus one small script, JSON under ``/api/``.

Pages: ``/`` runs (filter, search), ``/runs/{id}`` a run's episodes, ``/runs/{id}/episodes/{ep}``
the replay (frames, per-agent timeline, events, keyboard stepping), ``/library`` and
``/library/{family}/{name}`` (code, provenance, lineage, statistics, versions, diffs, edit,
revert), ``/compare?a=&b=`` two runs side by side. The pages fetch everything step-dependent from
the API in windows (``/api/runs/{id}/episodes/{ep}/steps?start=&count=``), so a 10,000-step
episode costs the page one window at a time.
"""

from __future__ import annotations

import html
import json
from collections.abc import Collection
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import Body, FastAPI, HTTPException, Query
from fastapi.responses import HTMLResponse, Response

from compass.core.runformat import RunFiles
from compass.viewer.access import LOOPBACK_HOSTS, protect
from compass.viewer.library import LibraryView, lineage, skill_row, usage_in_runs
from compass.viewer.replay import ReplayCache, ReplayUnavailable
from compass.viewer.runs import RunNotFound, RunStore

STATIC = Path(__file__).parent / "static"
MAX_WINDOW = 500


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _page(title: str, body: str, script: str = "") -> HTMLResponse:
    scripts = '<script src="/static/viewer.js"></script>' + (f"<script>{script}</script>" if script else "")
    return HTMLResponse(
        f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)} · compass</title>
<link rel="stylesheet" href="/static/viewer.css"></head><body>
<nav><a href="/">runs</a> <a href="/library">library</a> <a href="/compare">compare</a></nav>
<main><h1>{_e(title)}</h1>{body}</main>{scripts}</body></html>"""
    )


def create_app(
    runs_dir: Path,
    library: Path | None = None,
    token: str | None = None,
    hosts: Collection[str] | None = LOOPBACK_HOSTS,
) -> FastAPI:
    """The viewer app for the runs under ``runs_dir`` and the library root ``library``.

    With ``token`` set, every request must carry it (``?token=`` once, then a cookie). Only
    requests whose ``Host`` is one of ``hosts`` are answered (None: any, for a wildcard bind,
    where the token guards): a DNS-rebinding page, whose requests say ``Host: evil.example``,
    cannot read runs or edit the library through the JSON API.
    """
    store = RunStore(runs_dir)
    replays = ReplayCache(store)

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        yield
        replays.close()  # threads replaying long episodes ahead stop with the server

    app = FastAPI(
        title="compass viewer", docs_url="/api/docs", openapi_url="/api/openapi.json", lifespan=lifespan
    )
    libs = LibraryView(library)
    app.state.store, app.state.replays, app.state.libs = store, replays, libs

    protect(app, token, hosts)

    def not_found(e: Exception) -> HTTPException:
        return HTTPException(404, str(e.args[0]) if e.args else str(e))

    # --- static ---------------------------------------------------------------------------------

    @app.get("/static/{name}")
    def static(name: str) -> Response:
        path = STATIC / name
        if name not in {"viewer.js", "viewer.css"} or not path.exists():
            raise HTTPException(404, "no such file")
        media = "text/javascript" if name.endswith(".js") else "text/css"
        return Response(path.read_text(encoding="utf-8"), media_type=media)

    # --- API: runs ------------------------------------------------------------------------------

    @app.get("/api/runs")
    def api_runs(q: str = "", outcome: str = "") -> list[dict[str, Any]]:
        """Runs, newest first; ``q`` matches id, env, planner or model; ``outcome`` keeps runs with such an episode."""
        rows = store.list_runs()
        if q:
            ql = q.lower()
            rows = [
                r
                for r in rows
                if any(ql in str(r.get(k) or "").lower() for k in ("id", "env", "planner", "vlm"))
            ]
        if outcome:
            rows = [r for r in rows if any(e["outcome"] == outcome for e in r["episodes"])]
        return rows

    @app.get("/api/runs/{run_id}")
    def api_run(run_id: str) -> dict[str, Any]:
        try:
            row = store.run_row(run_id)
            row["config"] = store.config(run_id)
        except RunNotFound as e:
            raise not_found(e) from None
        return row

    @app.get("/api/runs/{run_id}/episodes/{episode}")
    def api_episode(run_id: str, episode: int) -> dict[str, Any]:
        """An episode's length, agents and events (deaths, kills, errors, synthesis, repair, sightings)."""
        try:
            ep = store.episode(run_id, episode)
            end = store.read_at(run_id, [ep.end])[0] if ep.end is not None else None
        except RunNotFound as e:
            raise not_found(e) from None
        return {
            "run": run_id,
            "episode": episode,
            "steps": len(ep.steps),
            "agents": ep.agents,
            "decision_steps": sorted(ep.decisions),
            "events": ep.events,
            "result": end,
        }

    @app.get("/api/runs/{run_id}/episodes/{episode}/steps")
    def api_steps(
        run_id: str, episode: int, start: int = 0, count: int = Query(50, ge=1, le=MAX_WINDOW)
    ) -> dict[str, Any]:
        """A window of steps, each with its decisions (modules' records, retrieval, chosen skill) and prompt links."""
        try:
            rows = store.steps(run_id, episode, start, count)
            total = len(store.episode(run_id, episode).steps)
        except RunNotFound as e:
            raise not_found(e) from None
        return {"start": start, "total": total, "steps": rows}

    @app.get("/api/runs/{run_id}/episodes/{episode}/frame/{t}/{which}.png")
    def api_frame(run_id: str, episode: int, t: int, which: str) -> Response:
        """The global frame (``global``) or an agent's ego frame (``agent3``) at step ``t``, re-simulated."""
        if which != "global" and not (which.startswith("agent") and which[5:].isdigit()):
            raise HTTPException(404, "frame is 'global' or 'agent<N>'")
        try:
            data, status = replays.frame(run_id, episode, t, which)
        except RunNotFound as e:
            raise not_found(e) from None
        except ReplayUnavailable as e:
            raise HTTPException(409, str(e)) from None
        except IndexError:
            raise HTTPException(404, f"no agent {which[5:]}") from None
        headers = {"Cache-Control": "max-age=3600"}
        if status.get("diverged_at") is not None:
            headers["X-Replay-Diverged-At"] = str(status["diverged_at"])
        return Response(data, media_type="image/png", headers=headers)

    @app.get("/api/runs/{run_id}/episodes/{episode}/agents/{t}")
    def api_agents(run_id: str, episode: int, t: int) -> dict[str, Any]:
        """Each agent's observation text and minimap (relayed entities) at step ``t``, re-simulated."""
        try:
            return replays.panels(run_id, episode, t)
        except RunNotFound as e:
            raise not_found(e) from None
        except ReplayUnavailable as e:
            raise HTTPException(409, str(e)) from None

    @app.get("/api/runs/{run_id}/timings")
    def api_timings(run_id: str, episode: int | None = None) -> list[dict[str, Any]]:
        try:
            path = RunFiles(store.run_dir(run_id)).timings
        except RunNotFound as e:
            raise not_found(e) from None
        out = []
        if path.exists():
            with open(path, encoding="utf-8") as f:
                for line in f:
                    try:
                        r = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if episode is None or r.get("episode") == episode:
                        out.append(r)
        return out

    @app.get("/api/runs/{run_id}/file")
    def api_run_file(run_id: str, path: str) -> Response:
        """A file inside the run directory (logged prompts and images)."""
        try:
            p = store.run_file(run_id, path)
        except RunNotFound as e:
            raise not_found(e) from None
        media = {
            ".png": "image/png",
            ".jpg": "image/jpeg",
            ".jpeg": "image/jpeg",
            ".json": "application/json",
            ".mp4": "video/mp4",
        }.get(p.suffix.lower(), "text/plain; charset=utf-8")
        return Response(p.read_bytes(), media_type=media)

    # --- API: library -------------------------------------------------------------------------

    def lib_or_404(family: str):
        try:
            return libs.get(family)
        except (KeyError, FileNotFoundError) as e:
            raise not_found(e) from None

    @app.get("/api/library")
    def api_library() -> dict[str, Any]:
        out = {"read_only": libs.read_only, "root": str(libs.root) if libs.root else None, "families": {}}
        for fam in libs.families():
            lib = lib_or_404(fam)
            out["families"][fam] = {
                "skills": [skill_row(lib, lib.skills[n]) for n in lib.names()],
                "problems": [str(p) for p in lib.problems],
            }
        return out

    @app.get("/api/library/{family}/search")
    def api_search(family: str, q: str, k: int = Query(5, ge=1, le=50)) -> list[dict[str, Any]]:
        lib = lib_or_404(family)
        return [{**skill_row(lib, h.skill), "score": round(h.score, 4)} for h in lib.retrieve(q, k)]

    @app.get("/api/library/{family}/skills/{name}")
    def api_skill(family: str, name: str, runs: bool = True) -> dict[str, Any]:
        lib = lib_or_404(family)
        if name not in lib:
            raise HTTPException(404, f"no skill {name!r} in the {family} library")
        s = lib.skills[name]
        return {
            **skill_row(lib, s),
            "meta": s.meta,
            "text": s.path.read_text(encoding="utf-8") if s.path else s.file_text(),
            "code_hash": s.code_hash,
            "lineage": lineage(lib, name),
            "stats": lib.stats.get(name, {}),
            "in_runs": usage_in_runs(store, name) if runs else None,
            "history": [v.as_dict() for v in lib.history(name)],
            "read_only": lib.shipped,
        }

    @app.get("/api/library/{family}/skills/{name}/code")
    def api_skill_code(family: str, name: str, hash: str) -> dict[str, Any]:
        """The skill's text whose code hash is ``hash`` (the code a decision chose, at that moment)."""
        from compass.sandbox.runtime import code_hash
        from compass.skills.skill import parse_skill_source

        lib = lib_or_404(family)
        if name in lib and lib.skills[name].code_hash == hash:
            return {"version": "current", "text": lib.skills[name].file_text()}
        for v in reversed(lib.history(name)):
            text = lib.versions.show(v.commit, v.path) if lib.versions else None
            if not text:
                continue
            try:
                sk = parse_skill_source(text, family, name=Path(v.path).stem)
            except (SyntaxError, ValueError):
                continue
            if code_hash(sk.code) == hash:
                return {"version": v.number, "text": text}
        raise HTTPException(404, f"no version of {name} with code hash {hash} in this library")

    @app.get("/api/library/{family}/skills/{name}/diff")
    def api_diff(family: str, name: str, a: str | None = None, b: str | None = None) -> dict[str, Any]:
        from compass.skills.versions import VersionError

        lib = lib_or_404(family)
        try:
            return {"diff": lib.diff(name, a, b)}
        except (VersionError, OSError) as e:
            raise HTTPException(400, str(e)) from None

    def _edit(family: str, action, *args: Any, **kwargs: Any) -> dict[str, Any]:
        from compass.skills.library import SkillEditError
        from compass.skills.versions import VersionError

        lib = lib_or_404(family)
        if lib.shipped:
            raise HTTPException(
                403, "the shipped seed library is read-only: start compass view with --library DIR"
            )
        try:
            action(lib, *args, **kwargs)
        except KeyError as e:
            raise not_found(e) from None
        except (SkillEditError, VersionError, ValueError) as e:
            raise HTTPException(400, str(e)) from None
        libs.touch(family)
        return {"ok": True}

    @app.put("/api/library/{family}/skills/{name}")
    def api_save(family: str, name: str, payload: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
        """Validate (parse, sandbox compile, run on recorded observations) and save as a new version;
        a refused edit answers 400 with the error and its line, and writes nothing."""
        text = payload.get("text")
        if not isinstance(text, str):
            raise HTTPException(422, "body must be {text, reason?, author?}")
        out = _edit(
            family,
            lambda lib: lib.update(name, text, author=payload.get("author"), reason=payload.get("reason")),
        )
        return {**out, "version": len(libs.get(family).history(name))}

    @app.post("/api/library/{family}/skills/{name}/revert")
    def api_revert(family: str, name: str, payload: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
        version = str(payload.get("version", ""))
        out = _edit(
            family,
            lambda lib: lib.revert(name, version, author=payload.get("author"), reason=payload.get("reason")),
        )
        return {**out, "version": len(libs.get(family).history(name))}

    # --- pages ------------------------------------------------------------------------------------

    @app.get("/", response_class=HTMLResponse)
    def page_runs(q: str = "", outcome: str = "") -> HTMLResponse:
        rows = api_runs(q, outcome)
        trs = []
        for r in rows:
            eps = r["episodes"]
            outcomes = ", ".join(f"{e['outcome']}" for e in eps[:8]) + (" …" if len(eps) > 8 else "")
            trs.append(
                f"<tr data-search='{_e((r['id'] + ' ' + str(r.get('env')) + ' ' + str(r.get('vlm'))).lower())}'>"
                f"<td><a href='/runs/{_e(r['id'])}'>{_e(r['id'])}</a></td><td>{_e(r.get('env'))}</td>"
                f"<td>{_e(r.get('planner'))}</td><td>{_e(r.get('vlm') or '-')}</td><td>{_e(r.get('seed'))}</td>"
                f"<td>{r.get('n_episodes', 0)}</td><td>{_e(outcomes)}</td><td>{r.get('wins', 0)}</td>"
                f"<td>{r.get('tokens', 0)}</td><td>{r.get('cost_usd', 0):.4f}</td><td>{r.get('skill_errors', 0)}</td>"
                f"<td>{_e(r['status'])}</td></tr>"
            )
        outcome_opts = "".join(
            f"<option {'selected' if outcome == o else ''}>{o}</option>" for o in ("win", "loss", "timeout")
        )
        body = f"""<form method="get" class="filters"><input id="run-filter" name="q" value="{_e(q)}" placeholder="filter runs (id, env, model)">
<select name="outcome"><option value="">any outcome</option>{outcome_opts}</select>
<button>filter</button></form>
<p>{len(rows)} run(s) in <code>{_e(store.dir)}</code></p>
<table id="runs"><thead><tr><th>run</th><th>env</th><th>planner</th><th>vlm</th><th>seed</th><th>episodes</th><th>outcomes</th><th>wins</th><th>tokens</th><th>cost $</th><th>skill errors</th><th>status</th></tr></thead>
<tbody>{"".join(trs)}</tbody></table>"""
        return _page("runs", body, "compass.filterRows('run-filter', 'runs');")

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def page_run(run_id: str) -> HTMLResponse:
        r = api_run(run_id)
        if r.get("kind") == "eval":
            return _eval_page(r)
        trs = "".join(
            f"<tr><td><a href='/runs/{_e(run_id)}/episodes/{e['episode']}'>episode {e['episode']}</a></td>"
            f"<td>{_e(e['seed'])}</td><td class='o-{_e(e['outcome'])}'>{_e(e['outcome'])}</td><td>{_e(e['return'])}</td>"
            f"<td>{_e(e['steps'])}</td><td>{_e(e['decisions'])}</td><td>{e['skill_errors']}</td><td>{e['tokens']}</td>"
            f"<td>{e['cost_usd']:.4f}</td><td>{_e(e.get('headline') or '')}</td></tr>"
            for e in r["episodes"]
        )
        cfg = html.escape(json.dumps(r.get("config", {}), indent=1))
        body = f"""<p>{_e(r.get("env"))} · planner {_e(r.get("planner"))} · vlm {_e(r.get("vlm") or "-")} · seed {_e(r.get("seed"))} · {_e(r["status"])}</p>
<p>{_e(r.get("headline") or "")}</p>
<table><thead><tr><th>episode</th><th>seed</th><th>outcome</th><th>return</th><th>steps</th><th>decisions</th><th>skill errors</th><th>tokens</th><th>cost $</th><th></th></tr></thead><tbody>{trs}</tbody></table>
<p><a href="/compare?a={_e(run_id)}">compare with another run…</a></p>
<details><summary>configuration</summary><pre>{cfg}</pre></details>"""
        return _page(f"run {run_id}", body)

    @app.get("/runs/{run_id}/episodes/{episode}", response_class=HTMLResponse)
    def page_episode(run_id: str, episode: int, t: int = 0) -> HTMLResponse:
        info = api_episode(run_id, episode)
        family = _family_of(store, run_id)
        body = f"""<div id="replay" data-run="{_e(run_id)}" data-episode="{episode}" data-steps="{info["steps"]}"
 data-agents="{info["agents"]}" data-family="{_e(family)}" data-t="{t}">
<div class="controls"><button id="prev" title="previous step (←)">◀</button>
<input id="step" type="number" min="0" max="{max(0, info["steps"] - 1)}" value="{t}"> / {max(0, info["steps"] - 1)}
<button id="next" title="next step (→)">▶</button>
<button id="prev-decision" title="previous decision (PageUp / p)">⏮ decision</button>
<button id="next-decision" title="next decision (PageDown / n)">decision ⏭</button>
<select id="events"><option value="">jump to event…</option>{"".join(f'<option value="{ev["t"]}">t={ev["t"]} {_e(ev["kind"])}: {_e(ev["text"])}</option>' for ev in info["events"][:2000])}</select>
<span class="hint">keys: ← → step, p/n decision, e next event, k next kill</span></div>
<p id="status" class="status"></p>
<div class="frames"><figure><img id="global" alt="global frame"><figcaption>global (re-simulated)</figcaption></figure>
<div id="egos" class="egos"></div></div>
<h2>step <span id="t-label">{t}</span></h2>
<div id="stepinfo"></div>
<h2>decisions around this step</h2>
<div id="timeline" class="timeline"></div>
<div id="prompt" class="prompt" hidden></div>
</div>"""
        return _page(f"{run_id} · episode {episode}", body, "compass.replay();")

    @app.get("/library", response_class=HTMLResponse)
    def page_library() -> HTMLResponse:
        data = api_library()
        parts = [
            f"<p>library: <code>{_e(data['root'] or 'shipped seed skills (read-only)')}</code></p>",
            "<div class='search'><select id='lib-family'>"
            + "".join(f"<option>{_e(f)}</option>" for f in data["families"])
            + "</select><input id='lib-query' placeholder='semantic search: e.g. kite zealots'>"
            "<button id='lib-search'>search</button></div><ol id='lib-results'></ol>",
        ]
        for fam, d in data["families"].items():
            rows = "".join(
                f"<tr><td><a href='/library/{_e(fam)}/{_e(s['name'])}'>{_e(s['name'])}</a></td><td>{_e(s['provenance'])}</td>"
                f"<td>{_e(s['parent'] or '-')}</td><td>{s['uses']}</td><td>{s['errors']}</td><td>{_e(s['description'][:100])}</td></tr>"
                for s in d["skills"]
            )
            probs = "".join(f"<li>{_e(p)}</li>" for p in d["problems"])
            parts.append(
                f"<h2>{_e(fam)} ({len(d['skills'])} skills)</h2>"
                + (f"<ul class='problems'>{probs}</ul>" if probs else "")
                + f"<table class='skills'><thead><tr><th>name</th><th>provenance</th><th>parent</th><th>uses</th><th>errors</th><th>description</th></tr></thead><tbody>{rows}</tbody></table>"
            )
        return _page("skill library", "".join(parts), "compass.librarySearch();")

    @app.get("/library/{family}/{name}", response_class=HTMLResponse)
    def page_skill(family: str, name: str) -> HTMLResponse:
        s = api_skill(family, name)
        meta = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in s["meta"].items())
        lin = s["lineage"]
        link = lambda n: f"<a href='/library/{_e(family)}/{_e(n)}'>{_e(n)}</a>"  # noqa: E731
        anc = " ← ".join(link(n) for n in lin["ancestors"]) or "-"
        kids = ", ".join(link(n) for n in lin["children"]) or "-"
        ir = s["in_runs"] or {}
        wr = "-" if ir.get("win_rate") is None else f"{ir['win_rate']:.2f}"
        hist = "".join(
            f"<tr><td>v{v['version']}</td><td><code>{_e(v['commit'][:8])}</code></td><td>{_e(v['date'])}</td><td>{_e(v['author'])}</td>"
            f"<td>{_e(v['kind'])}</td><td>{_e(v['action'])}</td><td>{_e(v['reason'])}</td>"
            f"<td><button class='diff' data-v='{v['version']}'>diff to current</button>"
            + (
                ""
                if s["read_only"]
                else f" <button class='revert' data-v='{v['version']}'>revert to this</button>"
            )
            + "</td></tr>"
            for v in reversed(s["history"])
        )
        editor = (
            "<p>The shipped seed library is read-only: start <code>compass view --library DIR</code> to edit.</p>"
            if s["read_only"]
            else "<h2>edit</h2><textarea id='code' spellcheck='false' rows='30'>"
            + _e(s["text"])
            + "</textarea><br><input id='reason' placeholder='reason for this change'>"
            " <button id='save'>validate and save</button><pre id='save-result' class='result'></pre>"
        )
        body = f"""<div id="skill" data-family="{_e(family)}" data-name="{_e(name)}">
<p>{_e(s["description"])}</p>
<table class="meta">{meta}</table>
<p>lineage: {anc} ← <b>{_e(name)}</b> → children: {kids}</p>
<p>library statistics: {s["stats"].get("uses", 0)} uses, {s["stats"].get("errors", 0)} errors ·
in the runs here: chosen in {ir.get("decisions", 0)} decisions, {ir.get("errors", 0)} errors, used in {ir.get("episodes", 0)} episodes, win rate {wr}</p>
<h2>code</h2><pre class="code" id="current">{_e(s["text"])}</pre>
{editor}
<h2>versions</h2><table id="history"><thead><tr><th>version</th><th>commit</th><th>date</th><th>author</th><th>kind</th><th>action</th><th>reason</th><th></th></tr></thead><tbody>{hist}</tbody></table>
<pre id="diff" class="diff"></pre></div>"""
        return _page(f"skill {name}", body, "compass.skillPage();")

    @app.get("/compare", response_class=HTMLResponse)
    def page_compare(a: str = "", b: str = "", episode: int = 0) -> HTMLResponse:
        runs = [r for r in store.list_runs() if r.get("kind") != "eval"]  # an eval has no single seed
        opts = lambda sel: "".join(  # noqa: E731
            f"<option value='{_e(r['id'])}' {'selected' if r['id'] == sel else ''}>{_e(r['id'])} (seed {_e(r.get('seed'))})</option>"
            for r in runs
        )
        body = f"""<form method="get" class="filters"><select name="a">{opts(a)}</select> vs <select name="b"><option value="">choose…</option>{opts(b)}</select>
episode <input name="episode" type="number" min="0" value="{episode}"> <button>compare</button></form>"""
        if a and b:
            ra, rb = api_run(a), api_run(b)
            if ra.get("seed") != rb.get("seed"):
                body += f"<p class='warn'>different seeds ({_e(ra.get('seed'))} vs {_e(rb.get('seed'))}): episodes are not the same situations</p>"
            rows = []
            for ea, eb in zip(ra["episodes"], rb["episodes"], strict=False):
                rows.append(
                    "<tr>"
                    + "".join(
                        f"<td>{_e(x)}</td>"
                        for x in (
                            ea["episode"],
                            ea["seed"],
                            ea["outcome"],
                            eb["outcome"],
                            ea["return"],
                            eb["return"],
                            ea["steps"],
                            eb["steps"],
                            ea["skill_errors"],
                            eb["skill_errors"],
                            ea["tokens"],
                            eb["tokens"],
                        )
                    )
                    + "</tr>"
                )
            steps = min(
                (len(store.episode(x, episode).steps) for x in (a, b) if episode in store.index(x).episodes),
                default=0,
            )
            body += f"""<table><thead><tr><th>episode</th><th>seed</th><th>outcome A</th><th>outcome B</th><th>return A</th><th>return B</th><th>steps A</th><th>steps B</th><th>errors A</th><th>errors B</th><th>tokens A</th><th>tokens B</th></tr></thead><tbody>{"".join(rows)}</tbody></table>
<div id="compare" data-a="{_e(a)}" data-b="{_e(b)}" data-episode="{episode}" data-steps="{steps}">
<div class="controls"><button id="prev">◀</button><input id="step" type="number" min="0" max="{max(0, steps - 1)}" value="0"> / {max(0, steps - 1)}<button id="next">▶</button></div>
<div class="side"><div><h3>A: {_e(a)}</h3><img id="frame-a" alt="run A frame"><div id="info-a"></div></div>
<div><h3>B: {_e(b)}</h3><img id="frame-b" alt="run B frame"><div id="info-b"></div></div></div></div>"""
        return _page("compare runs", body, "compass.compare();" if a and b else "")

    return app


def _eval_page(r: dict[str, Any]) -> HTMLResponse:
    """A ``compass eval`` result: its report (tables and plot) and every episode, linked to the
    episode's own replay where the eval kept its trace (``traces: true`` in the spec)."""
    rid = _e(r["id"])
    report = (
        _markdown_html(r["report"])
        if r.get("report")
        else "<p>no report yet: the eval has not finished (rerun compass eval on its spec to resume)</p>"
    )
    plot = (
        f"<p><img id='report-plot' alt='report plot' src='/api/runs/{rid}/file?path={_e(r['plot'])}'></p>"
        if r.get("plot")
        else ""
    )
    trs = "".join(
        f"<tr><td>{_e(e['config'])}</td><td>{_e(e['env'])}</td><td>{_e(e['seed'])}</td>"
        f"<td class='o-{_e(e['outcome'])}'>{_e(e['outcome'])}</td><td>{_e(e['return'])}</td><td>{_e(e['steps'])}</td>"
        f"<td>{e['skill_errors']}</td><td>{e['tokens']}</td><td>{e['cost_usd']:.4f}</td><td>"
        + (
            f"<a href='/runs/{_e(e['trace'])}/episodes/0'>replay</a>"
            if e.get("trace")
            else "<span class='hint'>no trace kept</span>"
        )
        + "</td></tr>"
        for e in r["episodes"]
    )
    body = f"""<p>eval · {_e(r["env"])} · {len(r.get("configs", []))} configuration(s) · {r["n_episodes"]} episode(s) · {_e(r["status"])}</p>
<div id="report" class="report">{report}</div>{plot}
<h2>episodes</h2>
<table id="eval-episodes"><thead><tr><th>config</th><th>env</th><th>seed</th><th>outcome</th><th>return</th><th>steps</th><th>skill errors</th><th>tokens</th><th>cost $</th><th></th></tr></thead><tbody>{trs}</tbody></table>
<p class="hint">Replays exist for the episodes whose traces the eval kept (<code>traces: true</code> in the spec).</p>"""
    return _page(f"eval {r['id']}", body)


def _markdown_html(text: str) -> str:
    """The small markdown an eval report is written in (headings, tables, paragraphs), as HTML."""
    out: list[str] = []
    table: list[list[str]] = []

    def flush() -> None:
        if table:
            head, rows = table[0], [r for r in table[1:] if not all(set(c) <= set("-: ") for c in r)]
            out.append(
                "<table><thead><tr>"
                + "".join(f"<th>{_e(c)}</th>" for c in head)
                + "</tr></thead><tbody>"
                + "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
                + "</tbody></table>"
            )
            table.clear()

    for line in text.splitlines():
        s = line.strip()
        if s.startswith("|"):
            table.append([c.strip() for c in s.strip("|").split("|")])
            continue
        flush()
        if not s or s.startswith("!["):
            continue
        level = len(s) - len(s.lstrip("#"))
        if 0 < level <= 6 and s[level : level + 1] == " ":
            out.append(f"<h{level + 1}>{_e(s[level + 1 :])}</h{level + 1}>")
        else:
            out.append(f"<p>{_e(s)}</p>")
    flush()
    return "".join(out)


def _family_of(store: RunStore, run_id: str) -> str:
    from compass.core.family import family_for_env

    env = store.config(run_id).get("env") or (store.summary(run_id) or {}).get("env") or ""
    try:
        return family_for_env(env).name
    except ValueError:
        return ""
