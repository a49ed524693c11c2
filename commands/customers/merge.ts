// Merge command: close the absorbed customer, then fold it into the surviving one. Each step appends
// with its stream's expected revision; running the merge again after a crash between them finishes it.
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import type { WriteDeps } from '../../src/core/write-deps';
import { decideAbsorb, decideMergeInto } from './decide-merge';
import { customerStream } from './events';
import { loadCustomer } from './handler';
import { type CustomerState, evolveCustomer, initialCustomer } from './state';

export interface MergeOutcome {
  /** Last position appended, null when the merge had already happened. */
  position: bigint | null;
  target: CustomerState;
}

export async function mergeCustomers(
  deps: WriteDeps,
  sourceId: string,
  intoId: string,
  meta: CommandMeta,
): Promise<MergeOutcome> {
  const at = deps.clock.now().toISOString();
  const common = { initial: initialCustomer, evolve: evolveCustomer, metadata: meta, clock: deps.clock };
  const target = await loadCustomer(deps, intoId);
  const closed = await runCommand<CustomerState>(deps.events, {
    ...common,
    stream: customerStream(sourceId),
    decide: (source) => decideMergeInto(source, sourceId, target, intoId, at),
  });
  const absorbed = await runCommand<CustomerState>(deps.events, {
    ...common,
    stream: customerStream(intoId),
    decide: (t) => decideAbsorb(t, intoId, closed.state, sourceId, at),
  });
  return { position: absorbed.position ?? closed.position, target: absorbed.state };
}
