// The parlour page's script (host_tools/fleet/page.py serves it): a tile a
// table, those that need the owner first, a table's card on a click, the
// day's figures, and what the page is doing (connecting, a lost broker or
// page server). Every word comes from TEXTS, the project's one table per
// language; every text a table sends is escaped, never read as HTML.
"use strict";
const TEXTS = JSON.parse(document.getElementById("boot-texts").textContent);
let VIEW = (JSON.parse(document.getElementById("boot-view").textContent) || {}).view || null;
let RX = performance.now();          // when VIEW came: its `now` runs on from there
let STREAM = "connecting";           // the event stream: connecting, open, lost
let LOST_AT = null;                  // epoch seconds the stream was lost
let OPEN = null;                     // the table whose card is open: "site/id"
let DAYS = null, SHOW_DAY = null;    // /days, and the day whose tables are listed
let LANG = localStorage.getItem("parlour-lang") || (navigator.language || "en").slice(0, 2);
if (!["en", "zh"].includes(LANG)) LANG = "en";
const RETRY_MS = 1000, DAYS_EVERY_MS = 10000;

function t(key, fields) {
  let s = TEXTS[LANG].words[key];
  if (s === undefined) return key;
  for (const k in (fields || {})) s = s.split("{" + k + "}").join(fields[k]);
  return s;
}
function has(key) { return TEXTS[LANG].words[key] !== undefined; }
function esc(s) { return String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c])); }
function now() { return VIEW ? VIEW.now + (performance.now() - RX) / 1000 : Date.now() / 1000; }
// A span of time as texts.duration says it: 45 s, 3 min, 2 h 14 min, 1 d 3 h
// (hours: in hours however long, as a day's total is read).
function dur(s, hours) {
  s = Math.max(0, Math.floor(s || 0));
  if (s < 60) return t("fleet.dur.s", {s: s});
  if (s < 3600) return t("fleet.dur.m", {m: Math.floor(s / 60)});
  if (s < 86400 || hours) return t("fleet.dur.hm", {h: Math.floor(s / 3600), m: Math.floor(s % 3600 / 60)});
  return t("fleet.dur.dh", {d: Math.floor(s / 86400), h: Math.floor(s % 86400 / 3600)});
}
function clock(epoch) { return epoch ? new Date(epoch * 1000).toLocaleTimeString(LANG === "zh" ? "zh-CN" : "en-GB") : ""; }
function val(v) { return v == null ? t("fleet.none") : Array.isArray(v) ? v.join(" ") : String(v); }
// A state the texts do not know is the table's own text, shown as it came.
function stateWord(s) { return s == null ? t("fleet.state.unknown") : has("fleet.state." + s) ? t("fleet.state." + s) : String(s); }
function faultText(code) { return TEXTS[LANG].faults[String(code)] || [String(code), "", "", String(code)]; }
function detailWord(k, v) {
  if (k === "reason" && has("resume." + v)) v = t("resume." + v);
  return has("fleet.detail." + k) ? t("fleet.detail." + k, {v: val(v)}) : t("fleet.detail.other", {v: k + " " + val(v)});
}
function detail(d) { return d ? Object.keys(d).map(k => detailWord(k, d[k])).join(", ") : ""; }
function natural(a, b) { return a.localeCompare(b, undefined, {numeric: true}); }
function byNeed(tables) {
  return tables.slice().sort((a, b) => (a.need - b.need) || natural(a.site, b.site) || natural(a.id, b.id));
}
function kind(tb) { return !tb.online ? "offline" : ["fault", "offline", "idle", "play"][tb.need] || "play"; }
function whyOffline(tb) {
  return tb.offline === "silent" ? t("fleet.off.silent", {d: dur(tb.silent_s)}) : t("fleet.off." + tb.offline);
}

// -- a table's tile, and its card -------------------------------------------------

