// A channel page: the channel's live image as a field grid, one cell per
// field, a changed field flashing (up green, down red), fed in real time by
// /stream; above it the broker's view of the channel from /api/v1/channels.
// One sequence line: the stream's, which is the seq of the image and update
// the grid shows; the listing's (polled every 2 s) would lag it and disagree,
// so its line leaves seq and state out. A topic the broker has no channel
// for says so at the first listing instead of waiting for an image for ever;
// the page stays subscribed and shows the channel once something publishes it.
import { TickwireStream, setCell } from '/lib/stream.js';
import { el, every, formatNumber, getJson, rowsOf, setStatus } from '/console/common.js';

export function channel(view, topic) {
  const meta = el('div', { class: 'meta', id: 'channel-meta' });
  const stateLine = el('div', { class: 'meta' }, 'seq ', el('span', { id: 'channel-seq' }), ' · state ',
                       el('span', { id: 'channel-state', text: 'waiting for the image' }));
  const grid = el('div', { class: 'grid', id: 'field-grid' });
  view.append(el('h2', {}, el('a', { href: '#/channels', text: 'Channels' }), ' / ', topic), meta, stateLine, grid);

  const cells = new Map();  // field name -> value cell
  const valueCell = (name) => {
    let cell = cells.get(name);
    if (!cell) {
      cell = el('span', { class: 'value', 'data-field': name });
      grid.append(el('div', { class: 'field' }, el('span', { class: 'name', text: name }), cell));
      cells.set(name, cell);
    }
    return cell;
  };
  let seen = false;  // an image or update came: the channel is there
  const show = (msg) => {
    if (msg.topic !== topic) return;
    seen = true;
    if (msg.type === 'status') {
      document.getElementById('channel-state').textContent = `${msg.state} ${msg.code} ${msg.text}`;
      return;
    }
    document.getElementById('channel-seq').textContent = msg.seq;
    document.getElementById('channel-state').textContent = 'OK';
    for (const [name, value] of Object.entries(msg.fields || { data: msg.data ?? msg.hex })) {
      setCell(valueCell(name), value);
    }
  };
  const stream = new TickwireStream({
    onState: (s, text) => setStatus(s === 'open' ? '' : text ? `stream ${s}: ${text}` : `stream ${s}`, s === 'error'),
  });
  stream.subscribe(topic, show);

  const stopMeta = every(2000, async () => {
    const rows = rowsOf(await getJson('/api/v1/channels?prefix=' + encodeURIComponent(topic)), 'channels');
    const row = rows.find((r) => r.topic === topic);
    meta.textContent = row
      ? Object.entries(row).filter(([k, v]) => !['topic', 'seq', 'state'].includes(k) && v !== '' && typeof v !== 'object').map(([k, v]) => `${k} ${formatNumber(v)}`).join(' · ')
      : '';
    if (!row && !seen) {
      document.getElementById('channel-state').textContent =
        `not found: the broker has no channel ${topic} (nothing has published it, and no provider serves it); ` +
        'this page shows it as soon as something does';
    }
  });
  return () => {
    stopMeta();
    stream.close();
  };
}
