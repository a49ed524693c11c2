// The import's second core (analysis.ts): reads, checks and keys chunks of rows sent by the main
// thread, which only matches and writes. A chunk comes as one string of cells and goes back as one
// string of the rows' JSON (analysis.ts ANALYSIS_CHUNK says why).
import { parentPort, workerData } from 'node:worker_threads';
import {
  type AnalysisContext,
  analyzeForImport,
  decodeCells,
  type EncodedCells,
  encodeRows,
} from './analysis';

const ctx = workerData as AnalysisContext;
parentPort?.on('message', (m: { chunk: number; first: number } & EncodedCells) => {
  const rows = decodeCells(m).map((cells, i) => analyzeForImport(cells, m.first + i + 1, ctx));
  const encoded = encodeRows(rows);
  parentPort?.postMessage({ chunk: m.chunk, ...encoded }, [encoded.ends.buffer as ArrayBuffer]);
});
