// MQTT.js (npm `mqtt`, pinned in package-lock.json) against tickwired, for
// tests/integration/it25_mqttjs_test.cc. Each mode prints "ok MODE" and
// exits 0 when the broker behaved, or "FAIL why" and exits 1; every wait is
// bounded, and the whole run ends after 60 s whatever happens (a safety net for a loaded machine, never a performance bound). The same modes
// run over TCP and over WebSocket: the broker's URL says which.
//
//   node interop.mjs MODE URL
//   URL          mqtt://127.0.0.1:PORT (the MQTT listener) or ws://127.0.0.1:PORT/mqtt (the HTTP listener)
//   subscribe    subscribes it25/eq/#, prints "ready", then the first message as JSON
//   publish      publishes "from mqtt.js" to it25/mq/x at QoS 1
//   retained     a retained publish is the retained message, a RETAIN 0 one does not replace it;
//                an empty retained publish clears it
//   redeliver    a QoS 1 message left unacknowledged comes again (DUP) after an abrupt
//                disconnect and a reconnect of the persistent session; the Will is published
//   shared       $share/g/it25/s/#: 20 channels spread over two members, each to exactly one
//   aliases      the publisher's topic aliases are resolved; the broker assigns its own
//   refused      a filter the broker cannot express gets SUBACK 0x8F (MQTT 5) and 0x80 (3.1.1)
//   nolocal      a subscription with No Local does not return the client's own publishes
//   rap          Retain As Published: live messages keep the RETAIN flag they were published with;
//                without it they come with RETAIN 0
import mqtt from 'mqtt';

const [mode, url] = process.argv.slice(2);
const WAIT_MS = 15000;

// A safety net for a lost message, never a performance bound: generous for
// ThreadSanitizer on loaded cores.
setTimeout(() => fail('timed out'), 60000);

function fail(why) {
  console.log('FAIL ' + why);
  process.exit(1);
}

function connect(options = {}) {
  return mqtt.connectAsync(url, { protocolVersion: 5, reconnectPeriod: 0, connectTimeout: WAIT_MS, ...options });
}

// The next message that satisfies `accept`, as [topic, payload string, packet].
function nextMessage(client, accept = () => true) {
  return new Promise((resolve) => {
    const on = (topic, payload, packet) => {
      if (!accept(topic, payload, packet)) return;
      client.off('message', on);
      resolve([topic, payload.toString(), packet]);
    };
    client.on('message', on);
  });
}

async function subscribe() {
  const c = await connect({ clientId: 'it25-sub' });
  const message = nextMessage(c);
  await c.subscribeAsync('it25/eq/#');
  console.log('ready');
  const [topic, payload, packet] = await message;
  console.log(JSON.stringify({ topic, payload, retain: packet.retain }));
  await c.endAsync();
}

async function publish() {
  const c = await connect({ clientId: 'it25-pub' });
  await c.publishAsync('it25/mq/x', 'from mqtt.js', { qos: 1 });
  await c.endAsync();
}

async function retained() {
  const pub = await connect();
  await pub.publishAsync('it25/r/x', 'v1', { qos: 1, retain: true });
  const first = await connect();
  const image = nextMessage(first);
  await first.subscribeAsync('it25/r/#');
  const [topic, payload, packet] = await image;
  if (topic !== 'it25/r/x' || payload !== 'v1' || !packet.retain) fail(`retained: ${topic} ${payload} ${packet.retain}`);
  // first's copy of each message says the broker applied it before the next
  // subscriber asks: a tiered broker's PUBACK does not.
  const published = async (payload, retain) => {
    const seen = nextMessage(first);
    await pub.publishAsync('it25/r/x', payload, { qos: 1, retain });
    await seen;
  };
  await published('v2', false);  // RETAIN 0: v1 stays the retained message
  const middle = await connect();
  const kept = nextMessage(middle);
  await middle.subscribeAsync('it25/r/#');
  const [, keptPayload, keptPacket] = await kept;
  if (keptPayload !== 'v1' || !keptPacket.retain) fail(`after RETAIN 0: ${keptPayload} ${keptPacket.retain}`);
  await middle.endAsync();
  await published('', true);
  const second = await connect();
  const after = nextMessage(second);
  await second.subscribeAsync(['it25/r/#', 'it25/fence']);
  await pub.publishAsync('it25/fence', 'f', { qos: 1 });
  const [fenceTopic] = await after;  // nothing retained is left: the fence comes first
  if (fenceTopic !== 'it25/fence') fail('cleared retained message still sent: ' + fenceTopic);
  await Promise.all([pub.endAsync(), first.endAsync(), second.endAsync()]);
}

