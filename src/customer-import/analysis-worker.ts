// The import's second core (analysis.ts): reads, checks and keys chunks of rows sent by the main
// thread, which only matches and writes.
import { parentPort, workerData } from 'node:worker_threads';
import { type AnalysisContext, analyzeCells } from './analysis';

const ctx = workerData as AnalysisContext;
parentPort?.on('message', (m: { chunk: number; first: number; rows: string[][] }) => {
  const rows = m.rows.map((cells, i) => analyzeCells(cells, m.first + i + 1, ctx));
  // As JSON text: parsing it is cheaper for the main thread than a structured clone of the objects.
  parentPort?.postMessage({ chunk: m.chunk, json: JSON.stringify(rows) });
});
