// Every interaction of the playground screen, in headless Chromium against `cargo xtask dist`.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { launch, openPage, screenshot } = require('./helpers');

const ROOT = path.resolve(__dirname, '..', '..');
const LESSONS = [
  'disconnect-reconnect-best-score', 'disconnect-reconnect-keep-original',
  'disconnect-reconnect-keep-replacement', 'disconnect-reconnect-longest-running',
  'lost-after-expiry', 'issue-12680', 'issue-14925', 'pr-15068-heartbeat-order',
  'pr-15808-register-race', 'issue-10200-preempt-watcher',
  'rolling-update', 'rolling-update-auto-revert', 'canary-auto-promote',
  'canary-manual-promote', 'rolling-update-operator',
];

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

async function openLesson(id, profile) {
  const opened = await openPage(browser);
  const { page } = opened;
  await page.getByTestId(`lesson-${id}`).click();
  await page.getByTestId('cluster').waitFor();
  if (profile) {
    await page.getByTestId('profile').selectOption(profile);
    await page.getByTestId('profile').and(page.locator(`:has(option[value="${profile}"]:checked)`)).waitFor();
  }
  return opened;
}

async function stepCounter(page) {
  const text = await page.getByTestId('step-counter').textContent();
  const [, step, total] = text.match(/step (\d+)\/(\d+)/);
  return { step: Number(step), total: Number(total) };
}

async function waitForStep(page, step) {
  await page.getByTestId('step-counter').filter({ hasText: new RegExp(`^step ${step}/`) }).waitFor();
}