async function redeliver() {
  const persistent = { clientId: 'it25-redeliver', clean: false, properties: { sessionExpiryInterval: 60 } };
  const watcher = await connect();
  await watcher.subscribeAsync('it25/will/#');
  const will = nextMessage(watcher);
  const first = await connect({ ...persistent, will: { topic: 'it25/will/a', payload: 'gone', qos: 0 } });
  first.handleMessage = () => {};  // never calls back: no PUBACK
  const unacked = nextMessage(first);
  await first.subscribeAsync('it25/q/#', { qos: 1 });
  const pub = await connect();
  await pub.publishAsync('it25/q/x', 'm1', { qos: 1 });
  const [, payload, packet] = await unacked;
  if (payload !== 'm1' || packet.qos !== 1 || packet.dup) fail(`first delivery: ${payload} qos ${packet.qos}`);
  first.stream.destroy();  // abrupt: no DISCONNECT
  const [willTopic, willPayload] = await will;
  if (willTopic !== 'it25/will/a' || willPayload !== 'gone') fail(`will: ${willTopic} ${willPayload}`);
  // Listening before the connection is made (on the next tick): the resent message follows the CONNACK.
  const again = mqtt.connect(url, { protocolVersion: 5, reconnectPeriod: 0, ...persistent });
  const resent = nextMessage(again, (t, p, pk) => pk.dup);
  const connack = await new Promise((resolve) => again.once('connect', resolve));
  if (!connack.sessionPresent) fail('session not present');
  const [topic, repayload, repacket] = await resent;
  if (topic !== 'it25/q/x' || repayload !== 'm1' || repacket.messageId !== packet.messageId) {
    fail(`redelivery: ${topic} ${repayload} id ${repacket.messageId} (was ${packet.messageId})`);
  }
  await Promise.all([again.endAsync(), pub.endAsync(), watcher.endAsync()]);
}

async function shared() {
  const members = [await connect(), await connect()];
  const seen = members.map(() => new Map());
  let total = 0;
  const all = new Promise((resolve) => {
    members.forEach((m, i) => m.on('message', (topic, payload) => {
      if (payload.toString() === 'fence') return;
      seen[i].set(topic, (seen[i].get(topic) ?? 0) + 1);
      if (++total === 20) resolve();
    }));
  });
  for (const m of members) await m.subscribeAsync('$share/g/it25/s/#', { qos: 1 });
  const pub = await connect();
  for (let i = 0; i < 20; ++i) await pub.publishAsync(`it25/s/${i}`, 'x', { qos: 1 });
  await all;
  // Listening before publishing: the member may get the fence before the publisher gets its PUBACK.
  const fence = new Promise((resolve) => members.forEach((m) => m.on('message', (t, p) => p.toString() === 'fence' && resolve())));
  await pub.publishAsync('it25/s/0', 'fence', { qos: 1 });  // a duplicate would have come before it
  await fence;
  for (let i = 0; i < 20; ++i) {
    const topic = `it25/s/${i}`;
    const count = (seen[0].get(topic) ?? 0) + (seen[1].get(topic) ?? 0);
    if (count !== 1) fail(`${topic} reached the group ${count} times`);
  }
  if (seen[0].size === 0 || seen[1].size === 0) fail(`unbalanced: ${seen[0].size} and ${seen[1].size}`);
  console.log(`members got ${seen[0].size} and ${seen[1].size}`);
  await Promise.all([...members.map((m) => m.endAsync()), pub.endAsync()]);
}

