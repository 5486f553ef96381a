-- In-flight idempotency keys are held by a transaction-scoped advisory lock now, and the record is
-- written in the same transaction as the work: the lock columns and the in_flight state are gone.
ALTER TABLE "idempotency_keys" DROP COLUMN IF EXISTS "lock_token";
--> statement-breakpoint
ALTER TABLE "idempotency_keys" DROP COLUMN IF EXISTS "locked_until";
