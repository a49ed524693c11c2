import type { AnyRoute } from '../route';

export const reservationRoutes: AnyRoute[] = [];
