ALTER TABLE "reference_inspirations" ADD COLUMN "review_status" text DEFAULT 'not_required' NOT NULL;--> statement-breakpoint
ALTER TABLE "reference_inspirations" ADD COLUMN "inputs" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "reference_inspirations" ADD COLUMN "error" jsonb;--> statement-breakpoint
ALTER TABLE "reference_inspirations" ADD COLUMN "job_id" uuid;