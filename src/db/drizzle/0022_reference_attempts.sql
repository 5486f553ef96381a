ALTER TABLE "reference_inspirations" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "reference_inspirations" ADD COLUMN "started_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "reference_inspirations" ADD COLUMN "refunded_at" timestamp with time zone;--> statement-breakpoint
-- A reference whose analysis already ran (the stage runner's record in its state) counts one attempt, so it is not taken for queued work.
UPDATE "reference_inspirations" SET "attempts" = 1, "started_at" = "updated_at" WHERE "state" ? 'runs';
