// rocescope inspector's worker: holds the capture and its index (the Rust Inspector,
// wasm/src/inspector.rs) off the page's thread, and answers the page's requests. Every
// request is a message { type, id, ... }; every answer carries the request's id.
//
//   open     { bytes: ArrayBuffer, options }  -> progress*, opened { summary, shown }
//   reindex  { options }                      -> progress*, opened { summary, shown } | refused { problem }
//   analyze  {}                               -> progress* { bytes: share done }, analyzed { analysis }
//                                                (a slice at a time, as filters run)
//   flow     { index }                        -> flow { timeline, svg } (a flow of the timeline)
//   rows     { first, count }                 -> rows { first, rows }
//   frame    { number }                       -> frame { info, bytes }
//   filter   { text }                         -> filtered { shown, done, problem }*
//   row_of   { number }                       -> row_of { row }
//   memory   {}                               -> memory { wasm, js } (bytes)
//
// A filter runs a slice of frames at a time and yields between slices, so rows and frames are
// answered while it runs; a newer filter (or open) ends an older one. Anything that throws,
// including a trap in the WebAssembly module, is answered { type: 'failed', message }.

import init, { Inspector } from './pkg/rocescope_wasm.js';

let inspector = null;
let filterGen = 0;
let analysisGen = 0;
let wasm = null;
const ready = init().then((w) => {
  wasm = w;
});

// Frames a filter looks at per slice.
const SLICE = 20000;

function post(msg, transfer) {
  self.postMessage(msg, transfer ?? []);
}

const progressTo = (id, total) => ({
  report(bytes, frames) {
    post({ type: 'progress', id, bytes, frames, total });
  },
});

function opened(id) {
  post({ type: 'opened', id, summary: JSON.parse(inspector.summary()), shown: inspector.shown() });
}

// Runs the analysers a slice at a time (the page's requests are answered between slices);
// an open or reindex ends a run.
function runAnalysis(id, gen) {
  if (gen !== analysisGen || !inspector) return;
  const done = inspector.analyze_step(SLICE);
  if (done < 1) {
    post({ type: 'progress', id, bytes: done, frames: 0, total: 1 });
    setTimeout(() => runAnalysis(id, gen), 0);
    return;
  }
  post({ type: 'analyzed', id, analysis: JSON.parse(inspector.analysis()) });
}

function runFilter(id, gen) {
  if (gen !== filterGen || !inspector) return;
  const done = inspector.filter_step(SLICE);
  post({ type: 'filtered', id, shown: inspector.shown(), done, problem: null });
  if (done < 1) setTimeout(() => runFilter(id, gen), 0);
}

async function handle(m) {
  await ready;
  switch (m.type) {
    case 'open': {
      filterGen++;
      analysisGen++;
      if (inspector) inspector.free();
      inspector = null;
      const bytes = new Uint8Array(m.bytes);
      // (Copied into the module's memory; the page's copy was transferred here and is dropped.)
      inspector = new Inspector(bytes, JSON.stringify(m.options), progressTo(m.id, bytes.length));
      opened(m.id);
      break;
    }
    case 'reindex': {
      const problem = inspector.reindex(JSON.stringify(m.options), progressTo(m.id, JSON.parse(inspector.summary()).file_bytes));
      if (problem) {
        // (Options that do not parse: the capture stays as it was indexed.)
        post({ type: 'refused', id: m.id, problem });
        break;
      }
      filterGen++;
      analysisGen++;
      opened(m.id);
      break;
    }
    case 'analyze':
      runAnalysis(m.id, ++analysisGen);
      break;
    case 'flow':
      post({ type: 'flow', id: m.id, timeline: JSON.parse(inspector.flow_timeline(m.index)), svg: inspector.flow_plot(m.index) });
      break;
    case 'rows':
      post({ type: 'rows', id: m.id, first: m.first, rows: JSON.parse(inspector.rows(m.first, m.count)) });
      break;
    case 'frame': {
      const bytes = inspector.frame_bytes(m.number);
      post({ type: 'frame', id: m.id, info: JSON.parse(inspector.frame(m.number)), bytes }, [bytes.buffer]);
      break;
    }
    case 'filter': {
      const gen = ++filterGen;
      const problem = inspector.set_filter(m.text);
      if (problem) {
        post({ type: 'filtered', id: m.id, shown: inspector.shown(), done: 1, problem: JSON.parse(problem) });
        break;
      }
      runFilter(m.id, gen);
      break;
    }
    case 'memory':
      // (For the benchmark: the module's memory, which holds the file and the index, and
      // this worker's JavaScript heap.)
      post({ type: 'memory', id: m.id, wasm: wasm.memory.buffer.byteLength, js: performance.memory?.usedJSHeapSize ?? null });
      break;
    case 'row_of':
      post({ type: 'row_of', id: m.id, row: inspector.row_of(m.number) });
      break;
    default:
      throw new Error(`unknown request ${m.type}`);
  }
}

self.onmessage = (e) => {
  handle(e.data).catch((err) => {
    // A trap leaves the module unusable: the capture must be opened again.
    const trapped = err instanceof WebAssembly.RuntimeError;
    if (trapped) inspector = null;
    post({ type: 'failed', id: e.data.id, request: e.data.type, message: `${err.name}: ${err.message}`, trapped });
  });
};
