// Where a UI step's time goes (not a test): the render bench's 200 nodes and 2,000 allocations,
// 30 steps under a Chromium trace (CDP), then the renderer main thread's time per step by kind:
// script (with the wasm inside it), style, layout, paint, compositing and GC. Times are thread
// (CPU) times, which other processes on the machine disturb far less than wall-clock times, as
// means and as the spread over the steps (`cpuMsOfOneStep`: quartiles, median, p90 of each step's
// own time); the layout and style work is also given as counts of objects (independent of load).
// Run from tests/e2e with BASE_URL set, as for the tests: `node bench/profile.js [steps]`. Prints
// JSON.
// Experiments without a rebuild: HIDE=".trace,.sequence" takes panels out of layout and paint, to
// see what each costs there; STYLE="css" adds a style sheet.
const { launch, openPage } = require('../helpers');
const { openBigScenario } = require('./big-scenario');

const KINDS = {
  script: ['FunctionCall', 'EvaluateScript', 'v8.run', 'TimerFire', 'FireAnimationFrame', 'EventDispatch',
    'RunMicrotasks', 'v8.callFunction', 'V8.Execute', 'RunTask'],
  style: ['UpdateLayoutTree', 'RecalculateStyles', 'ScheduleStyleRecalculation', 'ParseAuthorStyleSheet'],
  layout: ['Layout', 'UpdateLayerTree', 'UpdateLayer', 'IntersectionObserverController::computeIntersections'],
  paint: ['Paint', 'PaintImage', 'PrePaint', 'PaintSetup', 'Layerize', 'RasterTask', 'Decode Image'],
  composite: ['CompositeLayers', 'Commit', 'ProxyMain::BeginMainFrame::commit', 'UpdateLayers'],
  gc: ['MinorGC', 'MajorGC', 'V8.GCScavenger', 'V8.GCFinalizeMC', 'BlinkGC.AtomicPhase', 'V8.GC_MC_BACKGROUND_MARKING'],
};

function kindOf(name) {
  for (const [kind, names] of Object.entries(KINDS)) if (names.includes(name)) return kind;
  return null;
}

(async () => {
  const steps = Number(process.argv[2] || 30);
  const browser = await launch();
  const { page } = await openPage(browser, '/', { viewport: { width: 1440, height: 900 } });
  await openBigScenario(page);
  if (process.env.HIDE) await page.addStyleTag({ content: `${process.env.HIDE} { display: none !important; }` });
  if (process.env.STYLE) await page.addStyleTag({ content: process.env.STYLE });
  await browser.startTracing(page, {
    categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'blink.user_timing', 'v8'],
  });
  const times = await page.evaluate(async (steps) => {
    const button = document.querySelector('[data-testid="step"]');
    const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve(performance.now())));
    const task = () => new Promise((resolve) => setTimeout(resolve, 0));
    const times = [];
    for (let i = 0; i < steps; i++) {
      performance.mark(`step-${i}`);
      const start = performance.now();
      button.click();
      times.push((await frame()) - start);
      await task();
      await task();
    }
    return times;
  }, steps);
  const buffer = await browser.stopTracing();
  await browser.close();
  const { traceEvents } = JSON.parse(buffer.toString());
  // The renderer's main thread.
  const main = traceEvents.find((e) => e.name === 'thread_name' && e.args.name === 'CrRendererMain');
  const events = traceEvents
    .filter((e) => main && e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && e.dur !== undefined)
    .map((e) => ({ ...e, cpu: e.tdur ?? e.dur }));
  const counts = { layoutDirtyObjects: 0, styleElements: 0 };
  for (const e of events) {
    if (e.name === 'Layout' && e.args.beginData) counts.layoutDirtyObjects += e.args.beginData.dirtyObjects / steps;
    if (e.name === 'UpdateLayoutTree' && e.args.elementCount !== undefined) counts.styleElements += e.args.elementCount / steps;
  }
  events.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  // Self time per event name, then per kind (a kind's time is the self time of its events and
  // of the unnamed events under them).
  const selfByName = new Map();
  const byKind = {};
  const stack = [];
  for (const e of events) {
    while (stack.length && stack[stack.length - 1].end <= e.ts) stack.pop();
    const parent = stack[stack.length - 1];
    if (parent) parent.self -= e.cpu;
    const kind = kindOf(e.name) || (parent ? parent.kind : 'other');
    const node = { name: e.name, end: e.ts + e.dur, self: e.cpu, kind };
    stack.push(node);
    e.node = node;
  }
  // Each step's own time (from its mark to the next), by kind: on a loaded machine a few steps
  // take far longer, which moves the mean; the median and the quartiles of the steps move less.
  const marks = traceEvents.filter((e) => /^step-\d+$/.test(e.name) && e.ph !== 'X')
    .map((e) => e.ts).sort((a, b) => a - b);
  const stepKinds = marks.map(() => ({}));
  for (const e of events) {
    const { name, self, kind } = e.node;
    selfByName.set(name, (selfByName.get(name) || 0) + self);
    byKind[kind] = (byKind[kind] || 0) + self;
    let at = marks.length - 1;
    while (at >= 0 && marks[at] > e.ts) at -= 1;
    if (at >= 0) stepKinds[at][kind] = (stepKinds[at][kind] || 0) + self;
  }
  const spread = (kind) => {
    const v = stepKinds.map((k) => (kind ? k[kind] || 0 : Object.values(k).reduce((a, b) => a + b, 0)) / 1000)
      .sort((a, b) => a - b);
    const at = (q) => Math.round(v[Math.min(v.length - 1, Math.floor(v.length * q))] * 100) / 100;
    return { p25: at(0.25), median: at(0.5), p75: at(0.75), p90: at(0.9) };
  };
  const perStep = (us) => Math.round(us / steps / 10) / 100;
  const kinds = Object.fromEntries(Object.entries(byKind).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, perStep(v)]));
  const top = [...selfByName.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([n, v]) => [n, perStep(v)]);
  times.sort((a, b) => a - b);
  const total = perStep(Object.values(byKind).reduce((a, b) => a + b, 0));
  console.log(JSON.stringify({
    steps, stepMedianMs: times[Math.floor(steps / 2)], cpuMsPerStep: total, cpuMsPerStepByKind: kinds,
    cpuMsOfOneStep: Object.fromEntries(['', ...Object.keys(kinds)].map((k) => [k || 'all', spread(k)])),
    perStep: { layoutDirtyObjects: Math.round(counts.layoutDirtyObjects), styleElements: Math.round(counts.styleElements) },
    cpuMsPerStepByEvent: top,
  }, null, 2));
})();
