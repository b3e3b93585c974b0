// Compare mode, the script editor and the accessibility of the playground screen, in headless
// Chromium against `cargo xtask dist`.
const test = require('node:test');
const assert = require('node:assert/strict');
const { launch, openPage } = require('./helpers');

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

async function openLesson(id, { profile, viewport } = {}) {
  const opened = await openPage(browser, '/', viewport ? { viewport } : {});
  const { page } = opened;
  await page.getByTestId(`lesson-${id}`).click();
  await page.getByTestId('cluster').waitFor();
  if (profile) {
    await page.getByTestId('profile').selectOption(profile);
    await page.getByTestId('profile').and(page.locator(`:has(option[value="${profile}"]:checked)`)).waitFor();
  }
  return opened;
}

async function waitForStep(page, step) {
  await page.getByTestId('step-counter').filter({ hasText: new RegExp(`^step ${step}/`) }).waitFor();
}

async function stepTo(page, step) {
  for (let at = 1; at <= step; at++) {
    await page.getByTestId('step').click();
    await waitForStep(page, at);
  }
}

// PR #15068 under 1.4.2 and 1.4.3: identical up to step 8; step 9 delivers the early
// UpdateAlloc, which 1.4.2 accepts (a reconnect eval, a second replacement) and 1.4.3 refuses.
test('compare shows where 1.4.2 and 1.4.3 part on pr-15068-heartbeat-order', async () => {
  const { page, errors, context } = await openLesson('pr-15068-heartbeat-order', { profile: '1.4.2' });
  const panel = page.getByTestId('compare-panel');
  await page.getByTestId('compare-profile').selectOption('1.4.3');
  await panel.getByTestId('compare-side-b').waitFor();
  assert.match(await panel.getByTestId('compare-side-a').textContent(), /1\.4\.2/);
  assert.match(await panel.getByTestId('compare-side-b').textContent(), /1\.4\.3/);
  await stepTo(page, 8);
  await panel.getByTestId('compare-same').waitFor();
  for (const step of [9, 10]) {
    await page.getByTestId('step').click();
    await waitForStep(page, step);
  }
  const diff = panel.getByTestId('compare-diff');
  await diff.waitFor();
  const reconnect = diff.getByTestId('diff-eval-reconnect');
  assert.equal(await reconnect.count(), 1, 'the reconnect eval runs under 1.4.2 only');
  assert.match(await reconnect.textContent(), /A \S+ complete · B —/);
  assert.equal(await reconnect.locator('.diff-marker').textContent(), '−');
  assert.ok(await diff.locator('[data-kind="alloc"]').count() >= 1, 'the second replacement of web.web[2] differs');
  assert.ok(await panel.locator('.compare-allocs .alloc.diff-removed').count() >= 1, 'run A marks the alloc only it has');
  assert.equal(await panel.getByTestId('compare-first-difference').getAttribute('data-step'), '9');
  // "Go to step" moves both runs to where they part; back once more and they agree again.
  await panel.getByTestId('compare-jump').click();
  await waitForStep(page, 9);
  assert.equal(await panel.getByTestId('compare-first-difference').getAttribute('data-step'), '9');
  await page.getByTestId('back').click();
  await waitForStep(page, 8);
  await panel.getByTestId('compare-same').waitFor();
  // Turning compare off removes run B.
  await page.getByTestId('compare-profile').selectOption('');
  assert.equal(await panel.getByTestId('compare-side-b').count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('editing a past action forks a branch, and the old branch stays reachable', async () => {
  const { page, errors, context } = await openLesson('pr-15068-heartbeat-order');
  await stepTo(page, 4);
  const nodeC = page.getByTestId('node-node-c');
  assert.equal(await nodeC.getAttribute('data-status'), 'disconnected');
  const total = Number((await page.getByTestId('step-counter').textContent()).match(/\/(\d+)/)[1]);
  // Remove action 2 (link_down node-c), already played: a new branch without it.
  const line = page.getByTestId('script-line-1');
  assert.equal(await line.getAttribute('data-kind'), 'link_down');
  await line.getByTestId('script-remove').click();
  await page.getByTestId('step-counter').filter({ hasText: `step 4/${total - 1}` }).waitFor();
  assert.equal(await nodeC.getAttribute('data-status'), 'ready', 'node-c never went offline on the new branch');
  assert.notEqual(await page.getByTestId('script-line-1').getAttribute('data-kind'), 'link_down');
  const branch = page.getByTestId('branch-0');
  assert.match(await branch.textContent(), /link_down node-c/);
  // Back to the old branch: link_down is there again and node-c is disconnected.
  await branch.click();
  await page.getByTestId('step-counter').filter({ hasText: `step 4/${total}` }).waitFor();
  assert.equal(await page.getByTestId('script-line-1').getAttribute('data-kind'), 'link_down');
  assert.equal(await nodeC.getAttribute('data-status'), 'disconnected');
  // The edited log became the branch, so it is one click away too.
  assert.equal(await page.getByTestId('branches').locator('li').count(), 1);
  // Edit a past action's JSON: advance 3m becomes advance 10s, too short for the TTL.
  const advance = page.getByTestId('script-line-2');
  await advance.getByTestId('script-edit').click();
  await advance.getByTestId('script-json').fill('{"action":"advance","by":"10s"}');
  await advance.getByTestId('script-save').click();
  await page.getByTestId('branch-1').waitFor();
  assert.match(await page.getByTestId('script-line-2').textContent(), /advance 10s/);
  assert.equal(await nodeC.getAttribute('data-status'), 'ready', 'the TTL has not run out after 15 s');
  // Bad JSON is refused with a message, and nothing changes.
  await page.getByTestId('script-line-2').getByTestId('script-edit').click();
  await page.getByTestId('script-line-2').getByTestId('script-json').fill('{"action":"fly"}');
  await page.getByTestId('script-line-2').getByTestId('script-save').click();
  await page.getByTestId('script-problem').waitFor();
  await page.getByTestId('script-line-2').getByTestId('script-cancel').click();
  // Insert a future action at the cursor and move it later: no new branch.
  await page.getByTestId('script-add-json').fill('{"action":"note","text":"inserted"}');
  await page.getByTestId('script-add').click();
  await page.getByTestId('script-line-4').filter({ hasText: 'note inserted' }).waitFor();
  await page.getByTestId('script-line-4').getByTestId('script-down').click();
  await page.getByTestId('script-line-5').filter({ hasText: 'note inserted' }).waitFor();
  assert.equal(await page.getByTestId('branches').locator('li').count(), 2);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the narration live region says what each step did', async () => {
  const { page, errors, context } = await openLesson('pr-15068-heartbeat-order');
  const narration = page.getByTestId('narration');
  assert.equal(await narration.getAttribute('role'), 'status');
  assert.match(await narration.textContent(), /^step 0/);
  await stepTo(page, 3);
  assert.match(await narration.textContent(), /^step 3, t=\S+: advance 3m;.*node-c ready → disconnected/);
  assert.deepEqual(errors, []);
  await context.close();
});

// The narration keeps one height whatever its length (a long one scrolls inside it), so a step
// never moves the script list below it; a keyboard reaches it and scrolls a long one.
test('the narration keeps its height across steps and scrolls by keyboard', async () => {
  const { page, errors, context } = await openLesson('pr-15068-heartbeat-order');
  const narration = page.getByTestId('narration');
  const lines = page.getByTestId('script-lines');
  const measure = () => narration.evaluate((e) => ({
    height: e.getBoundingClientRect().height, overflows: e.scrollHeight > e.clientHeight,
    // (The panels above the script editor may grow: the list's place is taken from the narration's.)
    listBelow: document.querySelector('[data-testid="script-lines"]').getBoundingClientRect().top
      - e.getBoundingClientRect().top,
  }));
  const start = await measure();
  assert.ok(start.height > 0);
  // Step 1 narrates more than four lines, step 2 less: the same box for both.
  await stepTo(page, 1);
  const long = await measure();
  assert.ok(long.overflows, 'step 1 narrates more than the box shows');
  assert.equal(long.height, start.height);
  assert.equal(long.listBelow, start.listBelow, 'the script list stays where it was below it');
  // Shift+Tab from the script list's first button lands on the narration; ↓ scrolls it.
  await lines.locator('button').first().focus();
  await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'narration');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => document.querySelector('[data-testid="narration"]').scrollTop > 0);
  await page.getByTestId('step').click();
  await waitForStep(page, 2);
  const short = await measure();
  assert.ok(!short.overflows, 'step 2 narrates less than the box shows');
  assert.equal(short.height, start.height);
  assert.equal(short.listBelow, start.listBelow);
  assert.deepEqual(errors, []);
  await context.close();
});

// The call dock's sortable pattern: one tab stop per row, Space picks up, arrows move, Space drops.
test('keyboard reordering of calls changes their order', async () => {
  const { page, errors, context } = await openLesson('pr-15068-heartbeat-order', { profile: '1.4.2' });
  await stepTo(page, 8);
  const dock = page.getByTestId('dock-node-c');
  await dock.locator('[data-code="UPD"]').first().waitFor();
  await dock.getByTestId('send-heartbeat').click();
  await dock.locator('[data-code="HB"]').first().waitFor();
  const codes = async () => dock.locator('[data-code]').evaluateAll((chips) => chips.map((c) => c.dataset.code));
  const tabStops = async () => dock.locator('[data-code]').evaluateAll((chips) => chips.map((c) => c.tabIndex));
  const focused = async () => page.evaluate(() => document.activeElement?.dataset?.code || null);
  assert.deepEqual(await codes(), ['UPD', 'HB']);
  assert.deepEqual(await tabStops(), [0, -1], 'roving tabindex: one tab stop per row');
  const status = page.getByTestId('dock-status');
  assert.equal(await status.getAttribute('role'), 'status');
  await dock.locator('[data-code="UPD"]').focus();
  await page.keyboard.press('ArrowRight');
  assert.equal(await focused(), 'HB', 'the arrow moves the focus to the next call');
  assert.deepEqual(await tabStops(), [-1, 0]);
  // Escape cancels a pick-up: nothing moves.
  await page.keyboard.press(' ');
  assert.match(await status.textContent(), /^Picked up hb#\d+, 2 of 2 on node-c/);
  await page.keyboard.press('ArrowLeft');
  assert.match(await status.textContent(), /hb#\d+: 1 of 2, before upd#\d+/);
  assert.deepEqual(await codes(), ['HB', 'UPD'], 'the picked-up call is drawn where it moved');
  await page.keyboard.press('Escape');
  assert.match(await status.textContent(), /^Cancelled, hb#\d+ back at 2 of 2/);
  assert.deepEqual(await codes(), ['UPD', 'HB']);
  // Up and down would take it to another client: refused.
  await page.keyboard.press(' ');
  await page.keyboard.press('ArrowUp');
  assert.match(await status.textContent(), /cannot leave node-c/);
  // Pick up, move first, drop: the simulation reorders the calls.
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press(' ');
  assert.match(await status.textContent(), /^Dropped hb#\d+; now 1 of 2 on node-c/);
  await page.getByTestId('step-counter').filter({ hasText: /^step 10\// }).waitFor();
  assert.deepEqual(await codes(), ['HB', 'UPD'], 'the heartbeat moved first');
  assert.equal(await focused(), 'HB', 'the focus stays on the moved call');
  // None of these keys reached the page's global shortcuts (Space would play).
  assert.equal(await page.getByTestId('play').getAttribute('aria-label'), 'Play');
  assert.deepEqual(errors, []);
  await context.close();
});

// Every visible text, in light and dark theme, on the main screens: contrast at least 4.5:1
// against the colour actually behind it (composited through translucent layers). Disabled
// controls and the legend's faded zero counts are exempt (WCAG 1.4.3 exempts inactive parts).
async function contrastFailures(page) {
  return page.evaluate(() => {
    const parse = (c) => {
      const m = c && c.match(/rgba?\(([^)]+)\)/);
      if (!m) return null;
      const p = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
      return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
    };
    const over = (top, bottom) => ({
      r: top.r * top.a + bottom.r * (1 - top.a), g: top.g * top.a + bottom.g * (1 - top.a),
      b: top.b * top.a + bottom.b * (1 - top.a), a: 1,
    });
    const lum = ({ r, g, b }) => {
      const ch = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b);
    };
    const ratio = (x, y) => { const [a, b] = [lum(x), lum(y)].sort((p, q) => q - p); return (a + 0.05) / (b + 0.05); };
    const background = (el) => {
      const layers = [];
      for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
        const bg = parse(getComputedStyle(node).backgroundColor);
        if (bg && bg.a > 0) { layers.push(bg); if (bg.a >= 1) break; }
      }
      let colour = { r: 255, g: 255, b: 255, a: 1 };
      for (const layer of layers.reverse()) colour = over(layer, colour);
      return colour;
    };
    const exempt = (el) => {
      for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
        const style = getComputedStyle(node);
        if (Number(style.opacity) < 1 || node.matches(':disabled, option, [aria-hidden="true"]')) return true;
      }
      return false;
    };
    const failures = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const seen = new Set();
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      const el = text.parentElement;
      if (!el || seen.has(el) || !text.textContent.trim()) continue;
      seen.add(el);
      const rect = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      if (rect.width === 0 || rect.height === 0 || style.visibility !== 'visible' || exempt(el)) continue;
      const inSvg = el instanceof SVGElement;
      const fg = parse(inSvg ? style.fill : style.color);
      if (!fg) continue;
      const bg = background(inSvg ? el.ownerSVGElement.parentElement : el);
      const value = ratio(over(fg, bg), bg);
      if (value < 4.5) {
        failures.push(`${value.toFixed(2)}:1 ${el.tagName.toLowerCase()}.${[...el.classList].join('.')} "${text.textContent.trim().slice(0, 30)}" ${inSvg ? style.fill : style.color} on rgb(${Math.round(bg.r)},${Math.round(bg.g)},${Math.round(bg.b)})`);
      }
    }
    return failures;
  });
}

// The theme button switches between light and dark (the first click leaves the system's choice).
async function setTheme(page, theme) {
  for (let clicks = 0; clicks < 2; clicks++) {
    if (await page.evaluate(() => document.documentElement.dataset.theme) === theme) return;
    await page.getByTestId('theme').click();
  }
  await page.locator(`html[data-theme="${theme}"]`).waitFor({ state: 'attached' });
}

test('text contrast is at least 4.5:1 in the light and the dark theme', async () => {
  const { page, errors, context } = await openLesson('pr-15068-heartbeat-order', { profile: '1.4.2' });
  // A busy screen: compare on, runs parted, node-c disconnected, an eval inspected.
  await page.getByTestId('compare-profile').selectOption('1.4.3');
  await stepTo(page, 10);
  await page.locator('.eval-row', { hasText: 'node-update' }).first().click();
  await page.getByTestId('eval-detail').waitFor();
  for (const theme of ['light', 'dark']) {
    await setTheme(page, theme);
    const failures = await contrastFailures(page);
    assert.deepEqual(failures, [], `${theme} theme, playground: text under 4.5:1`);
  }
  await page.getByTestId('home').click();
  await page.getByTestId('lessons').waitFor();
  for (const theme of ['light', 'dark']) {
    await setTheme(page, theme);
    assert.deepEqual(await contrastFailures(page), [], `${theme} theme, lessons page: text under 4.5:1`);
  }
  // The dark theme also follows the system setting when not chosen by hand.
  const dark = await openPage(browser, '/', { colorScheme: 'dark' });
  await dark.page.getByTestId('lessons').waitFor();
  const pageColour = await dark.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(pageColour, 'rgb(21, 24, 30)', 'the page is dark under prefers-color-scheme: dark');
  await dark.context.close();
  assert.deepEqual(errors, []);
  await context.close();
});

test('every control has an accessible name and a visible focus ring', async () => {
  const { page, errors, context } = await openLesson('pr-15068-heartbeat-order', { profile: '1.4.2' });
  await page.getByTestId('compare-profile').selectOption('1.4.3');
  await stepTo(page, 8);
  await page.getByTestId('dock-node-c').getByTestId('send-heartbeat').click();
  await page.getByTestId('script-line-0').getByTestId('script-edit').click();
  const unnamed = await page.evaluate(() => [...document.querySelectorAll('button, select, input, textarea, [tabindex]')]
    .filter((el) => {
      const labelled = el.getAttribute('aria-label') || el.getAttribute('title')
        || (el.labels && [...el.labels].some((l) => l.textContent.trim()))
        || (el.getAttribute('aria-labelledby') && document.getElementById(el.getAttribute('aria-labelledby')));
      const text = el.matches('button, [tabindex]') && el.textContent.trim();
      return !labelled && !text;
    })
    .map((el) => el.outerHTML.slice(0, 80)));
  assert.deepEqual(unnamed, [], 'controls without a name');
  for (const theme of ['light', 'dark']) {
    await setTheme(page, theme);
    for (const testid of ['step', 'compare-profile', 'script-add']) {
      await page.getByTestId(testid).focus();
      await page.keyboard.press('Shift'); // keyboard modality, so :focus-visible applies
      const ring = await page.getByTestId(testid).evaluate((el) => {
        const s = getComputedStyle(el);
        return { style: s.outlineStyle, width: parseFloat(s.outlineWidth) };
      });
      assert.notEqual(ring.style, 'none', `${theme}: ${testid} shows focus`);
      assert.ok(ring.width >= 2, `${theme}: ${testid} focus ring is at least 2 px`);
    }
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('from 1280 px down to a 1024 px laptop the page never scrolls sideways', async () => {
  for (const width of [1280, 1024]) {
    const { page, errors, context } = await openLesson('pr-15068-heartbeat-order',
      { profile: '1.4.2', viewport: { width, height: 768 } });
    const overflow = async (where) => {
      const { scroll, client } = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth,
      }));
      assert.ok(scroll <= client, `${width} px, ${where}: page is ${scroll} px wide in a ${client} px window`);
    };
    await overflow('first screen');
    await page.getByTestId('compare-profile').selectOption('1.4.3');
    await stepTo(page, 10);
    // Below 1280 px the eval queue and the inspector are in the details overlay.
    if (width < 1280) await page.getByTestId('details-toggle').click();
    await page.locator('.eval-row', { hasText: 'node-update' }).first().click();
    await overflow('compare, eval inspector');
    if (width < 1280) {
      await page.keyboard.press('Escape');
      await page.getByTestId('inspector').waitFor({ state: 'hidden' });
    }
    await page.getByTestId('script-line-2').getByTestId('script-edit').click();
    await overflow('script editor');
    await page.getByTestId('home').click();
    await page.getByTestId('lessons').waitFor();
    await overflow('lessons');
    assert.deepEqual(errors, []);
    await context.close();
  }
});

// Opens the benchmark's scenario of 60 nodes and 120 allocs at a laptop's size and steps once.
async function openBigScenarioAtStep1() {
  const opened = await openBigScenario({ width: 1440, height: 900 });
  const { page } = opened;
  await page.getByTestId('step').click();
  await waitForStep(page, 1);
  return opened;
}

// Above 50 nodes the cluster draws one dense row per node (composite light, alloc strip) and the
// cluster and the call dock draw only the rows in and near view; the rows keep a keyboard path.
test('above 50 nodes the cluster and the dock draw dense rows, only those in view, with a keyboard path', async () => {
  const { page, errors, context } = await openBigScenarioAtStep1();
  const first = page.getByTestId('node-node-000');
  await first.locator('[data-testid^="alloc-"][data-client-status]').first().waitFor();
  const rows = await page.locator('.node-row').count();
  assert.ok(rows > 0 && rows < 60, `${rows} of 60 rows drawn`);
  assert.equal(await page.getByTestId('node-node-059').count(), 0, 'the last row is not drawn yet');
  assert.ok(await page.locator('.dock-row').count() < 60, 'the dock draws only some rows');
  // Scrolling the list draws the rows scrolled to.
  await page.getByTestId('online-zone').evaluate((zone) => { zone.scrollTop = zone.scrollHeight; });
  await page.getByTestId('node-node-059').waitFor();
  assert.equal(await page.getByTestId('node-node-059').getAttribute('data-status'), 'ready');
  await page.getByTestId('online-zone').evaluate((zone) => { zone.scrollTop = 0; });
  await first.waitFor();
  // ↓ moves to the next row, Enter opens the node in the inspector, whose alloc buttons stand in
  // for the strip's small cells; `o` cuts the link without dragging.
  await first.focus();
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('data-testid')), 'node-node-001');
  await page.keyboard.press('Enter');
  const detail = page.getByTestId('node-detail');
  await detail.waitFor();
  await detail.locator('.node-allocs button').first().click();
  await page.getByTestId('alloc-detail').waitFor();
  await page.getByTestId('node-node-001').focus();
  await page.keyboard.press('o');
  await page.locator('[data-testid="offline-zone"] [data-testid="node-node-001"]').waitFor();
  assert.equal(await page.getByTestId('node-node-001').getAttribute('data-link'), 'down');
  assert.deepEqual(errors, []);
  await context.close();
});

