// The overview: the broker's totals as tiles and its rates as live charts
// (uPlot, vendored under /vendor/uplot), one point per second from the
// server-sent events of /api/v1/events (docs/operations.md), the last five
// minutes kept. Each chart's element carries its latest values in
// data-last, for people and tests alike.
import { el, formatNumber, setStatus } from '/console/common.js';

const POINTS = 300;
const COLORS = ['#5fb3f9', '#f0a35e', '#7fd17f', '#d883e0', '#e0d36b', '#6be0d3'];

const CHARTS = [
  { id: 'msgs', title: 'Messages per second', series: [['in', (e) => e.msgs_in_per_s], ['out', (e) => e.msgs_out_per_s]] },
  { id: 'bytes', title: 'Bytes per second', series: [['in', (e) => e.bytes_in_per_s], ['out', (e) => e.bytes_out_per_s]] },
  { id: 'connections', title: 'Connections', series: [['open', (e) => e.connections]] },
  { id: 'slow', title: 'Slow consumers', series: [['now', (e) => e.slow_consumers]] },
  // One series per loop thread, named when the first event says which loops there are.
  { id: 'busy', title: 'Loop busy (%)', loops: true, series: [] },
];

const TILES = [
  ['uptime', (e) => `${Math.floor(e.uptime_s)} s`],
  ['connections', (e) => e.connections],
  ['channels', (e) => e.channels],
  ['subscriptions', (e) => e.subscriptions],
  ['messages in', (e) => e.msgs_in],
  ['messages out', (e) => e.msgs_out],
  ['slow-consumer closes', (e) => e.slow_consumer_disconnects],
  ['dropped', (e) => e.dropped_messages],
];

function makeChart(spec, container) {
  const box = el('div', { class: 'chart', id: `chart-${spec.id}`, 'data-last': '' }, el('h3', { text: spec.title }));
  container.append(box);
  const opts = {
    width: Math.max(container.clientWidth / 2 - 24, 420),
    height: 170,
    series: [{}, ...spec.series.map(([label], i) => ({ label, stroke: COLORS[i % COLORS.length], width: 1.5 }))],
    axes: [{ stroke: '#8893a3', grid: { stroke: '#2a3442' } },
           { stroke: '#8893a3', grid: { stroke: '#2a3442' }, size: 70 }],
    // From zero, and at least 0..1: a flat zero line stays at the bottom instead of mid-chart.
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(1, max * 1.1)] } },
    legend: { live: false },
  };
  const data = [[], ...spec.series.map(() => [])];
  return { spec, box, data, plot: new uPlot(opts, data, box) };
}

export function overview(view) {
  const tiles = el('div', { class: 'tiles', id: 'tiles' });
  const charts = el('div', { class: 'charts', id: 'charts' });
  view.append(el('h2', { text: 'Overview' }), tiles, charts);
  const tileValues = TILES.map(([label]) => {
    const value = el('div', { class: 'value', text: '–' });
    tiles.append(el('div', { class: 'tile' }, value, el('div', { class: 'label', text: label })));
    return value;
  });
  let built = null;

  const build = (event) => {
    const loops = event.loops || [];
    return CHARTS.map((spec) => {
      const s = spec.loops
        ? { ...spec, series: loops.map((loop, i) => [loop.name || `loop ${i}`, (e) => 100 * ((e.loops || [])[i]?.busy ?? 0)]) }
        : spec;
      return makeChart(s, charts);
    });
  };

  const add = (event) => {
    TILES.forEach(([, value], i) => { tileValues[i].textContent = formatNumber(value(event)); });
    if (!built) built = build(event);
    const t = (event.time_ms ?? Date.now()) / 1000;
    for (const chart of built) {
      chart.data[0].push(t);
      const last = chart.spec.series.map(([, value], i) => {
        const v = Number(value(event)) || 0;
        chart.data[i + 1].push(v);
        return v;
      });
      if (chart.data[0].length > POINTS) for (const column of chart.data) column.shift();
      chart.plot.setData(chart.data);
      chart.box.dataset.last = last.join(' ');
      chart.box.dataset.points = String(chart.data[0].length);
    }
  };

  const events = new EventSource('/api/v1/events');
  events.onmessage = (message) => {
    setStatus('');
    add(JSON.parse(message.data));
  };
  events.onerror = () => setStatus('events: reconnecting', true);
  return () => events.close();
}
