// UI benchmark (not a test): at 200 nodes and 2,000 allocations, how long one step takes to
// render in headless Chromium (median of 100 steps, Performance API), and how soon the first
// screen is interactive. Run with `cargo xtask bench-ui`; prints a JSON summary.
const { launch, openPage } = require('../helpers');

const { bigScenario } = require('./big-scenario');

(async () => {
  const browser = await launch();
  const { page } = await openPage(browser, '/', { viewport: { width: 1440, height: 900 } });
  const load = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    return { domContentLoaded: nav.domContentLoadedEventEnd, loadEvent: nav.loadEventEnd };
  });
  await page.getByTestId('lessons').waitFor();
  const interactive = await page.evaluate(() => performance.now());
  await page.getByTestId('scenario-input').fill(JSON.stringify(bigScenario(200, 2000)));
  const openStart = Date.now();
  await page.getByTestId('scenario-open').click();
  await page.getByTestId('cluster').waitFor();
  const openMs = Date.now() - openStart;
  // The first step places the allocations; measure the next 100.
  await page.getByTestId('step').click();
  await page.getByTestId('step-counter').filter({ hasText: /^step 1\// }).waitFor();
  const times = await page.evaluate(async () => {
    const button = document.querySelector('[data-testid="step"]');
    const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
    const out = [];
    for (let i = 0; i < 100; i++) {
      const start = performance.now();
      button.click();
      await frame();
      out.push(performance.now() - start);
    }
    return out;
  });
  times.sort((a, b) => a - b);
  const allocBlocks = await page.locator('[data-testid^="alloc-"]').count();
  console.log(JSON.stringify({
    nodes: 200, allocBlocks, stepRenderMedianMs: times[50], stepRenderP90Ms: times[90],
    firstScreenInteractiveMs: interactive, navigation: load, openScenarioMs: openMs,
  }, null, 2));
  await browser.close();
})();