// The dense rows' heartbeat TTLs, which change at every step, are drawn as the lines of one text
// beside the rows (so that a step leaves the rows alone): each drawn row has its TTL line over its
// TTL slot, the node's own TTL (as the inspector gives it), after a step and after a scroll too.
test('dense rows show each drawn row its own heartbeat TTL, across steps and scrolling', async () => {
  const { page, errors, context } = await openBigScenarioAtStep1();
  await page.getByTestId('node-node-000').locator('[data-testid^="alloc-"]').first().waitFor();
  // Each drawn row, top to bottom: its node, the TTL line drawn for it, and whether that line's
  // text sits in the row's TTL slot (vertically inside it, right-aligned with it).
  const ttlRows = () => page.evaluate(() => {
    const rows = [...document.querySelectorAll('.dense-rows > .node-row')]
      .sort((a, b) => a.offsetTop - b.offsetTop);
    const column = document.querySelector('.ttl-column');
    const text = column.firstChild;
    const lines = text.data.split('\n');
    let offset = 0;
    return {
      lines: lines.length - 1,
      rows: rows.map((row, index) => {
        const range = document.createRange();
        range.setStart(text, offset);
        range.setEnd(text, offset + lines[index].length);
        offset += lines[index].length + 1;
        const line = range.getBoundingClientRect();
        const slot = row.querySelector('.node-ttl').getBoundingClientRect();
        const middle = (line.top + line.bottom) / 2;
        return {
          node: row.getAttribute('data-testid').slice('node-'.length),
          ttl: lines[index],
          inSlot: middle > slot.top && middle < slot.bottom && Math.abs(line.right - slot.right) < 1.5,
        };
      }),
    };
  });
  const check = (seen, what) => {
    assert.equal(seen.lines, seen.rows.length, `${what}: one TTL line per drawn row`);
    for (const row of seen.rows) {
      assert.match(row.ttl, /^\d+\.\ds$/, `${what}: ${JSON.stringify(row)}`);
      assert.ok(row.inSlot, `${what}: the TTL line sits in its row's slot: ${JSON.stringify(row)}`);
    }
  };
  const before = await ttlRows();
  check(before, 'step 1');
  // A step changes the TTLs, not the rows: the row elements drawn are the same ones.
  await page.evaluate(() => { for (const row of document.querySelectorAll('.dense-rows > .node-row')) row.keptAcrossStep = true; });
  await page.getByTestId('step').click();
  await waitForStep(page, 2);
  const after = await ttlRows();
  check(after, 'step 2');
  assert.notDeepEqual(after.rows.map((r) => r.ttl), before.rows.map((r) => r.ttl), 'the TTLs counted down');
  assert.ok(await page.evaluate(() => [...document.querySelectorAll('.dense-rows > .node-row')].every((row) => row.keptAcrossStep)));
  // Each line is its own row's TTL: the inspector gives the same for the node.
  const third = after.rows[3];
  await page.getByTestId(`node-${third.node}`).locator('.node-head').click();
  const detail = page.getByTestId('node-detail');
  await detail.waitFor();
  const inspected = await detail.evaluate((d) => [...d.querySelectorAll('dt')]
    .find((dt) => dt.textContent === 'Heartbeat TTL left').nextElementSibling.textContent);
  assert.equal(inspected, third.ttl);
  // Scrolled down the list, the lines follow the rows drawn there.
  await page.getByTestId('online-zone').evaluate((zone) => { zone.scrollTop = 30 * 42; });
  await page.getByTestId('node-node-035').waitFor();
  await twoFrames(page);
  const scrolled = await ttlRows();
  check(scrolled, 'scrolled');
  assert.ok(scrolled.rows.some((row) => row.node === 'node-035'), JSON.stringify(scrolled.rows.map((r) => r.node)));
  assert.deepEqual(errors, []);
  await context.close();
});

