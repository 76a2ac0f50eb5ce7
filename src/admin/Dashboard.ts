// GET /: the operator's live dashboard, one self-contained page. It signs in through
// /api/auth/login, shows the six counters from /ws/top-info and the worker's loops from
// /api/worker-health, and keeps the newest session token from every answer (the sliding session).
import { HttpRouter, HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"

const style = `
body { font: 15px/1.4 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2330; }
header { display: flex; gap: 1rem; align-items: center; padding: .75rem 1.25rem; background: #1d2330; color: #fff; }
header h1 { font-size: 1.05rem; margin: 0; flex: 1; }
main { padding: 1.25rem; max-width: 60rem; }
section { background: #fff; border-radius: 6px; padding: 1rem 1.25rem; margin-bottom: 1rem; box-shadow: 0 1px 2px #0002; }
.counters { display: grid; grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr)); gap: .75rem; }
.counter { border: 1px solid #dde1e8; border-radius: 4px; padding: .6rem .8rem; }
.counter .label { display: block; font-size: .8rem; color: #5b6475; }
.counter .value { font-size: 1.6rem; font-weight: 600; }
.counter .value.unavailable { font-size: 1rem; color: #a33; }
.muted { color: #5b6475; font-size: .85rem; }
.bad { color: #a33; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e6e8ee; font-size: .9rem; }
form label { display: block; margin: .5rem 0; }
[hidden] { display: none !important; }
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
const state = { token: sessionStorage.getItem("admin.token"), ws: null, timer: null, retry: null };

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

async function api(path) {
  const response = await fetch(path, { headers: { authorization: "Bearer " + state.token } });
  if (response.status === 401) { signOut("Your session has ended; sign in again."); throw new Error("signed out"); }
  keepToken(response);
  return response.json();
}

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

function connect() {
  if (!state.token) return;
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const ws = new WebSocket(scheme + location.host + "/ws/top-info?token=" + encodeURIComponent(state.token));
  state.ws = ws;
  $("ws-state").textContent = "connecting";
  ws.onopen = () => { $("ws-state").textContent = "live"; };
  ws.onmessage = (event) => renderTopInfo(JSON.parse(event.data));
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
    <span id="operator" data-testid="operator"></span>
    <button id="signout" data-testid="signout" hidden>Sign out</button>
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
      <section>
        <h2>Top info</h2>
        <p class="muted">connection: <span id="ws-state" data-testid="ws-state">connecting</span>,
          updated <span id="updated-at" data-testid="updated-at">never</span></p>
        <p id="db-state" data-testid="db-state" class="bad" hidden>The database is unavailable; the counters are not current.</p>
        <div class="counters">
      ${counterCells}
        </div>
        <p id="recon-state" data-testid="recon-state" class="muted"></p>
      </section>
      <section id="worker" data-testid="worker-panel">
        <h2>Worker loops</h2>
        <p id="worker-status" data-testid="worker-status">loading</p>
        <table>
          <thead><tr><th>loop</th><th>state</th><th>freshness</th><th>restarts</th><th>last success</th></tr></thead>
          <tbody id="worker-loops" data-testid="worker-loops"></tbody>
        </table>
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