function tileMain(tb) {
  if (!tb.online) {
    return '<div class="how-long">' + esc(t("fleet.offline_for", {d: dur(now() - tb.offline_since)})) + "</div>" +
           '<div class="why">' + esc(whyOffline(tb)) + "</div>";
  }
  if (tb.fault) {
    const f = faultText(tb.fault.code);
    return '<div class="how-long">' + esc(t("fleet.stopped_for", {d: dur(now() - tb.fault.since)})) + "</div>" +
           '<div class="fault-line"><b class="fault-short">' + esc(tb.fault.code + " " + f[3]) + "</b> " + esc(detail(tb.fault.detail)) + "</div>" +
           '<div class="tile-fix">' + esc(t("fleet.fix") + ": " + f[2]) + "</div>";
  }
  return '<div class="dealer">' + esc(t("fleet.dealer") + " " + (tb.dealer == null ? t("fleet.none") : t("fleet.seat", {n: tb.dealer}))) + "</div>";
}
function tile(tb) {
  const k = kind(tb), today = tb.today || {};
  const badge = tb.online ? stateWord(tb.state) : t("fleet.offline");
  let h = '<section class="table tile ' + k + '" id="' + esc("table-" + tb.site + "-" + tb.id) + '" data-key="' + esc(tb.site + "/" + tb.id) +
          '" data-online="' + esc(tb.online) + '" data-need="' + esc(tb.need) + '" data-stale="' + esc(tb.stale_after_s) +
          '" data-state="' + esc(tb.state || "") + '" data-fault="' + esc(tb.fault ? tb.fault.code : "") + '">';
  h += '<div class="tile-head"><b class="tid">' + esc(tb.id) + '</b><span class="badge' + (tb.online ? " state" : "") + '">' + esc(badge) + "</span></div>";
  h += tileMain(tb);
  h += '<div class="tile-day">' + esc(t("fleet.tile_today", {hands: today.hands || 0, play: dur(today.in_play_s)})) + "</div>";
  return h + '<div class="full">' + card(tb) + "</div></section>";
}
function row(label, value, cls) { return "<dt>" + esc(label) + "</dt><dd" + (cls ? ' class="' + cls + '"' : "") + ">" + esc(value) + "</dd>"; }
function card(tb) {
  const today = tb.today || {};
  let h = "<h2><span>" + esc(t("fleet.table", {id: tb.id})) + "</span><span>" + esc(tb.online ? t("fleet.online") : t("fleet.offline")) + "</span></h2>";
  if (!tb.online) h += '<div class="offline-why">' + esc(whyOffline(tb) + " · " + t("fleet.offline_for", {d: dur(now() - tb.offline_since)})) + "</div>";
  h += "<dl>" + row(t("fleet.state"), stateWord(tb.state), "state") +
       row(t("fleet.dealer"), tb.dealer == null ? t("fleet.none") : t("fleet.seat", {n: tb.dealer})) +
       row(t("fleet.hands_today"), val(today.hands)) + row(t("fleet.in_use"), dur(today.in_play_s)) +
       row(t("fleet.faults_today"), val(today.faults)) + row(t("fleet.stopped_today"), dur(today.stopped_s)) +
       row(t("fleet.offline_today"), dur(today.offline_s)) + "</dl>";
  if (tb.fault) {
    const [name, cause, fix] = faultText(tb.fault.code);
    h += '<div class="faultbox"><b class="fault-name">' + esc(t("fleet.fault") + " " + tb.fault.code + " " + name) + "</b> " +
         esc(detail(tb.fault.detail)) + " · " + esc(t("fleet.since", {at: clock(tb.fault.since)})) + " · " +
         esc(t("fleet.stopped_for", {d: dur(now() - tb.fault.since)})) +
         '<div class="cause"><i>' + esc(t("fleet.cause")) + ":</i> " + esc(cause) + "</div>" +
         '<div class="fix"><i>' + esc(t("fleet.fix")) + ":</i> " + esc(fix) + "</div></div>";
  }
  return h + counters(tb);
}
function counters(tb) {
  const c = tb.counters, hl = tb.health;
  let h = "<h2>" + esc(t("fleet.counters") + " · " + t("fleet.health")) + "</h2><dl>";
  if (c) {
    h += row(t("fleet.cycles"), val(c.cycles)) + row(t("fleet.hands"), val(c.hands)) + row(t("fleet.lifts"), val(c.lifts)) +
         row(t("fleet.tiles_fed"), val(c.tiles_fed)) +
         row(t("fleet.faults_by_code"), (c.faults || []).map(p => p[0] + "×" + p[1]).join(", ") || t("fleet.none"));
  }
  if (hl) {
    h += row(t("fleet.uptime"), dur((hl.uptime || 0) / 1000)) + row(t("fleet.heap_free"), val(hl.heap_free) + " B") +
         row(t("fleet.boots"), val(hl.boots)) + row(t("fleet.mqtt_dropped"), val(hl.mqtt && hl.mqtt.dropped));
  }
  if (tb.build) h += row(t("fleet.build"), val(tb.build.fw) + " " + val(tb.build.build));
  if (tb.bad || tb.dropped) h += row(t("fleet.malformed_label"), malformed(tb), "malformed");
  return h + "</dl>";
}
function malformed(x) { return t("fleet.malformed", {bad: x.bad || 0, dropped: x.dropped || 0}); }

