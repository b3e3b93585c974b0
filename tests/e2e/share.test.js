// Sharing in the browser: links (open, tamper), autosave and recovery, import of Nomad API JSON and
// HCL by paste, file picker and drop, and every export. Runs against `cargo xtask dist`.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { launch, openPage, screenshot, BASE_URL } = require('./helpers');

const ROOT = path.resolve(__dirname, '..', '..');
const SAMPLES = path.join(ROOT, 'tests', 'samples', 'import');

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

async function waitForStep(page, step) {
  await page.getByTestId('step-counter').filter({ hasText: new RegExp(`^step ${step}/`) }).waitFor();
}

async function openLesson(page, id, profile, steps) {
  await page.getByTestId(`lesson-${id}`).click();
  await page.getByTestId('cluster').waitFor();
  if (profile) {
    await page.getByTestId('profile').selectOption(profile);
    await page.getByTestId('profile').and(page.locator(`:has(option[value="${profile}"]:checked)`)).waitFor();
  }
  for (let step = 1; step <= steps; step++) {
    await page.getByTestId('step').click();
    await waitForStep(page, step);
  }
}

// What the screen shows: enough to tell two states apart.
async function screenState(page) {
  return {
    scenario: await page.getByTestId('scenario-name').textContent(),
    step: await page.getByTestId('step-counter').textContent(),
    clock: await page.getByTestId('clock').textContent(),
    profile: await page.getByTestId('profile').inputValue(),
    nodes: await page.locator('[data-testid^="node-"][data-status]').evaluateAll((nodes) =>
      nodes.map((n) => `${n.dataset.testid}:${n.dataset.status}:${n.dataset.link}`).sort()),
    allocs: await page.locator('[data-testid^="alloc-"]').evaluateAll((allocs) =>
      allocs.map((a) => `${a.dataset.testid}:${a.className}`).sort()),
  };
}

