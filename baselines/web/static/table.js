// Draws a position (the data of baselines/web/table.py) as SVG, shared by the play and watch pages.
// Every line is a row: who owns it, its marker, then the engine and its tiles turned as they lie,
// then its open end (a ring when anyone may play there). Hands are rows of tiles below.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const CELL = 26;

function el(name, attributes, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function text(parent, x, y, content, attributes) {
  const node = el("text", Object.assign({ x, y, fill: "#f4f1e8", "font-size": 13 }, attributes || {}), parent);
  node.textContent = content;
  return node;
}

// A move in words, as every front end says it: "passes", "draws", "plays (3|9) on player_2's line".
function moveWords(move) {
  return move.text === "pass" ? "passes" : move.text === "draw" ? "draws" : `plays ${move.text}`;
}

// Tiles as digits or as pips (the choice of the page's "tiles" field, kept in the browser).
function tileStyle() { return localStorage.getItem("dominoes-tiles") || "digits"; }

// Pip positions in a half (x, y in 0..1): a die's 3x3 for 0-9, a 3x4 grid for 10-12.
const PIPS_3X3 = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8],
  7: [0, 2, 3, 4, 5, 6, 8], 8: [0, 1, 2, 3, 5, 6, 7, 8], 9: [0, 1, 2, 3, 4, 5, 6, 7, 8] };
function pipPositions(value) {
  if (value === 0) return [];
  if (value <= 9) return PIPS_3X3[value].map((k) => [0.2 + 0.3 * (k % 3), 0.2 + 0.3 * Math.floor(k / 3)]);
  return Array.from({ length: value }, (_, k) => [0.2 + 0.3 * (k % 3), 0.14 + 0.24 * Math.floor(k / 3)]);
}

// One half of a tile at (x, y): its value as a digit or as pips (digits above 12, as sets print them).
function drawHalf(group, x, y, value) {
  if (tileStyle() === "pips" && value <= 12) {
    const radius = value > 9 ? 2.1 : 2.6;
    for (const [px, py] of pipPositions(value)) el("circle", { cx: x + px * CELL, cy: y + py * CELL, r: radius,
      fill: "#1b1b1b" }, group);
    return;
  }
  text(group, x + CELL / 2, y + CELL / 2 + 5, String(value),
    { fill: "#1b1b1b", "font-size": value > 9 ? 12 : 14, "text-anchor": "middle", "font-weight": "bold" });
}

// One tile: two halves side by side, `a` on the left; returns the group.
function drawTile(parent, x, y, a, b, options) {
  const opts = options || {};
  const group = el("g", { transform: `translate(${x},${y})` }, parent);
  el("rect", { width: 2 * CELL, height: CELL, rx: 4, fill: opts.fill || "#fbf8ef",
    stroke: opts.stroke || "#333", "stroke-width": opts.strokeWidth || (opts.stroke ? 3 : 1) }, group);
  el("line", { x1: CELL, y1: 3, x2: CELL, y2: CELL - 3, stroke: "#555" }, group);
  drawHalf(group, 0, 0, a);
  drawHalf(group, CELL, 0, b);
  return group;
}

