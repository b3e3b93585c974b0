// Deployments in the jobs panel (status, per-group counters, canaries, the operator's calls), the
// deployment lessons, and the details overlay of narrow screens, in headless Chromium against
// `cargo xtask dist`.
const test = require('node:test');
const assert = require('node:assert/strict');
const { launch, openPage } = require('./helpers');

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

async function openLesson(id, options = {}) {
  const opened = await openPage(browser, '/', options);
  await opened.page.getByTestId(`lesson-${id}`).click();
  await opened.page.getByTestId('cluster').waitFor();
  return opened;
}

async function stepTo(page, step) {
  const counter = page.getByTestId('step-counter');
  for (;;) {
    const [, at] = (await counter.textContent()).match(/step (\d+)\//);
    if (Number(at) >= step) return;
    await page.getByTestId('step').click();
    await counter.filter({ hasText: new RegExp(`^step ${Number(at) + 1}/`) }).waitFor();
  }
}

// The deployment box of job `web`, once it shows `status` for job version `version`.
async function deploymentOf(page, status, version) {
  const box = page.getByTestId('job-web').getByTestId('deployment');
  await box.and(page.locator(`[data-status="${status}"]`)).filter({ hasText: ` v${version} ` }).waitFor();
  return box;
}

async function cell(box, name) {
  return (await box.getByTestId('deployment-group-web').getByTestId(name).textContent()).trim();
}

test('rolling-update: the deployment of version 1 goes from nothing healthy to successful, one alloc at a time', async () => {
  const { page, errors, context } = await openLesson('rolling-update');
  await stepTo(page, 1);
  let box = await deploymentOf(page, 'successful', 0);
  assert.equal(await box.getByTestId('deployment-description').textContent(), 'Deployment completed successfully');
  assert.equal(await cell(box, 'deployment-healthy'), '4');
  assert.equal(await box.getByTestId('deployment-fail').count(), 0, 'a finished deployment offers no calls');
  // The narration reads the lesson's checks as they are reached.
  await stepTo(page, 2);
  assert.match(await page.getByTestId('lesson-note').textContent(), /first deployment completes/);

  await stepTo(page, 4);
  box = await deploymentOf(page, 'running', 1);
  assert.equal(await cell(box, 'deployment-placed'), '1/4');
  assert.equal(await cell(box, 'deployment-healthy'), '0');
  assert.equal(await cell(box, 'deployment-unhealthy'), '0');
  assert.match(await box.textContent(), /progress deadline \S+ \(progress by t=\d/);
  const healthyBefore = await page.locator('[data-testid^="alloc-"][data-health="healthy"]').count();

  await stepTo(page, 6);
  box = await deploymentOf(page, 'successful', 1);
  assert.equal(await cell(box, 'deployment-placed'), '4/4');
  assert.equal(await cell(box, 'deployment-healthy'), '4');
  const healthy = page.locator('[data-testid^="alloc-"][data-health="healthy"][data-desired-status="run"]');
  assert.equal(await healthy.count(), 4);
  assert.ok(await healthy.count() >= healthyBefore - 1);
  // The inspector shows an alloc's deployment health.
  await healthy.first().click();
  assert.equal((await page.getByTestId('alloc-deployment-health').textContent()).trim(), 'healthy');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the operator pauses, resumes and fails a running deployment from the jobs panel', async () => {
  const { page, errors, context } = await openLesson('rolling-update');
  await stepTo(page, 4);
  let box = await deploymentOf(page, 'running', 1);
  await box.getByTestId('deployment-pause').click();
  box = await deploymentOf(page, 'paused', 1);
  assert.match(await box.getByTestId('deployment-description').textContent(), /paused/i);
  await box.getByTestId('deployment-resume').click();
  box = await deploymentOf(page, 'running', 1);
  await box.getByTestId('deployment-fail').click();
  box = await deploymentOf(page, 'failed', 1);
  assert.match(await box.getByTestId('deployment-description').textContent(), /failed/i);
  assert.deepEqual(errors, []);
  await context.close();
});

test('canary-auto-promote: the canary is marked, and the deployment waits for promotion until it is promoted', async () => {
  const { page, errors, context } = await openLesson('canary-auto-promote');
  await stepTo(page, 4);
  let box = await deploymentOf(page, 'running', 1);
  assert.equal(await cell(box, 'deployment-canaries'), '1/1 not promoted');
  assert.equal(await page.locator('.alloc.canary').count(), 1, 'one alloc block carries the canary corner');
  assert.match(await page.locator('.alloc.canary').getAttribute('aria-label'), /canary/);
  // Promoting by hand before the canary is healthy: Nomad refuses, and says why.
  await box.getByTestId('deployment-promote').click();
  await page.getByTestId('trace-text').filter({ hasText: /call-refused\s+Deployment\.Promote from operator: .*0\/1 healthy allocations/ }).waitFor({ state: 'attached' });
  // The call is now part of the log (the rest of the script was a branch); let time pass: once the
  // canary is healthy the watcher promotes it, and the rest of the group rolls out.
  for (let i = 0; i < 4; i++) {
    if (await box.and(page.locator('[data-status="successful"]')).count()) break;
    await page.getByTestId('advance-30s').click();
    await page.getByTestId('step-counter').filter({ hasText: new RegExp(`^step ${6 + i}/`) }).waitFor();
  }
  box = await deploymentOf(page, 'successful', 1);
  assert.equal(await cell(box, 'deployment-canaries'), '1/1 promoted');
  assert.equal(await cell(box, 'deployment-placed'), '3/3');
  assert.equal(await box.getByTestId('deployment-promote').count(), 0, 'nothing left to promote');
  assert.deepEqual(errors, []);
  await context.close();
});

test('rolling-update-auto-revert: the failed deployment says it rolls back', async () => {
  const { page, errors, context } = await openLesson('rolling-update-auto-revert');
  const total = Number((await page.getByTestId('step-counter').textContent()).match(/step \d+\/(\d+)/)[1]);
  await stepTo(page, total);
  const failed = page.getByTestId('job-web').getByTestId('deployment');
  await failed.waitFor();
  // At the end the rollback's own deployment is the latest; the failed one said why.
  assert.match(await page.getByTestId('trace-text').textContent(), /rolling back to job version 0/);
  assert.match(await failed.getAttribute('data-status'), /successful|running|failed/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('below 1280 px the details column is an overlay: opened by a selection or its button, closed by Esc or its close button', async () => {
  const { page, errors, context } = await openLesson('rolling-update', { viewport: { width: 1100, height: 800 } });
  const details = page.getByTestId('details');
  const inspector = page.getByTestId('inspector');
  assert.equal(await inspector.isVisible(), false, 'closed at first');
  assert.equal(await details.evaluate((el) => getComputedStyle(el).position), 'fixed');
  assert.equal(await details.evaluate((el) => getComputedStyle(el).transitionDuration.split(',')[0].trim()), '0.15s');
  await page.getByTestId('details-toggle').click();
  await inspector.waitFor({ state: 'visible' });
  // It slides in from the right edge.
  await page.waitForFunction(() => {
    const box = document.querySelector('[data-testid="details"]').getBoundingClientRect();
    return Math.abs(box.right - document.documentElement.clientWidth) < 1 && box.left > 0;
  });
  await page.keyboard.press('Escape');
  await inspector.waitFor({ state: 'hidden' });
  // Selecting an alloc opens it on the alloc; the close button closes it.
  await stepTo(page, 1);
  await page.locator('[data-testid^="alloc-"]').first().click();
  await page.getByTestId('alloc-detail').waitFor({ state: 'visible' });
  await page.getByTestId('details-close').click();
  await inspector.waitFor({ state: 'hidden' });
  // Esc with the focus on a button inside the overlay closes it too.
  await page.getByTestId('details-toggle').click();
  await page.getByTestId('details-close').focus();
  await page.keyboard.press('Escape');
  await inspector.waitFor({ state: 'hidden' });
  assert.deepEqual(errors, []);
  await context.close();
});

test('the overlay does not move under prefers-reduced-motion, and wide screens keep the column in place', async () => {
  const narrow = await openLesson('rolling-update', { viewport: { width: 1100, height: 800 }, reducedMotion: 'reduce' });
  const duration = await narrow.page.getByTestId('details').evaluate((el) => getComputedStyle(el).transitionDuration);
  assert.ok(duration.split(',').every((d) => d.trim() === '0s'), `no transition, got ${duration}`);
  await narrow.page.getByTestId('details-toggle').click();
  await narrow.page.getByTestId('inspector').waitFor({ state: 'visible' });
  assert.deepEqual(narrow.errors, []);
  await narrow.context.close();

  const wide = await openLesson('rolling-update', { viewport: { width: 1440, height: 900 } });
  assert.equal(await wide.page.getByTestId('details-toggle').isVisible(), false);
  assert.equal(await wide.page.getByTestId('details-close').isVisible(), false);
  assert.equal(await wide.page.getByTestId('inspector').isVisible(), true);
  assert.equal(await wide.page.getByTestId('details').evaluate((el) => getComputedStyle(el).position), 'static');
  assert.deepEqual(wide.errors, []);
  await wide.context.close();
});

test('sequence labels stay inside the diagram: notes on the right-hand lanes sit left of them, long ones wrap', async () => {
  const { page, errors, context } = await openLesson('canary-manual-promote');
  await stepTo(page, 8);
  const sequence = page.getByTestId('sequence');
  // The diagram draws only the rows in and near its scroll box: the refusal is just below it.
  await sequence.locator('.sequence-scroll').evaluate((box) => { box.scrollTop = 200; });
  // The operator's refused promotion (a note on the leader's lane) and the broker's reconcile notes.
  const refused = sequence.getByTestId('seq-event').filter({ hasText: 'operator Deployment.Promote' });
  await refused.first().waitFor();
  assert.match(await refused.first().locator('text').textContent(), /healthy allocations$/, 'the whole refusal is drawn');
  assert.ok(await sequence.getByTestId('seq-event').filter({ hasText: /^reconcile / }).count() > 0);
  const { svg, outside } = await sequence.locator('svg').evaluate((svg) => {
    const box = svg.getBoundingClientRect();
    const outside = [];
    for (const text of svg.querySelectorAll('[data-testid="seq-event"] text')) {
      const r = text.getBoundingClientRect();
      if (r.left < box.left || r.right > box.right) outside.push(`${text.textContent} (${r.left}-${r.right})`);
    }
    return { svg: [box.left, box.right], outside };
  });
  assert.deepEqual(outside, [], `labels within the diagram ${svg}`);
  // A wrapped label's lines do not run into the next row's label.
  const overlaps = await sequence.locator('svg').evaluate((svg) => {
    const rows = [...svg.querySelectorAll('[data-testid="seq-event"] text')].map((t) => t.getBoundingClientRect());
    const found = [];
    for (let i = 1; i < rows.length; i++) {
      const [a, b] = [rows[i - 1], rows[i]];
      const apart = a.right <= b.left || b.right <= a.left || a.bottom <= b.top + 1;
      if (!apart) found.push(i);
    }
    return found;
  });
  assert.deepEqual(overlaps, []);
  assert.deepEqual(errors, []);
  await context.close();
});