async function shareLink(page) {
  await page.getByTestId('share').click();
  const link = await page.getByTestId('share-link').inputValue();
  assert.match(link, /#v1\.[A-Za-z0-9_-]+$/);
  return link;
}

test('a shared link opened in a fresh browser context shows the same screen and step', async () => {
  const a = await openPage(browser);
  await openLesson(a.page, 'issue-14925', '1.4.2', 6);
  // A user action on top of the script travels with the link.
  await a.page.getByTestId('advance-30s').click();
  await waitForStep(a.page, 7);
  const before = await screenState(a.page);
  const link = await shareLink(a.page);
  assert.equal(new URL(a.page.url()).hash, new URL(link).hash, 'the link is in the address bar');
  await screenshot(a.page, 'share-link');

  const b = await openPage(browser, new URL(link).pathname + new URL(link).hash);
  await b.page.getByTestId('cluster').waitFor();
  await waitForStep(b.page, 7);
  assert.deepEqual(await screenState(b.page), before);
  assert.deepEqual(a.errors, []);
  assert.deepEqual(b.errors, []);
  await a.context.close();
  await b.context.close();
});

// The autosave waits for the work to settle, but a link in the address bar that no longer shows
// the work leaves it at the first change, and a reload right after a change loses nothing.
test('a link leaves the address bar at the first change, and a reload right after a change keeps it', async () => {
  const a = await openPage(browser);
  await openLesson(a.page, 'pr-15808-register-race', null, 2);
  const link = await shareLink(a.page);
  const b = await openPage(browser, new URL(link).pathname + new URL(link).hash);
  await b.page.getByTestId('cluster').waitFor();
  await waitForStep(b.page, 2);
  assert.equal(new URL(b.page.url()).hash, new URL(link).hash, 'the opened link stays while it shows the work');
  await b.page.getByTestId('step').click();
  await waitForStep(b.page, 3);
  assert.equal(await b.page.evaluate(() => window.location.hash), '', 'the stale link is gone at once');
  // Two more steps and an immediate reload: the save waits, but leaving the page saves.
  await b.page.getByTestId('step').click();
  await waitForStep(b.page, 4);
  await b.page.getByTestId('step').click();
  await waitForStep(b.page, 5);
  const work = await screenState(b.page);
  await b.page.reload();
  await b.page.getByTestId('cluster').waitFor();
  assert.deepEqual(await screenState(b.page), work, 'the reload restores step 5');
  assert.deepEqual(a.errors, []);
  assert.deepEqual(b.errors, []);
  await a.context.close();
  await b.context.close();
});

test('a tampered link shows what is wrong and keeps the current work', async () => {
  const a = await openPage(browser);
  await openLesson(a.page, 'lost-after-expiry', null, 2);
  const link = await shareLink(a.page);
  await a.page.getByTestId('step').click();
  await waitForStep(a.page, 3);
  const work = await screenState(a.page);

  // Flip characters in the middle of the payload, as a bad copy would.
  const hash = new URL(link).hash;
  const middle = Math.floor(hash.length / 2);
  const flipped = hash.slice(0, middle) + (hash[middle] === 'A' ? 'B' : 'A') + (hash[middle + 1] === 'z' ? 'y' : 'z') + hash.slice(middle + 2);
  // Pasted into the address bar of the open page (a hash change, no reload).
  await a.page.evaluate((h) => { window.location.hash = h; }, flipped);
  const message = a.page.getByTestId('message');
  await message.waitFor();
  assert.match(await message.textContent(), /could not open the link: .*(damaged|invalid)/);
  assert.deepEqual(await screenState(a.page), work, 'the current work is untouched');

  // A link cut short, opened in a new page load of the same browser: the autosave stays open.
  await a.page.goto(`${BASE_URL}/?reload#${hash.slice(1, 40)}`);
  await a.page.getByTestId('message').waitFor();
  assert.match(await a.page.getByTestId('message').textContent(), /could not open the link: the link is damaged: .*/);
  await a.page.getByTestId('cluster').waitFor();
  assert.deepEqual(await screenState(a.page), work, 'the autosave is still open');
  // An unknown link version says so.
  await a.page.evaluate(() => { window.location.hash = '#v7.AAAA'; });
  await a.page.getByTestId('message').filter({ hasText: 'v7' }).waitFor();
  assert.deepEqual(a.errors, []);
  await a.context.close();
});

test('the autosave survives a reload, and a link keeps the replaced work recoverable', async () => {
  const a = await openPage(browser);
  await openLesson(a.page, 'disconnect-reconnect-keep-original', '1.5.0', 3);
  await a.page.getByTestId('node-node-a').getByTestId('link-toggle').click();
  const work = await screenState(a.page);
  await a.page.reload();
  await a.page.getByTestId('cluster').waitFor();
  assert.deepEqual(await screenState(a.page), work, 'reload restores scenario, step, profile and edits');

  // Opening someone's link replaces the work on screen, but not for good.
  const other = await openPage(browser);
  await openLesson(other.page, 'pr-15808-register-race', null, 2);
  const link = await shareLink(other.page);
  await other.context.close();
  await a.page.goto(`${BASE_URL}/?open${new URL(link).hash}`);
  await a.page.getByTestId('cluster').waitFor();
  await waitForStep(a.page, 2);
  assert.match(await a.page.getByTestId('scenario-name').textContent(), /15808|register/i);
  await a.page.getByTestId('home').click();
  const recover = a.page.getByTestId('recover-previous');
  await recover.waitFor();
  assert.match(await recover.textContent(), /at step 4/);
  await recover.click();
  await a.page.getByTestId('cluster').waitFor();
  assert.deepEqual(await screenState(a.page), work, 'the previous work is back');
  assert.deepEqual(a.errors, []);
  await a.context.close();
});

test('importing Nomad API JSON by paste, by drop and an HCL jobspec by file picker gives the expected jobs and nodes', async () => {
  const { page, errors, context } = await openPage(browser);
  // Paste `nomad job inspect` output on the start page.
  await page.getByTestId('import-text').fill(fs.readFileSync(path.join(SAMPLES, 'job-inspect.json'), 'utf8'));
  await page.getByTestId('import-open').click();
  await page.getByTestId('cluster').waitFor();
  const expected = JSON.parse(fs.readFileSync(path.join(SAMPLES, 'expected', 'job-inspect.json'), 'utf8'));
  for (const node of expected.nodes) await page.getByTestId(`node-${node.id}`).waitFor();
  for (const job of expected.jobs) await page.getByTestId(`job-${job.id}`).waitFor();
  const warnings = await page.getByTestId('import-warnings').textContent();
  assert.match(warnings, /Job\.TaskGroups\[0\]\.Networks/, 'warnings name the field');
  await screenshot(page, 'import-warnings');

  // Drop a file on the import panel.
  await openImport(page);
  const drop = async (name) => {
    const text = fs.readFileSync(path.join(SAMPLES, name), 'utf8');
    const transfer = await page.evaluateHandle(([n, t]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([t], n, { type: 'application/json' }));
      return dt;
    }, [name, text]);
    await page.getByTestId('import-drop').dispatchEvent('drop', { dataTransfer: transfer });
  };
  await drop('node-allocations.json');
  const nodeExpected = JSON.parse(fs.readFileSync(path.join(SAMPLES, 'expected', 'node-and-allocations.json'), 'utf8'));
  await page.getByTestId('node-f7476465-4d6e-c0de-26d0-e383c49be941').waitFor();
  await page.getByTestId('job-web').waitFor();
  assert.ok(nodeExpected.nodes.some((n) => n.id === 'f7476465-4d6e-c0de-26d0-e383c49be941'));

  // An HCL jobspec from the file picker.
  await openImport(page);
  await page.getByTestId('import-file').setInputFiles(path.join(SAMPLES, 'web.nomad.hcl'));
  const hcl = JSON.parse(fs.readFileSync(path.join(SAMPLES, 'expected', 'web-hcl.json'), 'utf8'));
  await page.getByTestId(`node-${hcl.nodes[0].id}`).waitFor();
  await page.getByTestId(`job-${hcl.jobs[0].id}`).waitFor();
  assert.deepEqual(
    (await page.locator('[data-testid^="node-"][data-status]').evaluateAll((ns) => ns.map((n) => n.dataset.testid))).sort(),
    hcl.nodes.map((n) => `node-${n.id}`).sort(),
  );
  assert.equal(await page.getByTestId(`job-${hcl.jobs[0].id}`).getByTestId('group-count').first().textContent(),
    String(hcl.jobs[0].groups[0].count));

  // Bad input: the error names the input and where, and the work stays.
  const before = await screenState(page);
  await openImport(page);
  await page.getByTestId('import-text').fill('{"Job": {"ID": "web", "TaskGroups": [{"Name": "web", "Count": "three"}]}}');
  await page.getByTestId('import-open').click();
  const message = page.getByTestId('message');
  await message.waitFor();
  assert.match(await message.textContent(), /pasted: .*TaskGroups\[0\]\.Count/);
  assert.deepEqual(await screenState(page), before);
  assert.deepEqual(errors, []);
  await context.close();
});

