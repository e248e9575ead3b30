// The HA page: this broker as a member of an HA pair ([ha]), from
// /api/v1/ha, refreshed every two seconds: its role and epoch, whether it
// serves clients and acknowledges guaranteed publishes, and which member is
// the primary (docs/operations.md, "High availability").
import { tablePage } from '/console/common.js';

const yes = (v) => (v ? 'yes' : 'no');
const columns = [
  ['Member', (h) => h.name],
  ['Role', (h) => h.role],
  ['Epoch', (h) => String(h.epoch)],
  ['Serving', (h) => yes(h.serving)],
  ['Acknowledging', (h) => yes(h.acknowledging)],
  ['Primary', (h) => h.leader || '(none)'],
  ['Lease', (h) => `${h.ttl_s} s`],
  ['etcd', (h) => (h.etcd || []).join(', ')],
];

export function ha(view) {
  return tablePage(view, {
    id: 'ha', title: 'High availability', path: '/api/v1/ha', columns,
    rows: (answer) => (answer && answer.enabled ? [answer] : []),
    summary: (rows) => (rows.length ? `${rows[0].role}, epoch ${rows[0].epoch}`
                                     : 'not a member of an HA pair ([ha] in the configuration)'),
  });
}
