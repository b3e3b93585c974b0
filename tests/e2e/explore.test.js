// Explore mode in the browser (issue 7): the search runs in a Web Worker with a progress bar
// and a stop button while the page stays usable; under 1.4.2 it finds #15068 (a replacement
// placed during the reconnect and torn down again) in the pr-15068 scenario, "open
// reproduction" loads a scenario that replays to the violation, and the same search under
// `latest` finds none. The result says how many orders were pruned (postponed, subsumed) and
// lists the distinct violations found.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { launch, openPage, screenshot } = require('./helpers');

const ROOT = path.join(__dirname, '..', '..');
const FLAP = 'no-replacement-flap';

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

async function openLesson(page, id) {
  await page.getByTestId('lessons').waitFor();
  await page.getByTestId(`lesson-${id}`).click();
  await page.getByTestId('cluster').waitFor();
}

async function openExplore(page, { profile, maxOrders }) {
  await page.locator('[data-testid="explore"] > summary').click();
  await page.getByTestId('explore-profile').selectOption(profile);
  if (maxOrders !== undefined) {
    await page.getByTestId('explore-max-orders').fill(String(maxOrders));
    await page.getByTestId('explore-max-orders').dispatchEvent('change');
  }
}

test('under 1.4.2 the worker finds #15068; the reproduction opens and replays to it', async () => {
  const { page, errors, context } = await openPage(browser);
  await openLesson(page, 'pr-15068-heartbeat-order');
  await openExplore(page, { profile: '1.4.2', maxOrders: 2000 });
  await page.getByTestId('explore-start').click();
  const violation = page.getByTestId(`explore-violation-${FLAP}`);
  await violation.waitFor({ timeout: 120_000 });
  const summary = await page.getByTestId('explore-summary').textContent();
  assert.match(summary, /under 1\.4\.2/, summary);
  const text = await violation.textContent();
  assert.match(text, /broken in \d+ order\(s\)/, text);
  assert.match(text, /web\.web\[2\]/, `the violation names the alloc: ${text}`);
  // The summary says how many orders were pruned and why; the distinct violations are listed.
  assert.match(summary, /\d+ orders \(\d+ pruned: \d+ postponed, \d+ subsumed\)/, summary);
  const details = page.getByTestId(`explore-details-${FLAP}`);
  await details.locator('summary').click();
  assert.match(await details.locator('summary').textContent(), /^\d+ distinct violation\(s\)/);
  const listed = await details.locator('li').allTextContents();
  assert.ok(listed.length > 0 && listed.some((d) => /web\.web\[2\]/.test(d)), listed.join(' | '));
  const progress = page.getByTestId('explore-progress');
  assert.equal(await progress.getAttribute('value'), await progress.getAttribute('max'), 'the bar is full at the end');
  const link = await page.getByTestId(`explore-link-${FLAP}`).getAttribute('href');
  assert.match(link, /^http:\/\/127\.0\.0\.1:\d+\/.*#v1\./, link);
  await screenshot(page, 'explore-1.4.2');

  // The same search under latest: no violation.
  await page.getByTestId('explore-compare-profile').selectOption('latest');
  await page.getByTestId('explore-compare').click();
  const latest = page.getByTestId('explore-compared-latest');
  await latest.waitFor({ timeout: 120_000 });
  assert.match(await latest.textContent(), /under latest: no violation/);

  // Open the shortest order in the playground: it plays to its end, where the note of the
  // broken invariant is, and the extra replacement of web.web[2] exists.
  await page.getByTestId(`explore-open-${FLAP}`).click();
  await page.getByTestId('scenario-name').filter({ hasText: `explore-${FLAP}` }).waitFor();
  const counter = await page.getByTestId('step-counter').textContent();
  const [, step, total] = counter.match(/step (\d+)\/(\d+)/);
  assert.equal(step, total, `the reproduction is played to its end: ${counter}`);
  if (await page.getByTestId('show-full-trace').count() > 0) await page.getByTestId('show-full-trace').click();
  const trace = await page.getByTestId('trace-text').textContent();
  assert.match(trace, new RegExp(`explore: ${FLAP} broken: .*web\\.web\\[2\\]`), 'the replay reaches the violation');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the page stays responsive while the worker searches, and stop keeps the result so far', async () => {
  const { page, errors, context } = await openPage(browser);
  // Three reconnecting nodes: a search long enough to click around in.
  const three = fs.readFileSync(path.join(ROOT, 'tests/data/explore/three-reconnect.json'), 'utf8');
  await page.getByTestId('lessons').waitFor();
  await page.getByTestId('scenario-input').fill(three);
  await page.getByTestId('scenario-open').click();
  await page.getByTestId('cluster').waitFor();
  await openExplore(page, { profile: 'latest', maxOrders: 1_000_000 });
  await page.getByTestId('explore-start').click();
  const status = page.getByTestId('explore-status');
  await status.filter({ hasText: /^[1-9]\d* orders tried/ }).waitFor({ timeout: 60_000 });
  assert.equal(await page.getByTestId('explore-stop').isEnabled(), true, 'the search is running');

  // A click on the page is handled at once while the worker searches.
  const before = await page.getByTestId('step-counter').textContent();
  const started = Date.now();
  await page.getByTestId('step').click();
  await page.getByTestId('step-counter').filter({ hasText: 'step 1/' }).waitFor({ timeout: 2_000 });
  const clickMs = Date.now() - started;
  assert.notEqual(await page.getByTestId('step-counter').textContent(), before);
  assert.ok(clickMs < 2_000, `the click took ${clickMs} ms`);
  const first = Number((await status.textContent()).match(/^(\d+)/)[1]);
  await page.waitForFunction(
    ([n]) => Number(document.querySelector('[data-testid="explore-status"]').textContent.match(/^(\d+)/)[1]) > n,
    [first], { timeout: 30_000 });
  assert.equal(await page.getByTestId('explore-stop').isEnabled(), true, 'still searching after the click');

  await page.getByTestId('explore-stop').click();
  const summary = page.getByTestId('explore-summary');
  await summary.waitFor({ timeout: 10_000 });
  const text = await summary.textContent();
  assert.match(text, /^stopped — under latest: no violation; sampled: \d+ orders/, text);
  assert.equal(await page.getByTestId('explore-start').isEnabled(), true, 'a new search can start');
  assert.deepEqual(errors, []);
  await context.close();
});
