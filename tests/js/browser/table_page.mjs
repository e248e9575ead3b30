// A console page that is one table (web/console/common.js, tablePage): the
// page lists a row whose first cell is ROW, with the cells EXPECT names,
// its tab is the active one, and nothing goes wrong in the console.
// Issue 31, item 6: the links page; issue 30, item 6: the HA page.
// Usage: node table_page.mjs --base URL --page NAME --row FIRST_CELL --expect 'Column=text;Column=text' --screenshot FILE
import { args, run, waitInPage, watchedPage } from './browser.mjs';

const { base, page: name, row: first, expect, screenshot } = args();
const expected = expect.split(';').map((pair) => pair.split('='));

await run(async (browser, check) => {
  const { page, errors } = await watchedPage(browser);
  await page.goto(`${base}/console/#/${name}`, { waitUntil: 'load' });
  // The row as it is, once every expected cell holds (a member acknowledges only after its first term's grace).
  const rowNow = ([id, cell, want]) => {
    const table = document.querySelector(`#${id} table`);
    const tr = table && [...table.querySelectorAll('tbody tr')].find((r) => r.cells[0].textContent === cell);
    if (!tr) return null;
    const heads = [...table.querySelectorAll('th')].map((th) => th.textContent);
    const cells = [...tr.cells].map((c) => c.textContent);
    return want.every(([column, text]) => cells[heads.indexOf(column)] === text) ? cells : null;
  };
  const row = await waitInPage(page, rowNow, 15000, [name, first, expected])
    || await page.evaluate(rowNow, [name, first, []]);
  check(row !== null, `the ${name} table lists ${first} (${row})`);
  const heads = await page.$$eval(`#${name} th`, (ths) => ths.map((th) => th.textContent));
  for (const [column, text] of expected) {
    const got = row ? row[heads.indexOf(column)] : undefined;
    check(got === text, `${column} is ${text} (${got})`);
  }
  const active = await page.$eval('nav a.active', (a) => a.dataset.view);
  check(active === name, `the ${name} tab is the active one (${active})`);
  await page.screenshot({ path: screenshot });
  check(errors.length === 0, `no console errors (${errors.join('; ')})`);
});
