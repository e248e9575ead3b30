// The web console (issue 15, acceptance 2): the overview's charts change
// while a publisher runs, a channel page shows a field change within 1 s
// of its publish, the channels and connections pages list what the broker
// has, and nothing goes wrong in the console. Issue 29, item 9: the
// connections page names its columns for people, fits 1280 pixels and links
// each connection to its subscriptions; a channel page has one sequence line
// and says at once that a missing topic is missing.
// Usage: node console.mjs --base URL --tickwire PATH --server HOST:PORT --topic TOPIC --screenshots PREFIX
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { args, run, waitInPage, watchedPage } from './browser.mjs';

const { base, tickwire, server, topic, screenshots } = args();
const publish = (fields) =>
  promisify(execFile)(tickwire, ['--server', server, 'pub', topic, ...fields.flatMap((f) => ['-f', f])]);

await run(async (browser, check) => {
  const { page, errors } = await watchedPage(browser);

  // Overview: one event a second; the publisher's rate shows as messages in.
  await page.goto(`${base}/console/`, { waitUntil: 'load' });
  const first = await waitInPage(page, () => {
    const c = document.querySelector('#chart-msgs');
    return c && Number(c.dataset.points) >= 2 && Number(c.dataset.last.split(' ')[0]) > 0 ? c.dataset.last : null;
  }, 6000);
  check(first !== null, `the messages chart shows the publisher's rate (in/out per s: ${first})`);
  const moved = await waitInPage(page, (old) => {
    const c = document.querySelector('#chart-msgs');
    return c.dataset.last !== old ? `${old} -> ${c.dataset.last} (${c.dataset.points} points)` : null;
  }, 4000, first);
  check(moved !== null, `the chart moves with the next events (${moved})`);
  const charts = await page.$$eval('.chart canvas', (c) => c.length);
  check(charts >= 5, `five charts are drawn (${charts})`);
  await page.screenshot({ path: `${screenshots}overview.png` });

  // Channels: the table lists the publisher's channel; the search narrows it.
  await page.goto(`${base}/console/#/channels`, { waitUntil: 'load' });
  const listed = await waitInPage(page, (t) => [...document.querySelectorAll('#channels a')].some((a) => a.textContent === t), 4000, topic);
  check(listed !== null, `the channels table lists ${topic}`);
  await page.type('#channel-search', topic);
  const narrowed = await page.$$eval('#channels tbody tr', (rows) => rows.length);
  check(narrowed === 1, `searching for the topic leaves one row (${narrowed})`);
  await page.screenshot({ path: `${screenshots}channels.png` });

  // Connections: at least the publisher and this page's own stream are there,
  // and a subscriber whose subscription the page links to.
  const subscriber = spawn(tickwire, ['--name', 'it26-subscriber', '--server', server, 'sub', topic, '--conflate', '250'],
                           { stdio: 'ignore' });
  await page.goto(`${base}/console/#/connections`, { waitUntil: 'load' });
  const rows = await waitInPage(page, () => document.querySelectorAll('#connections tbody tr').length || null, 4000);
  check(rows !== null, `the connections table lists connections (${rows})`);
  const link = await waitInPage(page, () => {
    const row = [...document.querySelectorAll('#connections tbody tr')].find((tr) => tr.cells[0].textContent === 'it26-subscriber');
    const a = row?.querySelector('a');
    return a && a.textContent === '1' ? a.getAttribute('href') : null;
  }, 6000);
  check(link !== null, `the subscriber's row links its one subscription (${link})`);
  const heads = await page.$$eval('#connections th', (ths) => ths.map((th) => th.textContent));
  check(heads.includes('Messages in') && heads.every((h) => /^[A-Z][a-z ]*$/.test(h)),
        `the columns are named for people, not the API's keys (${heads.join(', ')})`);
  const widths = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth, window: window.innerWidth,
    table: document.querySelector('#connections').scrollWidth, box: document.querySelector('#connections').clientWidth,
  }));
  check(widths.window === 1280 && widths.page <= widths.window && widths.table <= widths.box,
        `the table fits 1280 pixels without scrolling (${JSON.stringify(widths)})`);
  await page.screenshot({ path: `${screenshots}connections.png` });
  if (link !== null) await page.evaluate((href) => document.querySelector(`#connections a[href="${href}"]`).click(), link);
  const subscription = link === null ? null : await waitInPage(page, () => {
    const cells = [...document.querySelectorAll('#subscriptions tbody td')].map((td) => td.textContent);
    return cells.length ? cells.join(' | ') : null;
  }, 4000);
  check(subscription === `${topic} | conflate | every 250 ms | live`,
        `the connection's page lists its subscription (${subscription})`);
  await page.screenshot({ path: `${screenshots}connection.png` });
  subscriber.kill();

  // A channel page: the image as a field grid, then a published change within 1 s, flashing.
  await page.goto(`${base}/console/#/channel/${encodeURIComponent(topic)}`, { waitUntil: 'load' });
  const shown = await waitInPage(page, () => document.querySelector('#field-grid [data-field=BID]')?.textContent || null, 4000);
  check(shown !== null, `the channel page shows the image (BID ${shown})`);
  const next = (Number(shown) + 1.25).toFixed(2);
  const sent = Date.now();
  await publish([`BID=${next}`]);
  const seen = await waitInPage(page, (v) => document.querySelector('#field-grid [data-field=BID]').textContent === v, 1000, next);
  const ms = Date.now() - sent;
  check(seen !== null, `the field change shows within 1 s (BID ${next} after ${ms} ms)`);
  const flashed = await page.$eval('#field-grid [data-field=BID]', (c) => c.classList.contains('tw-up'));
  check(flashed, 'the changed field flashes (up)');
  const seqLines = await page.$eval('#view', (v) => (v.innerText.match(/\bseq\b/g) || []).length);
  check(seqLines === 1, `the channel page shows one sequence (${seqLines})`);
  await page.screenshot({ path: `${screenshots}channel.png` });

  // A topic the broker has no channel for: said at once, not waited for.
  await page.goto(`${base}/console/#/channel/${encodeURIComponent('IT26/NO_SUCH_TOPIC')}`, { waitUntil: 'load' });
  const missing = await waitInPage(page, () => {
    const text = document.querySelector('#channel-state')?.textContent || '';
    return text.startsWith('not found') ? text : null;
  }, 4000);
  check(missing !== null, `a missing topic's page says so (${missing})`);

  check(errors.length === 0, `no console errors${errors.length ? ': ' + errors.join('; ') : ''}`);
});
