// The first screen: the app loads, draws the cluster the core built, shows the core's version.
const test = require('node:test');
const assert = require('node:assert/strict');
const { launch, openPage, screenshot } = require('./helpers');

test('the app loads and draws the cluster', async (t) => {
  const browser = await launch();
  t.after(() => browser.close());
  const { page, errors } = await openPage(browser);
  await page.getByTestId('cluster').waitFor();
  const nodes = page.locator('[data-testid^="node-"]');
  assert.ok(await nodes.count() >= 1, 'at least one node is drawn');
  const allocs = page.locator('[data-testid^="alloc-"]');
  assert.ok(await allocs.count() >= 1, 'at least one allocation is drawn');
  const version = await page.getByTestId('core-version').textContent();
  assert.match(version, /^core v\d+\.\d+\.\d+/);
  await screenshot(page, 'first-screen');
  assert.deepEqual(errors, [], 'no console errors');
});
