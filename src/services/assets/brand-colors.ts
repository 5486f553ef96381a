// A brand kit's colours from its free-form `kit_data`: the ordered `colors` list (what the API's
// colour roles write), then the older `<role>_color` keys and `palette`, as #RRGGBB upper case,
// each once, first one first (renderers take the first as the background).
const HEX = /^#[0-9a-fA-F]{6}$/;

export function brandColors(kitData: unknown): string[] {
  const data = (kitData ?? {}) as Record<string, unknown>;
  const candidates = [
    ...(Array.isArray(data.colors) ? data.colors : []),
    data.primary_color,
    data.secondary_color,
    data.accent_color,
    ...(Array.isArray(data.palette) ? data.palette : []),
  ];
  return [...new Set(candidates.filter((c): c is string => typeof c === 'string' && HEX.test(c)).map((c) => c.toUpperCase()))];
}
