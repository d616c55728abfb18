"use strict";
const ROW = 36;
const people = new Map();
let rows = [];
let rebuildQueued = false, renderQueued = false, lastRebuild = 0;
const viewport = document.getElementById("viewport");
const spacer = document.getElementById("spacer");
const rowsElement = document.getElementById("rows");
const search = document.getElementById("search");
const summary = document.getElementById("summary");
const connection = document.getElementById("connection");
const empty = document.getElementById("empty");

function escape(text) {
  return String(text).replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}
// engineering.example.com groups as "engineering"; a two-label domain is its own group.
function groupOf(jid) {
  const domain = jid.slice(jid.indexOf("@") + 1);
  const labels = domain.split(".");
  return labels.length > 2 ? labels[0] : domain;
}
function nameOf(jid) { const at = jid.indexOf("@"); return at < 0 ? jid : jid.slice(0, at); }
function look(person) { return person.state === "available" ? (person.show || "available") : person.state; }
function words(person) {
  switch (look(person)) {
    case "available": return "available"; case "chat": return "free to chat"; case "away": return "away";
    case "xa": return "extended away"; case "dnd": return "do not disturb"; case "offline": return "offline";
    case "lost": return "status lost" + (person.cause ? " (" + person.cause + ")" : "");
    default: return "unknown";
  }
}
// What a person is sorted and searched by, computed once when their answer arrives, not on every keystroke.
function prepare(person) {
  person.group = groupOf(person.jid);
  person.sortKey = person.group + "\u0000" + person.jid;
  person.searchText = (person.jid + "\n" + (person.status || "") + "\n" + words(person)).toLowerCase();
  return person;
}
function matches(person, query) { return person.searchText.includes(query); }

// Everyone in list order, sorted again only when someone new arrives: a keystroke filters, it never sorts.
let ordered = [], orderStale = true;
// While a snapshot streams in, the list waits for its last event and is sorted once; meanwhile the summary
// counts the people read so far.
let loadingSnapshot = false;
function rebuild() {
  rebuildQueued = false;
  lastRebuild = performance.now();
  if (loadingSnapshot) {
    summary.textContent = people.size.toLocaleString() + " people so far…";
    return;
  }
  if (orderStale) {
    // The sort keys alone, sorted without a comparator (the engine's own string sort, several times faster than a
    // comparator on a million people), then the people in that order.
    const byKey = new Map();
    for (const person of people.values()) byKey.set(person.sortKey, person);
    const keys = Array.from(byKey.keys());
    keys.sort();
    // The sorted strings are the map's own keys, whose hashes the engine keeps: finding each is cheap.
    ordered = keys.map(key => byKey.get(key));
    orderStale = false;
  }
  const query = search.value.trim().toLowerCase();
  // A row is a group's name (a string) or a person.
  rows = [];
  let group = null, shownCount = 0;
  for (const person of ordered) {
    if (query && !matches(person, query)) continue;
    shownCount++;
    if (person.group !== group) { group = person.group; rows.push(group); }
    rows.push(person);
  }
  spacer.style.height = rows.length * ROW + "px";
  empty.hidden = shownCount > 0 || people.size === 0;
  const counts = {};
  for (const person of people.values()) { const key = look(person); counts[key] = (counts[key] || 0) + 1; }
  const order = ["available", "chat", "away", "xa", "dnd", "offline", "unknown", "lost"];
  summary.textContent = people.size.toLocaleString() + " people" +
    (query ? ", " + shownCount.toLocaleString() + " shown" : "") + " · " +
    order.filter(k => counts[k]).map(k => counts[k].toLocaleString() + " " + (k === "xa" ? "extended away" : k)).join(", ");
  render();
}

function render() {
  renderQueued = false;
  const top = viewport.scrollTop, height = viewport.clientHeight;
  const first = Math.max(0, Math.floor(top / ROW) - 10);
  const last = Math.min(rows.length, Math.ceil((top + height) / ROW) + 10);
  let html = "";
  for (let index = first; index < last; index++) {
    const row = rows[index];
    const y = index * ROW;
    if (typeof row === "string") {
      html += '<div class="row group" style="top:' + y + 'px">' + escape(row) + "</div>";
      continue;
    }
    const person = row;
    const state = look(person);
    html += '<div class="row person" data-jid="' + escape(person.jid) + '" data-state="' + state + '" style="top:' + y + 'px">' +
      '<span class="dot ' + state + '" title="' + escape(words(person)) + '"></span>' +
      '<span class="name">' + escape(nameOf(person.jid)) + " <small>" + escape(person.jid) + "</small></span>" +
      '<span class="status">' + escape(person.status || words(person)) + (person.live === false ? " (not live)" : "") + "</span>" +
      '<span class="attendance">' + escape((person.attendance || "").replace(/-/g, " ")) + "</span></div>";
  }
  rowsElement.innerHTML = html;
}

function scheduleRebuild() {
  if (rebuildQueued) return;
  rebuildQueued = true;
  // At most four rebuilds a second while a big snapshot streams in or changes pour in; visible rows still update.
  const wait = Math.max(0, 250 - (performance.now() - lastRebuild));
  setTimeout(() => requestAnimationFrame(rebuild), wait);
}
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(render);
}

