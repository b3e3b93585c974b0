// UI benchmark (not a test): how long opening a share link takes in headless Chromium, for the
// largest built-in scenario at its last step: decoding the link (base64url, inflate, scenario
// parse), replaying to the step and the first render, measured with the Performance API from the
// `hashchange` (a link pasted into the address bar of the open page) to the DOM showing the new
// step. Median of 20 opens, alternating two links so every open changes the screen; also the time
// from navigation start to the first render for a fresh page load with the link.
// Run: node tests/e2e/bench/share-link.js (BASE_URL as for the tests); prints a JSON summary.
const fs = require('node:fs');
const path = require('node:path');
const { launch, openPage, BASE_URL } = require('../helpers');

const SCENARIOS = path.resolve(__dirname, '..', '..', '..', 'scenarios');

function largestScenario() {
  return fs.readdirSync(SCENARIOS).filter((f) => f.endsWith('.json'))
    .map((f) => ({ id: f.replace(/\.json$/, ''), size: fs.statSync(path.join(SCENARIOS, f)).size }))
    .sort((a, b) => b.size - a.size)[0];
}

async function linkAt(page, step) {
  // Step there from the start (the reset button), then share.
  await page.getByTestId('reset').click();
  for (let i = 0; i < step; i++) await page.getByTestId('step').click();
  await page.getByTestId('step-counter').filter({ hasText: new RegExp(`^step ${step}/`) }).waitFor();
  await page.getByTestId('share').click();
  return new URL(await page.getByTestId('share-link').inputValue()).hash;
}

(async () => {
  const browser = await launch();
  const scenario = largestScenario();
  const { page, context } = await openPage(browser);
  await page.getByTestId(`lesson-${scenario.id}`).click();
  await page.getByTestId('cluster').waitFor();
  const total = Number((await page.getByTestId('step-counter').textContent()).match(/step \d+\/(\d+)/)[1]);
  const links = [await linkAt(page, total), await linkAt(page, total - 1)];
  const steps = [total, total - 1];
  const times = await page.evaluate(async ({ links, steps }) => {
    const counter = () => document.querySelector('[data-testid="step-counter"]');
    const out = [];
    for (let i = 0; i < 20; i++) {
      const want = `step ${steps[i % 2]}/`;
      const done = new Promise((resolve) => {
        const observer = new MutationObserver(() => {
          if (counter().textContent.startsWith(want)) {
            observer.disconnect();
            resolve(performance.now());
          }
        });
        observer.observe(document.body, { subtree: true, childList: true, characterData: true });
      });
      const start = performance.now();
      window.location.hash = links[i % 2];
      out.push((await done) - start);
      await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
    }
    return out;
  }, { links, steps });
  times.sort((a, b) => a - b);
  await context.close();

  // A fresh page load with the link: navigation start to the first render of the linked step.
  const fresh = [];
  for (let i = 0; i < 5; i++) {
    const opened = await openPage(browser, `/${links[0]}`);
    await opened.page.getByTestId('step-counter').filter({ hasText: new RegExp(`^step ${total}/`) }).waitFor();
    fresh.push(await opened.page.evaluate(() => performance.now()));
    await opened.context.close();
  }
  fresh.sort((a, b) => a - b);
  console.log(JSON.stringify({
    baseUrl: BASE_URL, scenario: scenario.id, scenarioBytes: scenario.size, step: total,
    linkChars: links[0].length - 1,
    openLinkMedianMs: times[10], openLinkP90Ms: times[18], openLinkMinMs: times[0],
    freshLoadToRenderMedianMs: fresh[2],
  }, null, 2));
  await browser.close();
})();
