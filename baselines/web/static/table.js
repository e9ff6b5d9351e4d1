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

// One tile: two halves side by side, `a` on the left; returns the group.
function drawTile(parent, x, y, a, b, options) {
  const opts = options || {};
  const group = el("g", { transform: `translate(${x},${y})` }, parent);
  el("rect", { width: 2 * CELL, height: CELL, rx: 4, fill: opts.fill || "#fbf8ef",
    stroke: opts.stroke || "#333", "stroke-width": opts.stroke ? 3 : 1 }, group);
  el("line", { x1: CELL, y1: 3, x2: CELL, y2: CELL - 3, stroke: "#555" }, group);
  for (const [k, value] of [[0, a], [1, b]]) {
    text(group, k * CELL + CELL / 2, CELL / 2 + 5, String(value),
      { fill: "#1b1b1b", "font-size": 14, "text-anchor": "middle", "font-weight": "bold" });
  }
  return group;
}

// Draws `table` into the element `box`; `options.showHands(seat)` says whose tiles to show,
// `options.onTile(tile, group)` makes the person's tiles clickable, `options.targets` is
// {line: action} for the open ends that take a chosen tile (each gets data-action).
function drawTable(box, table, options) {
  const opts = options || {};
  const rows = table.lines.length;
  const longest = Math.max(4, ...table.lines.map((line) => line.tiles.length));
  const labelWidth = 190;
  const width = labelWidth + (longest + 3) * (2 * CELL + 4) + 40;
  const shown = table.seats.filter((seat) => seat.hand && (!opts.showHands || opts.showHands(seat.seat)));
  const rowHeight = CELL + 12;
  const handsTop = 34 + rows * rowHeight + 14;
  const widest = Math.max(0, ...shown.map((seat) => seat.hand.length));
  const height = handsTop + shown.length * rowHeight + 10;
  const svg = el("svg", { width: Math.max(width, labelWidth + widest * (2 * CELL + 4) + 20), height,
    "data-hand-index": table.hand_index, "data-to-move": table.to_move === null ? "" : table.to_move });
  const over = table.hand_over ? (table.went_out === null ? "hand over: blocked" :
    `hand over: player_${table.went_out} went out`) : `to move: player_${table.to_move}${table.drew ? " (has drawn)" : ""}`;
  const boneyard = table.boneyard === null ? "" : ` - boneyard ${table.boneyard} tiles`;
  text(svg, 8, 20, `Hand ${table.hand_index + 1} of ${table.num_hands} - engine (${table.engine}|${table.engine})` +
    `${boneyard} - ${over}`, { "font-size": 15, "font-weight": "bold" });
  table.lines.forEach((line, row) => {
    const y = 34 + row * rowHeight;
    const group = el("g", { "data-line": line.line, "data-tiles": line.tiles.map((t) => t.tile).join(","),
      "data-open": line.open_value, "data-open-to-all": line.open_to_all ? 1 : 0 }, svg);
    let label;
    let detail = "";
    if (line.owner === null) {
      label = "dummy line";
      detail = line.closed ? "not open yet" : "open to all";
    } else {
      const seat = table.seats[line.owner];
      const who = seat.label.length > 18 ? `${seat.label.slice(0, 17)}…` : seat.label;
      label = `${seat.name} ${who}`;
      detail = `${seat.tiles_held} held - game score ${seat.game_score}`;
      group.setAttribute("data-held", seat.tiles_held);
      group.setAttribute("data-marker", seat.marker_up ? 1 : 0);
      if (seat.marker_up) el("circle", { cx: labelWidth - 14, cy: y + CELL / 2, r: 7, fill: "#e53935" }, group);
      if (table.to_move === line.owner) el("rect", { x: 2, y: y - 3, width: labelWidth - 26, height: CELL + 6, rx: 4,
        fill: "none", stroke: "#f7d774", "stroke-width": 2 }, group);
    }
    text(group, 8, y + 10, label, { "font-size": 12, "font-weight": "bold" });
    text(group, 8, y + 24, detail, { "font-size": 11 });
    let x = labelWidth;
    el("circle", { cx: x + CELL / 2, cy: y + CELL / 2, r: CELL / 2 - 2, fill: "#8d6e63" }, group);
    text(group, x + CELL / 2, y + CELL / 2 + 5, String(table.engine), { "text-anchor": "middle" });
    x += CELL + 4;
    for (const tile of line.tiles) {
      drawTile(group, x, y, tile.near, tile.far, line.double_to_cover && tile === line.tiles[line.tiles.length - 1]
        ? { stroke: "#e53935" } : {});
      x += 2 * CELL + 4;
    }
    const end = el("g", { class: "open-end" }, group);
    el("circle", { cx: x + CELL / 2, cy: y + CELL / 2, r: CELL / 2 - 1, fill: "#12281c",
      stroke: line.open_to_all ? "#e53935" : "#4f7a60", "stroke-width": line.open_to_all ? 3 : 1 }, end);
    text(end, x + CELL / 2, y + CELL / 2 + 5, line.closed ? "-" : String(line.open_value), { "text-anchor": "middle" });
    if (opts.targets && line.line in opts.targets) {
      const target = el("g", { class: "tile-target", "data-action": opts.targets[line.line] }, group);
      el("rect", { x: x + CELL + 4, y: y - 2, width: 70, height: CELL + 4, rx: 4, fill: "#f7d774" }, target);
      text(target, x + CELL + 39, y + CELL / 2 + 5, "play here", { fill: "#12281c", "text-anchor": "middle" });
      target.addEventListener("click", () => opts.onTarget(Number(opts.targets[line.line])));
    }
  });
  shown.forEach((seat, k) => {
    const y = handsTop + k * rowHeight;
    const group = el("g", { "data-hand": seat.seat, "data-tiles": seat.hand.map((t) => t.tile).join(",") }, svg);
    const left = seat.pips_left === null ? "" : ` - ${seat.pips_left} pips left`;
    text(group, 8, y + CELL / 2 + 5, `${seat.name} holds${left}`, { "font-size": 12 });
    seat.hand.forEach((tile, j) => {
      const chosen = opts.chosenTile === tile.tile;
      const tileGroup = drawTile(group, labelWidth + j * (2 * CELL + 4), y, tile.low, tile.high,
        chosen ? { stroke: "#f7d774" } : (opts.playable && opts.playable.has(tile.tile) ? { fill: "#fff3c4" } : {}));
      tileGroup.setAttribute("data-tile", tile.tile);
      if (opts.onTile && opts.playable && opts.playable.has(tile.tile)) {
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
