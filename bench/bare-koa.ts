// The baseline: a bare Koa route answering the same JSON as GET /me, with no auth, store or logging.
import Koa from 'koa';

const body = {
  data: {
    restaurant: {
      id: 'rest_bench',
      name: 'Bench',
      slug: 'bench',
      country_code: 'FR',
      timezone: 'Europe/Paris',
      currency: 'EUR',
    },
    scopes: ['CATALOG_READ', 'AVAILABILITY_READ'],
    credential: {
      id: 'key_bench',
      type: 'API_KEY',
      application: null,
      created_at: '2026-01-01T00:00:00.000Z',
    },
  },
};
const app = new Koa();
app.use((ctx) => {
  ctx.body = body;
});
const server = app.listen(0, '127.0.0.1', () => {
  const a = server.address();
  if (a && typeof a === 'object') console.log(`listening on http://127.0.0.1:${a.port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
