// Checks Mermaid diagrams with the real Mermaid parser, headless in Node.
//
// Usage: node validate.mjs <install dir>   (the directory `npm install --prefix` filled with
// mermaid and happy-dom; .ci/run exports it as TOLLGATE_MERMAID_VALIDATOR)
// stdin:  a JSON array of diagram texts
// stdout: a JSON array, one entry per diagram:
//   {"ok": false, "error": "..."} or
//   {"ok": true, "type": "...", "nodes": [{"id", "label"}], "edges": [[from, to]],
//    "tasks": [{"id", "name", "start", "end"}]}
// Labels are decoded the way a browser would show them, so a test can check that escaped text
// comes back unchanged; task times are ISO strings (null when Mermaid could not compute one).
//
// Mermaid sanitises labels with DOMPurify, which needs a DOM: happy-dom's Window provides it
// (jsdom needs a newer Node, linkedom has an unpublished dependency).

import { pathToFileURL } from 'node:url';
import path from 'node:path';

const installDir = process.argv[2];
if (!installDir) {
  process.stderr.write('usage: node validate.mjs <mermaid install dir>\n');
  process.exit(2);
}
const modules = path.resolve(installDir, 'node_modules');
const load = (rel) => import(pathToFileURL(path.join(modules, rel)).href);

const { Window } = await load('happy-dom/lib/index.js');
const window = new Window();
globalThis.window = window;
globalThis.document = window.document;
const { default: mermaid } = await load('mermaid/dist/mermaid.core.mjs');
mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });

// Mermaid hides entity codes (`#quot;`, `#35;`) behind placeholders while it parses and turns
// them back into HTML entities when it renders; do the same, then let the DOM decode them.
function displayed(text) {
  const html = String(text ?? '')
    .replace(/ﬂ°°/g, '&#')
    .replace(/ﬂ°/g, '&')
    .replace(/¶ß/g, ';');
  const element = document.createElement('span');
  element.innerHTML = html;
  return element.textContent;
}

function time(value) {
  return value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString() : null;
}

async function check(text) {
  try {
    await mermaid.parse(text);
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    const result = { ok: true, type: diagram.type, nodes: [], edges: [], tasks: [] };
    const db = diagram.db;
    if (typeof db.getVertices === 'function') {
      for (const vertex of db.getVertices().values()) {
        result.nodes.push({ id: vertex.id, label: displayed(vertex.text) });
      }
      for (const edge of db.getEdges()) {
        result.edges.push([edge.start, edge.end]);
      }
    }
    if (typeof db.getSubGraphs === 'function') {
      for (const subgraph of db.getSubGraphs()) {
        result.nodes.push({ id: subgraph.id, label: displayed(subgraph.title) });
      }
    }
    if (typeof db.getTasks === 'function') {
      for (const task of db.getTasks()) {
        result.tasks.push({
          id: task.id,
          name: displayed(task.task).trim(),
          start: time(task.startTime),
          end: time(task.endTime),
        });
      }
    }
    return result;
  } catch (error) {
    return { ok: false, error: String(error?.message ?? error) };
  }
}

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const diagrams = JSON.parse(input);
const results = [];
for (const text of diagrams) {
  results.push(await check(text));
}
process.stdout.write(JSON.stringify(results));
