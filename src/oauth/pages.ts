// The sign-in and consent pages of the OAuth flow: plain server-rendered HTML, no script.
// Accessible by construction: a language, one h1 per page, every field with a visible <label>,
// autocomplete hints, errors in a role="alert" region that the invalid fields point at
// (aria-describedby, aria-invalid) and focus moved to the field to fix (autofocus), a fieldset
// with a legend for the permissions, real buttons, visible focus, and colours with AA contrast.

export const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const STYLE = `
:root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.5; }
body { margin: 0; background: #f3f4f6; color: #111827; }
main { max-width: 28rem; margin: 3rem auto; padding: 2rem; background: #fff; border-radius: 12px; box-shadow: 0 1px 3px rgba(0,0,0,.15); }
h1 { font-size: 1.4rem; line-height: 1.3; margin: 0 0 1rem; }
p { margin: 0 0 1rem; }
label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
input[type=email], input[type=password] { box-sizing: border-box; width: 100%; padding: .6rem .75rem; font: inherit; border: 1px solid #6b7280; border-radius: 6px; }
input[aria-invalid=true] { border: 2px solid #b91c1c; }
fieldset { border: 1px solid #d1d5db; border-radius: 8px; margin: 1rem 0; padding: .5rem 1rem 1rem; }
legend { font-weight: 600; padding: 0 .25rem; }
.scope { display: flex; gap: .6rem; align-items: flex-start; margin-top: .75rem; }
.scope input { margin-top: .3rem; width: 1.1rem; height: 1.1rem; }
.scope label { margin: 0; font-weight: 400; }
.scope code { font-weight: 600; }
button { font: inherit; font-weight: 600; padding: .6rem 1.2rem; border-radius: 6px; border: 2px solid #1d4ed8; background: #1d4ed8; color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: #1d4ed8; }
button.link { border: none; background: none; color: #1d4ed8; padding: 0; text-decoration: underline; font-weight: 400; }
.actions { display: flex; gap: .75rem; margin-top: 1.5rem; flex-wrap: wrap; }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.alert { border: 2px solid #b91c1c; background: #fef2f2; color: #7f1d1d; border-radius: 8px; padding: .75rem 1rem; margin: 0 0 1rem; }
.note { color: #374151; font-size: .92rem; }
.who { background: #f9fafb; border-radius: 8px; padding: .75rem 1rem; }
.apps { list-style: none; padding: 0; margin: 0; display: grid; gap: .75rem; }
.apps h2 { font-size: 1.05rem; margin: 0 0 .25rem; }
.apps form { margin: 0; }
.status { border: 2px solid #047857; background: #ecfdf5; color: #064e3b; border-radius: 8px; padding: .75rem 1rem; }
`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · Media API</title>
<style>${STYLE}</style>
</head>
<body>
<main aria-labelledby="page-title">
${body}
</main>
</body>
</html>
`;
}

const hidden = (name: string, value: string) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`;

export interface ClientView {
  name: string | null;
  redirectHost: string;
  /** The host publishing the app's Client ID Metadata Document (its client_id URL), if it has one. */
  idHost?: string;
}

/** Where the app's name comes from, for the notes under the forms. */
const nameSource = (c: ClientView) =>
  c.idHost
    ? `The app's name is published by the app at <strong>${esc(c.idHost)}</strong>.`
    : "The app's name is supplied by the app itself.";

const clientLabel = (c: ClientView) => (c.name ? `“${esc(c.name)}”` : 'An app');

/**
 * The error (if any), then a sign-in form posting to `action` with the hidden fields, email and
 * password (marked invalid and pointing at the error after a failure; focus where the fix goes).
 */
function signInForm(
  action: string,
  hiddenFields: Record<string, string>,
  email: string | undefined,
  err: string | undefined,
  intro: string,
): string {
  const invalid = err ? ' aria-invalid="true" aria-describedby="form-error"' : '';
  const focusEmail = !err || !email;
  return `${err ? `<div class="alert" role="alert" id="form-error">${esc(err)}</div>` : ''}
${intro}
<form method="post" action="${esc(action)}" novalidate>
${Object.entries(hiddenFields)
  .map(([k, v]) => hidden(k, v))
  .join('\n')}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${esc(email ?? '')}"${invalid}${focusEmail ? ' autofocus' : ''}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${invalid}${focusEmail ? '' : ' autofocus'}>
<div class="actions"><button type="submit">Sign in</button></div>
</form>`;
}

export function signInPage(opts: { client: ClientView; requestId: string; csrf: string; email?: string; error?: string }): string {
  return layout(
    'Sign in',
    `<h1 id="page-title">Sign in to connect ${clientLabel(opts.client)}</h1>
${signInForm(
  '/oauth/sign-in',
  { request: opts.requestId, csrf: opts.csrf },
  opts.email,
  opts.error,
  `<p>${clientLabel(opts.client)} wants to connect to your Media API workspace. Sign in with your workspace account; you will choose what it may do on the next page.</p>`,
)}
<p class="note">The app will return to <strong>${esc(opts.client.redirectHost)}</strong>. ${nameSource(opts.client)}</p>`,
  );
}