// Above 8 clients the sequence diagram gives lanes only to the clients that fit in its box and
// folds the others into one "+N clients" lane (ui-design §3), whose events name their client;
// the node selected in the inspector is pinned to a lane of its own.
test('above 8 clients the diagram folds the clients it has no room for into one lane', async () => {
  const { page, errors, context } = await openBigScenarioAtStep1();
  const sequence = page.getByTestId('sequence');
  const folded = sequence.getByTestId('seq-lane-folded');
  await folded.waitFor();
  const lanes = await sequence.getByTestId('seq-lane').allTextContents();
  const count = Number((await folded.textContent()).match(/^\+(\d+) clients$/)[1]);
  // Leader, broker and the clients with a lane of their own: 60 clients in all.
  assert.ok(lanes.includes('leader') && lanes.includes('eval broker'), lanes.join(', '));
  assert.equal(count + lanes.length - 2, 60, lanes.join(', '));
  // The diagram fits its box: no sideways scrolling.
  const { svg, box } = await sequence.evaluate((s) => ({
    svg: s.querySelector('svg').getBoundingClientRect().width,
    box: s.querySelector('.sequence-scroll').clientWidth,
  }));
  assert.ok(svg <= box, `the diagram is ${svg} px wide in a ${box} px box`);
  // Events on the folded lane name their client.
  await page.getByTestId('step').click();
  await waitForStep(page, 2);
  const labels = await sequence.getByTestId('seq-event').evaluateAll((events) => events.map((e) => e.getAttribute('aria-label')));
  assert.ok(labels.some((label) => /node-0[1-5]\d /.test(label)), labels.slice(0, 5).join(' | '));
  // Selecting a folded node pins it to a lane.
  assert.ok(!lanes.includes('node-042'));
  await page.getByTestId('online-zone').evaluate((zone) => { zone.scrollTop = 42 * 38; });
  await page.getByTestId('node-node-042').locator('.node-head').click();
  await sequence.getByTestId('seq-lane').filter({ hasText: 'node-042' }).waitFor();
  assert.equal(Number((await folded.textContent()).match(/^\+(\d+)/)[1]), count);
  assert.deepEqual(errors, []);
  await context.close();
});

