// The API option's third-party rule (spec §5), the one place it is written: an application the operator
// published works on every restaurant; a third-party application only where the restaurant's API option
// is on. Used by the consent pages (which restaurants are offered), the token endpoint (a code redeemed
// after the option went off), the partner API's authentication (a token answers 401 meanwhile) and the
// webhook publisher (its endpoints receive nothing meanwhile).

/**
 * Whether `app` may act for `restaurant` as far as the API option goes. An application not known (null:
 * not registered, or deleted since) counts as third-party.
 */
export const apiOptionAllows = (
  restaurant: { readonly api_option: boolean },
  app: { readonly published_by_operator: boolean } | null | undefined,
): boolean => restaurant.api_option === true || app?.published_by_operator === true;
