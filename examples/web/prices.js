// One row per symbol of the demo feed (`tickwire demo-feed`: DEMO/EQ/<symbol>),
// fed by the broker's /stream with a 250 ms conflation: however fast the
// feed, a row changes at most four times a second and shows the latest values.
import { TickwireStream, setCell } from '/lib/stream.js';

const COLUMNS = ['BID', 'ASK', 'TRDPRC_1', 'NETCHNG_1', 'ACVOL_1'];
const pattern = new URLSearchParams(location.search).get('topic') || 'DEMO/EQ/>';
const body = document.querySelector('#prices tbody');
const rows = new Map();  // topic -> {cells, seq}

document.getElementById('pattern').textContent = pattern;

function rowFor(topic) {
  let row = rows.get(topic);
  if (row) return row;
  const tr = document.createElement('tr');
  tr.dataset.topic = topic;
  const name = document.createElement('td');
  name.textContent = topic.slice(topic.lastIndexOf('/') + 1);
  tr.appendChild(name);
  const cells = {};
  for (const field of [...COLUMNS, 'seq']) {
    cells[field] = tr.appendChild(document.createElement('td'));
    cells[field].dataset.field = field;
  }
  // Rows stay in symbol order as they arrive.
  const after = [...body.children].find((other) => other.dataset.topic > topic);
  body.insertBefore(tr, after || null);
  row = { cells };
  rows.set(topic, row);
  document.getElementById('count').textContent = `${rows.size} symbols`;
  return row;
}

function show(msg) {
  if (msg.type === 'status') {
    const row = rowFor(msg.topic);
    row.cells.seq.textContent = msg.state;
    return;
  }
  const row = rowFor(msg.topic);
  for (const field of COLUMNS) {
    if (field in msg.fields) setCell(row.cells[field], msg.fields[field]);
  }
  row.cells.seq.textContent = msg.seq;
}

const state = document.getElementById('state');
const stream = new TickwireStream({
  onState: (s, text) => {
    state.textContent = text ? `${s}: ${text}` : s;
    state.classList.toggle('error', s === 'error');
  },
});
stream.subscribe(pattern, show, { conflateMs: 250 });
