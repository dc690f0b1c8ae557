"""The viewer page's inline stylesheet and script (no network, no external files).

The script reads the gzip-compressed JSON data embedded in the page (see
:func:`textgyms.view.page.render`), so the file works opened from disk. Agent text is only ever
put in the page as text nodes (``textContent``), never as HTML.
"""

CSS = r"""
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{background:#263238;color:#fff;padding:.6em 1.2em}header h1{font-size:1.2em;margin:0}
main{padding:.8em 1.2em}nav button{margin-right:.4em}
nav button.on{background:#263238;color:#fff}
table{border-collapse:collapse;background:#fff}
td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left;vertical-align:top}
th{background:#eceff1;cursor:pointer;user-select:none;white-space:nowrap}
tbody tr:hover{background:#e3f2fd;cursor:pointer}tr.sel{background:#bbdefb}
.filters{display:flex;flex-wrap:wrap;gap:.6em;align-items:end;margin:.6em 0}
.filters label{display:flex;flex-direction:column;font-size:.85em;color:#555}
.filters input[type=number]{width:5em}.num{text-align:right;font-variant-numeric:tabular-nums}
.parts{font-size:.85em;color:#444}.ok{color:#1b5e20;font-weight:600}.bad{color:#b71c1c}
.pager{margin:.5em 0}.muted{color:#666;font-size:.9em}
.transcript{background:#fff;border:1px solid #ddd;padding:.6em .9em;margin:.8em 0}
.turn{border-top:1px solid #eee;padding:.4em 0}.turn h4{margin:.2em 0;font-size:.9em}
.act{border-left:4px solid #1e88e5;padding-left:.6em;margin:.3em 0}
.obs{border-left:4px solid #8e8e8e;padding-left:.6em;margin:.3em 0}
.tool{display:inline-block;background:#1e88e5;color:#fff;border-radius:3px;padding:0 .4em;
font-family:monospace}.tool.invalid{background:#c62828}
pre{white-space:pre-wrap;word-break:break-word;background:#f5f5f5;padding:.4em;margin:.2em 0;
font:12.5px/1.35 ui-monospace,monospace;max-width:110em}
.http{font-family:monospace;font-size:.9em;color:#37474f}.http b{color:#2e7d32}
.http b.err{color:#c62828}
.verdict{font-size:1.05em;margin:.3em 0}.mt td{font:12px monospace;white-space:pre-wrap}
.mt tr.miss td{background:#ffebee}.mt tr.hit td{background:#f1f8e9}
.better td{background:#e8f5e9}.worse td{background:#ffebee}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:.8em}
.sides>div{min-width:0}details{margin:.2em 0}.chips{display:flex;flex-wrap:wrap;gap:.3em}
.chip{font:12px monospace;padding:.1em .4em;border-radius:3px;background:#ffebee}
.chip.hit{background:#e8f5e9}.chip.some{background:#fff8e1}
"""