// The view's window of diagram events moves its first event by whole windows (150 events), not
// at every step: at 200 nodes a step adds more events than the box shows rows, so a window moved
// at every step re-created every drawn row. A step that leaves the window where it was leaves the
// rows at the top of the box as they were, the same DOM nodes; when it moves, by 150 events.
// (From the third step: the second redraws the first step's rows, no longer the current step's.)
test('a step keeps the diagram rows drawn while its window of events stays, and moves it by whole windows', async () => {
  const { page, errors, context } = await openBigScenario({ width: 1440, height: 900 }, 200, 400);
  const rows = () => page.getByTestId('sequence').evaluate((sequence) => {
    const drawn = [...sequence.querySelectorAll('[data-testid="seq-event"]')];
    window.seenRows = window.seenRows || new WeakSet();
    const kept = drawn.filter((row) => window.seenRows.has(row)).length;
    drawn.forEach((row) => window.seenRows.add(row));
    return { first: Number(drawn[0].getAttribute('data-index')), drawn: drawn.length, kept };
  });
  const moves = [];
  let stays = 0;
  let before = null;
  for (let step = 1; step <= 12; step++) {
    await page.getByTestId('step').click();
    await waitForStep(page, step);
    await twoFrames(page);
    const now = await rows();
    assert.equal(now.first % 150, 0, `the window starts at event ${now.first}`);
    if (step > 2 && now.first === before.first) {
      stays += 1;
      assert.equal(now.kept, now.drawn, `step ${step}: ${JSON.stringify({ before, now })}`);
    } else if (step > 2) {
      moves.push(now.first - before.first);
    }
    before = now;
  }
  assert.ok(moves.length > 0 && stays > moves.length, `moves ${moves}, ${stays} steps kept the rows`);
  assert.ok(moves.every((by) => by % 150 === 0), `moves ${moves}`);
  assert.deepEqual(errors, []);
  await context.close();
});

