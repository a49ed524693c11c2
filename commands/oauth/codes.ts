// Pure rules for authorization codes (spec §3): issued, then used once, expired after 5 minutes, or
// presented a second time (refused, and the token it issued is revoked).
import { constantTimeEqual } from '../../src/core/ids';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import type { CodeIssuedData } from './events';
import { VERIFIER, verifierMatches } from './pkce';

export interface CodeState {
  issued: CodeIssuedData | null;
  /** The store position of OAuthCodeIssued (what came before the code, in the log's order). */
  issued_position: bigint | null;
  /** The API key the redemption created. */
  redeemed_key_id: string | null;
  replayed: boolean;
}
export const initialCode: CodeState = {
  issued: null,
  issued_position: null,
  redeemed_key_id: null,
  replayed: false,
};

export function evolveCode(state: CodeState, event: RecordedEvent): CodeState {
  const d = event.data as Record<string, unknown>;
  switch (event.type) {
    case 'OAuthCodeIssued':
      return { ...state, issued: d as unknown as CodeIssuedData, issued_position: event.position };
    case 'OAuthCodeRedeemed':
      return { ...state, redeemed_key_id: d.key_id as string };
    case 'OAuthCodeReplayed':
      return { ...state, replayed: true };
    default:
      return state;
  }
}

/** Why a token request's grant is refused (RFC 6749 §5.2 invalid_grant), in words for error_description. */
export class GrantRefused extends Error {
  override name = 'GrantRefused';
}

export interface Redemption {
  client_id: string;
  redirect_uri: string | undefined;
  code_verifier: string | undefined;
  key_id: string;
  now: Date;
}

/**
 * The redemption decision. A code already redeemed yields the replay event (the caller revokes the key
 * and then refuses); every other refusal throws GrantRefused and appends nothing.
 */
export function decideRedeem(state: CodeState, r: Redemption): NewEvent[] {
  const code = state.issued;
  if (!code) throw new GrantRefused('The authorization code is unknown');
  if (!constantTimeEqual(code.client_id, r.client_id))
    throw new GrantRefused('The authorization code was issued to another client');
  if (state.redeemed_key_id) {
    const at = r.now.toISOString();
    // Recorded once: later presentations are refused without a new event.
    if (state.replayed) return [];
    return [
      {
        type: 'OAuthCodeReplayed',
        data: {
          code_hash: code.code_hash,
          key_id: state.redeemed_key_id,
          restaurant_id: code.restaurant_id,
          at,
        },
      },
    ];
  }
  if (r.now.getTime() >= Date.parse(code.expires_at))
    throw new GrantRefused(
      'The authorization code has expired (a code is valid 5 minutes): send the manager to /oauth/authorize again and exchange the new code at once',
    );
  if (r.redirect_uri !== code.redirect_uri)
    throw new GrantRefused('redirect_uri differs from the one of the authorization request');
  // A verifier outside RFC 7636's form is said to be so, not to "not match": its maker can fix it.
  if (r.code_verifier !== undefined && !VERIFIER.test(r.code_verifier))
    throw new GrantRefused('code_verifier must be 43 to 128 characters among A-Z a-z 0-9 - . _ ~');
  if (r.code_verifier === undefined || !verifierMatches(r.code_verifier, code.code_challenge))
    throw new GrantRefused('code_verifier does not match the code_challenge');
  return [
    {
      type: 'OAuthCodeRedeemed',
      data: { code_hash: code.code_hash, key_id: r.key_id, at: r.now.toISOString() },
    },
  ];
}
