// The preview view (MCP Apps, io.modelcontextprotocol/ui) of get_video, get_generation,
// get_slideshow and get_editor_video: it receives the tool result from the host through the
// ext-apps App class (`McpApp`, bound by the inline script before this code; see ../apps.ts) and
// draws a player, a gallery or the read-only editor timeline from its structuredContent.
// Every value of the record reaches the page as text (textContent) or as a media URL checked to be
// on the service's own media origin; nothing is parsed as HTML. Browser code: plain JavaScript,
// inlined into the resource's HTML (the project's TypeScript has no DOM library).
const MEDIA_ORIGIN = document.querySelector('meta[name="media-origin"]').content;
const root = document.getElementById('view');

/** An element with a class and text (as text, never HTML). */
function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A media URL of this service (http(s), the media origin), else undefined. */
function mediaUrl(value) {
  if (typeof value !== 'string') return undefined;
  let url;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === MEDIA_ORIGIN ? url.href : undefined;
}

const str = (v) => (v === null || v === undefined ? '' : String(v));
const seconds = (v) => (typeof v === 'number' && Number.isFinite(v) ? `${Math.round(v * 10) / 10} s` : '');

function header(record, kind) {
  const title = str(record.title) || `${kind} ${str(record.id)}`;
  const facts = [str(record.status), seconds(record.duration_seconds)];
  if (record.status !== 'completed' && record.status !== 'ready' && typeof record.progress === 'number') facts.push(`${record.progress}%`);
  if (record.stage) facts.push(`stage ${str(record.stage)}`);
  root.append(el('h1', '', title), el('p', 'facts', facts.filter(Boolean).join(' · ')));
}

function note(text, error) {
  root.append(el('p', error ? 'note error' : 'note', text));
}

function player(url, label) {
  const video = el('video');
  video.controls = true;
  video.muted = true; // starts without sound, so a host may let it play inline
  video.playsInline = true;
  video.preload = 'auto';
  video.setAttribute('aria-label', label);
  video.src = url;
  return video;
}

/** A gallery of images: [{url, caption}] in order. */
function gallery(images, label) {
  const list = el('ol', 'gallery');
  list.setAttribute('aria-label', label);
  for (const image of images) {
    const li = el('li');
    const figure = el('figure');
    const url = mediaUrl(image.url);
    if (url) {
      const img = el('img');
      img.alt = image.caption || image.name;
      img.src = url;
      figure.append(img);
    } else figure.append(el('p', 'note', 'Not rendered yet.'));
    figure.append(el('figcaption', '', image.caption ? `${image.name}: ${image.caption}` : image.name));
    li.append(figure);
    list.append(li);
  }
  return list;
}

function showVideo(record) {
  header(record, 'Video');
  const url = mediaUrl(record.url);
  if (url) root.append(player(url, str(record.title) || 'Video'));
  else if (record.url) note('The video is not served from this service, so it is not shown here.', true);
  else if (record.kind === 'editor') note('An editor project, not rendered: get_editor_video shows its timeline.');
  else note(record.status === 'error' ? 'The video failed.' : 'The video is not ready yet.');
}

function showGeneration(record) {
  header(record, 'Generation');
  const type = str(record.output?.content_type);
  const url = mediaUrl(record.url);
  if (!url) note(record.status === 'error' ? 'The generation failed.' : 'The output is not ready yet.', record.status === 'error');
  else if (type.startsWith('video/')) root.append(player(url, `Generation ${str(record.id)}`));
  else root.append(gallery([{ url, name: `Generation ${str(record.id)}`, caption: str(record.type) }], 'Generated image'));
}

function showSlideshow(record) {
  header(record, 'Slideshow');
  const slides = Array.isArray(record.slides) ? record.slides : [];
  const images = slides.map((s, i) => ({
    url: s?.image_url,
    name: `Slide ${(typeof s?.index === 'number' ? s.index : i) + 1}`,
    caption: str(s?.text),
  }));
  if (images.length) root.append(gallery(images, 'Slides'));
  else note('No slide is rendered yet.');
  const url = mediaUrl(record.video_url);
  if (url) {
    const section = el('div', 'section');
    section.append(el('h2', 'facts', 'Carousel video'), player(url, 'Carousel video'));
    root.append(section);
  }
}

function itemLabel(item) {
  if (typeof item.text === 'string' && item.text) return item.text;
  if (item.type === 'captions' && Array.isArray(item.captions)) return `${item.captions.length} captions`;
  return str(item.type);
}

/** The editor timeline, read-only: one lane per track, each item placed by its start and length. */
function showTimeline(record) {
  header(record, 'Editor video');
  root.append(el('p', 'facts', `${str(record.width)}×${str(record.height)} · ${str(record.fps)} fps · version ${str(record.version)}`));
  const tracks = Array.isArray(record.tracks) ? [...record.tracks].sort((a, b) => b.order - a.order) : [];
  const items = Array.isArray(record.items) ? record.items : [];
  const total = Math.max(
    Number(record.duration_seconds) || 0,
    ...items.map((i) => Number(i.from_seconds) + Number(i.duration_seconds) || 0),
    0.01,
  );
  const list = el('ol', 'timeline');
  list.setAttribute('aria-label', 'Timeline (read-only)');
  for (const track of tracks) {
    const row = el('li', 'track');
    const lane = el('ul', 'lane');
    lane.setAttribute('aria-label', `Track ${str(track.name)}`);
    for (const item of items.filter((i) => i.track_id === track.track_id)) {
      const label = itemLabel(item);
      const li = el('li', `item ${str(item.type)}`, label);
      li.title = `${label} (${seconds(item.from_seconds)} + ${seconds(item.duration_seconds)})`;
      // CSSOM, not a style attribute: the page's policy allows no inline style attribute.
      li.style.left = `${(100 * Number(item.from_seconds)) / total}%`;
      li.style.width = `${(100 * Number(item.duration_seconds)) / total}%`;
      lane.append(li);
    }
    row.append(el('span', 'track-name', `${str(track.name)} (${str(track.type)})`), lane);
    list.append(row);
  }
  if (tracks.length) root.append(list);
  else note('The timeline is empty.');
}

const VIEWS = { video: showVideo, generation: showGeneration, slideshow: showSlideshow, editor_video: showTimeline };

function show(result) {
  root.replaceChildren();
  const record = result?.structuredContent;
  if (result?.isError) {
    note(str(record?.error?.message) || 'The tool call failed.', true);
    return;
  }
  const view = record && typeof record === 'object' ? VIEWS[record.object] : undefined;
  if (view) view(record);
  else note('Nothing to preview in this result.');
}

const app = new McpApp({ name: 'media-api-preview', version: '1.0.0' }, {});
app.ontoolresult = show;
app.connect().catch((err) => note(`Could not reach the host: ${str(err?.message)}`, true));