export interface ScopeView {
  scope: string;
  description: string;
}

export function consentPage(opts: {
  client: ClientView;
  requestId: string;
  csrf: string;
  memberEmail: string;
  workspace: string;
  plan: 'paid' | 'none';
  scopes: ScopeView[];
  checked?: string[];
  error?: string;
}): string {
  const checked = new Set(opts.checked ?? opts.scopes.map((s) => s.scope));
  const err = opts.error;
  const items = opts.scopes
    .map((s, i) => {
      const id = `scope-${i}`;
      return `<div class="scope"><input type="checkbox" id="${id}" name="scope" value="${esc(s.scope)}"${checked.has(s.scope) ? ' checked' : ''}${err ? ' aria-describedby="form-error"' : ''}${err && i === 0 ? ' autofocus' : ''}>
<label for="${id}"><code>${esc(s.scope)}</code>: ${esc(s.description)}</label></div>`;
    })
    .join('\n');
  return layout(
    'Allow access',
    `<h1 id="page-title">Allow ${clientLabel(opts.client)} to access ${esc(opts.workspace)}?</h1>
${err ? `<div class="alert" role="alert" id="form-error">${esc(err)}</div>` : ''}
<p class="who">Signed in as <strong>${esc(opts.memberEmail)}</strong>, workspace <strong>${esc(opts.workspace)}</strong>.</p>
${opts.plan === 'paid' ? '' : '<p class="alert">This workspace has no active paid plan: the app can connect, but paid tools will answer payment_required until the workspace subscribes.</p>'}
<form method="post" action="/oauth/consent">
${hidden('request', opts.requestId)}
${hidden('csrf', opts.csrf)}
<fieldset>
<legend>Permissions requested</legend>
${items}
</fieldset>
<p class="note">Allowing sends you back to <strong>${esc(opts.client.redirectHost)}</strong>. ${opts.client.idHost ? `${nameSource(opts.client)} ` : ''}The app acts on this workspace with the permissions you leave checked; paid tools spend the workspace's credits.</p>
<div class="actions">
<button type="submit" name="decision" value="approve"${err ? '' : ' autofocus'}>Allow access</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>
<form method="post" action="/oauth/sign-out">
${hidden('request', opts.requestId)}
${hidden('csrf', opts.csrf)}
<p class="note">Not ${esc(opts.memberEmail)}? <button type="submit" class="link">Sign in with another account</button></p>
</form>`,
  );
}

/** One connected app on the connections page. */
export interface ConnectionView {
  grantId: string;
  name: string | null;
  scopes: string[];
  connectedAt: string;
  lastUsedAt: string | null;
}

const day = (iso: string) => iso.slice(0, 10);

/** Sign-in form of the connections page (no authorization request involved). */
export function connectionsSignInPage(opts: { csrf: string; email?: string; error?: string }): string {
  return layout(
    'Connected apps',
    `<h1 id="page-title">Sign in to see your connected apps</h1>
${signInForm(
  '/oauth/connections',
  { action: 'sign-in', csrf: opts.csrf },
  opts.email,
  opts.error,
  '<p>Apps you allowed to use your Media API workspace (such as AI assistants connected over MCP) are listed once you sign in. You can disconnect any of them.</p>',
)}`,
  );
}

/** The member's connected apps, each with a Disconnect button. */
export function connectionsPage(opts: {
  csrf: string;
  memberEmail: string;
  workspace: string;
  connections: ConnectionView[];
  notice?: string;
  error?: string;
}): string {
  const items = opts.connections
    .map((c) => {
      const name = c.name ? esc(c.name) : 'Unnamed app';
      const headingId = `app-${esc(c.grantId)}`;
      return `<li class="who">
<h2 id="${headingId}">${name}</h2>
<p class="note">Connected ${day(c.connectedAt)}${c.lastUsedAt ? `, last signed in ${day(c.lastUsedAt)}` : ''}. Permissions: ${c.scopes.map((s) => `<code>${esc(s)}</code>`).join(', ')}.</p>
<form method="post" action="/oauth/connections">
${hidden('action', 'disconnect')}
${hidden('grant', c.grantId)}
${hidden('csrf', opts.csrf)}
<button type="submit" class="secondary" aria-label="Disconnect ${name}">Disconnect</button>
</form>
</li>`;
    })
    .join('\n');
  return layout(
    'Connected apps',
    `<h1 id="page-title">Connected apps</h1>
${opts.error ? `<div class="alert" role="alert">${esc(opts.error)}</div>` : ''}
${opts.notice ? `<p class="status" role="status">${esc(opts.notice)}</p>` : ''}
<p class="who">Signed in as <strong>${esc(opts.memberEmail)}</strong>, workspace <strong>${esc(opts.workspace)}</strong>.</p>
${
  opts.connections.length
    ? `<p>These apps may use the workspace with the permissions shown. Disconnecting one stops it at once; it would have to ask you again.</p>
<ul class="apps">
${items}
</ul>`
    : '<p>No app is connected with your account.</p>'
}
<form method="post" action="/oauth/connections">
${hidden('action', 'sign-out')}
${hidden('csrf', opts.csrf)}
<p class="note"><button type="submit" class="link">Sign out</button></p>
</form>`,
  );
}

