// What each ledger reason means: its transaction type and the resource its reference names.
// Every reason written to credit_ledger is declared here; applyCreditChange refuses any other (and the type of its `reason` is this table's keys), so a new reason cannot
// reach the ledger without saying what it is.
export type CreditTransactionType = 'charge' | 'refund' | 'grant' | 'adjustment';
type ResourceObject = 'generation_batch' | 'generation' | 'slideshow' | 'video' | 'reference_inspiration' | 'social_publication';

interface ReasonMeaning {
  type: CreditTransactionType;
  /** The reference's prefix (`prefix:id`) and the resource it names; none for grants. */
  resource?: { prefix: string; object: ResourceObject };
}

/** Every ledger reason, by what writes it. */
export const LEDGER_REASONS = {
  // Workspaces (services/workspaces/organizations.ts): credits at creation, admin top-ups.
  initial_grant: { type: 'grant' },
  admin_grant: { type: 'grant' },
  // Charged commands (ChargedCommand.ledger): the charge of an accepted paid request.
  generation_charge: { type: 'charge', resource: { prefix: 'batch', object: 'generation_batch' } },
  slideshow_charge: { type: 'charge', resource: { prefix: 'slideshow', object: 'slideshow' } },
  faceless_video_charge: { type: 'charge', resource: { prefix: 'faceless-video', object: 'video' } },
  reference_charge: { type: 'charge', resource: { prefix: 'reference', object: 'reference_inspiration' } },
  publication_charge: { type: 'charge', resource: { prefix: 'publication', object: 'social_publication' } },
  // Resource declarations (src/kernel refund): failed or canceled work refunded once.
  generation_refund: { type: 'refund', resource: { prefix: 'generation', object: 'generation' } },
  slideshow_refund: { type: 'refund', resource: { prefix: 'slideshow', object: 'slideshow' } },
  faceless_video_refund: { type: 'refund', resource: { prefix: 'faceless-video', object: 'video' } },
  reference_refund: { type: 'refund', resource: { prefix: 'reference', object: 'reference_inspiration' } },
} as const satisfies Record<string, ReasonMeaning>;

export type LedgerReason = keyof typeof LEDGER_REASONS;

export const isLedgerReason = (reason: string): reason is LedgerReason => Object.hasOwn(LEDGER_REASONS, reason);

/** The reasons of one transaction type (the `type` filter). */
export const reasonsOf = (type: CreditTransactionType): LedgerReason[] =>
  (Object.keys(LEDGER_REASONS) as LedgerReason[]).filter((r) => LEDGER_REASONS[r].type === type);
