// One connection's page (#/connection/ID): its line of the connections
// table, and its subscriptions from /api/v1/connections/ID/subscriptions,
// each pattern with its slow-consumer policy, conflation and delay,
// refreshed every two seconds. A connection that closed says so.
import { el, every, formatDuration, getJson, renderTable, rowsOf } from '/console/common.js';

const conflation = (ms) => (ms ? `every ${ms} ms` : 'real time');
const delay = (ms) => (ms ? `${formatDuration(ms)} behind` : 'live');

export function connection(view, id) {
  const meta = el('div', { class: 'meta', id: 'connection-meta' });
  const table = el('div', { id: 'subscriptions' });
  view.append(el('h2', {}, el('a', { href: '#/connections', text: 'Connections' }), ' / ', id), meta,
              el('h3', { text: 'Subscriptions' }), table);
  return every(2000, async () => {
    const response = await fetch('/api/v1/connections/' + encodeURIComponent(id) + '/subscriptions',
                                 { headers: { Accept: 'application/json' } });
    if (response.status === 404) {
      meta.textContent = `No connection ${id}: it has closed (or is not one you may see).`;
      table.replaceChildren();
      return;
    }
    if (!response.ok) throw new Error(`subscriptions of ${id}: HTTP ${response.status}`);
    const rows = rowsOf(await response.json(), 'subscriptions');
    const all = rowsOf(await getJson('/api/v1/connections').catch(() => []), 'connections');
    const c = all.find((r) => r.id === id);
    meta.textContent = c ? `${c.client || '(before HELLO)'} · ${c.user || 'no user'} · ${c.peer} · ${c.protocol}/${c.transport} · connected ${formatDuration(c.connected_ms)}` : '';
    renderTable(table, rows.map((s) => ({
      Pattern: s.pattern, 'Slow-consumer policy': s.policy, Conflation: conflation(s.conflate_ms), Delay: delay(s.delay_ms),
    })));
  });
}
