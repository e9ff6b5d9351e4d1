// The play page: choose a table and opponents, then click your moves; the opponents' moves are
// shown one by one at the chosen speed. Every legal move is a button with data-action.
"use strict";

const $ = (id) => document.getElementById(id);
let game = null;      // {id, state}
let chosenTile = null;
let busy = false;
let generation = 0;   // a new game makes the animation of the previous one stop
let pendingNext = null;  // resolves the wait at the end of a hand

function say(message) { $("status").textContent = message; }
function fail(error) { $("error").textContent = error ? String(error.message || error) : ""; }

function fillSeats() {
  const players = Number($("players").value);
  $("seat").replaceChildren(...Array.from({ length: players }, (_, k) => new Option(`player_${k}`, k)));
}

async function setUp() {
  const offered = await api("GET", "/api/players");
  $("players").replaceChildren(...[2, 3, 4, 5, 6, 7, 8].map((n) => new Option(n, n, n === 4, n === 4)));
  $("rules").replaceChildren(...offered.rule_sets.map((name) => new Option(name, name)));
  $("hands").max = offered.max_hands;
  $("tiles").value = tileStyle();
  $("tiles").addEventListener("change", () => { localStorage.setItem("dominoes-tiles", $("tiles").value); redraw(); });
  $("players").addEventListener("change", () => { fillSeats(); refreshOffers().catch(fail); });
  for (const id of ["highest", "rules"]) $(id).addEventListener("change", () => refreshOffers().catch(fail));
  fillSeats();
  $("new-game").addEventListener("click", newGame);
  $("hint").addEventListener("click", hint);
  await refreshOffers();
  if (offered.room === 0) fail("The server is full: every place holds a game going on. Try again when one ends or idles out.");
}

// The opponents follow the table: the shipped players that play it, the strongest of them in the field.
// Changing three fields sends three asks whose answers may come back in any order: only the answer to
// the latest ask is shown, so the field never settles on a table the person has already left.
let offersAsked = 0;
async function refreshOffers() {
  const ask = ++offersAsked;
  const query = `?players=${$("players").value}&highest=${$("highest").value}&rules=${$("rules").value}`;
  const offered = await api("GET", `/api/players${query}`);
  if (ask !== offersAsked) return;
  $("offered").replaceChildren(...offered.players.map((name) => new Option(name, name)));
  $("opponent").value = offered.default;
  document.body.dataset.defaultOpponent = offered.default;
}

// The log beside the table: every move of the hand, who made it, in order.
function logFrame(frame) {
  const log = $("log");
  if (!frame.move) {  // a new deal
    const heading = document.createElement("li");
    heading.className = "log-hand";
    heading.textContent = `Hand ${frame.table.hand_index + 1}: engine (${frame.table.engine}|${frame.table.engine})`;
    log.replaceChildren(heading);
    return;
  }
  const entry = document.createElement("li");
  entry.textContent = `${frame.move.label} (player_${frame.move.seat}) ${moveWords(frame.move)}`;
  if (frame.move.seat === game.state.seat) entry.className = "log-mine";
  log.appendChild(entry);
  log.scrollTop = log.scrollHeight;
}

let lastTable = null;  // what is drawn now, to draw again when the tile style changes
function redraw() { if (lastTable) draw(lastTable.table, lastTable.interactive); }

function draw(table, interactive) {
  lastTable = { table, interactive };
  const legal = interactive ? table.legal : [];
  const playable = new Set(legal.filter((m) => m.tile !== null).map((m) => m.tile));
  const targets = {};
  if (chosenTile !== null) for (const m of legal) if (m.tile === chosenTile) targets[m.line] = m.action;
  drawTable($("table"), table, {
    showHands: (seat) => seat === game.state.seat || table.hand_over, playable, chosenTile,
    targets: chosenTile === null ? null : targets,
    onTile: (tile) => {
      const options = legal.filter((m) => m.tile === tile);
      if (options.length === 1) { play(options[0].action); return; }
      chosenTile = chosenTile === tile ? null : tile;
      draw(table, interactive);
    },
    onTarget: (action) => play(action),
  });
  const buttons = legal.map((m) => {
    const button = document.createElement("button");
    button.className = "move";
    button.dataset.action = m.action;
    button.textContent = m.text;
    button.addEventListener("click", () => play(m.action));
    return button;
  });
  $("moves").replaceChildren(...buttons);
}

// Resolves when the person clicks "Next hand": the end of a hand stays on the table until then.
function nextHand() {
  return new Promise((resolve) => {
    const button = $("next-hand");
    button.hidden = false;
    document.body.dataset.handOver = "1";
    pendingNext = () => { button.hidden = true; document.body.dataset.handOver = "0"; pendingNext = null; resolve(); };
    button.onclick = pendingNext;
  });
}

