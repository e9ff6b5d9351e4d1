// The watch page: pick a record from --records (or upload one), then step through it a hand at
// a time: forward, back, jump, play at a speed; the move's alternatives with td_lambda's values.
"use strict";

const $ = (id) => document.getElementById(id);
let source = null;   // {name} or {upload: text}
let frames = [];
let position = 0;
let playing = false;
let loads = 0;       // only the answer to the latest request is shown

function fail(error) { $("error").textContent = error ? String(error.message || error) : ""; }

async function load(hand) {
  if (!source) return;  // no record chosen yet
  const query = `?hand=${hand}`;
  const mine = ++loads;
  playing = false;
  const data = source.upload !== undefined
    ? await api("POST", `/api/records/upload${query}`, source.upload)
    : await api("GET", `/api/records/${encodeURIComponent(source.name).replace(/%2F/g, "/")}${query}`);
  if (mine !== loads) return;  // another record or hand was asked for meanwhile
  frames = data.frames;
  const summary = data.summary;
  if (hand === 0 || $("hand").options.length !== summary.hands) {
    $("hand").replaceChildren(...Array.from({ length: summary.hands }, (_, k) => new Option(`${k + 1}`, k)));
  }
  $("hand").value = String(data.hand);
  $("controls").hidden = false;
  $("position").max = frames.length - 1;
  document.body.dataset.frames = frames.length;
  document.body.dataset.labels = summary.labels.join(",");
  show(0);
}

function show(k) {
  if (!frames.length) return;  // no record loaded yet: the controls have nothing to step through
  position = Math.max(0, Math.min(frames.length - 1, k));
  const frame = frames[position];
  $("position").value = position;
  document.body.dataset.position = position;
  const mover = frame.move ? frame.move.seat : frame.table.to_move;
  drawTable($("table"), frame.table, { showHands: (seat) => $("all-hands").checked || seat === mover });
  $("status").textContent = frame.move
    ? `move ${frame.move_number} of ${frames.length - 1}: ${frame.move.label} (player_${frame.move.seat}) ${moveWords(frame.move)}`
    : `the deal (${frames.length - 1} moves in this hand)`;
  const box = $("alternatives");
  if (!frame.move) { box.replaceChildren(); return; }
  const table = document.createElement("table");
  const head = document.createElement("tr");
  for (const cell of ["the mover could play", "td_lambda's predicted pips left"]) {
    const th = document.createElement("th"); th.textContent = cell; head.appendChild(th);
  }
  table.appendChild(head);
  for (const option of frame.move.alternatives) {
    const row = document.createElement("tr");
    if (option.action === frame.move.action) row.className = "chosen";
    for (const cell of [option.text, option.predicted_pips === null ? "" : option.predicted_pips.toFixed(1)]) {
      const td = document.createElement("td"); td.textContent = cell; row.appendChild(td);
    }
    table.appendChild(row);
  }
  box.replaceChildren(table);
}

async function playThrough() {
  if (!frames.length) return;
  playing = !playing;
  $("play").textContent = playing ? "pause" : "play";
  while (playing && position < frames.length - 1) {
    show(position + 1);
    await sleep(Number($("speed").value));
  }
  playing = false;
  $("play").textContent = "play";
}

async function listRecords() {
  const listing = await api("GET", "/api/records");
  $("directory").textContent = listing.directory ? `records in ${listing.directory}/:` : "no --records directory given";
  $("records").replaceChildren(...listing.records.map((name) => {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.textContent = name;
    link.dataset.record = name;
    link.addEventListener("click", () => { source = { name }; $("upload").value = ""; fail(null); load(0).catch(fail); });
    item.appendChild(link);
    return item;
  }));
}

$("first").addEventListener("click", () => show(0));
$("back").addEventListener("click", () => show(position - 1));
$("forward").addEventListener("click", () => show(position + 1));
$("last").addEventListener("click", () => show(frames.length - 1));
$("play").addEventListener("click", playThrough);
$("position").addEventListener("input", () => show(Number($("position").value)));
$("all-hands").addEventListener("change", () => show(position));
$("tiles").value = tileStyle();
$("tiles").addEventListener("change", () => { localStorage.setItem("dominoes-tiles", $("tiles").value); show(position); });
$("hand").addEventListener("change", () => load(Number($("hand").value)).catch(fail));
$("upload").addEventListener("change", async () => {
  const file = $("upload").files[0];
  if (!file) return;
  source = { upload: await file.text() };
  fail(null);
  load(0).catch(fail);
});
listRecords().catch(fail);
