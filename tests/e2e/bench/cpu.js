// UI benchmark (not a test): main-thread CPU time per step by phase (JS, layout, paint), from a
// Chromium trace's thread times, which a loaded machine inflates far less than wall-clock times.
// Run against a served dist: BASE_URL=http://127.0.0.1:8091 node bench/cpu.js (ALL=1 lists every event).
const { launch, openPage } = require('../helpers');
const { bigScenario } = require('./big-scenario');
(async () => {
  const browser = await launch();
  const { page } = await openPage(browser, '/', { viewport: { width: 1440, height: 900 } });
  await page.getByTestId('lessons').waitFor();
  await page.getByTestId('scenario-input').fill(JSON.stringify(bigScenario(200, 2000)));
  await page.getByTestId('scenario-open').click();
  await page.getByTestId('cluster').waitFor();
  await page.getByTestId('step').click();
  await page.getByTestId('step-counter').filter({ hasText: /^step 1\// }).waitFor();
  // HIDE=".trace,.sequence" takes panels out of layout and paint, to see what each costs there.
  if (process.env.HIDE) await page.addStyleTag({ content: `${process.env.HIDE} { display: none !important; }` });
  // STYLE="css" tries a style change without a rebuild.
  if (process.env.STYLE) await page.addStyleTag({ content: process.env.STYLE });
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (d) => events.push(...d.value));
  const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,disabled-by-default-devtools.timeline,v8', transferMode: 'ReportEvents' });
  const N = +(process.env.STEPS || 30);
  await page.evaluate(async (N) => {
    const button = document.querySelector('[data-testid="step"]');
    const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
    for (let i = 0; i < N; i++) { button.click(); await frame(); }
    await frame(); await frame();
  }, N);
  await cdp.send('Tracing.end');
  await done;
  const main = events.find((e) => e.name === 'thread_name' && e.args.name === 'CrRendererMain');
  const sums = new Map();
  for (const e of events) {
    if (e.ph !== 'X' || e.tid !== main.tid || e.pid !== main.pid || e.tdur === undefined) continue;
    sums.set(e.name, (sums.get(e.name) || 0) + e.tdur);
  }
  const out = {};
  for (const n of ['RunTask', 'ThreadControllerImpl::RunTask', 'EventDispatch', 'FunctionCall', 'RunMicrotasks', 'v8.callFunction', 'FireAnimationFrame', 'UpdateLayoutTree', 'Layout', 'PrePaint', 'Paint', 'Layerize', 'UpdateLayer', 'CompositeLayers', 'MajorGC', 'MinorGC', 'V8.GC_SCAVENGER', 'BlinkGC.AtomicPhase']) {
    if (sums.has(n)) out[n] = +(sums.get(n) / 1000 / N).toFixed(2);
  }
  console.log(JSON.stringify(out));
  if (process.env.LAYOUT) {
    // What the layouts of a step touched: dirty and total layout objects, and the layout roots.
    const layouts = events.filter((e) => e.name === 'Layout' && e.tid === main.tid && e.pid === main.pid && e.ph === 'X');
    const dirty = layouts.reduce((n, e) => n + ((e.args.beginData || {}).dirtyObjects || 0), 0);
    const total = layouts.reduce((n, e) => n + ((e.args.beginData || {}).totalObjects || 0), 0);
    const roots = new Map();
    for (const e of layouts) for (const r of ((e.args.endData || {}).layoutRoots || [])) roots.set(r.nodeName || '?', (roots.get(r.nodeName || '?') || 0) + 1);
    console.log(JSON.stringify({ layoutsPerStep: layouts.length / N, dirtyObjectsPerStep: dirty / N, totalObjectsPerStep: total / N, roots: [...roots.entries()].slice(0, 20) }));
  }
  if (process.env.ALL) console.log([...sums.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30).map(([k, v]) => `${(v / 1000 / N).toFixed(2)} ${k}`).join('\n'));
  await browser.close();
})();
