// examples/web (issue 14, acceptance 3): the page the broker serves shows the
// demo feed's prices as a live table, the prices change, and nothing goes
// wrong in the console. Usage: node examples_web.mjs --url URL --screenshot FILE
import { args, run, waitInPage, watchedPage } from './browser.mjs';

const { url, screenshot } = args();

await run(async (browser, check) => {
  const { page, errors } = await watchedPage(browser);
  // What arrives on the page's /stream, seen from the browser's side (DevTools protocol).
  const received = [];
  const cdp = await page.createCDPSession();
  await cdp.send('Network.enable');
  cdp.on('Network.webSocketFrameReceived', ({ timestamp, response }) => {
    if (response.opcode === 1) received.push({ at: timestamp, msg: JSON.parse(response.payloadData) });
  });
  await page.goto(url, { waitUntil: 'load' });
  const rows = await waitInPage(page, () => {
    const n = document.querySelectorAll('#prices tbody tr').length;
    return n >= 5 ? n : 0;
  }, 5000);
  check(rows !== null, `the table fills with the feed's symbols (${rows} rows)`);
  const before = await page.$$eval('#prices tbody td[data-field=BID]', (cells) => cells.map((c) => c.textContent));
  check(before.some((t) => /^\d+(\.\d+)?$/.test(t)), `bids are prices (${before.slice(0, 3).join(', ')})`);
  const changed = await waitInPage(page, (old) => {
    const now = [...document.querySelectorAll('#prices tbody td[data-field=BID]')].map((c) => c.textContent);
    return now.filter((t, i) => old[i] !== undefined && t !== old[i]).length;
  }, 5000, before);
  check(changed !== null, `prices change while the page is open (${changed} bids moved)`);
  const flashing = await page.$$eval('#prices .tw-up, #prices .tw-down, #prices .tw-changed', (c) => c.length);
  check(flashing > 0, `changed cells flash (${flashing})`);
  // The page asked for 250 ms: each symbol gets merged refreshes (images), never the feed's every update.
  const prices = received.filter((r) => r.msg.type === 'image' || r.msg.type === 'update');
  const updates = prices.filter((r) => r.msg.type === 'update').length;
  const span = prices.length ? prices[prices.length - 1].at - prices[0].at : 0;
  const perTopic = {};
  for (const r of prices) perTopic[r.msg.topic] = (perTopic[r.msg.topic] || 0) + 1;
  const most = Math.max(0, ...Object.values(perTopic));
  check(updates === 0 && most <= 2 + span / 0.25,
        `conflated at 250 ms: ${prices.length} messages over ${span.toFixed(2)} s, at most ${most} for a symbol, ${updates} raw updates`);
  const state = await page.$eval('#state', (e) => e.textContent);
  check(state === 'open', `the stream is open (${state})`);
  await page.screenshot({ path: screenshot });
  check(errors.length === 0, `no console errors${errors.length ? ': ' + errors.join('; ') : ''}`);
});
