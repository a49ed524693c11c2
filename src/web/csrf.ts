// CSRF: every form carries the session's random token in a hidden `csrf_token` field, compared in
// constant time. A request without a session, or with another token, changes nothing.
import { constantTimeEqual } from '../core/ids';
import type { Session } from './sessions';

export const csrfValid = (session: Session | null, presented: unknown): session is Session =>
  session !== null && typeof presented === 'string' && constantTimeEqual(presented, session.doc.csrf);
