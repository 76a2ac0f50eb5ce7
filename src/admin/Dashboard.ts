// GET /: the operator's live dashboard, one self-contained page. It signs in through
// /api/auth/login; shows the six counters, the review queue and the latest SMS from
// /ws/top-info?with=activity and the worker's loops from /api/worker-health; sends the
// operator's decisions to /api/review/resolve; and keeps the newest session token from every
// answer (the sliding session).
import { HttpRouter, HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"

const style = `
*, *::before, *::after { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2330; }
header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; padding: .6rem 1rem; background: #1d2330; color: #fff; }
header h1 { font-size: 1.05rem; margin: 0; flex: 1; }
header .live { font-size: .8rem; color: #c9cfdb; }
main { padding: 1rem; max-width: 72rem; margin: 0 auto; }
section { background: #fff; border-radius: 6px; padding: .9rem 1.1rem; margin-bottom: 1rem; box-shadow: 0 1px 2px #0002; min-width: 0; }
h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
h2 .sub { font-weight: 400; font-size: .85rem; color: #5b6475; margin-left: .5rem; }
.counters { display: grid; grid-template-columns: repeat(auto-fill, minmax(9.5rem, 1fr)); gap: .6rem; }
.counter { border: 1px solid #dde1e8; border-radius: 4px; padding: .5rem .7rem; }
.counter .label { display: block; font-size: .8rem; color: #5b6475; }
.counter .value { font-size: 1.5rem; font-weight: 600; font-variant-numeric: tabular-nums; }
.counter .value.unavailable { font-size: 1rem; color: #a33; }
.muted { color: #5b6475; font-size: .85rem; }
.bad { color: #a33; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .45rem; border-bottom: 1px solid #e6e8ee; font-size: .88rem; vertical-align: top; }
td { overflow-wrap: anywhere; }
th { white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
form label { display: block; margin: .5rem 0; }
input, button { font: inherit; }
button { padding: .3rem .8rem; border-radius: 4px; border: 1px solid #8a93a5; background: #fff; cursor: pointer; }
button:disabled { opacity: .5; cursor: default; }
button.approve { background: #1d6b3a; border-color: #1d6b3a; color: #fff; }
button.reject { border-color: #a33; color: #a33; }
:focus-visible { outline: 3px solid #3b82f6; outline-offset: 2px; }
.queue { list-style: none; margin: 0; padding: 0; }
.item { border: 1px solid #dde1e8; border-left: 4px solid #8a93a5; border-radius: 4px; padding: .6rem .75rem; margin-bottom: .6rem; }
.item[data-status=manual_review] { border-left-color: #c27c0e; }
.item[data-status=unmatched] { border-left-color: #a33; }
.item[data-status=need_check] { border-left-color: #3b82f6; }
.item .meta { font-size: .82rem; color: #5b6475; }
.item .sms { white-space: pre-wrap; overflow-wrap: anywhere; margin: .4rem 0; padding: .4rem .55rem; background: #f4f5f7; border-radius: 4px; font: .85rem/1.35 ui-monospace, monospace; }
.item .parsed { margin: .2rem 0 .4rem; }
.item fieldset { border: 0; margin: 0 0 .4rem; padding: 0; min-width: 0; }
.item legend { font-size: .82rem; color: #5b6475; padding: 0; }
.item .candidate { display: flex; gap: .5rem; align-items: baseline; padding: .2rem 0; margin: 0; }
.item .candidate span { overflow-wrap: anywhere; }
.item .actions { display: flex; flex-wrap: wrap; gap: .5rem; }
.badge { display: inline-block; padding: 0 .4rem; border-radius: 3px; font-size: .78rem; background: #e6e8ee; white-space: nowrap; }
.badge.approved { background: #d3f0dc; color: #14532d; }
.badge.approving, .badge.parsed, .badge.received { background: #dbeafe; color: #1e3a8a; }
.badge.manual_review { background: #fdebc8; color: #7c4a03; }
.badge.unmatched, .badge.parse_failed, .badge.rejected { background: #f8d7d7; color: #7f1d1d; }
.badge.need_check { background: #e0e7ff; color: #312e81; }
#review-outcome:empty { display: none; }
#review-outcome { padding: .4rem .6rem; background: #eef6ff; border-radius: 4px; }
#review-outcome.bad { background: #fdecec; }
[hidden] { display: none !important; }
@media (max-width: 40rem) {
  main { padding: .5rem; }
  section { padding: .7rem .75rem; }
  .wide { display: none; }
  .counter .value { font-size: 1.25rem; }
  /* The loops as one block each: the name on its line, the four facts labelled below it. */
  .loops thead { display: none; }
  .loops tr { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); border-bottom: 1px solid #e6e8ee; padding: .25rem 0; }
  .loops td { border: 0; padding: .1rem .3rem; }
  .loops td[data-field=name] { grid-column: 1 / -1; font-weight: 600; }
  .loops td[data-label]::before { content: attr(data-label); display: block; font-size: .72rem; color: #5b6475; }
}
`

const counters = [
  ["pending_deposit_cnt", "Pending deposits"],
  ["manual_review_cnt", "Manual review"],
  ["sms_need_check_cnt", "SMS to check"],
  ["parse_fail_cnt", "Parse failures"],
  ["unmatched_sms_cnt", "Unmatched SMS"],
  ["duplicate_sms_cnt", "Duplicate SMS"]
] as const

const script = `
"use strict";
const $ = (id) => document.getElementById(id);
const RECON = ["sms_need_check_cnt", "parse_fail_cnt", "unmatched_sms_cnt", "duplicate_sms_cnt"];
const COUNTERS = ["pending_deposit_cnt", "manual_review_cnt", ...RECON];
const state = { token: sessionStorage.getItem("admin.token"), ws: null, timer: null, retry: null, selected: new Map(), busy: new Set() };

function setToken(token) {
  state.token = token;
  if (token) sessionStorage.setItem("admin.token", token); else sessionStorage.removeItem("admin.token");
}
function keepToken(response) {
  const header = response.headers.get("authorization") || "";
  if (/^Bearer /.test(header)) setToken(header.slice(7));
}

function show(signedIn) {
  $("signin").hidden = signedIn;
  $("board").hidden = !signedIn;
  $("signout").hidden = !signedIn;
}

function signOut(reason) {
  setToken(null);
  if (state.ws) { state.ws.onclose = null; state.ws.close(); state.ws = null; }
  clearInterval(state.timer); clearTimeout(state.retry);
  $("signin-error").textContent = reason || "";
  show(false);
}

async function api(path, body) {
  const init = { headers: { authorization: "Bearer " + state.token } };
  if (body !== undefined) {
    init.method = "POST";
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (response.status === 401) { signOut("Your session has ended; sign in again."); throw new Error("signed out"); }
  keepToken(response);
  return response.json();
}

/** "50000.00" -> "50,000"; cents only when there are some. */
function money(amount) {
  if (amount === null || amount === undefined) return "–";
  const [whole, cents] = String(amount).split(".");
  const grouped = whole.replace(/\\B(?=(\\d{3})+(?!\\d))/g, ",");
  return cents && !/^0+$/.test(cents) ? grouped + "." + cents : grouped;
}
function time(iso) { return iso ? new Date(iso).toLocaleTimeString() : "–"; }
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}
function badge(status) { return el("span", { class: "badge " + status, "data-field": "status" }, status); }

function renderTopInfo(message) {
  $("db-state").hidden = message.type !== "unavailable";
  $("updated-at").textContent = new Date(message.at).toLocaleTimeString();
  if (message.type !== "top-info") return;
  const data = message.data;
  for (const key of COUNTERS) {
    const cell = $(key);
    const value = data[key];
    cell.textContent = value === null ? "unavailable" : String(value);
    cell.classList.toggle("unavailable", value === null);
  }
  const recon = $("recon-state");
  recon.textContent = data.recon.available ? "recon_service: available" : "recon_service: unavailable (" + data.recon.error + ")";
  recon.className = data.recon.available ? "muted" : "bad";
  recon.dataset.available = String(data.recon.available);
}

function outcome(text, bad) {
  const node = $("review-outcome");
  node.textContent = text;
  node.classList.toggle("bad", !!bad);
}

async function decide(item, action, depositId) {
  state.busy.add(item.id);
  document.querySelectorAll("[data-sms='" + item.id + "'] button").forEach((b) => { b.disabled = true; });
  try {
    const body = { sms_id: item.id, action };
    if (depositId !== undefined) body.deposit_id = depositId;
    const answer = await api("/api/review/resolve", body);
    if (answer.status === 200) {
      state.selected.delete(item.id);
      outcome("SMS #" + item.id + ": " + action + (depositId !== undefined ? " to deposit #" + depositId : "") + " -> " + answer.data.status);
    } else {
      outcome("SMS #" + item.id + ": " + (answer.data && answer.data.detail ? answer.data.detail : answer.msg), true);
    }
  } catch (error) {
    if (state.token) outcome("SMS #" + item.id + ": the request failed (" + error.message + ")", true);
  } finally {
    state.busy.delete(item.id);
    document.querySelectorAll("[data-sms='" + item.id + "'] button").forEach((b) => { b.disabled = b.dataset.needs === "deposit" && !state.selected.has(item.id); });
    $("review-outcome").focus();
  }
}

function reviewItem(item) {
  const li = el("li", { class: "item", "data-testid": "review-" + item.id, "data-sms": String(item.id), "data-status": item.status });
  li.append(
    el("div", { class: "meta" }, badge(item.status), " #" + item.id + " · " + (item.bank || "bank unknown") + " · from " + item.sender + " · " + time(item.received_at)),
    el("div", { class: "sms", "data-field": "body" }, item.body)
  );
  if (item.status === "need_check") {
    li.append(el("p", { class: "muted" }, "Held: the phone is not trusted or the sender is not whitelisted. Pass sends it on to parsing."));
    li.append(el("div", { class: "actions" },
      el("button", { type: "button", class: "approve", "data-testid": "pass-" + item.id, onclick: () => decide(item, "pass") }, "Pass"),
      el("button", { type: "button", class: "reject", "data-testid": "reject-" + item.id, onclick: () => decide(item, "reject") }, "Reject")));
    return li;
  }
  li.append(el("p", { class: "parsed" }, "Payer ", el("strong", { "data-field": "payer" }, item.payer_name || "–"),
    " · amount ", el("strong", { "data-field": "amount" }, money(item.amount))));
  const approve = el("button", { type: "button", class: "approve", "data-testid": "approve-" + item.id, disabled: true }, "Approve");
  approve.dataset.needs = "deposit";
  const group = el("fieldset", {}, el("legend", {}, item.status === "manual_review"
    ? "Several deposits match: choose the one this money is for"
    : "No deposit matched by name: pending deposits of this amount"));
  if (item.candidates.length === 0) group.append(el("p", { class: "muted" }, "No pending deposit of this amount."));
  for (const c of item.candidates) {
    const id = "cand-" + item.id + "-" + c.deposit_id;
    const radio = el("input", { type: "radio", name: "sms-" + item.id, id, value: String(c.deposit_id), "data-testid": "candidate-" + item.id + "-" + c.deposit_id });
    radio.checked = state.selected.get(item.id) === c.deposit_id;
    radio.addEventListener("change", () => { state.selected.set(item.id, c.deposit_id); approve.disabled = state.busy.has(item.id); });
    group.append(el("label", { class: "candidate", htmlFor: id }, radio,
      el("span", {}, "deposit #" + c.deposit_id + " · " + c.player_name + " (player " + c.player_id + ") · " + money(c.amount) +
        " · sent as " + c.from_bank_owner + " · " + time(c.created_at) + (c.task_status === 6 ? " · on review" : ""))));
  }
  approve.disabled = !state.selected.has(item.id) || state.busy.has(item.id);
  approve.addEventListener("click", () => decide(item, "approve", state.selected.get(item.id)));
  li.append(group, el("div", { class: "actions" }, approve,
    el("button", { type: "button", class: "reject", "data-testid": "reject-" + item.id, onclick: () => decide(item, "reject") }, "Reject")));
  return li;
}

/** Rebuilds only the items that changed, so a choice, the focus and a pending click survive an update. */
function renderQueue(queue) {
  const list = $("review-list");
  const old = new Map(Array.from(list.children, (node) => [node.dataset.sms, node]));
  const nodes = queue.items.map((item) => {
    const key = JSON.stringify(item);
    const kept = old.get(String(item.id));
    if (kept && kept.dataset.key === key) return kept;
    const node = reviewItem(item);
    node.dataset.key = key;
    return node;
  });
  list.replaceChildren(...nodes);
  const c = queue.counts;
  $("review-counts").textContent = c.need_check + " to check · " + c.manual_review + " manual review · " + c.unmatched + " unmatched" +
    (queue.total > queue.items.length ? " (newest " + queue.items.length + " shown)" : "");
  $("review-empty").hidden = queue.items.length > 0;
  const live = new Set(queue.items.map((item) => item.id));
  for (const id of state.selected.keys()) if (!live.has(id)) state.selected.delete(id);
}

function renderLatest(latest) {
  $("latest-sms").replaceChildren(...latest.map((sms) => {
    const row = el("tr", { "data-testid": "sms-" + sms.id });
    row.append(el("td", { class: "num" }, time(sms.received_at)), el("td", { class: "wide" }, sms.sender),
      el("td", { class: "wide" }, sms.bank || "–"), el("td", {}, sms.payer_name || "–"),
      el("td", { class: "num" }, money(sms.amount)), el("td", {}, badge(sms.status)));
    return row;
  }));
  $("latest-empty").hidden = latest.length > 0;
}

function onMessage(message) {
  if (message.type === "activity") {
    $("activity-state").hidden = true;
    renderQueue(message.data.queue);
    renderLatest(message.data.latest);
  } else if (message.type === "activity-unavailable") {
    $("activity-state").hidden = false;
  } else {
    renderTopInfo(message);
  }
}

function connect() {
  if (!state.token) return;
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const ws = new WebSocket(scheme + location.host + "/ws/top-info?with=activity&token=" + encodeURIComponent(state.token));
  state.ws = ws;
  $("ws-state").textContent = "connecting";
  ws.onopen = () => { $("ws-state").textContent = "live"; };
  ws.onmessage = (event) => onMessage(JSON.parse(event.data));
  ws.onclose = () => {
    $("ws-state").textContent = "disconnected";
    state.ws = null;
    // The newest token is used on reconnect; a refused one is noticed by the next worker poll.
    state.retry = setTimeout(connect, 3000);
  };
}

function renderWorker(data) {
  const status = $("worker-status");
  const body = $("worker-loops");
  body.replaceChildren();
  status.dataset.status = data.status;
  if (data.status === "not_configured") { status.textContent = "not configured (WORKER_HEALTH_URL is not set)"; return; }
  if (data.status === "unreachable") { status.textContent = "unreachable (" + data.detail + ")"; return; }
  const health = data.health;
  status.textContent = (health.ready ? "ready" : "not ready") + " (pid " + health.pid + ", written " + new Date(health.written_at).toLocaleTimeString() + ")";
  for (const [name, loop] of Object.entries(health.loops)) {
    const row = document.createElement("tr");
    row.dataset.testid = "loop-" + name;
    const cells = [name, loop.state, loop.fresh ? "fresh" : "stale", String(loop.restarts),
      loop.last_success_at ? new Date(loop.last_success_at).toLocaleTimeString() : "never"];
    cells.forEach((text, i) => {
      const cell = document.createElement("td");
      cell.textContent = text;
      cell.dataset.field = ["name", "state", "freshness", "restarts", "last_success"][i];
      if (i > 0) cell.dataset.label = ["", "state", "freshness", "restarts", "last success"][i];
      if (!loop.fresh && i === 2) cell.className = "bad";
      row.append(cell);
    });
    body.append(row);
  }
}

async function loadWorker() {
  try { renderWorker((await api("/api/worker-health")).data); } catch (error) { /* signed out, or the page is going away */ }
}

function start() {
  try {
    $("operator").textContent = JSON.parse(atob(state.token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))).acc;
  } catch (error) {
    return signOut("");
  }
  show(true);
  connect();
  loadWorker();
  state.timer = setInterval(loadWorker, 10000);
}

$("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("signin-error").textContent = "";
  const response = await fetch("/api/auth/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ account: $("account").value, password: $("password").value })
  });
  const body = await response.json();
  if (response.status !== 200) { $("signin-error").textContent = body.data ? body.data.detail : body.msg; return; }
  $("password").value = "";
  setToken(body.data.token);
  start();
});
$("signout").addEventListener("click", () => signOut(""));
if (state.token) start(); else show(false);
`

const counterCells = counters.map(([key, label]) =>
  `<div class="counter" data-testid="counter-${key}"><span class="label">${label}</span>` +
  `<span class="value" id="${key}" data-testid="value-${key}">–</span></div>`
).join("\n      ")

export const dashboardHtml = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>recon admin</title>
  <style>${style}</style>
</head>
<body>
  <header>
    <h1>recon admin</h1>
    <span class="live">connection: <span id="ws-state" data-testid="ws-state">connecting</span>,
      updated <span id="updated-at" data-testid="updated-at">never</span></span>
    <span id="operator" data-testid="operator"></span>
    <button id="signout" data-testid="signout" type="button" hidden>Sign out</button>
  </header>
  <main>
    <section id="signin" data-testid="signin" hidden>
      <h2>Sign in</h2>
      <form id="signin-form" data-testid="signin-form">
        <label>Account <input id="account" data-testid="account" name="account" autocomplete="username" required></label>
        <label>Password <input id="password" data-testid="password" name="password" type="password" autocomplete="current-password" required></label>
        <button type="submit" id="signin-submit" data-testid="signin-submit">Sign in</button>
        <p id="signin-error" data-testid="signin-error" class="bad" role="alert"></p>
      </form>
    </section>
    <div id="board" data-testid="board" hidden>
      <section aria-labelledby="top-info-title">
        <h2 id="top-info-title">Top info</h2>
        <p id="db-state" data-testid="db-state" class="bad" hidden>The database is unavailable; the counters are not current.</p>
        <div class="counters">
      ${counterCells}
        </div>
        <p id="recon-state" data-testid="recon-state" class="muted"></p>
      </section>
      <section id="review" data-testid="review-panel" aria-labelledby="review-title">
        <h2 id="review-title">Review queue <span id="review-counts" class="sub" data-testid="review-counts"></span></h2>
        <p id="review-outcome" data-testid="review-outcome" role="status" aria-live="polite" tabindex="-1"></p>
        <p id="activity-state" data-testid="activity-state" class="bad" hidden>The database is unavailable; the queue is not current.</p>
        <p id="review-empty" data-testid="review-empty" class="muted">Nothing waits for a person.</p>
        <ol id="review-list" class="queue" data-testid="review-list"></ol>
      </section>
      <section id="latest" data-testid="latest-panel" aria-labelledby="latest-title">
        <h2 id="latest-title">Latest SMS</h2>
        <p id="latest-empty" data-testid="latest-empty" class="muted">No SMS yet.</p>
        <div class="table-wrap">
          <table>
            <thead><tr><th>received</th><th class="wide">sender</th><th class="wide">bank</th><th>payer</th><th>amount</th><th>status</th></tr></thead>
            <tbody id="latest-sms" data-testid="latest-sms"></tbody>
          </table>
        </div>
      </section>
      <section id="worker" data-testid="worker-panel" aria-labelledby="worker-title">
        <h2 id="worker-title">Worker loops</h2>
        <p id="worker-status" data-testid="worker-status">loading</p>
        <div class="table-wrap" data-testid="worker-table">
          <table class="loops">
            <thead><tr><th>loop</th><th>state</th><th>freshness</th><th>restarts</th><th>last success</th></tr></thead>
            <tbody id="worker-loops" data-testid="worker-loops"></tbody>
          </table>
        </div>
      </section>
    </div>
  </main>
  <script>${script}</script>
</body>
</html>
`

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`

/** Only this page's own inline script and style may run; it talks to its own origin only. */
const contentSecurityPolicy = [
  "default-src 'none'",
  `script-src ${sha256(script)}`,
  `style-src ${sha256(style)}`,
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'"
].join("; ")

export const DashboardRoute = HttpRouter.add(
  "GET",
  "/",
  HttpServerResponse.html(dashboardHtml).pipe(HttpServerResponse.setHeaders({
    "content-security-policy": contentSecurityPolicy,
    "x-content-type-options": "nosniff",
    "cache-control": "no-cache"
  }))
)
