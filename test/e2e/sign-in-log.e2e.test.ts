// A failed sign-in is answered 200 (the form again) and a limited one 429 with a page: the access log
// showed neither as a failure, so guessing against a manager's account left no trace. Each now writes
// one structured line (event, reason, the account as a keyed hash and its user id, the client address),
// and no line carries the email or the password.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { captureLog } from '../helpers/log-sink';
import { Browser, oauthBootstrap, signIn } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const WRONG = 'a wrong guess, kept out of logs';
const UNKNOWN = 'nobody-here@demo.test';

const t = suite<{ svc: TestService; lines: string[] }>('sign-in log', {} as never);
t.before(async (ctx) => {
  const { lines, logger } = captureLog();
  ctx.lines = lines;
  ctx.svc = await startTestService({
    bootstrap: oauthBootstrap(),
    env: { SIGN_IN_FAILURES_PER_ACCOUNT: '2' },
    logger,
  });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

// biome-ignore lint/suspicious/noExplicitAny: log lines are arbitrary JSON
const events = (lines: string[], event: string): any[] =>
  lines
    .flatMap((l) => l.split('\n'))
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .filter((l) => l.event === event);

t(
  'a failed sign-in and a refused one each write a line naming the account by hash, never in clear',
  async (ctx) => {
    const b = new Browser(ctx.svc.url);
    const page = await b.get('/sign-in');
    assert.match((await signIn(b, page, 'manager@demo.test', WRONG)).text, /incorrect/);
    assert.match((await signIn(b, page, UNKNOWN, WRONG)).text, /incorrect/);

    const failed = events(ctx.lines, 'sign_in_failed');
    assert.is(failed.length, 2, 'one line per failure');
    const [wrong, unknown] = failed;
    assert.is(wrong.reason, 'wrong_password');
    assert.match(wrong.user_id, /^usr_/);
    assert.is(wrong.ip, '127.0.0.1');
    assert.match(wrong.request_id, /\S/);
    assert.match(wrong.account, /^[A-Za-z0-9_-]{22}$/);
    assert.is(unknown.reason, 'unknown_account');
    assert.is(unknown.user_id, null);
    assert.is.not(unknown.account, wrong.account, 'accounts are told apart');

    // The account's second failure spends its budget: the next attempt, right password or not, is held.
    await signIn(b, page, 'manager@demo.test', WRONG);
    assert.is((await signIn(b, page, 'manager@demo.test')).status, 429);
    const [locked, ...more] = events(ctx.lines, 'sign_in_locked');
    assert.is(more.length, 0, 'one line per refusal');
    assert.is(locked.reason, 'too_many_attempts_of_account');
    assert.is(locked.account, wrong.account, 'the same account, the same hash');
    assert.ok(locked.retry_after_seconds >= 1);

    const all = ctx.lines.join('');
    for (const secret of ['manager@demo.test', UNKNOWN, WRONG])
      assert.not.ok(all.includes(secret), `the log never holds ${secret}`);
  },
);

t.run();
