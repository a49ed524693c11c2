// Finds the declared route for a method and path, or says why none answers (404, or 405 with the
// methods the path allows). Built once from the route declarations: a static path is one Map lookup;
// a path with parameters is compared segment by segment against the few patterns of its length, so
// the cost of a request does not grow with the number of routes (a regex per route did).

export type RouteLookup<R> =
  | { kind: 'found'; route: R; path: string; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: string[] }
  | { kind: 'not_found' };

interface Pattern<R> {
  path: string;
  /** A literal segment, or null where a parameter goes. */
  segments: (string | null)[];
  names: string[];
  byMethod: Map<string, R>;
}

const PARAM = /^\{(\w+)\}$/;

/** `/customers/{id}/` and `/customers/{id}` are the same path; the root stays `/`. */
const normalise = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    // Malformed escapes stay as sent; the parameter's schema then refuses them with a clear message.
    return segment;
  }
}

export class RouteTable<R> {
  private readonly statics = new Map<string, Map<string, R>>();
  private readonly patterns = new Map<number, Pattern<R>[]>();

  /** `path` in OpenAPI style (`/customers/{id}`); one route per method and path. */
  constructor(entries: Iterable<{ method: string; path: string; route: R }>) {
    for (const { method, path, route } of entries) {
      const segments = normalise(path).split('/');
      const names: string[] = [];
      const parts = segments.map((s) => {
        const m = PARAM.exec(s);
        if (!m) return s;
        names.push(m[1] as string);
        return null;
      });
      let byMethod: Map<string, R>;
      if (names.length === 0) {
        byMethod = this.statics.get(normalise(path)) ?? new Map();
        this.statics.set(normalise(path), byMethod);
      } else {
        const list = this.patterns.get(parts.length) ?? [];
        this.patterns.set(parts.length, list);
        // `/a/{x}` and `/a/{y}` are one path: they match the same requests.
        let pattern = list.find((p) => p.segments.every((seg, i) => seg === parts[i]));
        if (!pattern) {
          pattern = { path: normalise(path), segments: parts, names, byMethod: new Map() };
          list.push(pattern);
        }
        byMethod = pattern.byMethod;
      }
      if (byMethod.has(method)) throw new Error(`two routes for ${method} ${path}`);
      byMethod.set(method, route);
    }
  }

  lookup(method: string, rawPath: string): RouteLookup<R> {
    const path = normalise(rawPath);
    // A literal path wins over a pattern that also matches it (`/customers/search` over `/customers/{id}`),
    // but only for a method it has; otherwise the patterns get their turn before a 405.
    const fixed = this.statics.get(path);
    const allowed = new Set<string>();
    if (fixed) {
      const route = pick(fixed, method);
      if (route !== undefined) return { kind: 'found', route, path, params: {} };
      for (const m of fixed.keys()) allowed.add(m);
    }
    const segments = path.split('/');
    for (const p of this.patterns.get(segments.length) ?? []) {
      if (!fits(p.segments, segments)) continue;
      const route = pick(p.byMethod, method);
      if (route === undefined) {
        for (const m of p.byMethod.keys()) allowed.add(m);
        continue;
      }
      const params: Record<string, string> = {};
      let n = 0;
      for (let i = 0; i < segments.length; i++)
        if (p.segments[i] === null) params[p.names[n++] as string] = decode(segments[i] as string);
      return { kind: 'found', route, path: p.path, params };
    }
    return allowed.size ? { kind: 'method_not_allowed', allowed: [...allowed] } : { kind: 'not_found' };
  }
}

/** HEAD is answered like GET (Koa leaves the body out). */
const pick = <R>(byMethod: Map<string, R>, method: string): R | undefined =>
  byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined);

function fits(pattern: (string | null)[], segments: string[]): boolean {
  for (let i = 0; i < segments.length; i++) {
    const want = pattern[i];
    if (want === null ? segments[i] === '' : want !== segments[i]) return false;
  }
  return true;
}
