ALTER TABLE "oauth_clients" ADD COLUMN "metadata_url" text;--> statement-breakpoint
ALTER TABLE "oauth_clients" ADD COLUMN "metadata_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "oauth_clients" ADD CONSTRAINT "oauth_clients_metadata_url_key" UNIQUE("metadata_url");