// jspurefix (npm, pinned by package-lock.json) as a FIX 4.4 client of
// tickwire-fix, for tests/fix/fix_gateway_test.cc. One scenario per run:
//
//   node client.js '{"mode":"orders","port":P,"sender":"CLIENT1","target":"GW","transcript":"FILE"}'
//   node client.js '{"mode":"restart",...,"store":"DIR"}'
//
// It checks what comes back itself, writes every application message it sent
// or received to the transcript (one JSON object a line: dir, type, tags),
// for the test to compare with the drop copies, and ends printing
// "ok MODE" (exit 0) or "FAIL MODE: why" (exit 1). Every wait is bounded (20 s).
// "restart" prints "kill-gateway" when the test should kill -9 the gateway
// and start it again; the session comes back by itself (a resilient
// initiator) and the run goes on.
'use strict'
require('reflect-metadata')
const fs = require('fs')
const { AsciiSession, SessionLauncher, MsgType } = require('jspurefix')

const opts = JSON.parse(process.argv[2])
const transcript = fs.openSync(opts.transcript, 'w')
const WAIT_MS = 20000

function fail (why) {
  console.log(`FAIL ${opts.mode}: ${why}`)
  process.exit(1)
}

// The FIX tags of a received message, flat (tag -> string).
function tagsOf (view) {
  const out = {}
  for (const t of [11, 14, 17, 30, 37, 39, 41, 58, 103, 150, 151, 102, 434, 55, 38]) {
    const v = view.getString(t)
    if (v !== null && v !== undefined) out[t] = v
  }
  return out
}

function record (dir, type, tags) {
  fs.writeSync(transcript, JSON.stringify({ dir, type, tags }) + '\n')
}

class Client extends AsciiSession {
  constructor (config) {
    super(config)
    this.logReceivedMsgs = false
    this.received = []
    this.execIds = new Set()
    this.resentDuplicates = 0
    this.waiters = []
    this.readyCount = 0
    this.onReadyHook = null
  }

  onApplicationMsg (msgType, view) {
    const tags = tagsOf(view)
    // A report seen before is legal only as a resend (PossDupFlag 43 or
    // PossResend 97 = Y), which a FIX application recognises by its ExecID
    // and skips: after a restart, jspurefix's own store may ask for more
    // than it missed. Without the flag it would be a real duplicate.
    if (tags[17] !== undefined) {
      if (this.execIds.has(tags[17])) {
        const resent = view.getString(43) === 'Y' || view.getString(97) === 'Y'
        if (!resent) fail(`duplicate ExecID ${tags[17]} without PossDupFlag or PossResend`)
        this.resentDuplicates++
        return
      }
      this.execIds.add(tags[17])
    }
    record('in', msgType, tags)
    this.received.push({ type: msgType, tags })
    this.waiters = this.waiters.filter(w => !w())
  }

  onReady () {
    this.readyCount++
    if (this.onReadyHook) this.onReadyHook(this.readyCount)
  }

  onLogon () {
    return true
  }

  onStopped () {}
  onDecoded () {}
  onEncoded () {}

  sendApp (type, obj, tags) {
    record('out', type, tags)
    this.send(type, obj)
  }

  // Resolves once pred(received) holds; fails the run after WAIT_MS.
  until (what, pred) {
    return new Promise(resolve => {
      const check = () => {
        if (!pred(this.received)) return false
        clearTimeout(timer)
        resolve()
        return true
      }
      const timer = setTimeout(() => fail(`waited ${WAIT_MS} ms for ${what}`), WAIT_MS)
      if (!check()) this.waiters.push(check)
    })
  }
}

function order (id, symbol, dest, qty = 100) {
  const o = {
    ClOrdID: id,
    Instrument: { Symbol: symbol },
    Side: '1',
    TransactTime: new Date(),
    OrderQtyData: { OrderQty: qty },
    OrdType: '2',
    Price: 10.5
  }
  if (dest) o.ExDestination = dest
  return o
}

function reports (rx, id) {
  return rx.filter(m => m.type === '8' && m.tags[11] === id)
}

