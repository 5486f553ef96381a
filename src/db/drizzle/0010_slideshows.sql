CREATE TABLE "slideshow_slides" (
	"slideshow_id" uuid NOT NULL,
	"index" integer NOT NULL,
	"media_id" uuid NOT NULL,
	"text" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "slideshow_slides_slideshow_id_index_pk" PRIMARY KEY("slideshow_id","index")
);
--> statement-breakpoint
CREATE TABLE "slideshows" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"video_id" bigint NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"stage" text,
	"progress" integer DEFAULT 0 NOT NULL,
	"title" text NOT NULL,
	"slide_count" integer NOT NULL,
	"aspect_ratio" text NOT NULL,
	"spec" jsonb NOT NULL,
	"credits" integer NOT NULL,
	"copy" jsonb,
	"project_version" integer,
	"video_media_id" uuid,
	"error" jsonb,
	"attempts" integer DEFAULT 0 NOT NULL,
	"job_id" text,
	"refunded_at" timestamp with time zone,
	"started_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "slideshows_slide_count_range" CHECK ("slideshows"."slide_count" between 1 and 10),
	CONSTRAINT "slideshows_progress_range" CHECK ("slideshows"."progress" between 0 and 100),
	CONSTRAINT "slideshows_credits_non_negative" CHECK ("slideshows"."credits" >= 0),
	CONSTRAINT "slideshows_completed_has_video" CHECK ("slideshows"."status" <> 'completed' or "slideshows"."video_media_id" is not null)
);
--> statement-breakpoint
ALTER TABLE "slideshow_slides" ADD CONSTRAINT "slideshow_slides_slideshow_id_slideshows_id_fk" FOREIGN KEY ("slideshow_id") REFERENCES "public"."slideshows"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "slideshow_slides" ADD CONSTRAINT "slideshow_slides_media_id_media_id_fk" FOREIGN KEY ("media_id") REFERENCES "public"."media"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "slideshows" ADD CONSTRAINT "slideshows_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "slideshows" ADD CONSTRAINT "slideshows_video_id_editor_videos_video_id_fk" FOREIGN KEY ("video_id") REFERENCES "public"."editor_videos"("video_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "slideshows" ADD CONSTRAINT "slideshows_video_media_id_media_id_fk" FOREIGN KEY ("video_media_id") REFERENCES "public"."media"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "slideshows_org_idx" ON "slideshows" USING btree ("org_id","created_at");