// Where a UI step's script time goes (not a test): the render bench's 200 nodes and 2,000
// allocations, N steps (default 30) under V8's sampling CPU profiler, then the self time per
// function and the inclusive time of the functions named in INCLUSIVE (comma-separated
// substrings). Wasm functions are named only in a dist built without wasm-opt
// (`WASM_OPT=0 cargo xtask dist`). Run from tests/e2e with BASE_URL set: `node bench/cpu.js
// [steps]`. Prints JSON (ms per step; samples, so shares matter more than the ms). A sample
// counts for the time to the next one, at most MAX_SAMPLE_US (250 µs: the profiler samples every
// 100 µs): on a loaded machine the sampling thread waits its turn, and one sample then took
// several ms for whatever function it caught (a `memcmp` read as ~1 ms per step that way).
const { launch, openPage } = require('../helpers');
const { openBigScenario } = require('./big-scenario');

const MAX_SAMPLE_US = 250;

(async () => {
  const steps = Number(process.argv[2] || 30);
  const browser = await launch();
  const { page } = await openPage(browser, '/', { viewport: { width: 1440, height: 900 } });
  await openBigScenario(page);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
  await cdp.send('Profiler.start');
  await page.evaluate(async (steps) => {
    const button = document.querySelector('[data-testid="step"]');
    const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
    const task = () => new Promise((resolve) => setTimeout(resolve, 0));
    for (let i = 0; i < steps; i++) {
      button.click();
      await frame();
      await task();
      await task();
    }
  }, steps);
  const { profile } = await cdp.send('Profiler.stop');
  await browser.close();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
  const self = new Map();
  const inclusive = new Map();
  const wanted = (process.env.INCLUSIVE || '').split(',').filter(Boolean);
  const dt = profile.timeDeltas;
  const name = (n) => n.callFrame.functionName || `(${n.callFrame.url.split('/').pop() || 'anonymous'})`;
  profile.samples.forEach((id, i) => {
    const ms = Math.min(dt[i + 1] ?? 0, MAX_SAMPLE_US) / 1000;
    const n = byId.get(id);
    self.set(name(n), (self.get(name(n)) || 0) + ms);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const fn = name(byId.get(at));
      if (!seen.has(fn) && wanted.some((w) => fn.includes(w))) { seen.add(fn); inclusive.set(fn, (inclusive.get(fn) || 0) + ms); }
    }
  });
  const top = (map, n) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([k, v]) => [k.slice(0, 140), Math.round((v / steps) * 100) / 100]);
  console.log(JSON.stringify({ steps, selfMsPerStep: top(self, 40), inclusiveMsPerStep: top(inclusive, 60) }, null, 1));
})();
