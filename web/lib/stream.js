// The browser side of the broker's JSON stream, /stream (docs/stream.md),
// shared by the web console and examples/web. One WebSocket per page;
// subscriptions are kept here and made again after a reconnect, so a page
// survives a broker restart. Messages are routed to every subscription
// whose pattern matches their topic ('*' one level, '>' the rest).
//
//   const stream = new TickwireStream({ onState: (state, text) => ... });
//   stream.subscribe('DEMO/EQ/>', (msg) => ..., { conflateMs: 250 });
//   msg: {type: 'image'|'update'|'status', topic, channel, seq, fields: {BID: '189.25', ...}}

export function streamUrl(path = '/stream') {
  return (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + path;
}

// Whether a native pattern covers a topic (docs/protocol.md, "Topics").
export function matches(pattern, topic) {
  const p = pattern.split('/');
  const t = topic.split('/');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return t.length > i;
    if (i >= t.length || (p[i] !== '*' && p[i] !== t[i])) return false;
  }
  return p.length === t.length;
}

export class TickwireStream {
  // onState(state, text): 'connecting', 'open', 'closed' (reconnecting), 'error' (a refusal, with its text).
  constructor({ url = streamUrl(), onState = () => {}, login = null } = {}) {
    this.url = url;
    this.onState = onState;
    this.login = login;  // {user, password}: sent first, when the page has credentials of its own
    this.subs = new Map();  // pattern -> {onMessage, options}
    this.nextId = 1;
    this.retryMs = 500;
    this.stopped = false;
    this.refused = null;  // the broker's reason, when it closed the stream over a request it will not take
    this.connect();
  }

  subscribe(pattern, onMessage, { conflateMs = 0, policy } = {}) {
    this.subs.set(pattern, { onMessage, options: { conflateMs, policy } });
    this.sendSubscribe(pattern);
  }

  unsubscribe(pattern) {
    if (!this.subs.delete(pattern)) return;
    this.send({ op: 'unsubscribe', id: this.nextId++, topic: pattern });
  }

  close() {
    this.stopped = true;
    if (this.ws) this.ws.close(1000);
  }

  connect() {
    this.onState('connecting');
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.onopen = () => {
      this.retryMs = 500;
      this.onState('open');
      if (this.login) this.send({ op: 'login', id: this.nextId++, ...this.login });
      for (const pattern of this.subs.keys()) this.sendSubscribe(pattern);
    };
    ws.onmessage = (event) => this.dispatch(JSON.parse(event.data));
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.stopped) return;
      if (this.refused) {  // asking again would be refused again: the page must change first
        this.onState('error', this.refused);
        return;
      }
      this.onState('closed');
      setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 10000);
    };
  }

  sendSubscribe(pattern) {
    const { options } = this.subs.get(pattern);
    const request = { op: 'subscribe', id: this.nextId++, topic: pattern };
    if (options.conflateMs) request.conflate_ms = options.conflateMs;
    if (options.policy) request.policy = options.policy;
    this.send(request);
  }

  send(request) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(request));
  }

  dispatch(msg) {
    if (msg.type === 'ack') {
      if (msg.code !== 'OK') this.onState('error', `${msg.op} ${msg.topic || ''}: ${msg.code} ${msg.text || ''}`);
      return;
    }
    if (msg.type === 'error') {
      // A slow consumer, an idle timeout or a shutdown may go better next time; a refused request will not.
      if (!['SLOW_CONSUMER', 'IDLE_TIMEOUT', 'SERVER_SHUTDOWN'].includes(msg.code)) this.refused = `${msg.code}: ${msg.text}`;
      this.onState('error', `${msg.code}: ${msg.text}`);
      return;
    }
    for (const [pattern, sub] of this.subs) {
      if (matches(pattern, msg.topic)) sub.onMessage(msg);
    }
  }
}

// Sets a cell's text; a changed value flashes (up green, down red, else
// neutral), so the eye catches what moved, as market-data monitors do.
export function setCell(cell, value) {
  const text = value === undefined || value === null ? '' : String(value);
  const old = cell.textContent;
  if (old === text) return false;
  cell.textContent = text;
  if (old === '') return true;
  const a = Number(old), b = Number(text);
  const cls = Number.isFinite(a) && Number.isFinite(b) ? (b > a ? 'tw-up' : b < a ? 'tw-down' : 'tw-changed') : 'tw-changed';
  cell.classList.remove('tw-up', 'tw-down', 'tw-changed');
  void cell.offsetWidth;  // restarts the animation when the same class comes again
  cell.classList.add(cls);
  return true;
}
