// What a UI step invalidates (not a test): the render bench's 200 nodes and 2,000 allocations,
// N steps (default 10) under a Chromium trace with invalidation tracking, then per step: the
// elements marked for layout and why, those whose style was recalculated, the display item
// clients (layout objects) whose paint was invalidated and why, the paint layers repainted (the
// trace's `Paint` events: the element, its cull rect, and their CPU ms, each including the
// layers painted inside it), and how often the page's paint chunks were layerized in full.
// Counts first: the machine's load does not move them. Run from tests/e2e with BASE_URL set:
// `node bench/invalidations.js [steps]`. Prints JSON (per step means). STYLE="css" adds a style
// sheet first (experiments without a rebuild); SKIP=n starts the trace n steps later (the render
// bench measures steps 2 to 101).
const { launch, openPage } = require('../helpers');
const { openBigScenario } = require('./big-scenario');

(async () => {
  const steps = Number(process.argv[2] || 10);
  const browser = await launch();
  const { page } = await openPage(browser, '/', { viewport: { width: 1440, height: 900 } });
  await openBigScenario(page);
  if (process.env.STYLE) await page.addStyleTag({ content: process.env.STYLE });
  await page.evaluate(async (skip) => {
    const button = document.querySelector('[data-testid="step"]');
    for (let i = 0; i < skip; i++) {
      button.click();
      await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
    }
  }, Number(process.env.SKIP || 0));
  await browser.startTracing(page, {
    categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline',
      'disabled-by-default-devtools.timeline.invalidationTracking', 'disabled-by-default-blink.invalidation',
      'blink', 'blink.user_timing'],
  });
  await page.evaluate(async (steps) => {
    const button = document.querySelector('[data-testid="step"]');
    const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
    const task = () => new Promise((resolve) => setTimeout(resolve, 0));
    for (let i = 0; i < steps; i++) {
      performance.mark(`step-${i}`);
      button.click();
      await frame();
      await task();
      await task();
    }
    performance.mark('steps-end');
  }, steps);
  const buffer = await browser.stopTracing();
  const { traceEvents } = JSON.parse(buffer.toString());
  const marks = traceEvents.filter((e) => /^step-\d+$|^steps-end$/.test(e.name) && e.ph !== 'X')
    .map((e) => e.ts).sort((a, b) => a - b);
  const [from, to] = [marks[0], marks[marks.length - 1]];
  const inSteps = traceEvents.filter((e) => e.ts >= from && e.ts <= to);
  const tally = (map, key, by = 1) => map.set(key, (map.get(key) || 0) + by);
  const top = (map, n = 25) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([k, v]) => [k, Math.round((v / steps) * 1000) / 1000]);
  const layoutMarked = new Map();
  const styleRecalc = new Map();
  const styleInvalidated = new Map();
  const paintNodes = new Map();
  const displayItems = new Map();
  const paintMs = new Map();
  const counts = { fullLayerizations: 0, displayItemClients: 0, layoutDirtyObjects: 0, layoutTotalObjects: 0, layouts: 0, styleElements: 0, paints: 0, paintArea: 0 };
  const layoutRoots = new Map();
  for (const e of inSteps) {
    const data = e.args && (e.args.data || e.args);
    if (e.name === 'LayoutInvalidationTracking') tally(layoutMarked, `${data.nodeName} <- ${data.reason}`);
    if (e.name === 'StyleRecalcInvalidationTracking') tally(styleRecalc, `${data.nodeName} <- ${data.reason}${data.extraData ? ` ${data.extraData}` : ''}`);
    if (e.name === 'StyleInvalidatorInvalidationTracking') tally(styleInvalidated, `${data.nodeName} <- ${data.reason}`);
    // A full layerization of the page's paint chunks (not a repaint-only update).
    if (e.name === 'PaintArtifactCompositor::Update') counts.fullLayerizations += 1;
    if (e.name === 'InvalidateDisplayItemClient') {
      counts.displayItemClients += 1;
      tally(displayItems, `${e.args.client} <- ${e.args.reason}`);
    }
    if (e.name === 'Layout' && e.ph === 'X' && e.args.beginData) {
      counts.layouts += 1;
      counts.layoutDirtyObjects += e.args.beginData.dirtyObjects;
      counts.layoutTotalObjects += e.args.beginData.totalObjects;
      if (e.args.endData && e.args.endData.layoutRoots) {
        for (const root of e.args.endData.layoutRoots) tally(layoutRoots, root.nodeId);
      }
    }
    if (e.name === 'UpdateLayoutTree' && e.args.elementCount !== undefined) counts.styleElements += e.args.elementCount;
    if (e.name === 'Paint' && e.args.data) {
      counts.paints += 1;
      const clip = e.args.data.clip || [];
      const xs = [clip[0], clip[2], clip[4], clip[6]];
      const ys = [clip[1], clip[3], clip[5], clip[7]];
      const area = clip.length ? (Math.max(...xs) - Math.min(...xs)) * (Math.max(...ys) - Math.min(...ys)) : 0;
      counts.paintArea += area;
      const key = `${e.args.data.nodeId} ${Math.round(Math.max(...xs) - Math.min(...xs))}x${Math.round(Math.max(...ys) - Math.min(...ys))}`;
      tally(paintNodes, key);
      tally(paintMs, key, (e.tdur ?? e.dur ?? 0) / 1000);
    }
  }
  // Name the painted elements and the layout roots (backend node IDs) through the DevTools protocol.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('DOM.getDocument', { depth: -1 });
  const describe = async (backendNodeId) => {
    try {
      const { node } = await cdp.send('DOM.describeNode', { backendNodeId: Number(backendNodeId) });
      const attrs = node.attributes || [];
      const get = (name) => { const i = attrs.indexOf(name); return i >= 0 ? attrs[i + 1] : null; };
      return `${node.nodeName.toLowerCase()}${get('class') ? `.${get('class').split(' ').join('.')}` : ''}${get('data-testid') ? `[${get('data-testid')}]` : ''}`;
    } catch (err) { return `#${backendNodeId} (${err.message.slice(0, 60)})`; }
  };
  const named = async (map) => {
    const out = new Map();
    for (const [key, n] of map) {
      const [id, ...rest] = String(key).split(' ');
      tally(out, [await describe(id), ...rest].join(' '), n);
    }
    return out;
  };
  const [rootsNamed, paintNamed, paintMsNamed] = [await named(layoutRoots), await named(paintNodes), await named(paintMs)];
  await browser.close();
  const perStep = Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, Math.round((v / steps) * 10) / 10]));
  console.log(JSON.stringify({
    steps, perStep,
    layoutMarked: top(layoutMarked, 40),
    layoutRoots: top(rootsNamed),
    styleRecalc: top(styleRecalc, 40),
    styleInvalidated: top(styleInvalidated),
    paintNodes: top(paintNamed),
    paintCpuMs: top(paintMsNamed).map(([k, v]) => [k, Math.round(v * 1000) / 1000]),
    displayItemClients: top(displayItems, 40),
  }, null, 2));
})();
