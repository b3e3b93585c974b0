// The benchmarks' cluster: `nodes` client nodes and one job of 10 groups with `allocs` allocations
// in all, then 121 steps of advancing time.
function bigScenario(nodes, allocs) {
  const nodeSpecs = Array.from({ length: nodes }, (_, i) => ({ id: `node-${String(i).padStart(3, '0')}` }));
  const groups = Array.from({ length: 10 }, (_, g) => ({ name: `g${g}`, count: allocs / 10 }));
  const script = [{ action: 'advance', by: '5s' }];
  for (let i = 0; i < 120; i++) script.push({ action: 'advance', by: '1s' });
  return { version: 1, name: 'bench-200-nodes', nodes: nodeSpecs, jobs: [{ id: 'bench', groups }], script };
}

module.exports = { bigScenario };
