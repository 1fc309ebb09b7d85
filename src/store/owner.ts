/**
 * Stored conversations belong to an owner: the tenant of the API key that created them (the gateway's
 * `ctx.tenant`). Every conversation call of the store names the owner it acts for in its options (`{owner}`), and
 * another owner's conversation does not exist for it (not found, as an unknown id is). Calls that name none act
 * for `DEFAULT_OWNER`, the one user of a gateway without keys; conversations stored before owners existed are its.
 *
 * Other stored objects with owners (stored responses) follow the same rule: an `owner` column, set on creation,
 * and every read or write matched on it.
 */
export const DEFAULT_OWNER = "default";

/** Whose conversation or answer a call acts for: absent, `DEFAULT_OWNER`. */
export interface OwnerOptions {
  owner?: string;
}

/** The owner a call acts for: the one its options name, else `DEFAULT_OWNER`. */
export function ownerOf(options: { owner?: string } | undefined): string {
  return options?.owner ?? DEFAULT_OWNER;
}
