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

const ROLES = ['primary', 'secondary', 'accent', 'background', 'text'] as const;

/** A brand kit's colours by role (kit_data.color_roles, else the `<role>_color` keys), in role order, #RRGGBB upper case. */
export function brandColorRoles(kitData: unknown): { role: string; hex: string }[] {
  const data = (kitData ?? {}) as Record<string, unknown>;
  const roles = (typeof data.color_roles === 'object' && data.color_roles ? data.color_roles : {}) as Record<string, unknown>;
  return ROLES.flatMap((role) => {
    const c = roles[role] ?? data[`${role}_color`];
    return typeof c === 'string' && HEX.test(c) ? [{ role, hex: c.toUpperCase() }] : [];
  });
}

/** A brand kit's fonts from its free-form `kit_data.fonts` (names, or {family}), in order, each once. */
export function brandFonts(kitData: unknown): string[] {
  const data = (kitData ?? {}) as Record<string, unknown>;
  const raw = Array.isArray(data.fonts) ? data.fonts : typeof data.fonts === 'object' && data.fonts ? Object.values(data.fonts) : [];
  const names = raw.map((f) =>
    typeof f === 'string'
      ? f
      : typeof f === 'object' && f && typeof (f as { family?: unknown }).family === 'string'
        ? (f as { family: string }).family
        : undefined,
  );
  return [...new Set(names.filter((f): f is string => typeof f === 'string' && f.length > 0 && f.length <= 100))];
}

/** An older kit's logo URL (kit_data.logo_url or logo, http(s) only); uploaded logos are in storage (logo_key) instead. */
export function brandLogoUrl(kitData: unknown): string | undefined {
  const data = (kitData ?? {}) as Record<string, unknown>;
  return [data.logo_url, data.logo].find((v): v is string => typeof v === 'string' && /^https?:\/\/\S+$/i.test(v));
}
