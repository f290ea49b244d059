// Reads a merged reactorfed trace with Chrome DevTools' trace engine (the importer of its
// Performance panel) and prints what it made of it as JSON: per process, its threads and
// their entries; and every flow, as the names and pids of its events.
import fs from 'node:fs';
import * as Trace from '@paulirish/trace_engine/models/trace/trace.js';

globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) { Object.assign(this, {x, y, width, height}); }
};
const events = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')).traceEvents;
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const data = model.parsedTrace(0).data;
const processes = {};
for (const [pid, proc] of data.Renderer.processes) {
  const threads = {};
  for (const [tid, th] of proc.threads) {
    threads[tid] = {name: th.name ?? null, entries: (th.entries ?? []).map(e => e.name)};
  }
  processes[pid] = threads;
}
const flows = data.Flows.flows.map(f => f.map(e => ({name: e.name, pid: e.pid, tid: e.tid})));
console.log(JSON.stringify({processes, flows}));