// Each tile on its own: a table whose view the page cannot render shows
// as such, and the others still update.
function safeTile(tb) {
  try {
    return tile(tb);
  } catch (e) {
    const id = tb && tb.id, site = tb && tb.site;
    return '<section class="table tile broken" id="' + esc("table-" + site + "-" + id) + '" data-online="" data-broken="1"><div class="tile-head"><b class="tid">' +
           esc(String(id)) + '</b></div><div class="offline-why">' + esc(t("fleet.cannot_show")) + "</div></section>";
  }
}

// -- the lists: the fault history, the day's figures ------------------------------

function histRow(e) {
  try {
    const f = faultText(e.code);
    return '<tr class="hist-row" data-table="' + esc(e.table) + '" data-code="' + esc(e.code) + '"><td>' + esc(clock(e.at)) +
           "</td><td>" + esc(e.table) + "</td><td>" + esc(e.code + " " + f[3] + " " + detail(e.detail)) + "</td><td>" + esc(f[2]) +
           "</td><td>" + esc(e.cleared_at ? t("fleet.cleared_at", {at: clock(e.cleared_at)}) : t("fleet.active")) + "</td></tr>";
  } catch (err) {
    return '<tr class="hist-row broken"><td colspan="5">' + esc(t("fleet.cannot_show")) + "</td></tr>";
  }
}
function heads(keys) { return "<tr>" + keys.map(k => "<th>" + esc(k ? t(k) : "") + "</th>").join("") + "</tr>"; }
function history(entries) {
  let h = heads(["fleet.col.time", "fleet.col.table", "fleet.col.fault", "fleet.col.fix", "fleet.col.status"]);
  if (!entries.length) h += '<tr><td colspan="5">' + esc(t("fleet.history_none")) + "</td></tr>";
  return h + entries.map(histRow).join("");
}
function csvLink(day) { return "/day.csv?day=" + encodeURIComponent(day) + "&lang=" + LANG; }
// A row of figures; a day with no table in it says so with dashes.
function figures(first, x, extra, none) {
  const cells = none ? [t("fleet.none"), t("fleet.none"), t("fleet.none"), t("fleet.none"), t("fleet.none")] :
    [val(x.hands), dur(x.in_play_s, true), val(x.faults), dur(x.stopped_s, true), dur(x.offline_s, true)];
  return "<td>" + esc(first) + "</td>" + cells.map(c => "<td>" + esc(c) + "</td>").join("") + (extra || "");
}
const FIGURE_HEADS = ["fleet.col.hands", "fleet.col.in_play", "fleet.col.faults", "fleet.col.stopped", "fleet.col.offline"];
function renderDays() {
  const days = document.getElementById("days"), tables = document.getElementById("day-tables");
  if (!DAYS || !DAYS.length) { days.innerHTML = tables.innerHTML = ""; return; }
  const pick = DAYS.find(d => d.day === SHOW_DAY) || DAYS[0];
  days.innerHTML = heads(["fleet.col.day"].concat(FIGURE_HEADS, [""])) + DAYS.map(d =>
    '<tr class="pick day-row' + (d === pick ? " chosen" : "") + '" data-day="' + esc(d.day) + '">' +
    figures(d.day, d.totals, '<td><a class="csv" href="' + esc(csvLink(d.day)) + '">' + esc(t("fleet.csv")) + "</a></td>",
            !d.tables.length) + "</tr>").join("");
  tables.innerHTML = heads(["fleet.col.table"].concat(FIGURE_HEADS)) + (pick.tables.length ? pick.tables.map(r =>
    '<tr class="day-table" data-table="' + esc(r.tbl) + '">' + figures(r.tbl, r) + "</tr>").join("") :
    '<tr><td colspan="6">' + esc(t("fleet.no_figures", {day: pick.day})) + "</td></tr>");
}
function tableDays(tb) {
  if (!DAYS) return "";
  const rows = DAYS.map(d => [d.day, d.tables.find(r => r.site === tb.site && r.tbl === tb.id)]).filter(p => p[1]);
  return "<h2>" + esc(t("fleet.days")) + '</h2><table class="list">' + heads(["fleet.col.day"].concat(FIGURE_HEADS)) +
         rows.map(p => "<tr>" + figures(p[0], p[1]) + "</tr>").join("") + "</table>";
}

// -- the whole page ----------------------------------------------------------------

