// A secret shown once across a redirect (Post/Redirect/Get): an action that makes an API key's token
// or a signing secret puts it, sealed with the secrets key, on the manager's session, then redirects;
// the next page takes it off and shows it. Reloading either page makes nothing new and shows nothing
// twice, and the plain value is never in a URL, a log or the store.

import type { Runtime } from '../runtime';
import { SESSIONS, type Session, type SessionDoc } from './sessions';

export interface Flash {
  label: string;
  value: string;
  /** Where it may be shown (the page the action redirects to). */
  for: string;
}

export async function putFlash(rt: Runtime, session: Session, flash: Flash): Promise<void> {
  await rt.docs
    .collection<SessionDoc>(SESSIONS)
    .updateOne({ _id: session.doc._id }, { $set: { flash: rt.secrets.seal(JSON.stringify(flash)) } });
}

/** The flash meant for this page, removed from the session as it is read. */
export async function takeFlash(rt: Runtime, session: Session, page: string): Promise<Flash | null> {
  const sealed = session.doc.flash;
  if (typeof sealed !== 'string') return null;
  let flash: Flash | null = null;
  try {
    flash = JSON.parse(rt.secrets.open(sealed)) as Flash;
  } catch {
    flash = null;
  }
  if (flash && flash.for !== page) return null;
  await rt.docs
    .collection<SessionDoc>(SESSIONS)
    .updateOne({ _id: session.doc._id }, { $set: { flash: null } });
  return flash;
}
