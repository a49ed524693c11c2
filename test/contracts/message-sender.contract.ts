// The behaviour every MessageSender adapter must show (src/ports/message-sender.ts). A test file
// registers it on its own suite with a harness that builds the adapter and says what it delivered:
//   messageSenderContract(test, harness); test.run();
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MessageSender, OutgoingMessage } from '../../src/ports/message-sender';

export interface Delivered {
  to: string;
  template: string;
  language: string;
  /** The parameter values, in order. */
  values: string[];
  /** The attempt's key as the other side keeps it (the outbox's key, the provider's callback data). */
  key: string;
}

export interface SenderFixture {
  sender: MessageSender;
  /** What actually reached the other side (the outbox, the provider), in order. */
  delivered(): Promise<Delivered[]>;
  close(): Promise<void>;
}

export interface SenderHarness {
  open(): Promise<SenderFixture>;
}

let seq = 0;
export function message(overrides: Partial<OutgoingMessage> = {}): OutgoingMessage {
  seq += 1;
  return {
    idempotency_key: `mc_contract${seq}.1`,
    restaurant_id: 'rest_demo',
    from_phone_number_id: '106540352242922',
    to: '+33612345678',
    template: {
      name: 'missed_call',
      language: 'fr',
      form: 'named',
      parameters: [
        { name: 'guest_name', value: 'Ada' },
        { name: 'restaurant_name', value: 'Le Demo' },
      ],
    },
    text: 'Bonjour Ada, Le Demo vous a manqué',
    ...overrides,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: uvu's suite context is whatever the caller keeps
export function messageSenderContract(test: Test<any>, harness: SenderHarness): void {
  const withFixture = (fn: (f: SenderFixture) => Promise<void>) => async () => {
    const f = await harness.open();
    try {
      await fn(f);
    } finally {
      await f.close();
    }
  };

  test(
    'a template message is accepted with the provider id it was given, and delivered once as sent',
    withFixture(async (f) => {
      const sent = message();
      const r = await f.sender.send(sent);
      assert.is(r.status, 'accepted');
      if (r.status !== 'accepted') return;
      assert.type(r.provider_message_id, 'string');
      assert.ok(r.provider_message_id.length > 0);
      assert.is(r.provider, f.sender.name);
      assert.equal(await f.delivered(), [
        {
          to: '+33612345678',
          template: 'missed_call',
          language: 'fr',
          values: ['Ada', 'Le Demo'],
          key: sent.idempotency_key,
        },
      ]);
    }),
  );

  test(
    'two messages (two keys) are two deliveries with two ids',
    withFixture(async (f) => {
      const a = await f.sender.send(message());
      const b = await f.sender.send(message({ to: '+447700900123' }));
      assert.ok(a.status === 'accepted' && b.status === 'accepted');
      if (a.status === 'accepted' && b.status === 'accepted')
        assert.is.not(a.provider_message_id, b.provider_message_id);
      assert.equal(
        (await f.delivered()).map((d) => d.to),
        ['+33612345678', '+447700900123'],
      );
    }),
  );

  test(
    'a recipient that is not an E.164 number is refused as invalid_recipient and nothing is delivered',
    withFixture(async (f) => {
      for (const to of ['0612345678', '+0612345678', 'abc', '']) {
        const r = await f.sender.send(message({ to }));
        assert.is(r.status, 'refused', to);
        if (r.status === 'refused') assert.is(r.kind, 'invalid_recipient');
      }
      assert.equal(await f.delivered(), []);
    }),
  );

  test(
    'a message without parameters is delivered without any',
    withFixture(async (f) => {
      const plain = message({ template: { name: 'plain', language: 'en', form: 'none', parameters: [] } });
      const r = await f.sender.send(plain);
      assert.is(r.status, 'accepted');
      assert.equal(await f.delivered(), [
        { to: '+33612345678', template: 'plain', language: 'en', values: [], key: plain.idempotency_key },
      ]);
    }),
  );

  test(
    'an idempotent sender delivers a key once however often it is asked; the others pass it along as a reference',
    withFixture(async (f) => {
      if (!f.sender.idempotent) {
        // Not idempotent (the missed-call handler never asks it twice for one key): the key still
        // travels with each delivery, so what the provider reports later names the attempt.
        const m = message();
        const r = await f.sender.send(m);
        assert.is(r.status, 'accepted');
        assert.equal(
          (await f.delivered()).map((d) => d.key),
          [m.idempotency_key],
        );
        return;
      }
      const m = message();
      const [a, b] = await Promise.all([f.sender.send(m), f.sender.send(m)]);
      const c = await f.sender.send(m);
      assert.ok(a.status === 'accepted' && b.status === 'accepted' && c.status === 'accepted');
      if (a.status === 'accepted' && b.status === 'accepted' && c.status === 'accepted') {
        assert.is(b.provider_message_id, a.provider_message_id);
        assert.is(c.provider_message_id, a.provider_message_id);
      }
      assert.is((await f.delivered()).length, 1);
    }),
  );
}
