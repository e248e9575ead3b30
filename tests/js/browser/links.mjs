// The console's links page (issue 31, item 6): an edge broker linked to a
// core lists its link, up, with the core's address, and nothing goes wrong
// in the console.
// Usage: node links.mjs --base URL --link NAME --upstream HOST:PORT --screenshot FILE
import { args, run, waitInPage, watchedPage } from './browser.mjs';

const { base, link, upstream, screenshot } = args();

await run(async (browser, check) => {
  const { page, errors } = await watchedPage(browser);
  await page.goto(`${base}/console/#/links`, { waitUntil: 'load' });
  const row = await waitInPage(page, (name) => {
    const tr = [...document.querySelectorAll('#links tbody tr')].find((r) => r.cells[0].textContent === name);
    return tr ? [...tr.cells].map((c) => c.textContent) : null;
  }, 6000, link);
  check(row !== null, `the links table lists ${link} (${row})`);
  const heads = await page.$$eval('#links th', (ths) => ths.map((th) => th.textContent));
  const cell = (name) => (row ? row[heads.indexOf(name)] : undefined);
  check(cell('Up') === 'yes', `the link is up (${cell('Up')})`);
  check(cell('Upstream') === upstream, `its upstream is ${upstream} (${cell('Upstream')})`);
  const active = await page.$eval('nav a.active', (a) => a.dataset.view);
  check(active === 'links', `the Links tab is the active one (${active})`);
  await page.screenshot({ path: screenshot });
  check(errors.length === 0, `no console errors (${errors.join('; ')})`);
});
