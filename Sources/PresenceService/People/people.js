"use strict";
const ROW = 36;
// Everyone the page has heard of, by JID.
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
// engineering.example.com groups as "engineering"; a two-label domain is its own group. Worked out once per
// domain: a directory has a few domains and many people.
const groupByDomain = new Map();
function groupOf(jid) {
  const domain = jid.slice(jid.indexOf("@") + 1);
  let group = groupByDomain.get(domain);
  if (group === undefined) {
    const labels = domain.split(".");
    group = labels.length > 2 ? labels[0] : domain;
    groupByDomain.set(domain, group);
  }
  return group;
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
// A person as the list keeps them: the members of an answer that the page shows, in one shape whether the answer
// came as a snapshot table's row or as a change's object (so the engine reads every person the same way), with
// their group, worked out once, and their position in the list.
class Person {
  constructor(jid, state, show, status, since, live, attendance, cause) {
    this.jid = jid; this.state = state; this.show = show; this.status = status; this.since = since;
    this.live = live; this.attendance = attendance; this.cause = cause;
    this.group = groupOf(jid);
    this.position = -1;
    // The number of the last snapshot that listed them (0: none yet), and the number of the last change shown
    // for them (0: none yet).
    this.snapshot = 0;
    this.change = 0;
  }
  static fromAnswer(answer) {
    return new Person(answer.jid, answer.state, answer.show, answer.status, answer.since, answer.live,
      answer.attendance, answer.cause);
  }
  // A snapshot table's rows as people: `columns` names the members of each row's values.
  static fromTable(table) {
    const at = {};
    table.columns.forEach((name, index) => { at[name] = index; });
    return table.rows.map(row => new Person(row[at.jid], row[at.state], row[at.show], row[at.status], row[at.since],
      row[at.live], row[at.attendance], row[at.cause]));
  }
  // Takes a newer answer's members; the group and the position stay.
  update(newer) {
    this.state = newer.state; this.show = newer.show; this.status = newer.status; this.since = newer.since;
    this.live = newer.live; this.attendance = newer.attendance; this.cause = newer.cause;
  }
}
// What a search looks in: the address, the status text and the state in words, in lower case.
function searchTextOf(person) {
  return (person.jid + "\n" + (person.status || "") + "\n" + words(person)).toLowerCase();
}

// How many people show each look, kept as answers arrive: a keystroke never counts everyone again.
const counts = new Map();
function count(person, by) { const key = look(person); counts.set(key, (counts.get(key) || 0) + by); }

// The list, worked out again only when someone new arrives: everyone in order (by group, then by address), each
// one's group by position, and the rows of everyone. A person knows their position, so a change of their status
// updates what a search looks in at that position.
let ordered = [], orderStale = true;
let groupNames = [], groupAt = new Int32Array(0), everyoneRows = [];
function order() {
  // Each group's addresses sorted as plain strings (the engine's own sort without a comparator, several times
  // faster than one on a million people), then each person found again by address.
  const byGroup = new Map();
  for (const person of people.values()) {
    const jids = byGroup.get(person.group);
    if (jids === undefined) byGroup.set(person.group, [person.jid]); else jids.push(person.jid);
  }
  groupNames = Array.from(byGroup.keys()).sort();
  ordered = new Array(people.size);
  groupAt = new Int32Array(people.size);
  everyoneRows = [];
  let position = 0;
  groupNames.forEach((group, index) => {
    everyoneRows.push(group);
    for (const jid of byGroup.get(group).sort()) {
      const person = people.get(jid);
      person.position = position;
      ordered[position] = person;
      groupAt[position] = index;
      everyoneRows.push(person);
      position++;
    }
  });
  searchTexts = new Array(ordered.length);
  searchTextsMade = 0;
  searched = null;
  if (!searchTextsQueued) { searchTextsQueued = true; setTimeout(makeSearchTextsInBackground, 0); }
}
// What a search looks in, by position, in list order: a keystroke reads them one after another in memory rather
// than hopping from person to person. Made in the background once the list is ordered, a slice per task so that
// the page stays responsive; a search before they are all made finishes them first.
let searchTexts = [], searchTextsMade = 0, searchTextsQueued = false;
function makeSearchTexts(upTo) {
  for (; searchTextsMade < upTo; searchTextsMade++) searchTexts[searchTextsMade] = searchTextOf(ordered[searchTextsMade]);
}
function makeSearchTextsInBackground() {
  searchTextsQueued = false;
  makeSearchTexts(Math.min(ordered.length, searchTextsMade + 20000));
  if (searchTextsMade < ordered.length) { searchTextsQueued = true; setTimeout(makeSearchTextsInBackground, 0); }
}
// The last search's positions, kept while nobody changes: typing one more letter narrows them rather than
// searching everyone again.
let searched = null;
function find(query) {
  makeSearchTexts(ordered.length);
  const positions = [];
  if (searched !== null && query.startsWith(searched.query)) {
    for (const position of searched.positions) if (searchTexts[position].includes(query)) positions.push(position);
  } else {
    for (let position = 0; position < searchTexts.length; position++) {
      if (searchTexts[position].includes(query)) positions.push(position);
    }
  }
  searched = { query, positions };
  return positions;
}
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
    order();
    orderStale = false;
  }
  const query = search.value.trim().toLowerCase();
  // A row is a group's name (a string) or a person.
  let shownCount = people.size;
  if (query) {
    const positions = find(query);
    shownCount = positions.length;
    rows = [];
    let group = -1;
    for (const position of positions) {
      if (groupAt[position] !== group) { group = groupAt[position]; rows.push(groupNames[group]); }
      rows.push(ordered[position]);
    }
  } else {
    rows = everyoneRows;
  }
  spacer.style.height = rows.length * ROW + "px";
  empty.hidden = shownCount > 0 || people.size === 0;
  const looks = ["available", "chat", "away", "xa", "dnd", "offline", "unknown", "lost"];
  summary.textContent = people.size.toLocaleString() + " people" +
    (query ? ", " + shownCount.toLocaleString() + " shown" : "") + " · " +
    looks.filter(k => counts.get(k)).map(k => counts.get(k).toLocaleString() + " " + (k === "xa" ? "extended away" : k)).join(", ");
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
// Returns the person as the page now lists them.
function apply(person, fromSnapshot) {
  const shown = people.get(person.jid);
  if (shown === undefined) {
    people.set(person.jid, person);
    count(person, 1);
    orderStale = true;
    scheduleRebuild();
    return person;
  }
  if (fromSnapshot && isOlder(person, shown)) return shown;
  // A change updates the person listed in place: the list's order holds the same object. Only a search that
  // may now match differently needs the list rebuilt; otherwise the visible rows are drawn again.
  count(shown, -1);
  shown.update(person);
  count(shown, 1);
  if (!orderStale && shown.position >= 0 && shown.position < searchTextsMade) searchTexts[shown.position] = searchTextOf(shown);
  searched = null;
  if (search.value.trim()) scheduleRebuild(); else { scheduleRender(); if (!rebuildQueued) scheduleRebuild(); }
  return shown;
}
// A stream opened again (after a drop, a refusal or a failover to another replica) starts with a new snapshot,
// which leaves out whoever the service no longer holds: left as they were, they would keep a status the service
// forgot. Each person remembers the last snapshot that listed them; after a snapshot's last event, the people it
// left out are asked for again, up to 100 at a time and one request after another, as the stream answers (from
// what the service holds, `cache-only`), and shown as the service answers now (unknown, lost, or a status that a
// lagging replica holds). A service whose batch limit (`--http-max-batch`) is lower answers 400: the page asks
// again with half as many, and keeps that size. An answer older than the one shown is kept out, as a snapshot's
// is, and so is an answer for someone whose change arrived after the question was asked.
let snapshotNumber = 0, changeNumber = 0;
let askAtOnce = 100;
async function askAgainForThoseLeftOut(number) {
  const leftOut = [];
  for (const person of people.values()) if (person.snapshot !== number) leftOut.push(person.jid);
  let index = 0;
  while (index < leftOut.length && number === snapshotNumber) {
    const jids = leftOut.slice(index, index + askAtOnce);
    const outcome = await askAgain(jids);
    if (outcome === "too many" && askAtOnce > 1) { askAtOnce = Math.max(1, Math.floor(askAtOnce / 2)); continue; }
    if (outcome !== "answered") return;
    index += jids.length;
  }
}
// "answered"; "too many" when the service refused the batch as a bad request; "failed" when it could not be
// asked (the next snapshot asks again).
async function askAgain(jids) {
  const asked = changeNumber;
  try {
    const query = jids.map(jid => "jid=" + encodeURIComponent(jid)).join("&");
    const response = await fetch("/v1/presence?policy=cache-only&" + query, { cache: "no-store" });
    if (response.status === 400) return "too many";
    if (!response.ok) return "failed";
    for (const answer of (await response.json()).results) {
      const shown = people.get(answer.jid);
      if (shown === undefined || shown.change <= asked) apply(Person.fromAnswer(answer), true);
    }
    return "answered";
  } catch (error) {
    return "failed";
  }
}
function connect() {
  const stream = new EventSource("/v1/presence/events?snapshot=table");
  stream.addEventListener("open", () => {
    // A snapshot cut off by a drop is over: the stream opened again starts a new one.
    loadingSnapshot = false;
    connection.classList.add("live"); connection.title = "live";
    reopenWait = REOPEN_FIRST_WAIT;
  });
  stream.addEventListener("error", () => {
    connection.classList.remove("live"); connection.title = "reconnecting";
    if (stream.readyState === EventSource.CLOSED && stream === source) reopenLater();
  });
  stream.addEventListener("snapshot", event => {
    // Marks for the browser's performance timeline: where opening a big page spends its time.
    if (!loadingSnapshot) {
      performance.mark("people-snapshot-first-event");
      snapshotNumber++;
    }
    loadingSnapshot = event.lastEventId.includes(":");
    for (const person of Person.fromTable(JSON.parse(event.data))) apply(person, true).snapshot = snapshotNumber;
    // The snapshot's last event (its id has no ":k") lists everyone at once, without waiting for the next of
    // the at most four rebuilds a second.
    if (!loadingSnapshot) {
      performance.mark("people-snapshot-last-event");
      rebuild();
      performance.mark("people-listed");
      setTimeout(askAgainForThoseLeftOut, 0, snapshotNumber);
    }
  });
  stream.addEventListener("presence", event => {
    apply(Person.fromAnswer(JSON.parse(event.data)), false).change = ++changeNumber;
  });
  return stream;
}
// The browser reconnects a stream that ended by itself, but gives up on one that was refused: a replica at its
// most streams answers 503, a balancer with no replica up 502, a service that needs a token 401. The page opens
// such a stream again after a wait that doubles up to half a minute (spread at random, so that the pages a full
// replica refused do not come back at once), asking for a token first when that is why.
const REOPEN_FIRST_WAIT = 1000, REOPEN_LONGEST_WAIT = 30000;
let source = null, reopenWait = REOPEN_FIRST_WAIT;
function openStream() {
  if (source) source.close();
  source = connect();
}
function reopenLater() {
  const refused = source;
  const wait = reopenWait * (0.5 + Math.random());
  reopenWait = Math.min(reopenWait * 2, REOPEN_LONGEST_WAIT);
  setTimeout(async () => {
    if (source !== refused || accessDenied) return;
    const access = await checkAccess();
    if (access.granted && source === refused) openStream();
  }, wait);
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
// Answers whether the page may read, and whether a token was asked for.
async function haveAccess(asked = false) {
  let response;
  try { response = await fetch("/v1/stats", { cache: "no-store" }); } catch (error) { return { granted: true, asked }; }
  if (response.status !== 401) return { granted: true, asked };
  const token = window.prompt("This presence service needs an API token:");
  if (!token) { figures.innerHTML = pairs([["service", "needs an API token"]]); return { granted: false, asked: true }; }
  document.cookie = "presence_token=" + encodeURIComponent(token.trim()) + "; path=/; SameSite=Strict" +
    (location.protocol === "https:" ? "; Secure" : "");
  return haveAccess(true);
}

// One check at a time: the page's first one and a refused stream's both ask, and the user is asked once (a
// prompt blocks the page's timers, so a stream's wait is over by the time it is answered). Once the user declines,
// the page stops asking until it is loaded again.
let accessCheck = null, accessDenied = false;
function checkAccess() {
  if (accessCheck === null) accessCheck = haveAccess().finally(() => { accessCheck = null; });
  return accessCheck;
}

// The stream opens at once, while the page asks whether it may read: an open service (most) starts its snapshot
// without waiting for that answer. A stream refused for want of a token opens again as soon as one is given.
openStream();
checkAccess().then(access => {
  if (!access.granted) { accessDenied = true; source.close(); source = null; return; }
  if (access.asked) openStream();
  refreshStorage();
  setInterval(refreshStorage, 1000);
});
