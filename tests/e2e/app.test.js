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