// Draws `table` into the element `box`; `options.showHands(seat)` says whose tiles to show,
// `options.onTile(tile, group)` makes the person's tiles clickable, `options.targets` is
// {line: action} for the open ends that take a chosen tile (each gets data-action).
function drawTable(box, table, options) {
  const opts = options || {};
  const labelWidth = 190;
  const step = 2 * CELL + 4;
  // lines wrap: as many tiles a row as the box holds (the engine, the open end and "play here" beside them)
  const room = Math.max(720, (box.clientWidth || 1200) - 16);
  const perRow = Math.max(4, Math.floor((room - labelWidth - 2 * CELL - 120) / step));
  const rowHeight = CELL + 12;
  const shown = table.seats.filter((seat) => seat.hand && (!opts.showHands || opts.showHands(seat.seat)));
  const lineRows = table.lines.map((line) => Math.ceil((line.tiles.length + 2) / perRow));
  const linesHeight = lineRows.reduce((sum, rows) => sum + rows * rowHeight, 0);
  const handsTop = 34 + linesHeight + 14;
  const handPerRow = Math.max(4, Math.floor((room - labelWidth - 10) / step));  // hands wrap too
  const handRows = shown.map((seat) => Math.max(1, Math.ceil(seat.hand.length / handPerRow)));
  const handsHeight = handRows.reduce((sum, rows) => sum + rows * rowHeight, 0);
  const widest = Math.max(0, ...shown.map((seat) => Math.min(seat.hand.length, handPerRow)));
  const width = Math.max(labelWidth + perRow * step + 90, labelWidth + widest * step + 20);
  const svg = el("svg", { width, height: handsTop + handsHeight + 10,
    "data-hand-index": table.hand_index, "data-to-move": table.to_move === null ? "" : table.to_move });
  const over = table.hand_over ? (table.went_out === null ? "hand over: blocked" :
    `hand over: player_${table.went_out} went out`) : `to move: player_${table.to_move}${table.drew ? " (has drawn)" : ""}`;
  const boneyard = table.boneyard === null ? "" : ` - boneyard ${table.boneyard} tiles`;
  text(svg, 8, 20, `Hand ${table.hand_index + 1} of ${table.num_hands} - engine (${table.engine}|${table.engine})` +
    `${boneyard} - ${over}`, { "font-size": 15, "font-weight": "bold" });
  let top = 34;
  table.lines.forEach((line, row) => {
    const y = top;
    top += lineRows[row] * rowHeight;
    const group = el("g", { "data-line": line.line, "data-tiles": line.tiles.map((t) => t.tile).join(","),
      "data-open": line.open_value, "data-open-to-all": line.open_to_all ? 1 : 0 }, svg);
    let label;
    let detail = "";
    if (line.owner === null) {
      label = table.shared_line;
      detail = line.closed ? "not open yet" : "open to all";
    } else {
      const seat = table.seats[line.owner];
      const who = seat.label.length > 18 ? `${seat.label.slice(0, 17)}…` : seat.label;
      label = `${seat.name} ${who}`;
      detail = `${seat.tiles_held} held - game score ${seat.game_score}`;
      group.setAttribute("data-held", seat.tiles_held);
      group.setAttribute("data-marker", seat.marker_up ? 1 : 0);
      if (seat.marker_up) {
        const marker = el("circle", { cx: labelWidth - 14, cy: y + CELL / 2, r: 7, fill: "#e53935" }, group);
        el("title", {}, marker).textContent = "marker up: anyone may play on this line";
      }
      if (table.to_move === line.owner) el("rect", { x: 2, y: y - 3, width: labelWidth - 26, height: CELL + 6, rx: 4,
        fill: "none", stroke: "#f7d774", "stroke-width": 2 }, group);
    }
    text(group, 8, y + 10, label, { "font-size": 12, "font-weight": "bold" });
    text(group, 8, y + 24, detail, { "font-size": 11 });
    // slot 0 holds the engine, slots 1.. the tiles, the last the open end; a row holds perRow slots
    const place = (k) => [labelWidth + (k % perRow) * step, y + Math.floor(k / perRow) * rowHeight];
    const [engineX, engineY] = place(0);
    el("circle", { cx: engineX + CELL / 2, cy: engineY + CELL / 2, r: CELL / 2 - 2, fill: "#8d6e63" }, group);
    text(group, engineX + CELL / 2, engineY + CELL / 2 + 5, String(table.engine), { "text-anchor": "middle" });
    line.tiles.forEach((tile, k) => {
      const [tileX, tileY] = place(k + 1);
      drawTile(group, tileX, tileY, tile.near, tile.far, line.double_to_cover && k === line.tiles.length - 1
        ? { stroke: "#e53935" } : {});
    });
    const [x, rowY] = place(line.tiles.length + 1);
    const end = el("g", { class: "open-end" }, group);
    const ring = el("circle", { cx: x + CELL / 2, cy: rowY + CELL / 2, r: CELL / 2 - 1, fill: "#12281c",
      stroke: line.open_to_all ? "#e53935" : "#4f7a60", "stroke-width": line.open_to_all ? 3 : 1 }, end);
    el("title", {}, ring).textContent = line.closed ? "not open yet" :
      `open end ${line.open_value}${line.open_to_all ? ": anyone may play here" : ""}`;
    text(end, x + CELL / 2, rowY + CELL / 2 + 5, line.closed ? "-" : String(line.open_value), { "text-anchor": "middle" });
    if (opts.targets && line.line in opts.targets) {
      const target = el("g", { class: "tile-target", "data-action": opts.targets[line.line] }, group);
      el("rect", { x: x + CELL + 4, y: rowY - 2, width: 70, height: CELL + 4, rx: 4, fill: "#f7d774" }, target);
      text(target, x + CELL + 39, rowY + CELL / 2 + 5, "play here", { fill: "#12281c", "text-anchor": "middle" });
      target.addEventListener("click", () => opts.onTarget(Number(opts.targets[line.line])));
    }
  });
  let handTop = handsTop;
  shown.forEach((seat, k) => {
    const y = handTop;
    handTop += handRows[k] * rowHeight;
    const group = el("g", { "data-hand": seat.seat, "data-tiles": seat.hand.map((t) => t.tile).join(",") }, svg);
    const left = seat.pips_left === null ? "" : ` - ${seat.pips_left} pips left`;
    text(group, 8, y + CELL / 2 + 5, `${seat.name} holds${left}`, { "font-size": 12 });
    seat.hand.forEach((tile, j) => {
      const chosen = opts.chosenTile === tile.tile;
      const playable = opts.playable && opts.playable.has(tile.tile);
      const look = chosen ? { stroke: "#f7d774", fill: "#ffe082" }
        : (playable ? { fill: "#ffe082", stroke: "#f7a600", strokeWidth: 2.5 } : {});
      const tileGroup = drawTile(group, labelWidth + (j % handPerRow) * step, y + Math.floor(j / handPerRow) * rowHeight,
        tile.low, tile.high, look);
      tileGroup.setAttribute("data-tile", tile.tile);
      if (opts.onTile && playable) {
        tileGroup.setAttribute("class", "tile-target");
        tileGroup.addEventListener("click", () => opts.onTile(tile.tile));
      }
    });
  });
  box.replaceChildren(svg);
}

async function api(method, path, body) {
  const response = await fetch(path, { method, headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : (typeof body === "string" ? body : JSON.stringify(body)) });
  const json = (response.headers.get("content-type") || "").includes("application/json");
  const data = json ? await response.json() : null;
  if (!response.ok) throw new Error((data && data.error) || `${response.status} ${response.statusText}`);
  if (!json) throw new Error(`the server answered ${response.headers.get("content-type")}, not JSON`);
  return data;
}

function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }
