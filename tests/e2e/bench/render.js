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
  // Two end points per step, both at the start of an animation frame (before its style, layout
  // and paint). `stepRender`: the first frame after the click (the original measure). Yew's
  // scheduler yields to the browser every ~16 ms, and it may do so between a parent's render and
  // its children's, so a long render can still be running at that frame. `stepComplete`: the
  // first frame after the last DOM change of the step (a MutationObserver counts changes; a frame
  // is the last one when two tasks queued after it, behind any continuation Yew queued, saw no
  // change). Equal when the render fits in one task. Both end before that frame's style, layout
  // and paint: `stepPainted` ends at the first task after the last frame, which runs once the
  // frame's style, layout and paint are done on the main thread (raster and compositing run on
  // other threads): from the click to the DOM updated and painted.
  const { times, complete, painted } = await page.evaluate(async () => {
    const button = document.querySelector('[data-testid="step"]');
    let mutations = 0;
    const observer = new MutationObserver(() => { mutations += 1; });
    observer.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve({ at: performance.now(), seen: mutations })));
    const task = () => new Promise((resolve) => setTimeout(resolve, 0));
    const times = [];
    const complete = [];
    const painted = [];
    for (let i = 0; i < 100; i++) {
      const start = performance.now();
      button.click();
      let last = await frame();
      times.push(last.at - start);
      let after;
      for (;;) {
        // (The first task queued from a frame's callbacks runs after that frame is painted.)
        await task();
        after = performance.now();
        await task();
        if (mutations === last.seen) break;
        last = await frame();
      }
      complete.push(last.at - start);
      painted.push(after - start);
    }
    observer.disconnect();
    return { times, complete, painted };
  });
  times.sort((a, b) => a - b);
  complete.sort((a, b) => a - b);
  painted.sort((a, b) => a - b);
  const allocBlocks = await page.locator('[data-testid^="alloc-"]').count();
  console.log(JSON.stringify({
    nodes: 200, allocBlocks, stepRenderMedianMs: times[50], stepRenderP90Ms: times[90],
    stepCompleteMedianMs: complete[50], stepCompleteP90Ms: complete[90],
    stepPaintedMedianMs: painted[50], stepPaintedP90Ms: painted[90],
    firstScreenInteractiveMs: interactive, navigation: load, openScenarioMs: openMs,
  }, null, 2));
  await browser.close();
})();
