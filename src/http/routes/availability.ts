import type { AnyRoute } from '../route';

export const availabilityRoutes: AnyRoute[] = [];
