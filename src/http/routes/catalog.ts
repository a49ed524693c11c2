import type { AnyRoute } from '../route';

export const catalogRoutes: AnyRoute[] = [];