async function aliases() {
  const sub = await connect({ properties: { topicAliasMaximum: 10 } });
  const raw = [];
  sub.on('packetreceive', (p) => p.cmd === 'publish' && raw.push({ topic: p.topic, alias: p.properties?.topicAlias }));
  const got = [];
  const three = new Promise((resolve) => sub.on('message', (t, p) => got.push(`${t} ${p}`) === 3 && resolve()));
  await sub.subscribeAsync('it25/alias/#');
  const pub = await connect({ autoAssignTopicAlias: true });
  const sentAliases = [];
  pub.on('packetsend', (p) => p.cmd === 'publish' && sentAliases.push(`${p.topic}|${p.properties?.topicAlias}`));
  for (const m of ['a', 'b', 'c']) await pub.publishAsync('it25/alias/x', m, { qos: 1 });
  await three;
  if (got.join(',') !== 'it25/alias/x a,it25/alias/x b,it25/alias/x c') fail('messages: ' + got.join(','));
  if (!sentAliases.includes('|1')) fail('MQTT.js did not use its alias: ' + sentAliases.join(','));
  // The broker's own alias: set with the topic, then used alone.
  if (raw[0].alias !== 1 || raw[0].topic !== 'it25/alias/x' || raw[1].alias !== 1 || raw[1].topic !== '') {
    fail('broker aliases: ' + JSON.stringify(raw));
  }
  await Promise.all([sub.endAsync(), pub.endAsync()]);
}

async function refused() {
  for (const protocolVersion of [5, 4]) {
    const c = await connect({ protocolVersion });
    // MQTT.js 5 rejects a subscription with any refused filter; the SUBACK comes with the error.
    const granted = await c.subscribeAsync({ 'it25/a*b': { qos: 0 }, 'it25/ok': { qos: 1 } }).catch((e) => e.packet?.granted ?? fail(String(e)));
    const codes = granted.map((g) => (typeof g === 'number' ? g : g.qos)).join(',');
    const expected = protocolVersion === 5 ? '143,1' : '128,1';
    if (codes !== expected) fail(`SUBACK codes ${codes}, expected ${expected}`);
    await c.endAsync();
  }
}

// The messages a client gets until `last` (a payload) arrives, as "topic payload retain" strings.
function collectUntil(client, last) {
  const got = [];
  return new Promise((resolve) => client.on('message', (topic, payload, packet) => {
    got.push(`${topic} ${payload} ${packet.retain}`);
    if (payload.toString() === last) resolve(got);
  }));
}

// Subscribes each [client, options] to `filter`: once the SUBACKs are in, the broker holds them
// (docs/mqtt.md), in every thread configuration.
async function subscribeEach(filter, subscribers) {
  for (const [client, options] of subscribers) await client.subscribeAsync(filter, options);
}

async function nolocal() {
  const self = await connect();
  const watcher = await connect();
  await subscribeEach('it25/nl/#', [[self, { qos: 1, nl: true }], [watcher, { qos: 0 }]]);
  const seenBySelf = collectUntil(self, 'fence');
  const seenByWatcher = collectUntil(watcher, 'mine');
  await self.publishAsync('it25/nl/x', 'mine', { qos: 1 });
  await seenByWatcher;
  // Published after 'mine' went through the channel: 'mine' would reach self before it.
  await watcher.publishAsync('it25/nl/x', 'fence', { qos: 1 });
  const got = await seenBySelf;
  if (got.join(',') !== 'it25/nl/x fence false') fail('No Local: ' + got.join(','));
  await Promise.all([self.endAsync(), watcher.endAsync()]);
}

async function rap() {
  const keeps = await connect();
  const plain = await connect();
  await subscribeEach('it25/rap/#', [[keeps, { qos: 1, rap: true }], [plain, { qos: 0 }]]);
  const kept = collectUntil(keeps, 'end');
  const cleared = collectUntil(plain, 'end');
  const pub = await connect();
  // The first creates the channel; the second and third follow it.
  await pub.publishAsync('it25/rap/x', 'first', { qos: 1, retain: true });
  await pub.publishAsync('it25/rap/x', 'again', { qos: 1, retain: true });
  await pub.publishAsync('it25/rap/x', 'end', { qos: 1, retain: false });
  const [k, c] = await Promise.all([kept, cleared]);
  if (k.join(',') !== 'it25/rap/x first true,it25/rap/x again true,it25/rap/x end false') fail('RAP 1: ' + k.join(','));
  if (c.join(',') !== 'it25/rap/x first false,it25/rap/x again false,it25/rap/x end false') fail('RAP 0: ' + c.join(','));
  await Promise.all([keeps.endAsync(), plain.endAsync(), pub.endAsync()]);
}

const modes = { subscribe, publish, retained, redeliver, shared, aliases, refused, nolocal, rap };
if (!modes[mode]) fail('unknown mode ' + mode);
modes[mode]().then(() => {
  console.log('ok ' + mode);
  process.exit(0);
}, (e) => fail(e.stack ?? String(e)));
