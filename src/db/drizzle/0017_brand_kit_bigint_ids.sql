ALTER TABLE "brand_kits" ALTER COLUMN "id" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "brand_kits" ALTER COLUMN "id" SET MAXVALUE 9223372036854775807;--> statement-breakpoint
ALTER TABLE "brand_kits" ALTER COLUMN "brand_id" SET DATA TYPE bigint;