viewport.addEventListener("scroll", scheduleRender, { passive: true });
window.addEventListener("resize", scheduleRender);
search.addEventListener("input", () => { lastRebuild = 0; scheduleRebuild(); });

// The stream opens with a snapshot in a few `snapshot` events of many answers each, then one `presence` event
// per change. Behind a balancer a reconnect may land on another replica, whose snapshot can lag by the last change
// this page already showed: a snapshot answer older than the one shown is kept out. Changes always apply.
function isOlder(person, shown) {
  const since = Date.parse(person.since), shownSince = Date.parse(shown.since);
  return !Number.isNaN(since) && !Number.isNaN(shownSince) && since < shownSince;
}
function apply(person, fromSnapshot) {
  const shown = people.get(person.jid);
  if (fromSnapshot && shown && isOlder(person, shown)) return;
  // A change updates the person listed in place: the list's order holds the same object.
  if (shown) Object.assign(shown, prepare(person)); else people.set(person.jid, prepare(person));
  // A new person, or a filter that may now match differently, needs the list rebuilt; a change of
  // someone already listed only needs the visible rows drawn again.
  if (!shown) orderStale = true;
  if (!shown || search.value.trim()) scheduleRebuild(); else { scheduleRender(); if (!rebuildQueued) scheduleRebuild(); }
}
function connect() {
  const source = new EventSource("/v1/presence/events?snapshot=chunks");
  source.addEventListener("open", () => { connection.classList.add("live"); connection.title = "live"; });
  source.addEventListener("error", () => { connection.classList.remove("live"); connection.title = "reconnecting"; });
  source.addEventListener("snapshot", event => {
    // Marks for the browser's performance timeline: where opening a big page spends its time.
    if (!loadingSnapshot) performance.mark("people-snapshot-first-event");
    loadingSnapshot = event.lastEventId.includes(":");
    for (const person of JSON.parse(event.data).results) apply(person, true);
    // The snapshot's last event (its id has no ":k") lists everyone at once, without waiting for the next of
    // the at most four rebuilds a second.
    if (!loadingSnapshot) {
      performance.mark("people-snapshot-last-event");
      rebuild();
      performance.mark("people-listed");
    }
  });
  source.addEventListener("presence", event => apply(JSON.parse(event.data), false));
}

const figures = document.getElementById("storage-figures");
const evictions = document.getElementById("evictions");
const pressureEvents = document.getElementById("pressure-events");
function bytes(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB"];
  let value = n, unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
  return value.toFixed(unit ? 1 : 0) + " " + units[unit];
}
function pairs(list) { return list.map(([k, v]) => "<dt>" + escape(k) + "</dt><dd>" + escape(v) + "</dd>").join(""); }
async function refreshStorage() {
  try {
    const stats = await (await fetch("/v1/stats", { cache: "no-store" })).json();
    figures.innerHTML = pairs([
      ["storage", stats.storage], ["entries", stats.entries.toLocaleString()],
      ["lost", stats.lost.toLocaleString()], ["pinned (on screen)", stats.pinned.toLocaleString()],
      ["estimated size", bytes(stats.storageEstimatedBytes)], ["resident memory", bytes(stats.residentBytes)],
      ["pressure level", stats.pressureLevel], ["change streams", stats.eventStreams.toLocaleString()],
      ["source", stats.source ? (stats.source.live ? "live" : "not live") + " · " + stats.source.jid : "feed port"],
    ]);
    const causes = Object.entries(stats.evictions).filter(([, n]) => n > 0);
    evictions.innerHTML = causes.length ? pairs(causes.map(([k, n]) => [k, n.toLocaleString()])) : "<dt>none</dt><dd></dd>";
    pressureEvents.innerHTML = stats.pressureEvents.slice(-10).reverse().map(e =>
      "<li>" + escape((e.time || "").replace("T", " ").replace("Z", "")) + " " + escape(e.level) + ": " +
      escape(e.evicted.toLocaleString()) + " dropped" + (e.source ? " (" + escape(e.source) + ")" : "") + "</li>").join("");
  } catch (error) {
    figures.innerHTML = pairs([["service", "unreachable"]]);
  }
}

// A service that requires API tokens answers the page's data with 401: ask for a token, keep it in a cookie
// for this site only (EventSource cannot send an Authorization header), and ask again while it is refused.
async function haveAccess() {
  let response;
  try { response = await fetch("/v1/stats", { cache: "no-store" }); } catch (error) { return true; }
  if (response.status !== 401) return true;
  const token = window.prompt("This presence service needs an API token:");
  if (!token) { figures.innerHTML = pairs([["service", "needs an API token"]]); return false; }
  document.cookie = "presence_token=" + encodeURIComponent(token.trim()) + "; path=/; SameSite=Strict" +
    (location.protocol === "https:" ? "; Secure" : "");
  return haveAccess();
}

haveAccess().then(granted => {
  if (!granted) return;
  connect();
  refreshStorage();
  setInterval(refreshStorage, 1000);
});