JS = r"""
"use strict";
let D = null, S = null;
const PAGE = 100;
const st = {sort: "index", dir: 1, page: 0, rows: [], sel: -1, hay: null, applied: 0};
const $ = (id) => document.getElementById(id);
function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k);
  return e;
}
const fmt = (x) => (x === null || x === undefined ? "n/a" : Number(x).toFixed(3));
const envName = (i) => D.envs[i].replace("textgyms/", "");
const runName = (i) => D.runs[i].label;

async function load() {
  const b64 = $("data").textContent.trim();
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function option(value, label) { return h("option", {value: String(value)}, label); }

function init() {
  $("f-run").append(option("", "all runs"), ...D.runs.map((r, i) => option(i, r.label)));
  $("f-env").append(option("", "all envs"), ...D.envs.map((e, i) => option(i, envName(i))));
  const runs = D.runs.map((r) => h("tr", {}, h("td", {title: r.name}, r.label),
    h("td", {}, r.policy), h("td", {class: "num"}, String(r.episodes)),
    h("td", {class: "num"}, fmt(r.score)), h("td", {class: "parts"}, partsText(r.use || {}))));
  $("runs").append(...runs);
  let timer = 0;
  for (const id of ["f-run", "f-env", "f-min", "f-max", "f-solved", "f-text"]) {
    $(id).addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(apply, 120); });
  }
  for (const th of document.querySelectorAll("#episodes th[data-key]")) {
    th.addEventListener("click", () => sortBy(th.dataset.key));
  }
  $("prev").addEventListener("click", () => turnPage(-1));
  $("next").addEventListener("click", () => turnPage(1));
  $("tab-episodes").addEventListener("click", () => tab("episodes"));
  $("tab-diff").addEventListener("click", () => tab("diff"));
  if (D.cap) $("capnote").textContent = `Texts longer than ${D.cap} characters are cut ` +
    "in the middle to keep this page small; results.jsonl has them in full.";
  if (D.diffs.length) initDiff(); else $("tab-diff").hidden = true;
  apply();
  document.body.dataset.ready = "1";
}

function tab(name) {
  for (const t of ["episodes", "diff"]) {
    $("v-" + t).hidden = t !== name;
    $("tab-" + t).classList.toggle("on", t === name);
  }
}

function haystack(i) {
  if (!st.hay) st.hay = new Array(D.episodes.length);
  if (st.hay[i] === undefined) {
    const e = D.episodes[i];
    st.hay[i] = e.obs.concat(e.act).map((s) => S[s]).join("\n").toLowerCase();
  }
  return st.hay[i];
}

function filters() {
  const num = (id, dflt) => { const v = parseFloat($(id).value); return isNaN(v) ? dflt : v; };
  return {run: $("f-run").value, env: $("f-env").value, min: num("f-min", -Infinity),
    max: num("f-max", Infinity), solved: $("f-solved").value,
    q: $("f-text").value.trim().toLowerCase()};
}

function keep(e, i, f) {
  if (f.run !== "" && e.run !== +f.run) return false;
  if (f.env !== "" && e.env !== +f.env) return false;
  if (e.score < f.min || e.score > f.max) return false;
  if (f.solved !== "" && e.solved !== (f.solved === "yes")) return false;
  return !f.q || haystack(i).includes(f.q);
}

function apply() {
  const f = filters();
  st.rows = [];
  D.episodes.forEach((e, i) => { if (keep(e, i, f)) st.rows.push(i); });
  order();
  st.page = 0;
  draw();
  document.body.dataset.applied = String(++st.applied);  // lets a test wait for a redraw
}

const KEYS = {
  index: (e, i) => i, run: (e) => e.run, env: (e) => D.envs[e.env], task: (e) => e.episode,
  seed: (e) => e.seed, score: (e) => e.score, solved: (e) => +e.solved, turns: (e) => e.turns,
  invalid: (e) => e.invalid,
};

function order() {
  const key = KEYS[st.sort];
  const val = (i) => key(D.episodes[i], i);
  st.rows.sort((a, b) => {
    const x = val(a), y = val(b);
    return (x < y ? -1 : x > y ? 1 : a - b) * st.dir;
  });
}

function sortBy(k) {
  st.dir = st.sort === k ? -st.dir : 1;
  st.sort = k;
  for (const th of document.querySelectorAll("#episodes th[data-key]")) {
    th.dataset.dir = th.dataset.key === k ? (st.dir > 0 ? "asc" : "desc") : "";
  }
  order();
  draw();
}

function turnPage(d) {
  const last = Math.max(0, Math.ceil(st.rows.length / PAGE) - 1);
  st.page = Math.min(last, Math.max(0, st.page + d));
  draw();
}

function partsText(p) {
  return Object.entries(p).map(([k, v]) => `${k}=${+v.toFixed(2)}`).join(" ");
}

function tableRow(i) {
  const e = D.episodes[i];
  const tr = h("tr", {"data-idx": String(i), onclick: () => show(i)},
    h("td", {}, runName(e.run)), h("td", {}, envName(e.env)),
    h("td", {}, `#${e.episode}${e.sample ? "." + e.sample : ""} ${e.task}`),
    h("td", {class: "num"}, String(e.seed)), h("td", {class: "num"}, fmt(e.score)),
    h("td", {class: e.solved ? "ok" : "bad"}, e.solved ? "yes" : "no"),
    h("td", {class: "num"}, String(e.turns)), h("td", {class: "num"}, String(e.invalid)),
    h("td", {class: "parts"}, partsText(e.parts)),
    h("td", {class: "parts"}, partsText(e.use || {})));
  if (i === st.sel) tr.classList.add("sel");
  return tr;
}

function draw() {
  const n = st.rows.length, pages = Math.max(1, Math.ceil(n / PAGE));
  const slice = st.rows.slice(st.page * PAGE, (st.page + 1) * PAGE);
  $("rows").replaceChildren(...slice.map(tableRow));
  $("count").textContent = `${n} of ${D.episodes.length} episodes`;
  $("page").textContent = `page ${st.page + 1} of ${pages}`;
  $("prev").disabled = st.page === 0;
  $("next").disabled = st.page >= pages - 1;
}

function show(i) {
  st.sel = i;
  draw();
  $("detail").replaceChildren(transcript(i));
  $("detail").scrollIntoView({block: "start"});
}

function longText(text, limit) {
  if (text.length <= limit) return h("pre", {}, text);
  const pre = h("pre", {}, text.slice(0, limit) + " …");
  const btn = h("button", {class: "more"}, `show all ${text.length} characters`);
  btn.addEventListener("click", () => { pre.textContent = text; btn.remove(); });
  return h("div", {}, pre, btn);
}

function observation(text) {
  if (!text.startsWith("HTTP/")) return longText(text, 1500);
  const lines = text.split("\n"), head = [];
  while (lines.length && /^(HTTP\/|URL: |Title: )/.test(lines[0])) head.push(lines.shift());
  const status = head[0] || "";
  return h("div", {}, h("div", {class: "http"},
    h("b", {class: / 200 /.test(status) ? "" : "err"}, status),
    ...head.slice(1).map((l) => h("div", {}, l))), longText(lines.join("\n"), 1500));
}

function action(e, k) {
  const [name, args] = e.calls[k], raw = S[e.act[k]];
  if (args === null) return h("div", {class: "act"}, longText(raw, 3000));
  if (name === null) {
    return h("div", {class: "act"}, h("span", {class: "tool invalid"}, "no valid tool call"),
      " ", h("span", {class: "muted"}, args), longText(raw, 800));
  }
  const vals = Object.entries(args).map(([key, v]) => [key, S[v]]);
  const short = vals.filter(([, v]) => String(v).length < 60 && !String(v).includes("\n"));
  const long = vals.filter((kv) => !short.includes(kv));
  return h("div", {class: "act"}, h("span", {class: "tool"}, name), " ",
    short.map(([key, v]) => h("code", {}, `${key}=${v} `)),
    long.map(([key, v]) => h("div", {}, h("span", {class: "muted"}, key), longText(v, 3000))),
    h("details", {}, h("summary", {class: "muted"}, "raw completion"), h("pre", {}, raw)));
}

function mtTable(mt) {
  const head = h("tr", {}, ["field", "agent", "reference", "part"].map((x) => h("th", {}, x)));
  const rows = mt.rows.map(([f, a, r, p]) =>
    h("tr", {class: p === null ? "" : p >= 1 ? "hit" : "miss"}, h("td", {}, f), h("td", {}, a),
      h("td", {}, r), h("td", {class: "num"}, p === null ? "" : fmt(p))));
  return h("table", {class: "mt"}, h("thead", {}, head), h("tbody", {}, rows));
}

function verdict(e) {
  const parts = Object.entries(e.parts).map(([k, v]) =>
    h("span", {class: "chip " + (v >= 1 ? "hit" : v > 0 ? "some" : "miss")}, `${k} ${fmt(v)}`));
  return h("div", {},
    h("div", {class: "verdict"}, "score ", h("b", {}, fmt(e.score)), " · ",
      h("span", {class: e.solved ? "ok" : "bad"}, e.solved ? "solved" : "not solved"),
      e.error ? ` · error: ${e.error}` : "", e.truncated ? " · truncated (turn limit)" : "",
      Object.keys(e.use || {}).length ? ` · feedback use: ${partsText(e.use)}` : ""),
    e.feedback ? longText(e.feedback, 2000) : null,
    parts.length ? h("div", {class: "chips"}, parts) : null);
}

function transcript(i) {
  const e = D.episodes[i];
  const turns = e.act.map((_, k) => h("div", {class: "turn", "data-turn": String(k + 1)},
    h("h4", {}, `turn ${k + 1}`), action(e, k),
    h("div", {class: "obs"}, observation(S[e.obs[k + 1]])),
    e.mt && e.mt.turn === k ? mtTable(e.mt) : null));
  return h("div", {class: "transcript", "data-idx": String(i), "data-turns": String(e.turns)},
    h("h3", {}, `${runName(e.run)} · ${envName(e.env)} · task #${e.episode} (${e.task}) · ` +
      `seed ${e.seed}`),
    verdict(e),
    h("details", {}, h("summary", {}, "prompt"), longText(S[e.obs[0]], 4000)),
    turns);
}

function initDiff() {
  $("d-pair").append(...D.diffs.map((d, i) =>
    option(i, `${runName(d.a)} → ${runName(d.b)}`)));
  for (const id of ["d-pair", "d-show"]) $(id).addEventListener("input", drawDiff);
  drawDiff();
}

function drawDiff() {
  const d = D.diffs[+$("d-pair").value], show = $("d-show").value;
  const delta = (t) => t[4] - t[3];
  const better = d.tasks.filter((t) => delta(t) > 1e-9);
  const worse = d.tasks.filter((t) => delta(t) < -1e-9);
  const mean = (k) => d.tasks.reduce((s, t) => s + t[k], 0) / Math.max(1, d.tasks.length);
  $("d-summary").textContent = `${d.tasks.length} tasks compared: ${better.length} better, ` +
    `${worse.length} worse, ${d.tasks.length - better.length - worse.length} unchanged ` +
    `(mean score ${fmt(mean(3))} → ${fmt(mean(4))})`;
  $("d-a").textContent = "score " + runName(d.a);
  $("d-b").textContent = "score " + runName(d.b);
  $("d-skipped").textContent = d.skipped.length ? "Not compared (protocols differ): " +
    d.skipped.join("; ") : "";
  const pick = {changed: better.concat(worse), better, worse, all: d.tasks.slice()}[show];
  pick.sort((x, y) => delta(x) - delta(y));
  $("d-rows").replaceChildren(...pick.slice(0, 500).map((t) => h("tr", {
    class: delta(t) > 1e-9 ? "better" : delta(t) < -1e-9 ? "worse" : "",
    "data-task": `${D.envs[t[0]]}#${t[1]}`, onclick: () => showDiff(t)},
  h("td", {}, envName(t[0])), h("td", {}, `#${t[1]}`), h("td", {class: "num"}, String(t[2])),
  h("td", {class: "num"}, fmt(t[3])), h("td", {class: "num"}, fmt(t[4])),
  h("td", {class: "num"}, (delta(t) > 0 ? "+" : "") + delta(t).toFixed(3)))));
  $("d-more").textContent = pick.length > 500 ? `first 500 of ${pick.length} shown` : "";
  $("d-detail").replaceChildren();
}

function showDiff(t) {
  $("d-detail").replaceChildren(h("div", {class: "sides"},
    h("div", {}, transcript(t[5])), h("div", {}, transcript(t[6]))));
  $("d-detail").scrollIntoView({block: "start"});
}

load().then((data) => { D = data; S = data.strings; init(); }).catch((err) => {
  document.body.dataset.ready = "error";
  $("count").textContent = "could not read this page's data: " + err;
  throw err;
});
"""
