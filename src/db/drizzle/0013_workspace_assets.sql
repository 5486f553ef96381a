ALTER TABLE "brand_kits" ADD COLUMN "logo_key" text;--> statement-breakpoint
ALTER TABLE "custom_avatars" ADD COLUMN "image_key" text;--> statement-breakpoint
ALTER TABLE "custom_voices" ADD COLUMN "sample_key" text;--> statement-breakpoint
ALTER TABLE "custom_voices" ADD COLUMN "base_voice" text;--> statement-breakpoint
ALTER TABLE "custom_voices" ADD COLUMN "pitch_hz" real;