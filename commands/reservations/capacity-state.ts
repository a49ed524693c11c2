// The fold of one capacity stream (`capacity-<restaurant>-<day>`): the seatings that hold tables that
// day, at most one per reservation (a later SeatingHeld replaces the earlier one).
import type { RecordedEvent } from '../../src/ports/event-store';
import type { SeatingHeldData } from '../availability/capacity-events';

export interface CapacityState {
  /** Active seatings by reservation id. */
  held: ReadonlyMap<string, SeatingHeldData>;
}

export const initialCapacity: CapacityState = { held: new Map() };

export function evolveCapacity(state: CapacityState, event: RecordedEvent): CapacityState {
  if (event.type === 'SeatingHeld') {
    const data = event.data as unknown as SeatingHeldData;
    const held = new Map(state.held);
    held.set(data.reservation_id, data);
    return { held };
  }
  if (event.type === 'SeatingReleased') {
    const id = (event.data as { reservation_id: string }).reservation_id;
    if (!state.held.has(id)) return state;
    const held = new Map(state.held);
    held.delete(id);
    return { held };
  }
  return state;
}

/** The other seatings of the day: what a reservation's own (re)check must fit beside. */
export const seatingsExcept = (state: CapacityState, reservationId: string): SeatingHeldData[] =>
  [...state.held.values()].filter((s) => s.reservation_id !== reservationId);