// The view's window of trace lines moves its first line by whole windows (400 lines) too: the
// trace log cuts the lines into chunks of 32 lines, one text node each, so while the window stays
// a step rewrites at most the chunk that was last (its new lines) and adds chunks after it; the
// other chunks keep their text. (A window moved at every step, by the 20 to 50 lines a step adds
// at 200 nodes, rewrote every chunk: 11 text nodes, ~31,000 characters a step.)
test('a step leaves the trace chunks as they were while its window of lines stays, and moves it by whole windows', async () => {
  const { page, errors, context } = await openBigScenario({ width: 1440, height: 900 }, 200, 400);
  const hidden = async () => {
    const button = page.getByTestId('show-full-trace');
    return (await button.count()) === 0 ? 0 : Number((await button.textContent()).match(/\((\d+) older lines hidden\)/)[1]);
  };
  // Counts the chunk texts a step rewrites (not those of the chunks it adds).
  await page.getByTestId('trace-text').evaluate((trace) => {
    window.traceRewrites = 0;
    new MutationObserver((records) => {
      window.traceRewrites += records.filter((r) => r.type === 'characterData').length;
    }).observe(trace, { subtree: true, characterData: true });
  });
  let moves = 0;
  let stays = 0;
  let before = await hidden();
  for (let step = 1; step <= 14; step++) {
    await page.evaluate(() => { window.traceRewrites = 0; });
    await page.getByTestId('step').click();
    await waitForStep(page, step);
    await twoFrames(page);
    const now = await hidden();
    const rewrites = await page.evaluate(() => window.traceRewrites);
    assert.equal(now % 400, 0, `${now} lines hidden`);
    if (now === before) {
      stays += 1;
      assert.ok(rewrites <= 1, `step ${step}: ${rewrites} chunk texts rewritten`);
    } else {
      moves += 1;
    }
    before = now;
  }
  assert.ok(moves > 0 && stays > moves, `${moves} moves, ${stays} stays`);
  assert.deepEqual(errors, []);
  await context.close();
});

