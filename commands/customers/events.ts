// Customer events (stream `customer-<id>`). Every event carries restaurant_id and customer_id, and
// enough for a read model (or the webhook publisher) to update without loading anything else.
import { publishesWebhook } from '../../src/core/no-webhook';
import type { EventMetadata } from '../../src/ports/event-store';

export const LANGS = ['FR', 'EN', 'IT', 'ES', 'DE', 'PT'] as const;
export type Lang = (typeof LANGS)[number];

/** Channels on which marketing must not be sent (unsubscribed, bounced, blocked). */
export const OPT_OUT_CHANNELS = ['EMAIL', 'WHATSAPP'] as const;
export type OptOutChannel = (typeof OPT_OUT_CHANNELS)[number];

export type CustomFieldValue = string | number | boolean | string[];
/** A custom field as shown on the customer: the definition's name at write time and the value. */
export interface StoredCustomField {
  name: string;
  value: CustomFieldValue;
}

/** What a partner (or a channel, or staff) can write about a customer. */
export interface CustomerProfile {
  name: string;
  email: string | null;
  /** E.164 when the number could be read; otherwise as given with whitespace removed. */
  phone_number: string | null;
  /** The phone number's country (ISO 3166-1 alpha-2), null when it could not be read. */
  country_code: string | null;
  lang: Lang;
  tags: string[];
  note: string | null;
  custom_fields: Record<string, StoredCustomField>;
  newsletter_consent: boolean;
  external_id: string | null;
}

/** Where a customer came from; recorded for auditors, never shown to partners. */
export type CustomerOrigin = 'API' | 'RESERVATION' | 'CHANNEL' | 'OPERATOR' | 'IMPORT' | 'MISSED_CALL';

interface Base {
  customer_id: string;
  restaurant_id: string;
  at: string;
}

export type CustomerEvent =
  | {
      type: 'CustomerCreated';
      /** `draft`: created by a messaging channel and hidden from partners until published. */
      data: Base & { profile: CustomerProfile; draft: boolean; origin: CustomerOrigin };
    }
  /** Changed fields only, with their previous values (the webhook's previous_attributes). */
  | {
      type: 'CustomerUpdated';
      data: Base & { changes: Partial<CustomerProfile>; previous: Partial<CustomerProfile> };
    }
  /**
   * `at_creation`: appended with the CustomerCreated before it, in one append (a customer created
   * blacklisted); its customer.created says so, and it publishes nothing of its own.
   */
  | { type: 'CustomerBlacklisted'; data: Base & { reason: string | null; at_creation?: true } }
  | { type: 'CustomerBlacklistCleared'; data: Base }
  | { type: 'MarketingOptOutAdded'; data: Base & { channel: OptOutChannel; reason: string | null } }
  | { type: 'MarketingOptOutRemoved'; data: Base & { channel: OptOutChannel } }
  /**
   * On the surviving customer's stream: `merged_customer_id` was folded into it. `changes` and
   * `previous` are the fields the merge filled in, as in CustomerUpdated; opt-outs and the blacklist
   * flag are carried over so that a merge never re-enables marketing or a blacklisted guest.
   */
  | {
      type: 'CustomerMerged';
      data: Base & {
        merged_customer_id: string;
        changes: Partial<CustomerProfile>;
        previous: Partial<CustomerProfile>;
        marketing_opt_outs: OptOutChannel[];
        blacklisted: boolean;
      };
    }
  /** On the absorbed customer's stream, written first: from here on it only answers "merged". */
  | { type: 'CustomerMergedInto'; data: Base & { into_customer_id: string } }
  /**
   * `into_customer_id`: on the stream of a customer merged into one being deleted, deleted with it
   * (the same person: their own events, sealed with their own keys, are erased too; no webhook).
   * `relinks`: written by code that records the deletion on its reservations (since 2026-11-28), so
   * a deletion without it owes none (`audit erase --pending`, commands/reservations/unfinished-relinks.ts).
   */
  | {
      type: 'CustomerDeleted';
      data: Base & { reason: string | null; into_customer_id?: string; relinks?: true };
    }
  | { type: 'CustomerDraftFlagged'; data: Base & { channel: string } }
  | { type: 'CustomerDraftPublished'; data: Base };

export type CustomerEventType = CustomerEvent['type'];

export const CUSTOMER_EVENT_TYPES: readonly CustomerEventType[] = [
  'CustomerCreated',
  'CustomerUpdated',
  'CustomerBlacklisted',
  'CustomerBlacklistCleared',
  'MarketingOptOutAdded',
  'MarketingOptOutRemoved',
  'CustomerMerged',
  'CustomerMergedInto',
  'CustomerDeleted',
  'CustomerDraftFlagged',
  'CustomerDraftPublished',
];

/**
 * The v1 webhook type (spec §6) an event is published as, or null, for the webhook publisher. Drafts
 * are invisible to partners: nothing about them is published, flagging a visible customer as a draft
 * reads as a deletion and publishing a draft as a creation. The absorbed side of a merge is announced
 * by the surviving side's customer.merged. An event marked `metadata.no_webhook` (a CSV import) is
 * never published. Other events of a customer that is a draft when they
 * happen are not published either: that needs the customer's state, so the publisher checks it.
 */
export function webhookTypeOf(event: {
  type: string;
  data: unknown;
  metadata?: EventMetadata | null;
}): string | null {
  // Marked "publish no webhook" (a CSV import, src/core/no-webhook.ts): nothing, whatever the type.
  if (!publishesWebhook(event)) return null;
  switch (event.type as CustomerEventType) {
    case 'CustomerCreated':
      return (event.data as { draft?: boolean }).draft ? null : 'customer.created';
    case 'CustomerBlacklisted':
      return (event.data as { at_creation?: boolean }).at_creation ? null : 'customer.updated';
    case 'CustomerUpdated':
    case 'CustomerBlacklistCleared':
    case 'MarketingOptOutAdded':
    case 'MarketingOptOutRemoved':
      return 'customer.updated';
    case 'CustomerMerged':
      return 'customer.merged';
    case 'CustomerDeleted':
      // A customer merged away was announced by the survivor's customer.merged: nothing more.
      return typeof (event.data as { into_customer_id?: unknown }).into_customer_id === 'string'
        ? null
        : 'customer.deleted';
    case 'CustomerDraftFlagged':
      return 'customer.deleted';
    case 'CustomerDraftPublished':
      return 'customer.created';
    default:
      return null;
  }
}

export const customerStream = (id: string) => `customer-${id}`;