async function sendOrder (c, id, symbol, dest, qty) {
  c.sendApp(MsgType.NewOrderSingle, order(id, symbol, dest, qty), { 11: id, 55: symbol, 100: dest })
}

function expect (cond, why) {
  if (!cond) fail(why)
}

async function ordersScenario (c) {
  // Routed by ExDestination to the right exchange (LastMkt 30 = the
  // simulator's CompID), New then Fill back.
  await sendOrder(c, 'A1', 'AAPL', 'XNAS')
  await sendOrder(c, 'A2', 'VOD', 'XLON')
  await c.until('A1 and A2 filled', rx => reports(rx, 'A1').length === 2 && reports(rx, 'A2').length === 2)
  expect(reports(c.received, 'A1').every(m => m.tags[30] === 'XNAS'), 'A1 not from XNAS')
  expect(reports(c.received, 'A2').every(m => m.tags[30] === 'XLON'), 'A2 not from XLON')
  expect(reports(c.received, 'A1')[1].tags[39] === '2', 'A1 not filled')
  // Cancel.
  await sendOrder(c, 'A3', 'REST1', 'XNAS')
  await c.until('A3 new', rx => reports(rx, 'A3').length === 1)
  c.sendApp(MsgType.OrderCancelRequest, {
    OrigClOrdID: 'A3', ClOrdID: 'A4', Instrument: { Symbol: 'REST1' }, Side: '1', TransactTime: new Date(), ExDestination: 'XNAS'
  }, { 11: 'A4', 41: 'A3' })
  await c.until('A4 canceled', rx => reports(rx, 'A4').length === 1)
  expect(reports(c.received, 'A4')[0].tags[39] === '4' && reports(c.received, 'A4')[0].tags[41] === 'A3', 'A4 not a cancel of A3')
  // Cancel/replace, then cancel of the replacement.
  await sendOrder(c, 'A5', 'REST2', 'XNAS')
  await c.until('A5 new', rx => reports(rx, 'A5').length === 1)
  c.sendApp(MsgType.OrderCancelReplaceRequest, {
    OrigClOrdID: 'A5', ClOrdID: 'A6', Instrument: { Symbol: 'REST2' }, Side: '1', TransactTime: new Date(),
    OrderQtyData: { OrderQty: 200 }, OrdType: '2', Price: 11
  }, { 11: 'A6', 41: 'A5' })
  await c.until('A6 replaced', rx => reports(rx, 'A6').length === 1)
  const replaced = reports(c.received, 'A6')[0].tags
  expect(replaced[150] === '5' && replaced[41] === 'A5' && replaced[38] === '200', 'A6 not a replace of A5 to 200: ' + JSON.stringify(replaced))
  c.sendApp(MsgType.OrderCancelRequest, {
    OrigClOrdID: 'A6', ClOrdID: 'A7', Instrument: { Symbol: 'REST2' }, Side: '1', TransactTime: new Date()
  }, { 11: 'A7', 41: 'A6' })
  await c.until('A7 canceled', rx => reports(rx, 'A7').length === 1)
  expect(reports(c.received, 'A7')[0].tags[39] === '4', 'A7 not canceled')
  // Refused by the gateway, with the reason.
  await sendOrder(c, 'A8', 'AAPL', 'NOWHERE')
  await sendOrder(c, 'A9', 'AAPL', 'XDOWN')
  await sendOrder(c, 'A10', 'REJECTME', 'XNAS')
  await c.until('A8, A9, A10 rejected', rx => [8, 9, 10].every(n => reports(rx, 'A' + n).length === 1))
  const text = n => reports(c.received, 'A' + n)[0].tags[58] || ''
  expect(reports(c.received, 'A8')[0].tags[39] === '8' && text(8).includes('unknown destination'), 'A8: ' + text(8))
  expect(reports(c.received, 'A9')[0].tags[39] === '8' && text(9).includes('exchange session down'), 'A9: ' + text(9))
  expect(reports(c.received, 'A10')[0].tags[39] === '8' && text(10).includes('simulated reject'), 'A10: ' + text(10))
  c.sendApp(MsgType.OrderCancelRequest, {
    OrigClOrdID: 'NOPE', ClOrdID: 'A11', Instrument: { Symbol: 'AAPL' }, Side: '1', TransactTime: new Date()
  }, { 11: 'A11', 41: 'NOPE' })
  await c.until('A11 cancel rejected', rx => rx.some(m => m.type === '9' && m.tags[11] === 'A11'))
}

