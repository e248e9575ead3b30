// The queues page: guaranteed messaging's durable queues, from
// /api/v1/queues (admins), refreshed every two seconds: what each attracts,
// its depth, consumers, the oldest unacknowledged message's age, and its
// counts (docs/guaranteed.md).
import { formatBytes, formatDuration, formatNumber, tablePage } from '/console/common.js';

const age = (q) => (q.oldest_unacked_ns ? formatDuration(Math.max(0, Date.now() - q.oldest_unacked_ns / 1e6)) : '—');
const columns = [
  ['Queue', (q) => q.name],
  ['Subscriptions', (q) => (q.subscriptions || []).join(' ')],
  ['Depth', (q) => formatNumber(q.depth)],
  ['Consumers', (q) => formatNumber(q.consumers)],
  ['Oldest unacked', age],
  ['On disk', (q) => formatBytes(q.bytes)],
  ['Enqueued', (q) => formatNumber(q.enqueued)],
  ['Delivered', (q) => `${formatNumber(q.delivered)} (${formatNumber(q.redelivered)} again)`],
  ['Acknowledged', (q) => formatNumber(q.acknowledged)],
  ['Refused full', (q) => formatNumber(q.refused_full)],
];

export function queues(view) {
  let store = '';
  return tablePage(view, {
    id: 'queues', title: 'Queues', path: '/api/v1/queues', columns,
    rows: (answer) => {
      store = (answer && answer.store) || '';
      return store && Array.isArray(answer.queues) ? answer.queues : [];
    },
    summary: (rows) => (store ? `${rows.length} on ${store}` : 'no store (store.dir in the configuration)'),
  });
}
