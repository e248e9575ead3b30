// The links page: this broker's links to upstream brokers ([[link]]), from
// /api/v1/links (admins), refreshed every two seconds: whether each is up,
// its upstream, the interest it passes up, what it brought in, its gaps and
// reconnects (docs/operations.md, "A two-tier deployment").
import { el, every, formatNumber, getJson, renderTable, rowsOf } from '/console/common.js';

const columns = [
  ['Link', (l) => l.name],
  ['Up', (l) => (l.connected ? 'yes' : 'no')],
  ['Upstream', (l) => l.upstream || '—'],
  ['Patterns', (l) => formatNumber(l.patterns)],
  ['Channels', (l) => formatNumber(l.channels)],
  ['Messages in', (l) => formatNumber((l.images || 0) + (l.updates || 0))],
  ['Published up', (l) => formatNumber(l.published_upstream)],
  ['Gaps', (l) => formatNumber(l.gaps)],
  ['Connects', (l) => `${formatNumber(l.connects)} (${formatNumber(l.failed_connects)} failed)`],
];

export function links(view) {
  const count = el('span', { class: 'tw-state' });
  const table = el('div', { id: 'links' });
  view.append(el('div', { class: 'toolbar' }, el('h2', { text: 'Links' }), count), table);
  return every(2000, async () => {
    const rows = rowsOf(await getJson('/api/v1/links'), 'links');
    const up = rows.filter((l) => l.connected).length;
    count.textContent = rows.length ? `${up} of ${rows.length} up` : 'no links ([[link]] in the configuration)';
    renderTable(table, rows, {
      columns: columns.map(([name]) => name),
      cell: (row, column, td) => {
        td.textContent = columns.find(([name]) => name === column)[1](row);
        return true;
      },
    });
  });
}
