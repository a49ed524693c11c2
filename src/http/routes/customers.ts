import type { AnyRoute } from '../route';

export const customerRoutes: AnyRoute[] = [];
