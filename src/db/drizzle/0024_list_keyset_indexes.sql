DROP INDEX "generations_org_idx";--> statement-breakpoint
DROP INDEX "slideshows_org_idx";--> statement-breakpoint
CREATE INDEX "generations_org_status_idx" ON "generations" USING btree ("org_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "generations_org_type_idx" ON "generations" USING btree ("org_id","type","created_at","id");--> statement-breakpoint
CREATE INDEX "videos_org_created_idx" ON "videos" USING btree ("org_id","created_at","id");--> statement-breakpoint
CREATE INDEX "videos_org_kind_idx" ON "videos" USING btree ("org_id","kind","created_at","id");--> statement-breakpoint
CREATE INDEX "slideshows_org_status_idx" ON "slideshows" USING btree ("org_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "generations_org_idx" ON "generations" USING btree ("org_id","created_at","id");--> statement-breakpoint
CREATE INDEX "slideshows_org_idx" ON "slideshows" USING btree ("org_id","created_at","id");