// Shows the frames in turn; false when a new game started meanwhile (the caller then stops).
async function animate(frames) {
  const delay = Number($("speed").value);
  const mine = generation;
  for (const [k, frame] of frames.entries()) {
    if (mine !== generation) return false;
    logFrame(frame);
    if (frame.move) say(`${frame.move.label} (player_${frame.move.seat}) ${moveWords(frame.move)}`);
    draw(frame.table, false);
    if (frame.table.hand_over && k < frames.length - 1) {
      const seats = frame.table.seats.map((seat) => `${seat.name} ${seat.pips_left}`).join(", ");
      say(`Hand over: pips left ${seats}. Every hand is shown.`);
      await nextHand();
    } else if (delay) {
      await sleep(delay);
    }
  }
  return mine === generation;
}

function showState() {
  const state = game.state;
  chosenTile = null;
  draw(state.table, state.your_turn);
  $("hint").disabled = !state.your_turn;
  $("download").hidden = !state.game_over;  // the record shows every hand: given at the end
  $("download").href = `/api/games/${game.id}/record`;
  document.body.dataset.gameOver = state.game_over ? "1" : "0";
  document.body.dataset.yourTurn = state.your_turn ? "1" : "0";
  if (state.game_over) {
    const best = Math.min(...state.totals);
    const winners = state.totals.map((t, k) => (t === best ? `player_${k}` : null)).filter(Boolean);
    say(`Game over. Scores: ${state.totals.map((t, k) => `player_${k} ${t}`).join(", ")}; lowest wins: ${winners.join(", ")}`);
  } else if (state.your_turn) {
    say("Your move: click a tile (then where it goes), or a move below.");
  }
}

async function newGame() {
  if (busy && !pendingNext) return;  // a move is on its way; at the end of a hand a new game may start
  generation += 1;
  if (pendingNext) pendingNext();
  busy = true; document.body.dataset.busy = "1"; fail(null); $("hint-box").replaceChildren();
  $("hint").disabled = true; $("download").hidden = true;
  try {
    const created = await api("POST", "/api/games", {
      players: Number($("players").value), highest: Number($("highest").value), rules: $("rules").value,
      seat: Number($("seat").value), opponents: [$("opponent").value], hands: Number($("hands").value),
      seed: $("seed").value === "" ? null : Number($("seed").value) });
    game = { id: created.id, state: created.state };
    document.body.dataset.gameId = created.id;
    logFrame({ move: null, table: created.state.table });
    if (await animate(created.frames)) showState();
  } catch (error) { fail(error); } finally { busy = false; document.body.dataset.busy = "0"; }
}

async function play(action) {
  if (busy || !game) return;
  busy = true; document.body.dataset.busy = "1"; fail(null); $("hint-box").replaceChildren();
  $("moves").replaceChildren();
  $("hint").disabled = true;
  const mine = generation;
  try {
    const answer = await api("POST", `/api/games/${game.id}/move`, { action });
    if (mine !== generation) return;
    game.state = answer.state;
    if (await animate(answer.frames)) showState();
  } catch (error) {
    if (mine === generation) { fail(error); showState(); }
  } finally {
    if (mine === generation) { busy = false; document.body.dataset.busy = "0"; }
  }
}

async function hint() {
  if (!game) return;
  try {
    const advice = await api("GET", `/api/games/${game.id}/hint`);
    const rows = advice.moves.map((m) => {
      const who = Object.entries(advice.choices).filter(([, a]) => a === m.action).map(([name]) => name);
      const row = document.createElement("tr");
      row.dataset.hintAction = m.action;
      if (who.length) row.className = "chosen";
      for (const cell of [m.text, m.predicted_pips === null ? "" : m.predicted_pips.toFixed(1), who.join(", ")]) {
        const td = document.createElement("td"); td.textContent = cell; row.appendChild(td);
      }
      return row;
    });
    const head = document.createElement("tr");
    for (const cell of ["move", "td_lambda's predicted pips left", "would play it"]) {
      const th = document.createElement("th"); th.textContent = cell; head.appendChild(th);
    }
    const table = document.createElement("table");
    table.append(head, ...rows);
    $("hint-box").replaceChildren(table, holdingsTable(advice.holdings || []));
    document.body.dataset.hinted = String(Number(document.body.dataset.hinted || 0) + 1);
  } catch (error) { fail(error); }
}

// The tile count: the tiles each opponent (and the boneyard) most likely holds, with probabilities.
function holdingsTable(holdings) {
  const table = document.createElement("table");
  table.className = "holdings";
  const head = document.createElement("tr");
  for (const cell of ["tile count", "tiles", "most likely holds"]) {
    const th = document.createElement("th"); th.textContent = cell; head.appendChild(th);
  }
  table.appendChild(head);
  for (const place of holdings) {
    const row = document.createElement("tr");
    row.dataset.holdingsPlace = place.seat_offset;
    const who = place.place === "boneyard" ? "boneyard" : `player ${place.place}`;
    const likeliest = place.likeliest.map((t) => `${t.tile} ${Math.round(100 * t.probability)}%`).join("  ");
    for (const cell of [who, place.tiles_held === null ? "" : String(place.tiles_held), likeliest || "none"]) {
      const td = document.createElement("td"); td.textContent = cell; row.appendChild(td);
    }
    table.appendChild(row);
  }
  return table;
}

setUp().catch(fail);
