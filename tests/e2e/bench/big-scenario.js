// The benchmarks' cluster: `nodes` client nodes and one job of 10 groups with `allocs` allocations
// in all, then 121 steps of advancing time.
function bigScenario(nodes, allocs) {
  const nodeSpecs = Array.from({ length: nodes }, (_, i) => ({ id: `node-${String(i).padStart(3, '0')}` }));
  const groups = Array.from({ length: 10 }, (_, g) => ({ name: `g${g}`, count: allocs / 10 }));
  const script = [{ action: 'advance', by: '5s' }];
  for (let i = 0; i < 120; i++) script.push({ action: 'advance', by: '1s' });
  return { version: 1, name: 'bench-200-nodes', nodes: nodeSpecs, jobs: [{ id: 'bench', groups }], script };
}

// Opens the big scenario in `page` (at the lessons page) and takes the first step, which places
// the allocations; the benchmarks measure the steps after it.
async function openBigScenario(page) {
  await page.getByTestId('lessons').waitFor();
  await page.getByTestId('scenario-input').fill(JSON.stringify(bigScenario(200, 2000)));
  await page.getByTestId('scenario-open').click();
  await page.getByTestId('cluster').waitFor();
  await page.getByTestId('step').click();
  await page.getByTestId('step-counter').filter({ hasText: /^step 1\// }).waitFor();
}

module.exports = { bigScenario, openBigScenario };
