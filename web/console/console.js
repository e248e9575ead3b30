// The console's router: one page, a view per hash route, each view a module
// that renders into <main> and returns a function that stops its live
// updates when another view replaces it.
//   #/                  overview: live charts from /api/v1/events
//   #/channels          the channels table, searchable (/api/v1/channels?prefix=)
//   #/channel/TOPIC     one channel's live image, a field grid that flashes changes (/stream)
//   #/connections       the connections table (/api/v1/connections)
//   #/connection/ID     one connection's subscriptions (/api/v1/connections/ID/subscriptions)
//   #/queues            guaranteed messaging's durable queues (/api/v1/queues)
//   #/links             the broker's links to upstream brokers (/api/v1/links)
//   #/ha                the broker as a member of an HA pair (/api/v1/ha)
import { overview } from '/console/overview.js';
import { channels } from '/console/channels.js';
import { channel } from '/console/channel.js';
import { connections } from '/console/connections.js';
import { connection } from '/console/connection.js';
import { queues } from '/console/queues.js';
import { links } from '/console/links.js';
import { ha } from '/console/ha.js';
import { setStatus } from '/console/common.js';

const view = document.getElementById('view');
let stop = () => {};

// [route, nav tab, view]: a route ending in '/' takes the rest of the hash as the view's argument.
const routes = [
  ['/channel/', 'channels', channel],
  ['/channels', 'channels', channels],
  ['/connection/', 'connections', connection],
  ['/connections', 'connections', connections],
  ['/queues', 'queues', queues],
  ['/links', 'links', links],
  ['/ha', 'ha', ha],
];

function route() {
  stop();
  view.replaceChildren();
  setStatus('');
  const hash = location.hash.replace(/^#/, '') || '/';
  const match = routes.find(([path]) => (path.endsWith('/') ? hash.startsWith(path) : hash === path));
  const [path, name, show] = match || ['/', 'overview', overview];
  stop = path.endsWith('/') && match ? show(view, decodeURIComponent(hash.slice(path.length))) : show(view);
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.view === name);
}

window.addEventListener('hashchange', route);
route();
