// The service's stop signals (rt.stopping, the webhook publisher's): every outbound call in flight
// (a webhook attempt, a WhatsApp send) listens to one and takes its listener off when it ends, so a
// busy service has as many listeners as calls in flight. Node warns past ten ("Possible EventTarget
// memory leak detected") on stderr under ordinary load (the soak: a slow endpoint holds eight), a
// false alarm an operator would chase: these signals take any number. That each call takes its
// listener off is the calls' own rule (src/webhooks/deliver.ts, whatsapp-cloud.ts); with no bound Node
// no longer warns of a real leak, so webhooks-stop-listeners checks none is left once the calls end.
import { setMaxListeners } from 'node:events';

/** `signal`, which may have any number of listeners without a warning. */
export function manyListeners<T extends AbortSignal>(signal: T): T {
  setMaxListeners(0, signal);
  return signal;
}

/** An AbortController whose signal may have any number of listeners. */
export function stopController(): AbortController {
  const controller = new AbortController();
  manyListeners(controller.signal);
  return controller;
}
