// The per-platform options a post needs (publish_media_to_social's platform_options), checked
// before anything is queued like the limits: a missing required option is a 400 naming the
// account and the option. One entry per platform that needs any.
import { TIKTOK_PRIVACY } from './platforms/tiktok.ts';
import { youtubeTitle } from './platforms/youtube.ts';
import type { SocialPlatform } from './accounts.ts';

export interface OptionProblem {
  /** The option's name under platform_options.<platform>. */
  option: string;
  problem: string;
}

type Check = (options: Record<string, unknown>, caption: string) => OptionProblem | undefined;

const OPTION_CHECKS: Partial<Record<SocialPlatform, Check>> = {
  // TikTok: the creator picks the privacy level (no default, per TikTok's rules); it must also be
  // one of the creator's privacy_level_options, checked when posting.
  // The title TikTok takes counts UTF-16 code units (an emoji is two).
  tiktok: (o, caption) => {
    if (typeof o.privacy_level !== 'string' || !(o.privacy_level in TIKTOK_PRIVACY)) {
      return {
        option: 'privacy_level',
        problem: `platform_options.tiktok.privacy_level is required (${Object.keys(TIKTOK_PRIVACY).join(', ')})`,
      };
    }
    if (caption.length > 2200)
      return { option: 'caption', problem: `the caption is ${caption.length} UTF-16 units; tiktok allows at most 2200` };
    return undefined;
  },
  // YouTube: a title (the option, else the caption's first line); no angle brackets; description ≤ 5000 bytes.
  youtube: (o, caption) => {
    const title = youtubeTitle(o, caption);
    if (!title)
      return { option: 'title', problem: 'platform_options.youtube.title is required (or a caption whose first line becomes the title)' };
    if (/[<>]/.test(title)) return { option: 'title', problem: 'YouTube titles cannot contain < or >' };
    if (/[<>]/.test(caption)) return { option: 'caption', problem: 'YouTube descriptions cannot contain < or >' };
    if (Buffer.byteLength(caption) > 5000)
      return {
        option: 'caption',
        problem: `the caption is ${Buffer.byteLength(caption)} bytes; youtube allows at most 5000 in a description`,
      };
    return undefined;
  },
  // Pinterest: the board to pin to.
  pinterest: (o) => {
    if (typeof o.board_id !== 'string' || !o.board_id)
      return { option: 'board_id', problem: 'platform_options.pinterest.board_id is required (the board to pin to)' };
    if (!/^\d+$/.test(o.board_id)) return { option: 'board_id', problem: 'a Pinterest board_id is a string of digits' };
    return undefined;
  },
};

export function checkOptions(
  platform: SocialPlatform,
  allOptions: Record<string, unknown> | undefined,
  caption: string,
): OptionProblem | undefined {
  const own = (allOptions?.[platform] ?? {}) as Record<string, unknown>;
  return OPTION_CHECKS[platform]?.(own, caption);
}
