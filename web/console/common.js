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