test('every lesson opens from the start page', async () => {
  const { page, errors, context } = await openPage(browser);
  for (const id of LESSONS) {
    await page.getByTestId(`lesson-${id}`).click();
    await page.getByTestId('cluster').waitFor();
    const name = await page.getByTestId('scenario-name').textContent();
    assert.ok(name.length > 0, `${id} shows its name`);
    assert.ok(await page.getByTestId('lesson-card').textContent(), `${id} shows its narration`);
    await page.getByTestId('home').click();
    await page.getByTestId('lessons').waitFor();
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('dragging a node offline cuts its link; after its TTL the servers mark it disconnected', async () => {
  const { page, errors, context } = await openLesson('disconnect-reconnect-best-score');
  await page.getByTestId('step').click();
  await waitForStep(page, 1);
  const node = page.getByTestId('node-node-a');
  assert.equal(await node.getAttribute('data-status'), 'ready');
  await page.dragAndDrop('[data-testid="node-node-a"]', '[data-testid="offline-zone"]');
  await page.locator('[data-testid="offline-zone"] [data-testid="node-node-a"]').waitFor();
  assert.equal(await node.getAttribute('data-link'), 'down');
  // The servers do not know yet: the node stays ready until its heartbeat TTL runs out.
  assert.equal(await node.getAttribute('data-status'), 'ready');
  for (let attempt = 0; attempt < 6 && (await node.getAttribute('data-status')) === 'ready'; attempt++) {
    await page.getByTestId('advance-30s').click();
  }
  assert.equal(await node.getAttribute('data-status'), 'disconnected');
  await screenshot(page, 'node-disconnected');
  // And back: restore the link from the node's own button (no drag needed).
  await node.getByTestId('link-toggle').click();
  assert.equal(await node.getAttribute('data-link'), 'up');
  for (let attempt = 0; attempt < 6 && (await node.getAttribute('data-status')) !== 'ready'; attempt++) {
    await page.getByTestId('advance-30s').click();
  }
  assert.equal(await node.getAttribute('data-status'), 'ready');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the keyboard cuts a link and steps', async () => {
  const { page, errors, context } = await openLesson('disconnect-reconnect-best-score');
  await page.locator('body').press('ArrowRight');
  await waitForStep(page, 1);
  await page.getByTestId('node-node-c').focus();
  await page.keyboard.press('o');
  assert.equal(await page.getByTestId('node-node-c').getAttribute('data-link'), 'down');
  await page.locator('body').click({ position: { x: 5, y: 200 } });
  await page.keyboard.press('ArrowLeft');
  await waitForStep(page, 1);
  assert.deepEqual(errors, []);
  await context.close();
});

// PR #15068: on reconnect, the client's UpdateAlloc can reach the servers before its heartbeat.
// At step 8 of the lesson node-c's link is back, its calls are held and an UpdateAlloc waits;
// the user sends a heartbeat, which queues behind it. Delivered in that order, 1.4.2 accepts the
// update while node-c is still disconnected and places a second replacement of web.web[2]; 1.4.3
// refuses it. Reordering the heartbeat first removes the extra replacement under 1.4.2 too.
async function reconnectOrder(profile, heartbeatFirst) {
  const { page, errors, context } = await openLesson('pr-15068-heartbeat-order', profile);
  for (let step = 1; step <= 8; step++) {
    await page.getByTestId('step').click();
    await waitForStep(page, step);
  }
  const dock = page.getByTestId('dock-node-c');
  await dock.locator('[data-code="UPD"]').first().waitFor();
  await dock.getByTestId('send-heartbeat').click();
  await dock.locator('[data-code="HB"]').first().waitFor();
  const codes = async () => dock.locator('[data-code]').evaluateAll((chips) => chips.map((c) => c.dataset.code));
  assert.deepEqual(await codes(), ['UPD', 'HB'], 'the heartbeat queues behind the update');
  if (heartbeatFirst) {
    await dock.locator('[data-code="HB"]').getByTestId('earlier').click();
    assert.deepEqual(await codes(), ['HB', 'UPD'], 'the heartbeat moved first');
  }
  await screenshot(page, `reorder-${profile}-${heartbeatFirst ? 'hb-first' : 'upd-first'}`);
  // Deliver the first call and let its consequences play out, then the rest.
  await dock.locator('[data-code]').first().getByTestId('deliver').click();
  await page.getByTestId('advance-5s').click();
  await dock.getByTestId('release-all').click();
  await page.getByTestId('advance-30s').click();
  if (await page.getByTestId('show-full-trace').count() > 0) await page.getByTestId('show-full-trace').click();
  const trace = await page.getByTestId('trace-text').textContent();
  const placements = (trace.match(/web\.web\[2\] \S+ on \S+: placed/g) || []).length;
  assert.deepEqual(errors, []);
  await context.close();
  return placements;
}

test('reordering heartbeat and UpdateAlloc on pr-15068 changes the outcome between 1.4.2 and 1.4.3', async () => {
  const buggy = await reconnectOrder('1.4.2', false);
  const fixed = await reconnectOrder('1.4.3', false);
  const reordered = await reconnectOrder('1.4.2', true);
  // Placements of web.web[2]: the original, its first replacement, and under the bug a second one.
  assert.equal(fixed, 2, '1.4.3 refuses the early UpdateAlloc: no second replacement');
  assert.equal(buggy, fixed + 1, '1.4.2 accepts the early UpdateAlloc and places a second replacement');
  assert.equal(reordered, fixed, 'with the heartbeat first, 1.4.2 places no second replacement either');
});

test('stepping forward and back gives the same screen', async () => {
  const { page, errors, context } = await openLesson('issue-14925');
  for (let step = 1; step <= 6; step++) {
    await page.getByTestId('step').click();
    await waitForStep(page, step);
  }
  // The DOM as tag, sorted attributes and text: attribute order is Yew's business, not ours.
  const screen = async () => page.locator('.main').evaluate((root) => {
    const out = [];
    const walk = (node) => {
      if (node.nodeType === Node.TEXT_NODE) { out.push(node.textContent); return; }
      if (node.nodeType !== Node.ELEMENT_NODE) return;
      const attrs = [...node.attributes].map((a) => `${a.name}=${a.value}`).sort().join(' ');
      out.push(`<${node.tagName} ${attrs}>`);
      node.childNodes.forEach(walk);
      out.push(`</${node.tagName}>`);
    };
    walk(root);
    return out.join('');
  });
  const at6 = await screen();
  await page.getByTestId('back').click();
  await waitForStep(page, 5);
  assert.notEqual(await screen(), at6);
  await page.getByTestId('step').click();
  await waitForStep(page, 6);
  assert.equal(await screen(), at6, 'back then forward restores step 6 exactly');
  // The scrubber jumps anywhere and back.
  await page.getByTestId('scrubber').fill('2');
  await waitForStep(page, 2);
  await page.getByTestId('scrubber').fill('6');
  await waitForStep(page, 6);
  assert.equal(await screen(), at6, 'jumping away and back restores step 6 exactly');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the eval inspector explains every allocation, and the alloc inspector its history', async () => {
  const { page, errors, context } = await openLesson('disconnect-reconnect-best-score');
  await page.getByTestId('run-to-end').click();
  const { step, total } = await stepCounter(page);
  assert.equal(step, total);
  const evalRows = page.locator('.eval-row');
  assert.ok(await evalRows.count() >= 2, 'several evals were processed');
  // Pick the node-update eval of the disconnect.
  await page.locator('.eval-row', { hasText: 'node-update' }).first().click();
  await page.getByTestId('eval-detail').waitFor();
  assert.ok(await page.getByTestId('decisions').locator('tbody tr').count() >= 1, 'decisions are listed');
  assert.ok(await page.getByTestId('desired-tg-updates').count() >= 1, 'DesiredTGUpdates are shown');
  await screenshot(page, 'eval-inspector');
  await page.getByTestId('decisions').locator('tbody tr button').first().click();
  await page.getByTestId('alloc-detail').waitFor();
  assert.ok(await page.getByTestId('alloc-history').locator('li').count() >= 1, 'the alloc has a decision history');
  assert.deepEqual(errors, []);
  await context.close();
});

test('failing a task and updating a job are dispatched to the simulation', async () => {
  const { page, errors, context } = await openLesson('disconnect-reconnect-best-score');
  await page.getByTestId('step').click();
  await waitForStep(page, 1);
  const block = page.locator('[data-testid^="alloc-"][data-client-status="running"]').first();
  await block.click();
  await page.getByTestId('task-fail').click();
  await page.getByTestId('advance-5s').click();
  assert.ok(await page.locator('[data-testid^="alloc-"][data-client-status="failed"]').count() >= 1, 'an alloc failed');
  const version = page.getByTestId('job-web').getByTestId('job-version');
  assert.equal(await version.textContent(), 'v0');
  await page.getByTestId('job-web').getByTestId('job-new-version').click();
  assert.equal(await version.textContent(), 'v1');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a job can be stopped and reverted to the version that ran (Job.Revert)', async () => {
  const { page, errors, context } = await openLesson('disconnect-reconnect-best-score');
  const job = page.getByTestId('job-web');
  const version = job.getByTestId('job-version');
  assert.equal(await job.getByTestId('job-revert').count(), 0, 'nothing to revert to at v0');
  await job.getByTestId('job-new-version').click();
  assert.equal(await version.textContent(), 'v1');
  assert.equal(await job.getByTestId('job-revert').textContent(), 'Revert to v0');
  // Nomad's deregister writes a stopped copy as a new version.
  await job.getByTestId('job-stop').click();
  assert.equal(await version.textContent(), 'v2');
  assert.equal(await job.getByTestId('job-stop').isDisabled(), true);
  assert.equal(await job.getByTestId('job-revert').textContent(), 'Revert to v1', 'the newest version that ran');
  await job.getByTestId('job-revert').click();
  assert.equal(await version.textContent(), 'v3');
  assert.equal(await job.getByTestId('job-stop').isDisabled(), false, 'the revert started the job again');
  if (await page.getByTestId('show-full-trace').count() > 0) await page.getByTestId('show-full-trace').click();
  assert.match(await page.getByTestId('trace-text').textContent(), /call-accepted\s+Job\.Revert from operator: reverting web to the spec of version 1/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the browser and the native CLI produce the same trace, byte for byte', async () => {
  const cli = process.env.NATIVE_CLI || path.join(ROOT, 'target', 'debug', 'nomad-playground');
  for (const id of ['pr-15068-heartbeat-order', 'issue-14925']) {
    const native = execFileSync(cli, ['run', path.join(ROOT, 'scenarios', `${id}.json`)], { encoding: 'utf8' });
    const { page, errors, context } = await openLesson(id);
    await page.getByTestId('run-to-end').click();
    if (await page.getByTestId('show-full-trace').count() > 0) await page.getByTestId('show-full-trace').click();
    const wasm = await page.getByTestId('trace-text').textContent();
    // The CLI heads its trace with one `# <scenario> under profile <p>` line.
    const nativeTrace = native.split('\n').filter((line) => !line.startsWith('# ')).join('\n').replace(/\n$/, '');
    assert.equal(wasm, nativeTrace, `${id}: wasm trace equals native trace`);
    assert.deepEqual(errors, []);
    await context.close();
  }
});
