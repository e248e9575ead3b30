// What every browser test shares: Debian's chromium, headless, driven by
// puppeteer-core; a page that records console errors and failed requests;
// a screenshot on the way out, pass or fail. A test script prints one line
// per check and exits 0 only when every check held (the GoogleTest side,
// tests/integration/it26_browser_test.cc, reads both).
import puppeteer from 'puppeteer-core';

export function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, '')] = argv[i + 1];
  return out;
}

export async function openBrowser() {
  return puppeteer.launch({
    executablePath: process.env.TW_CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--no-first-run', '--window-size=1280,900'],
    defaultViewport: { width: 1280, height: 900 },
  });
}

// A page whose console errors, uncaught exceptions and failed requests are collected in `errors`.
export async function watchedPage(browser) {
  const page = await browser.newPage();
  const errors = [];
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(`console: ${msg.text()}`); });
  page.on('pageerror', (err) => errors.push(`exception: ${err.message}`));
  page.on('requestfailed', (req) => {
    // A WebSocket or event stream the page closes itself while navigating is not a failure.
    if (req.failure()?.errorText !== 'net::ERR_ABORTED') errors.push(`request failed: ${req.url()} ${req.failure()?.errorText}`);
  });
  page.on('response', (res) => { if (res.status() >= 400) errors.push(`HTTP ${res.status()}: ${res.url()}`); });
  return { page, errors };
}

// Runs `body(check)`; check(ok, what) records one result. Exits 0 when all held.
export async function run(body) {
  const failures = [];
  const check = (ok, what) => {
    console.log(`${ok ? 'ok' : 'FAILED'}: ${what}`);
    if (!ok) failures.push(what);
  };
  const browser = await openBrowser();
  try {
    await body(browser, check);
  } catch (e) {
    check(false, `threw: ${e.stack || e}`);
  } finally {
    await browser.close();
  }
  console.log(failures.length === 0 ? 'browser test passed' : `browser test failed: ${failures.length} checks`);
  process.exit(failures.length === 0 ? 0 : 1);
}

// Polls `fn` in the page until it returns a truthy value or `ms` pass; returns the value (or null).
export async function waitInPage(page, fn, ms, ...fnArgs) {
  try {
    const handle = await page.waitForFunction(fn, { timeout: ms, polling: 50 }, ...fnArgs);
    return await handle.jsonValue();
  } catch {
    return null;
  }
}
