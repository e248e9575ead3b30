// The connections page: every client connection, whatever its protocol,
// from /api/v1/connections, refreshed every two seconds.
import { el, every, getJson, renderTable, rowsOf } from '/console/common.js';

export function connections(view) {
  const count = el('span', { class: 'tw-state' });
  const table = el('div', { id: 'connections' });
  view.append(el('div', { class: 'toolbar' }, el('h2', { text: 'Connections' }), count), table);
  return every(2000, async () => {
    const rows = rowsOf(await getJson('/api/v1/connections'), 'connections');
    count.textContent = `${rows.length} open`;
    renderTable(table, rows);
  });
}
