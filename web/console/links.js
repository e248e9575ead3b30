// The links page: this broker's links to upstream brokers ([[link]]), from
// /api/v1/links (any user who may read the statistics), refreshed every two seconds: whether each is up,
// its upstream, the interest it passes up, what it brought in, its gaps and
// reconnects (docs/operations.md, "A two-tier deployment").
import { formatNumber, rowsOf, tablePage } from '/console/common.js';

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
  return tablePage(view, {
    id: 'links', title: 'Links', path: '/api/v1/links', columns,
    rows: (answer) => rowsOf(answer, 'links'),
    summary: (rows) => (rows.length ? `${rows.filter((l) => l.connected).length} of ${rows.length} up`
                                     : 'no links ([[link]] in the configuration)'),
  });
}
