// Screenshots of the main screens for the README, saved into docs/screenshots/.
// Run against a built app: `BASE_URL=http://127.0.0.1:8080 node screenshots.js` (from tests/e2e).
// Not a test (node --test does not pick it up), so the pictures change only when asked.
const fs = require('node:fs');
const path = require('node:path');
const { launch, openPage } = require('./helpers');

const OUT = path.resolve(__dirname, '..', '..', 'docs', 'screenshots');

async function waitForStep(page, step) {
  await page.getByTestId('step-counter').filter({ hasText: new RegExp(`^step ${step}/`) }).waitFor();
}

async function openLesson(browser, id, profile, options = {}) {
  const opened = await openPage(browser, '/', options);
  await opened.page.getByTestId(`lesson-${id}`).click();
  await opened.page.getByTestId('cluster').waitFor();
  if (profile) await opened.page.getByTestId('profile').selectOption(profile);
  return opened;
}

async function stepTo(page, step) {
  for (let at = 1; at <= step; at++) {
    await page.getByTestId('step').click();
    await waitForStep(page, at);
  }
}

async function shoot(page, name, focusTestId) {
  const file = path.join(OUT, `${name}.png`);
  // A tall window rather than a full-page capture, so the sticky scrubber sits at the bottom
  // as it does on screen (panels sized in vh grow with the window, so no fit-to-content).
  await page.setViewportSize({ width: 1440, height: 1400 });
  await page.evaluate(() => window.scrollTo(0, 0));
  if (focusTestId) await page.getByTestId(focusTestId).evaluate((el) => el.scrollIntoView({ block: 'center' }));
  await page.screenshot({ path: file });
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
}

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const browser = await launch();
  try {
    const light = { colorScheme: 'light' };
    // The lessons page.
    {
      const { page, context } = await openPage(browser, '/', light);
      await page.getByTestId('lessons').waitFor();
      await shoot(page, 'lessons');
      await context.close();
    }
    // A lesson's first step: pr-15068 under 1.4.2, the three nodes placed, their calls drawn.
    {
      const { page, context } = await openLesson(browser, 'pr-15068-heartbeat-order', '1.4.2', light);
      await stepTo(page, 1);
      await shoot(page, 'first-screen');
      await context.close();
    }
    // A node dragged to the Offline zone: its link is cut, and once its heartbeat TTL runs out
    // the servers mark it disconnected and its alloc unknown.
    {
      const { page, context } = await openLesson(browser, 'disconnect-reconnect-best-score', null, light);
      await stepTo(page, 1);
      const node = page.getByTestId('node-node-a');
      await page.dragAndDrop('[data-testid="node-node-a"]', '[data-testid="offline-zone"]');
      await page.locator('[data-testid="offline-zone"] [data-testid="node-node-a"]').waitFor();
      for (let attempt = 0; attempt < 6 && (await node.getAttribute('data-status')) !== 'disconnected'; attempt++) {
        await page.getByTestId('advance-30s').click();
      }
      await page.locator('[data-testid="node-node-a"][data-status="disconnected"]').waitFor();
      await shoot(page, 'node-disconnected');
      await context.close();
    }
    // PR #15068 under 1.4.2: node-c's UpdateAlloc is delivered before its heartbeat (step 9) and
    // accepted while the node is still disconnected; the diagram shows the order.
    {
      const { page, context } = await openLesson(browser, 'pr-15068-heartbeat-order', '1.4.2', light);
      await stepTo(page, 10);
      // The newest rows: the diagram scrolled to its end (in the window `shoot` uses).
      await page.setViewportSize({ width: 1440, height: 1400 });
      await page.locator('.sequence-scroll').evaluate((box) => { box.scrollTop = box.scrollHeight; });
      await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
      await shoot(page, 'reorder-1.4.2-upd-first', 'sequence');
      await context.close();
    }
    // Mid-reconnect: pr-15068 at step 8, node-c's link is back, its calls are held and a
    // heartbeat queues behind the UpdateAlloc in the dock.
    {
      const { page, context } = await openLesson(browser, 'pr-15068-heartbeat-order', '1.4.2', light);
      await stepTo(page, 8);
      await page.getByTestId('dock-node-c').getByTestId('send-heartbeat').click();
      await page.getByTestId('dock-node-c').locator('[data-code="HB"]').first().waitFor();
      await shoot(page, 'reconnect', 'call-dock');
      await context.close();
    }
    // The eval inspector after a disconnect and a reconnect.
    {
      const { page, context } = await openLesson(browser, 'disconnect-reconnect-best-score', null, light);
      await page.getByTestId('run-to-end').click();
      await page.locator('.eval-row', { hasText: 'node-update' }).first().click();
      await page.getByTestId('eval-detail').waitFor();
      await shoot(page, 'eval-inspector');
      await context.close();
    }
    // A canary deployment waiting for the operator: the jobs panel's deployment box with its
    // per-group counts and the Promote button, the canary's corner on its alloc block.
    {
      const { page, context } = await openLesson(browser, 'canary-manual-promote', null, light);
      await stepTo(page, 8);
      await page.getByTestId('job-web').getByTestId('deployment').and(page.locator('[data-status="running"]')).waitFor();
      await shoot(page, 'deployment', 'jobs');
      await context.close();
    }
    // Compare: 1.4.2 against 1.4.3 once the runs have parted, then the same in the dark theme.
    {
      const { page, context } = await openLesson(browser, 'pr-15068-heartbeat-order', '1.4.2', light);
      await page.getByTestId('compare-profile').selectOption('1.4.3');
      await stepTo(page, 10);
      await page.getByTestId('compare-diff').waitFor();
      await shoot(page, 'compare');
      await page.getByTestId('theme').click();
      await page.locator('html[data-theme="dark"]').waitFor({ state: 'attached' });
      await shoot(page, 'dark');
      await context.close();
    }
  } finally {
    await browser.close();
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