export function errorPage(title: string, message: string): string {
  return layout(
    title,
    `<h1 id="page-title">${esc(title)}</h1>
<div class="alert" role="alert">${esc(message)}</div>
<p>Return to the app you were connecting and start the connection again.</p>`,
  );
}

// ------------------------------------------------------------------ social account connections

/** One connected social account on the social connections page. */
export interface SocialAccountView {
  id: string;
  platform: string;
  handle: string;
  displayName: string | null;
  status: string;
  statusReason: string | null;
  connectedAt: string;
}

/** A platform on the social connections page: a Connect link when the server has an app there. */
export interface SocialPlatformView {
  platform: string;
  label: string;
  configured: boolean;
}

/** Sign-in form of the social connections page (`connect`: the platform to go on to connecting). */
export function socialSignInPage(opts: { csrf: string; connect?: string; email?: string; error?: string }): string {
  return layout(
    'Social accounts',
    `<h1 id="page-title">Sign in to connect social accounts</h1>
${signInForm(
  '/social/connections',
  { action: 'sign-in', csrf: opts.csrf, ...(opts.connect ? { connect: opts.connect } : {}) },
  opts.email,
  opts.error,
  '<p>Connect the Instagram, TikTok, X, LinkedIn, Threads, YouTube, Pinterest and Facebook accounts your workspace publishes to. Sign in with your workspace account.</p>',
)}`,
  );
}

/** The workspace's connected social accounts (each with Disconnect) and a Connect link per platform. */
export function socialConnectionsPage(opts: {
  csrf: string;
  memberEmail: string;
  workspace: string;
  accounts: SocialAccountView[];
  platforms: SocialPlatformView[];
  notice?: string;
  error?: string;
}): string {
  const label = (p: string) => opts.platforms.find((x) => x.platform === p)?.label ?? p;
  const items = opts.accounts
    .map((a) => {
      const name = `${label(a.platform)} ${a.handle}`;
      return `<li class="who">
<h2>${esc(label(a.platform))}: ${esc(a.handle)}</h2>
<p class="note">${a.displayName ? `${esc(a.displayName)}. ` : ''}Connected ${day(a.connectedAt)}. ${
        a.status === 'connected'
          ? 'Status: connected.'
          : `Status: <strong>needs reconnecting</strong>${a.statusReason ? ` (${esc(a.statusReason)})` : ''}.`
      }</p>
<form method="post" action="/social/connections">
${hidden('action', 'disconnect')}
${hidden('account', a.id)}
${hidden('csrf', opts.csrf)}
<button type="submit" class="secondary" aria-label="Disconnect ${esc(name)}">Disconnect</button>
</form>
</li>`;
    })
    .join('\n');
  const connect = opts.platforms
    .map((p) =>
      p.configured
        ? `<li><a href="/social/connect/${esc(p.platform)}">Connect ${esc(p.label)}</a></li>`
        : `<li>${esc(p.label)}: not configured on this server</li>`,
    )
    .join('\n');
  return layout(
    'Social accounts',
    `<h1 id="page-title">Social accounts</h1>
${opts.error ? `<div class="alert" role="alert">${esc(opts.error)}</div>` : ''}
${opts.notice ? `<p class="status" role="status">${esc(opts.notice)}</p>` : ''}
<p class="who">Signed in as <strong>${esc(opts.memberEmail)}</strong>, workspace <strong>${esc(opts.workspace)}</strong>.</p>
${
  opts.accounts.length
    ? `<p>The workspace publishes to these accounts (through MCP). Disconnecting one deletes its tokens here; revoke the app at the platform too if you want it gone there.</p>
<ul class="apps" aria-label="Connected accounts">
${items}
</ul>`
    : '<p>No social account is connected to this workspace.</p>'
}
<h2>Connect an account</h2>
<ul aria-label="Platforms">
${connect}
</ul>
<form method="post" action="/social/connections">
${hidden('action', 'sign-out')}
${hidden('csrf', opts.csrf)}
<p class="note"><a href="/oauth/connections">Connected apps</a> · <button type="submit" class="link">Sign out</button></p>
</form>`,
  );
}

/** A connection that did not complete, with the way back. */
export function socialErrorPage(title: string, message: string): string {
  return layout(
    title,
    `<h1 id="page-title">${esc(title)}</h1>
<div class="alert" role="alert">${esc(message)}</div>
<p><a href="/social/connections">Back to social accounts</a></p>`,
  );
}
