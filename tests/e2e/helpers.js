// Shared Playwright helpers: launch Debian's Chromium (no browser download) and collect page errors.
const { chromium } = require('playwright-core');
const fs = require('node:fs');
const path = require('node:path');

const BASE_URL = process.env.BASE_URL || 'http://127.0.0.1:8080';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const SCREENSHOTS = path.join(__dirname, 'screenshots');

async function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// Opens a page that records console errors and uncaught exceptions in `errors`.
async function openPage(browser, urlPath = '/', options = {}) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, ...options });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(`console: ${msg.text()}`); });
  await page.goto(BASE_URL + urlPath);
  return { context, page, errors };
}

async function screenshot(page, name) {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

module.exports = { launch, openPage, screenshot, BASE_URL };