function status() {
  if (STREAM === "lost") return [t("fleet.page_lost", {at: clock(LOST_AT), d: dur(Date.now() / 1000 - LOST_AT)}), "down"];
  if (STREAM === "connecting" || !VIEW) return [t("fleet.connecting"), "wait"];
  if (!VIEW.broker) {
    return VIEW.broker_since ? [t("fleet.broker_lost", {at: clock(VIEW.broker_since), d: dur(now() - VIEW.broker_since)}), "down"]
                             : [t("fleet.connecting_broker"), "wait"];
  }
  return [t("fleet.broker_up"), ""];
}
function renderWords() {
  document.documentElement.lang = LANG === "zh" ? "zh-CN" : "en";
  document.title = t("fleet.title");
  for (const [id, key] of [["title", "fleet.title"], ["history-title", "fleet.history"], ["lang-label", "fleet.lang"],
                           ["days-title", "fleet.days"], ["days-note", "fleet.days_note"], ["hint", "fleet.hint"],
                           ["csv-today", "fleet.csv"], ["detail-close", "fleet.close"]]) {
    document.getElementById(id).textContent = t(key);
  }
  document.getElementById("lang-en").className = LANG === "en" ? "on" : "";
  document.getElementById("lang-zh").className = LANG === "zh" ? "on" : "";
  const [words, cls] = status(), s = document.getElementById("status");
  s.textContent = words;
  s.className = cls;
}
function renderHeader(tables) {
  const n = k => tables.filter(x => kind(x) === k).length;
  document.getElementById("summary").textContent =
    t("fleet.summary_need", {faults: n("fault"), offline: n("offline"), idle: n("idle"), play: n("play")}) + " · " + t("fleet.messages", {n: VIEW.messages});
  document.getElementById("malformed").textContent = VIEW.bad || VIEW.dropped ? malformed(VIEW) : "";
  const d = VIEW.today || {};
  document.getElementById("parlour-today").textContent = t("fleet.parlour_today",
    {hands: d.hands || 0, play: dur(d.in_play_s, true), faults: d.faults || 0, stopped: dur(d.stopped_s, true)});
  document.getElementById("csv-today").href = csvLink(VIEW.day || "");
}
function renderDetail(tables) {
  const box = document.getElementById("detail"), tb = tables.find(x => x.site + "/" + x.id === OPEN);
  box.hidden = !tb;
  if (!tb) return;
  let h;
  try {
    h = card(tb) + tableDays(tb) + "<h2>" + esc(t("fleet.history")) + '</h2><table class="list">' +
        history(VIEW.history.filter(e => e.site === tb.site && e.table === tb.id)) + "</table>";
  } catch (e) {
    h = '<div class="offline-why">' + esc(t("fleet.cannot_show")) + "</div>";
  }
  document.getElementById("detail-body").innerHTML = h;
}
// Each part on its own: one that cannot render leaves the others showing.
function render() {
  renderWords();
  try { renderDays(); } catch (e) { DAYS = null; }
  if (!VIEW) return;
  const tables = byNeed(VIEW.tables);
  renderHeader(tables);
  const grid = document.getElementById("tables");
  grid.innerHTML = tables.map(safeTile).join("");
  grid.className = STREAM === "lost" ? "stale" : "";
  document.getElementById("history").innerHTML = history(VIEW.history);
  renderDetail(tables);
}

function setLang(l) { LANG = l; localStorage.setItem("parlour-lang", l); render(); }
document.getElementById("lang-en").onclick = () => setLang("en");
document.getElementById("lang-zh").onclick = () => setLang("zh");
document.getElementById("tables").onclick = ev => {
  const s = ev.target.closest("section.tile");
  if (s && s.dataset.key) { OPEN = s.dataset.key; render(); }
};
document.getElementById("detail-close").onclick = () => { OPEN = null; render(); };
document.getElementById("detail").onclick = ev => { if (ev.target.id === "detail") { OPEN = null; render(); } };
document.addEventListener("keydown", ev => { if (ev.key === "Escape" && OPEN) { OPEN = null; render(); } });
document.getElementById("days").onclick = ev => {
  const r = ev.target.closest("tr.day-row");
  if (r && ev.target.tagName !== "A") { SHOW_DAY = r.dataset.day; render(); }
};

// The stream: the browser opens it again after RETRY_MS when it drops; a
// stream the browser gave up on (the server answered with an error) is
// opened anew.
function connect() {
  const es = new EventSource("/events");
  es.onmessage = ev => {
    VIEW = JSON.parse(ev.data);
    RX = performance.now();
    STREAM = "open";
    LOST_AT = null;
    render();
  };
  es.onerror = () => {
    if (STREAM === "open") { STREAM = "lost"; LOST_AT = Date.now() / 1000; }
    if (es.readyState === EventSource.CLOSED) setTimeout(connect, RETRY_MS);
    render();
  };
}
function loadDays() {
  fetch("/days").then(r => r.ok ? r.json() : null).then(d => { if (d) { DAYS = d; render(); } }).catch(() => {});
}
render();
connect();
loadDays();
setInterval(loadDays, DAYS_EVERY_MS);
setInterval(render, 1000);            // the durations run on between pushes, and while the stream is lost