async function openImport(page) {
  if (!(await page.getByTestId('import-panel').isVisible())) await page.getByTestId('import-toggle').click();
  await page.getByTestId('import-panel').waitFor();
}

function nativeExport(args, scenarioFile) {
  if (!process.env.NATIVE_CLI) return null;
  return execFileSync(process.env.NATIVE_CLI, ['export', ...args, scenarioFile], { encoding: 'utf8' });
}

test('every export gives the expected kind of text, the same as the CLI', async () => {
  const { page, errors, context } = await openPage(browser, '/', { acceptDownloads: true });
  await openLesson(page, 'issue-12680', '1.4.2', 0);
  await page.getByTestId('run-to-end').click();
  const { step } = await page.getByTestId('step-counter').textContent().then((t) => ({ step: Number(t.match(/step (\d+)/)[1]) }));
  await page.getByTestId('export-toggle').click();
  const exportText = async (kind) => {
    await page.getByTestId(`export-${kind}`).click();
    await page.getByTestId('export-kind').and(page.locator(`[data-kind="${kind}"]`)).waitFor();
    return page.getByTestId('export-text').inputValue();
  };
  const scenarioText = await exportText('scenario');
  const scenario = JSON.parse(scenarioText);
  assert.equal(scenario.version, 1);
  assert.ok(scenario.script.length >= step);
  const traceText = await exportText('trace');
  const trace = JSON.parse(traceText);
  assert.ok(Array.isArray(trace) && trace.length > 0 && 'event' in trace[0]);
  const mermaid = await exportText('mermaid');
  assert.match(mermaid, /^sequenceDiagram\n/);
  const issue = await exportText('issue');
  assert.match(issue, /#v1\.[A-Za-z0-9_-]+\)/);
  assert.match(issue, /```mermaid\nsequenceDiagram/);
  assert.match(issue, /1\.4\.2/);

  // The eval fixture: the latest processed eval by default, valid against the fixture FORMAT.
  const fixtureText = await exportText('fixture');
  const fixture = JSON.parse(fixtureText);
  assert.equal(fixture.format, 1);
  assert.equal(fixture.kind, 'cluster');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'share-e2e-'));
  const fixtureFile = path.join(dir, 'fixture.json');
  fs.writeFileSync(fixtureFile, fixtureText);
  // validate.py checks keys and types against FORMAT.md: the export must pass it as it is.
  let problems = '';
  try {
    execFileSync('python3', [path.join(ROOT, 'tests', 'conformance', 'validate.py'), fixtureFile], { encoding: 'utf8' });
  } catch (err) {
    problems = String(err.stdout) + String(err.stderr);
  }
  assert.equal(problems, '', problems);
  if (process.env.NATIVE_CLI) {
    // And this build's reconciler gives the fixture's `expect`.
    assert.match(execFileSync(process.env.NATIVE_CLI, ['reconcile', '--check', fixtureFile], { encoding: 'utf8' }), /: pass/);
  }

  // Download gives the same text under a fitting file name.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-download').click()]);
  assert.equal(download.suggestedFilename(), 'fixture.json');
  assert.equal(fs.readFileSync(await download.path(), 'utf8'), fixtureText);

  // The browser's exports are the CLI's, byte for byte.
  const scenarioFile = path.join(dir, 'scenario.json');
  fs.writeFileSync(scenarioFile, scenarioText);
  const at = ['--profile', '1.4.2', '--step', String(step)];
  const native = nativeExport(['--mermaid', ...at], scenarioFile);
  if (native !== null) {
    assert.equal(native, mermaid);
    assert.equal(nativeExport(['--trace-json', ...at], scenarioFile), traceText);
    assert.equal(nativeExport(['--scenario', ...at], scenarioFile), scenarioText);
    const evalId = await page.getByTestId('export-eval').inputValue();
    assert.equal(nativeExport(['--fixture', evalId, ...at], scenarioFile), fixtureText);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('when the tools module cannot load, the export panel says so and keeps working, and a later try loads it', async () => {
  const { page, errors, context } = await openPage(browser);
  await openLesson(page, 'issue-12680', '1.4.2', 0);
  let blocked = true;
  await context.route('**/tools*', (route) => (blocked ? route.abort() : route.continue()));
  await page.getByTestId('export-toggle').click();
  await page.getByTestId('export-mermaid').click();
  const error = page.getByTestId('export-error');
  await error.waitFor();
  assert.match(await error.textContent(), /could not load the tools module/);
  // The scenario export is made on the page, without the tools module.
  await page.getByTestId('export-scenario').click();
  await page.getByTestId('export-kind').and(page.locator('[data-kind="scenario"]')).waitFor();
  assert.equal(JSON.parse(await page.getByTestId('export-text').inputValue()).version, 1);
  blocked = false;
  await page.getByTestId('export-mermaid').click();
  await page.getByTestId('export-kind').and(page.locator('[data-kind="mermaid"]')).waitFor();
  assert.match(await page.getByTestId('export-text').inputValue(), /^sequenceDiagram\n/);
  assert.deepEqual(errors.filter((e) => e.startsWith('pageerror')), []);
  await context.close();
});
