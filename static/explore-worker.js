// Explore mode's Web Worker (a module worker): loads the app's own wasm
// module (which mounts nothing here, there is no window) and runs the core
// explorer in short batches, posting progress after each, so the page stays
// responsive and a stop message is seen between two batches. Only plumbing:
// the search itself is the core's (src/explore.rs, via www/src/worker.rs).
import init, { explore_start, explore_batch, explore_result } from "./www.js";

const ready = init();
// Milliseconds of search between two progress messages.
const SLICE_MS = 40;
let run = 0;
let stopRequested = false;
let timer = null;

function done(stopped) {
  timer = null;
  postMessage(`{"type":"done","run":${run},"stopped":${stopped},"result":${explore_result()}}`);
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
  postMessage(`{"type":"progress","run":${run},"progress":${progress}}`);
  timer = setTimeout(slice, 0);
}

self.onmessage = async (event) => {
  await ready;
  const message = JSON.parse(event.data);
  if (message.type === "start") {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    run = message.run;
    stopRequested = false;
    const error = explore_start(message.scenario, message.config);
    if (error) {
      postMessage(JSON.stringify({ type: "error", run, message: error }));
      return;
    }
    postMessage(`{"type":"progress","run":${run},"progress":${explore_batch(1)}}`);
    timer = setTimeout(slice, 0);
  } else if (message.type === "stop") {
    stopRequested = true;
    if (timer !== null) {
      clearTimeout(timer);
      done(true);
    }
  }
};