// The diagram draws only the rows in and near its box (at most 60% of the window high). Making
// the window taller must draw the rows the box now shows at once, without waiting for a scroll.
test('a taller window draws the diagram rows its box now shows, without a scroll', async () => {
  const { page, errors, context } = await openBigScenario({ width: 1440, height: 500 });
  for (let step = 1; step <= 3; step++) {
    await page.getByTestId('step').click();
    await waitForStep(page, step);
  }
  const scrollBox = page.getByTestId('sequence').locator('.sequence-scroll');
  const coverage = () => scrollBox.evaluate((box) => {
    const top = box.getBoundingClientRect().top;
    const rows = [...box.querySelectorAll('[data-testid="seq-event"]')].map((row) => row.getBoundingClientRect().bottom - top);
    return { drawnTo: Math.max(0, ...rows), shown: box.clientHeight, content: box.scrollHeight };
  });
  const before = await coverage();
  await page.setViewportSize({ width: 1440, height: 1400 });
  await page.waitForFunction(() => document.querySelector('.sequence-scroll').clientHeight > 500);
  // One frame for the re-render the resize caused.
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  const after = await coverage();
  assert.ok(after.content > after.shown, `the diagram needs more than its box: ${JSON.stringify(after)}`);
  assert.ok(after.drawnTo > before.drawnTo, `before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`);
  // Rows are drawn down to the box's bottom (within one row of ~30 px).
  assert.ok(after.drawnTo >= after.shown - 30, `rows drawn to ${after.drawnTo} px of a ${after.shown} px box`);
  assert.deepEqual(errors, []);
  await context.close();
});