async function restartScenario (c) {
  // SLOW orders: New at once, the fill 1.5 s later, by when the gateway is
  // dead: the simulator stores the fills, the restarted gateway's logon
  // finds the gap, resend requests fill it, and the fills reach this client
  // through a second gap (its session was down too).
  const ids = ['S1', 'S2', 'S3', 'S4', 'S5']
  for (const id of ids) await sendOrder(c, id, 'SLOW' + id, 'XNAS')
  await c.until('S1..S5 new', rx => ids.every(id => reports(rx, id).length === 1))
  console.log('kill-gateway')
  await c.until('S1..S5 filled after the restart', rx => ids.every(id => reports(rx, id).length === 2))
  expect(c.readyCount >= 2, 'the session was not re-established')
  for (const id of ['T1', 'T2', 'T3']) await sendOrder(c, id, 'AAPL', 'XNAS')
  await c.until('T1..T3 filled', rx => ['T1', 'T2', 'T3'].every(id => reports(rx, id).length === 2))
  // Nothing lost or duplicated: 16 reports, each ExecID once (resent
  // copies, flagged, were skipped above), each order New then Fill.
  const execIds = c.received.filter(m => m.type === '8').map(m => m.tags[17])
  expect(execIds.length === 16, `expected 16 reports, got ${execIds.length}`)
  for (const id of [...ids, 'T1', 'T2', 'T3']) {
    const statuses = reports(c.received, id).map(m => m.tags[39]).join('')
    expect(statuses === '02', `${id}: OrdStatus sequence ${statuses}, expected 0 then 2`)
  }
  console.log(`resent duplicates skipped: ${c.resentDuplicates}`)
}

const scenarios = { orders: ordersScenario, restart: restartScenario }

const description = {
  application: {
    type: 'initiator',
    name: 'jspurefix-client',
    resilient: opts.mode === 'restart',
    reconnectSeconds: 1,
    recoveryAttemptSeconds: 1,
    backoffFailConnectSeconds: 1,
    connectTimeoutSeconds: 20,
    tcp: { host: '127.0.0.1', port: opts.port },
    protocol: 'ascii',
    dictionary: 'data/FIX44.xml'
  },
  EncryptMethod: 0,
  ResetSeqNumFlag: !opts.store,
  HeartBtInt: 30,
  SenderCompId: opts.sender,
  TargetCompID: opts.target,
  BeginString: 'FIX.4.4'
}
if (opts.store) description.store = { type: 'file', directory: opts.store }

class Launcher extends SessionLauncher {
  constructor () {
    super(description, null, quietLogs())
  }

  makeFactory () {
    return {
      makeSession: config => {
        const c = new Client(config)
        let started = false
        c.onReadyHook = () => {
          if (started) return
          started = true
          clearTimeout(logonTimer)
          scenarios[opts.mode](c).then(() => {
            console.log(`ok ${opts.mode}`)
            c.done()
            setTimeout(() => process.exit(0), 200)
          }).catch(e => fail(e.stack || String(e)))
        }
        return c
      }
    }
  }
}

function quietLogs () {
  const { JsFixWinstonLogFactory, WinstonLogger } = require('jspurefix')
  return new JsFixWinstonLogFactory(WinstonLogger.consoleOptions(process.env.JSFIX_LOG || 'error'))
}

if (!scenarios[opts.mode]) fail('unknown mode')
const logonTimer = setTimeout(() => fail('no logon within 20 s'), WAIT_MS)
new Launcher().run().catch(e => fail(e.stack || String(e)))
