// Explore mode's Web Worker (a module worker): loads the tools module (the
// `tools` crate: the core's explorer, import and export, without the UI;
// not the app's own wasm) and runs the core explorer in short batches,
// posting progress after each, so the page stays responsive and a stop
// message is seen between two batches. Only plumbing: the search itself is
// the core's (src/explore.rs, via tools/src/lib.rs). A module that does not
// load (offline, a missing file) is reported as an error message.
let tools = null;
const ready = import("./tools.js")
  .then(async (module) => {
    await module.default();
    tools = module;
    return null;
  })
  .catch((err) => `could not load the explore module: ${err && err.message ? err.message : err}`);
const explore_start = (scenario, config) => tools.explore_start(scenario, config);
const explore_batch = (orders) => tools.explore_batch(orders);
const explore_result = () => tools.explore_result();

// Milliseconds of search between two progress messages.
const SLICE_MS = 40;
let run = 0;
let stopRequested = false;
let timer = null;

function done(stopped) {
  timer = null;
  postMessage(`{"done":{"run":${run},"stopped":${stopped},"result":${explore_result()}}}`);
}

function slice() {
  if (stopRequested) {
    done(true);
    return;
  }
  const start = performance.now();
  let progress = "null";
  let batch = 5;
  do {
    progress = explore_batch(batch);
    if (progress.includes('"done":true')) {
      done(false);
      return;
    }
    batch = Math.min(batch * 2, 200);
  } while (performance.now() - start < SLICE_MS);
  postMessage(`{"progress":{"run":${run},"progress":${progress}}}`);
  timer = setTimeout(slice, 0);
}

self.onmessage = async (event) => {
  const failed = await ready;
  const message = JSON.parse(event.data);
  if (failed !== null) {
    if (message.type === "start") {
      postMessage(JSON.stringify({ error: { run: message.run, message: failed } }));
    }
    return;
  }
  if (message.type === "start") {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    run = message.run;
    stopRequested = false;
    const error = explore_start(message.scenario, message.config);
    if (error) {
      postMessage(JSON.stringify({ error: { run, message: error } }));
      return;
    }
    postMessage(`{"progress":{"run":${run},"progress":${explore_batch(1)}}}`);
    timer = setTimeout(slice, 0);
  } else if (message.type === "stop") {
    stopRequested = true;
    if (timer !== null) {
      clearTimeout(timer);
      done(true);
    }
  }
};
