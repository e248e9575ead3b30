// What the console's views share: elements, the status line, JSON requests
// and the generic table of an API answer.

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

export function setStatus(text, error = false) {
  const status = document.getElementById('status');
  status.textContent = text;
  status.classList.toggle('error', error);
}

export async function getJson(path) {
  const response = await fetch(path, { headers: { Accept: 'application/json' } });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}

// The rows of an API answer: the array itself, or the array under `key`.
export function rowsOf(answer, key) {
  if (Array.isArray(answer)) return answer;
  if (answer && Array.isArray(answer[key])) return answer[key];
  return [];
}

// Calls `load` now and every `ms` until the returned stop function is called;
// a failure shows in the status line and the next round tries again.
export function every(ms, load) {
  let stopped = false;
  let timer = 0;
  const round = async () => {
    try {
      await load();
      if (!stopped) setStatus('');
    } catch (e) {
      if (!stopped) setStatus(String(e.message || e), true);
    }
    if (!stopped) timer = setTimeout(round, ms);
  };
  round();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

export function formatNumber(v) {
  if (typeof v !== 'number') return v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  return v.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

// 1536 -> "1.5 KiB": traffic in a column that stays narrow.
export function formatBytes(n) {
  if (typeof n !== 'number') return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i += 1;
  }
  return i === 0 ? `${n} B` : `${n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

// 5120 -> "5 s", 3725000 -> "1 h 2 min": how long, to the unit that matters.
export function formatDuration(ms) {
  if (typeof ms !== 'number') return '';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

// A table of `rows` with the given columns (default: every scalar key of
// the rows, in first-seen order); `cell(row, column, td)` may fill a cell
// itself and return true.
export function renderTable(container, rows, { columns = null, cell = () => false } = {}) {
  const cols = columns || [...new Set(rows.flatMap((r) => Object.keys(r).filter((k) => typeof r[k] !== 'object' || r[k] === null)))];
  if (rows.length === 0) {
    container.replaceChildren(el('div', { class: 'empty', text: 'none' }));
    return;
  }
  const head = el('tr', {}, ...cols.map((c) => el('th', { text: c })));
  const body = el('tbody');
  for (const row of rows) {
    const tr = el('tr');
    for (const c of cols) {
      const td = el('td');
      if (!cell(row, c, td)) td.textContent = formatNumber(row[c]);
      tr.append(td);
    }
    body.append(tr);
  }
  container.replaceChildren(el('table', {}, el('thead', {}, head), body));
}

// A page that is one table of an API answer, refreshed every two seconds:
// `columns` are [name, (row) => text] pairs, `rows(answer)` the answer's
// rows, `summary(rows)` the line beside the title.
export function tablePage(view, { id, title, path, rows, columns, summary }) {
  const count = el('span', { class: 'tw-state' });
  const table = el('div', { id });
  view.append(el('div', { class: 'toolbar' }, el('h2', { text: title }), count), table);
  const text = new Map(columns);
  return every(2000, async () => {
    const list = rows(await getJson(path));
    count.textContent = summary(list);
    renderTable(table, list, {
      columns: columns.map(([name]) => name),
      cell: (row, column, td) => {
        td.textContent = text.get(column)(row);
        return true;
      },
    });
  });
}
