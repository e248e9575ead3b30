// The connections page: every client connection, whatever its protocol,
// from /api/v1/connections, refreshed every two seconds. Columns have names
// a person reads (not the API's keys), traffic and ages are shortened so the
// table fits a 1280-pixel window, and each connection's subscription count
// links to its subscriptions (#/connection/ID).
import { el, every, formatBytes, formatDuration, formatNumber, getJson, renderTable, rowsOf } from '/console/common.js';

const columns = [
  ['Client', (c) => c.client || '(before HELLO)'],
  ['User', (c) => c.user || '—'],
  ['Peer', (c) => c.peer],
  ['Protocol', (c) => `${c.protocol}/${c.transport}`],
  ['Subscriptions', null],  // a link, below
  ['Messages in', (c) => formatNumber(c.msgs_in)],
  ['Bytes in', (c) => formatBytes(c.bytes_in)],
  ['Messages out', (c) => formatNumber(c.msgs_out)],
  ['Bytes out', (c) => formatBytes(c.bytes_out)],
  ['Queued', (c) => formatBytes(c.queued_bytes)],
  ['Slow', (c) => (c.slow ? `yes (${c.lagging_channels} lagging)` : 'no') + (c.dropped_messages ? `, ${formatNumber(c.dropped_messages)} dropped` : '')],
  ['Connected', (c) => formatDuration(c.connected_ms)],
];

export function connectionCells(row, column, td) {
  if (column === 'Subscriptions') {
    td.append(el('a', { href: '#/connection/' + encodeURIComponent(row.id), text: formatNumber(row.subscriptions),
                        title: 'this connection\'s subscriptions' }));
    return true;
  }
  td.textContent = columns.find(([name]) => name === column)[1](row);
  return true;
}

export function connections(view) {
  const count = el('span', { class: 'tw-state' });
  const table = el('div', { id: 'connections' });
  view.append(el('div', { class: 'toolbar' }, el('h2', { text: 'Connections' }), count), table);
  return every(2000, async () => {
    const rows = rowsOf(await getJson('/api/v1/connections'), 'connections');
    count.textContent = `${rows.length} open`;
    renderTable(table, rows, { columns: columns.map(([name]) => name), cell: connectionCells });
  });
}
