// The endpoint page around a secret rotation, over HTTP as a browser without JavaScript: the notice a
// link can carry (?done=rotated) is said only when a rotation holds, and the previous secret is
// listed only while it still signs (24 hours; the publisher's rule), with the service's clock moved on.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AdjustableClock } from '../../src/core/clock';
import { formFields, oauthBootstrapWith, pageText, signedInAt } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const FRONT = 'couvert_pk_front_desk_rotate_0123456789abcdefghij';

interface Ctx {
  svc: TestService;
  clock: AdjustableClock;
  id: string;
}
const t = suite<Ctx>('dashboard: a webhook secret rotation', {} as Ctx);

t.before(async (ctx) => {
  const bootstrap = oauthBootstrapWith({
    api_keys: [
      { id: 'key_front', name: 'Front desk', token: FRONT, scopes: ['CUSTOMERS_READ', 'WEBHOOKS_WRITE'] },
    ],
  });
  ctx.clock = new AdjustableClock();
  ctx.svc = await startTestService({ bootstrap, clock: ctx.clock });
  const made = await ctx.svc.api('POST', '/webhook-endpoints', {
    token: FRONT,
    body: { url: 'https://example.com/rotate' },
  });
  assert.is(made.status, 201, made.text);
  ctx.id = made.body.data.id as string;
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

const ROTATED = /The secret is rotated/;

const signedIn = (svc: TestService, path: string) => signedInAt(svc.url, path);

t('done=rotated is said only of a rotation whose previous secret still signs', async ({ svc, clock, id }) => {
  const page = `/dashboard/webhooks/${id}?restaurant=rest_demo`;
  const b = await signedIn(svc, page);
  // Never rotated: a link cannot make the page say it was.
  const never = await b.get(`${page}&done=rotated`);
  assert.is(never.status, 200);
  assert.not.match(pageText(never.text), ROTATED);

  // Rotated from the page: the notice, the new secret once, and the previous one listed.
  const view = await b.get(page);
  const ask = await b.post(
    `/dashboard/webhooks/${id}/rotate`,
    formFields(view.text, `/dashboard/webhooks/${id}/rotate`),
  );
  const done = await b.post(
    `/dashboard/webhooks/${id}/rotate`,
    formFields(ask.text, `/dashboard/webhooks/${id}/rotate`),
  );
  assert.is(done.status, 303, done.text.slice(0, 300));
  const after = await b.get(done.location as string);
  assert.match(pageText(after.text), ROTATED);
  assert.match(pageText(after.text), /Previous secret Still signs until/);

  // 25 hours on, the previous secret signs no more: neither the notice nor the line says it does.
  clock.advance(25 * 3600);
  const later = await signedIn(svc, page);
  const stale = await later.get(`${page}&done=rotated`);
  assert.is(stale.status, 200);
  assert.not.match(pageText(stale.text), ROTATED);
});

t('once the previous secret stops signing, the page no longer lists it', async ({ svc, id }) => {
  // The clock is 25 hours past the rotation of the test before.
  const page = `/dashboard/webhooks/${id}?restaurant=rest_demo`;
  const b = await signedIn(svc, page);
  const text = pageText((await b.get(page)).text);
  assert.match(text, /Rotate the secret/);
  assert.not.match(text, /Previous secret/);
  assert.not.match(text, /Still signs until/);
});

t.run();
