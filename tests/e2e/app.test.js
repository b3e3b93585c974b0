// The start page and the first screen: the app loads, lists the lessons, opens one, draws the
// cluster the core built and shows the core's version, with no console errors.
const test = require('node:test');
const assert = require('node:assert/strict');
const { launch, openPage, screenshot } = require('./helpers');

test('the app loads, lists the lessons and opens one', async (t) => {
  const browser = await launch();
  t.after(() => browser.close());
  const { page, errors } = await openPage(browser);
  await page.getByTestId('lessons').waitFor();
  const version = await page.getByTestId('core-version').textContent();
  assert.match(version, /^core v\d+\.\d+\.\d+/);
  await screenshot(page, 'lessons');
  await page.getByTestId('lesson-pr-15068-heartbeat-order').click();
  await page.getByTestId('cluster').waitFor();
  assert.ok(await page.locator('[data-testid^="node-"]').count() >= 3, 'the nodes are drawn');
  await page.getByTestId('step').click();
  await page.getByTestId('step-counter').filter({ hasText: 'step 1/' }).waitFor();
  assert.ok(await page.locator('[data-testid^="alloc-"]').count() >= 1, 'the allocations are drawn');
  await screenshot(page, 'first-screen');
  assert.deepEqual(errors, [], 'no console errors');
});

test('a broken scenario is refused with its JSON path; a valid one opens', async (t) => {
  const browser = await launch();
  t.after(() => browser.close());
  const { page, errors } = await openPage(browser);
  await page.getByTestId('lessons').waitFor();
  await page.getByTestId('scenario-input').fill('{"version": 1, "name": "x", "nodes": [{"id": 5}]}');
  await page.getByTestId('scenario-open').click();
  const message = await page.getByTestId('message').textContent();
  assert.match(message, /nodes\[0\]\.id/, `the message names the field: ${message}`);
  await page.getByTestId('lessons').waitFor();
  const scenario = { version: 1, name: 'pasted', nodes: [{ id: 'n1' }, { id: 'n2' }],
    jobs: [{ id: 'api', groups: [{ name: 'api', count: 2 }] }], script: [{ action: 'advance', by: '5s' }] };
  await page.getByTestId('scenario-input').fill(JSON.stringify(scenario));
  await page.getByTestId('scenario-open').click();
  await page.getByTestId('cluster').waitFor();
  assert.equal(await page.getByTestId('scenario-name').textContent(), 'pasted');
  assert.equal(await page.getByTestId('message').count(), 0, 'the error is gone');
  assert.deepEqual(errors, []);
});
