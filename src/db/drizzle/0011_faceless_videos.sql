CREATE TABLE "faceless_videos" (
	"video_id" bigint PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"title" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"stage" text,
	"progress" integer DEFAULT 0 NOT NULL,
	"spec" jsonb NOT NULL,
	"credits" integer NOT NULL,
	"artifacts" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"output_media_id" uuid,
	"error" jsonb,
	"attempts" integer DEFAULT 0 NOT NULL,
	"job_id" text,
	"refunded_at" timestamp with time zone,
	"started_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "faceless_videos_progress_range" CHECK ("faceless_videos"."progress" between 0 and 100),
	CONSTRAINT "faceless_videos_completed_has_output" CHECK ("faceless_videos"."status" <> 'completed' or "faceless_videos"."output_media_id" is not null)
);
--> statement-breakpoint
ALTER TABLE "faceless_videos" ADD CONSTRAINT "faceless_videos_video_id_videos_id_fk" FOREIGN KEY ("video_id") REFERENCES "public"."videos"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "faceless_videos" ADD CONSTRAINT "faceless_videos_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "faceless_videos" ADD CONSTRAINT "faceless_videos_output_media_id_media_id_fk" FOREIGN KEY ("output_media_id") REFERENCES "public"."media"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "faceless_videos_org_idx" ON "faceless_videos" USING btree ("org_id","created_at");