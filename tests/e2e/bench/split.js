// Where a UI step's wall time goes (not a test): the render bench's 200 nodes and 2,000
// allocations, N steps (default 60), each split at points the page can see:
// - core: the click handler, which runs the reducer, i.e. the simulator's step and the view
//   model build in the core (Yew dispatches synchronously, then renders in a microtask);
// - yew: from there to the first microtask queued after the click, which runs after Yew's
//   render (its scheduler is one microtask; a render longer than ~16 ms yields and is counted
//   in `rest`);
// - rest: from there to the first task after the next animation frame (style, layout, paint).
// Run from tests/e2e with BASE_URL set: `node bench/split.js [steps]`. Prints medians as JSON.
const { launch, openPage } = require('../helpers');
const { openBigScenario } = require('./big-scenario');

(async () => {
  const steps = Number(process.argv[2] || 60);
  const browser = await launch();
  const { page } = await openPage(browser, '/', { viewport: { width: 1440, height: 900 } });
  await openBigScenario(page);
  if (process.env.STYLE) await page.addStyleTag({ content: process.env.STYLE });
  const rows = await page.evaluate(async (steps) => {
    const button = document.querySelector('[data-testid="step"]');
    const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve(performance.now())));
    const task = () => new Promise((resolve) => setTimeout(resolve, 0));
    const rows = [];
    for (let i = 0; i < steps; i++) {
      const t0 = performance.now();
      button.click();
      const t1 = performance.now();
      await Promise.resolve();
      const t2 = performance.now();
      const t3 = await frame();
      await task();
      const t4 = performance.now();
      rows.push({ core: t1 - t0, yew: t2 - t1, toFrame: t3 - t2, afterFrame: t4 - t3, total: t4 - t0 });
      await task();
    }
    return rows;
  }, steps);
  await browser.close();
  const median = (key) => {
    const v = rows.map((r) => r[key]).sort((a, b) => a - b);
    return Math.round(v[Math.floor(v.length / 2)] * 10) / 10;
  };
  const out = {};
  for (const key of Object.keys(rows[0])) out[key] = median(key);
  console.log(JSON.stringify({ steps, medianMs: out }));
})();
