// The channels page: the broker's channels from /api/v1/channels?prefix=,
// refreshed every two seconds. The search box filters: its text up to the
// last '/' goes to the broker as the prefix, the whole text then matches
// anywhere in the topic. A topic links to its channel page.
import { el, every, getJson, renderTable, rowsOf } from '/console/common.js';

export function channels(view) {
  const search = el('input', { type: 'search', placeholder: 'search topics, e.g. DEMO/EQ/AA', id: 'channel-search' });
  search.value = sessionStorage.getItem('tw-channel-search') || '';
  const count = el('span', { class: 'tw-state' });
  const table = el('div', { id: 'channels' });
  view.append(el('div', { class: 'toolbar' }, el('h2', { text: 'Channels' }), search, count), table);

  let rows = [];
  const show = () => {
    const text = search.value.trim().toUpperCase();
    const shown = rows.filter((r) => String(r.topic || '').toUpperCase().includes(text));
    count.textContent = `${shown.length} of ${rows.length}`;
    renderTable(table, shown, {
      cell: (row, column, td) => {
        if (column !== 'topic') return false;
        td.append(el('a', { href: '#/channel/' + encodeURIComponent(row.topic), text: row.topic }));
        return true;
      },
    });
  };
  search.addEventListener('input', () => {
    sessionStorage.setItem('tw-channel-search', search.value);
    show();
  });
  return every(2000, async () => {
    const text = search.value.trim();
    const prefix = text.includes('/') ? text.slice(0, text.lastIndexOf('/') + 1) : '';
    rows = rowsOf(await getJson('/api/v1/channels?prefix=' + encodeURIComponent(prefix)), 'channels');
    show();
  });
}