// How far down the rows (`rowSelector`) of a scroll box (`selector`) are drawn, from its top
// edge, how high it is and how high its content.
function drawnRows([selector, rowSelector]) {
  const box = document.querySelector(selector);
  const top = box.getBoundingClientRect().top;
  const rows = [...box.querySelectorAll(rowSelector)].map((row) => row.getBoundingClientRect().bottom - top);
  return { drawnTo: Math.max(0, ...rows), shown: box.clientHeight, content: box.scrollHeight };
}

// Opens the benchmarks' scenario of `nodes` nodes and `allocs` allocs (at 60 nodes: dense rows, a
// folded diagram) from the start page, in a window `viewport`.
async function openBigScenario(viewport, nodes = 60, allocs = 120) {
  const { bigScenario } = require('./bench/big-scenario');
  const opened = await openPage(browser, '/', { viewport });
  await opened.page.getByTestId('lessons').waitFor();
  await opened.page.getByTestId('scenario-input').fill(JSON.stringify(bigScenario(nodes, allocs)));
  await opened.page.getByTestId('scenario-open').click();
  await opened.page.getByTestId('cluster').waitFor();
  return opened;
}

// Two frames: the re-render a resize or a scroll caused is drawn.
const twoFrames = (page) => page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));

// The dense cluster rows and the dock's rows (60 nodes) note how many rows their box shows at a
// scroll. A taller window must draw the rows the boxes now show at once, not the count noted at
// the last scroll. (The dock's box is 240 px high whatever the window: the test gives it a
// height that follows the window, as the cluster's does, to check it reads its box too.)
test('a taller window draws the dense cluster and dock rows their boxes now show, without a scroll', async () => {
  const { page, errors, context } = await openBigScenario({ width: 1440, height: 500 });
  await page.addStyleTag({ content: '.dock-rows { max-height: 60vh; }' });
  await page.getByTestId('step').click();
  await waitForStep(page, 1);
  const boxes = [['[data-testid="online-zone"]', '.dense-rows > *', 42], ['.dock-rows', '.dock-row', 44]];
  // Scroll each list by three rows: it notes the rows its box shows.
  for (const [selector, , pitch] of boxes) {
    await page.evaluate(([selector, by]) => { document.querySelector(selector).scrollTop = by; }, [selector, 3 * pitch]);
  }
  await twoFrames(page);
  const before = [];
  for (const [selector, rowSelector] of boxes) before.push(await page.evaluate(drawnRows, [selector, rowSelector]));
  await page.setViewportSize({ width: 1440, height: 1400 });
  await page.waitForFunction(() => document.querySelector('[data-testid="online-zone"]').clientHeight > 700
    && document.querySelector('.dock-rows').clientHeight > 600);
  await twoFrames(page);
  for (const [index, [selector, rowSelector, pitch]] of boxes.entries()) {
    const after = await page.evaluate(drawnRows, [selector, rowSelector]);
    const seen = `${selector}: before ${JSON.stringify(before[index])}, after ${JSON.stringify(after)}`;
    assert.ok(after.content > after.shown, `the rows overflow the box: ${seen}`);
    assert.ok(after.drawnTo > before[index].drawnTo, seen);
    // Rows are drawn down to the box's bottom (within one row).
    assert.ok(after.drawnTo >= after.shown - pitch, `rows drawn to the box's bottom: ${seen}`);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

// The diagram's rows follow its box's height, read from the box (not from the window and a copy
// of the CSS): a box given another height than style.css's 60% of the window still gets its rows
// drawn to its bottom after a resize.
test('after a resize the diagram draws rows down to its box, whatever height the CSS gives it', async () => {
  const { page, errors, context } = await openBigScenario({ width: 1440, height: 500 });
  await page.addStyleTag({ content: '.sequence-scroll { max-height: 85vh; }' });
  for (let step = 1; step <= 3; step++) {
    await page.getByTestId('step').click();
    await waitForStep(page, step);
  }
  const rows = ['.sequence-scroll', '[data-testid="seq-event"]'];
  const before = await page.evaluate(drawnRows, rows);
  await page.setViewportSize({ width: 1440, height: 1400 });
  await page.waitForFunction(() => document.querySelector('.sequence-scroll').clientHeight > 1000);
  await twoFrames(page);
  const after = await page.evaluate(drawnRows, rows);
  const seen = `before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`;
  assert.ok(after.content > after.shown, `the diagram needs more than its box: ${seen}`);
  assert.ok(after.drawnTo >= after.shown - 30, `rows drawn to the box's bottom: ${seen}`);
  assert.deepEqual(errors, []);
  await context.close();
});

// While the diagram is shorter than its box, the box's height is not its full height: once the
// rows overflow it (after a resize made while they did not), they are drawn to its bottom.
test('a diagram that grows past its box after a resize draws rows down to the box', async () => {
  const { page, errors, context } = await openBigScenario({ width: 1440, height: 1300 }, 20, 40);
  const rows = ['.sequence-scroll', '[data-testid="seq-event"]'];
  await page.setViewportSize({ width: 1440, height: 1400 });
  await page.waitForFunction(() => window.innerHeight === 1400);
  await twoFrames(page);
  const start = await page.evaluate(drawnRows, rows);
  assert.ok(start.content <= start.shown, `the diagram fits its box before the first step: ${JSON.stringify(start)}`);
  await page.getByTestId('step').click();
  await waitForStep(page, 1);
  await twoFrames(page);
  const after = await page.evaluate(drawnRows, rows);
  const seen = `before the step ${JSON.stringify(start)}, after it ${JSON.stringify(after)}`;
  assert.ok(after.content > after.shown && after.shown > start.shown, `the diagram outgrew its box: ${seen}`);
  assert.ok(after.drawnTo >= after.shown - 30, `rows drawn to the box's bottom: ${seen}`);
  assert.deepEqual(errors, []);
  await context.close();
});

// The diagram's rows share one tooltip (no `<title>` per row): hovering a row shows its time
// and label, the same text as its accessible name; leaving the diagram hides it.
test('hovering a diagram row shows its time and label in the shared tooltip', async () => {
  const { page, errors, context } = await openLesson('pr-15068-heartbeat-order');
  await stepTo(page, 2);
  const sequence = page.getByTestId('sequence');
  const tip = sequence.getByTestId('seq-tip');
  assert.equal(await tip.isVisible(), false);
  assert.equal(await sequence.locator('[data-testid="seq-event"] title').count(), 0);
  const row = sequence.getByTestId('seq-event').nth(1);
  const name = await row.getAttribute('aria-label');
  assert.match(name, /^t=\S+ \S/);
  await row.locator('text').hover();
  await tip.waitFor();
  assert.equal(await tip.textContent(), name);
  assert.equal(await tip.getAttribute('role'), 'tooltip');
  await page.getByTestId('step-counter').hover();
  await tip.waitFor({ state: 'hidden' });
  assert.deepEqual(errors, []);
  await context.close();
});

// The diagram's rows are one tab stop (a roving tabindex): Tab reaches one row and the next Tab
// leaves the diagram; ↑/↓ and Home move between rows, the focused row shows its text in the
// shared tooltip, and Enter jumps to its step, the focus staying on the diagram's rows.
test('the diagram rows are one tab stop: arrow keys move between them and Enter jumps to the step', async () => {
  const { page, errors, context } = await openLesson('pr-15068-heartbeat-order');
  await stepTo(page, 4);
  const sequence = page.getByTestId('sequence');
  const tip = sequence.getByTestId('seq-tip');
  const rows = sequence.getByTestId('seq-event');
  assert.equal(await rows.evaluateAll((all) => all.filter((row) => row.tabIndex === 0).length), 1);
  const active = () => page.evaluate(() => {
    const el = document.activeElement;
    return { testid: el.getAttribute('data-testid'), index: Number(el.getAttribute('data-index')),
      step: Number(el.getAttribute('data-step')), name: el.getAttribute('aria-label') };
  });
  await page.getByTestId('step').focus();
  let tabs = 0;
  while ((await active()).testid !== 'seq-event' && tabs < 200) {
    await page.keyboard.press('Tab');
    tabs += 1;
  }
  const first = await active();
  assert.equal(first.testid, 'seq-event', `Tab never reached a diagram row (${tabs} presses)`);
  await tip.waitFor();
  assert.equal(await tip.textContent(), first.name);
  await page.keyboard.press('Tab');
  assert.notEqual((await active()).testid, 'seq-event', 'the next Tab leaves the diagram');
  await page.keyboard.press('Shift+Tab');
  assert.equal((await active()).index, first.index, 'Shift+Tab comes back to the same row');
  // ↑/↓ move between neighbouring rows, and the tooltip follows.
  await page.keyboard.press('Home');
  const top = await active();
  await page.keyboard.press('ArrowDown');
  const next = await active();
  assert.equal(next.testid, 'seq-event');
  assert.equal(next.index, top.index + 1);
  assert.equal(await tip.textContent(), next.name);
  await page.keyboard.press('ArrowUp');
  assert.equal((await active()).index, top.index);
  assert.equal(await rows.evaluateAll((all) => all.filter((row) => row.tabIndex === 0).length), 1);
  // Enter jumps to the focused row's step (an earlier one), and the row keeps the focus.
  assert.ok(top.step < 4, `the first row is of step ${top.step}`);
  await page.keyboard.press('Enter');
  await waitForStep(page, top.step);
  await page.waitForFunction(() => document.activeElement.getAttribute('data-testid') === 'seq-event');
  assert.equal((await active()).index, top.index);
  assert.deepEqual(errors, []);
  await context.close();
});
