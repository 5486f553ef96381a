// LinkedIn through its versioned REST API (every call with `LinkedIn-Version` and
// `X-Restli-Protocol-Version: 2.0.0`): images by POST /rest/images?action=initializeUpload → PUT
// the bytes to the returned uploadUrl; videos by POST /rest/videos?action=initializeUpload → PUT
// each part to its uploadInstructions URL (collecting the ETags) → POST
// /rest/videos?action=finalizeUpload → GET /rest/videos/{urn} until AVAILABLE; then POST
// /rest/posts (201, the post's URN in `x-restli-id`). The image/video URNs, uploaded parts and
// the post URN are saved as they come, so a resumed attempt never uploads or posts twice.
// Tokens: refreshed at POST https://www.linkedin.com/oauth/v2/accessToken.
import { PlatformError, refreshGrant, readRange, sleep, type Caller, type PublishTask, type SocialAdapter } from './http.ts';

export const LINKEDIN_API = 'https://api.linkedin.com';
export const LINKEDIN_OAUTH = 'https://www.linkedin.com';
/** The API version sent as LinkedIn-Version (YYYYMM). */
export const LINKEDIN_VERSION = '202505';
const HEADERS = { 'linkedin-version': LINKEDIN_VERSION, 'x-restli-protocol-version': '2.0.0' };
const PROCESSING_TIMEOUT_MS = 10 * 60_000;

interface MediaState {
  urn?: string;
  /** Video: the upload instructions and the ETags of parts done. */
  parts?: { url: string; first: number; last: number }[];
  upload_token?: string;
  etags?: string[];
  uploaded?: boolean;
  finalized?: boolean;
}

/** The author URN: the connection's platform account id, as given when it is a URN, else a person. */
export const authorUrn = (accountId: string) => (accountId.startsWith('urn:li:') ? accountId : `urn:li:person:${accountId}`);

async function waitAvailable(api: Caller, urn: string, signal: AbortSignal) {
  const deadline = Date.now() + PROCESSING_TIMEOUT_MS;
  for (;;) {
    const res = await api.call({ method: 'GET', url: `${LINKEDIN_API}/rest/videos/${encodeURIComponent(urn)}`, headers: HEADERS });
    const status = res.json?.status;
    if (status === 'AVAILABLE') return;
    if (status === 'PROCESSING_FAILED')
      throw new PlatformError(
        `linkedin could not process video ${urn}: ${res.json?.processingFailureReason ?? 'PROCESSING_FAILED'}`,
        400,
        false,
        undefined,
        'PROCESSING_FAILED',
      );
    if (Date.now() > deadline) throw new PlatformError(`linkedin did not finish processing video ${urn} in time`, 0, true);
    await sleep(2000, signal);
  }
}

type Media = PublishTask['media'][number];

/** One publication's uploads: the author, each medium's saved state, and how to save a medium's progress. */
interface Uploads {
  task: PublishTask;
  owner: string;
  media: MediaState[];
  saveMedia(i: number, patch: MediaState): Promise<void>;
}

export const linkedin: SocialAdapter = {
  async publish(task: PublishTask) {
    const { state } = task;
    const owner = authorUrn(task.account.platformAccountId);
    const media: MediaState[] = Array.isArray(state.media) ? state.media : [];
    const saveMedia = (i: number, patch: MediaState) => {
      media[i] = { ...media[i], ...patch };
      return task.save({ media });
    };
    if (!state.post_urn) {
      const uploads: Uploads = { task, owner, media, saveMedia };
      for (const [i, m] of task.media.entries()) {
        if (m.kind === 'image') await uploadImage(uploads, i, m);
        else await uploadVideo(uploads, i, m);
      }
      const urn = await createPost(uploads);
      await task.save({ post_urn: urn });
      state.post_urn = urn;
    }
    return { id: state.post_urn as string, url: `https://www.linkedin.com/feed/update/${state.post_urn}/` };
  },

  refresh: (api, client, refreshToken) =>
    refreshGrant(api, 'linkedin', `${LINKEDIN_OAUTH}/oauth/v2/accessToken`, refreshToken, client, 'form'),
};

/** An image: initializeUpload (once; its URN and upload URL saved), then its bytes PUT. */
async function uploadImage({ task, owner, media, saveMedia }: Uploads, i: number, m: Media): Promise<void> {
  const s = media[i] ?? {};
  if (s.uploaded) return;
  let urn = s.urn;
  let uploadUrl = (s.parts ?? [])[0]?.url;
  if (!urn || !uploadUrl) {
    const res = await task.api.call({
      method: 'POST',
      url: `${LINKEDIN_API}/rest/images?action=initializeUpload`,
      headers: { ...HEADERS, 'content-type': 'application/json' },
      body: JSON.stringify({ initializeUploadRequest: { owner } }),
    });
    urn = res.json?.value?.image;
    uploadUrl = res.json?.value?.uploadUrl;
    if (typeof urn !== 'string' || typeof uploadUrl !== 'string')
      throw new PlatformError('linkedin answered images initializeUpload without value.image and value.uploadUrl', res.status, true);
    await saveMedia(i, { urn, parts: [{ url: uploadUrl, first: 0, last: m.sizeBytes - 1 }] });
  }
  const bytes = await readRange(task.storage, m.storageKey, 0, m.sizeBytes - 1);
  await task.api.call({ method: 'PUT', url: uploadUrl, headers: { 'content-type': 'application/octet-stream' }, body: bytes });
  await saveMedia(i, { uploaded: true });
}

/** A video: initializeUpload (once), each part not done yet PUT (its ETag saved), finalizeUpload (once), then processed. */
async function uploadVideo(uploads: Uploads, i: number, m: Media): Promise<void> {
  const { task, media, saveMedia } = uploads;
  const s = media[i] ?? {};
  if (!s.urn || !s.parts) await initVideoUpload(uploads, i, m);
  const cur = media[i];
  const etags = [...(cur.etags ?? [])];
  for (let p = etags.length; p < cur.parts!.length; p++) {
    const part = cur.parts![p];
    const bytes = await readRange(task.storage, m.storageKey, part.first, part.last);
    const res = await task.api.call({
      method: 'PUT',
      url: part.url,
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    const etag = res.headers.get('etag');
    if (!etag) throw new PlatformError(`linkedin answered the upload of part ${p} without an ETag`, res.status, true);
    etags.push(etag);
    await saveMedia(i, { etags });
  }
  if (!cur.finalized) {
    await task.api.call({
      method: 'POST',
      url: `${LINKEDIN_API}/rest/videos?action=finalizeUpload`,
      headers: { ...HEADERS, 'content-type': 'application/json' },
      body: JSON.stringify({
        finalizeUploadRequest: { video: cur.urn, uploadToken: cur.upload_token ?? '', uploadedPartIds: etags },
      }),
    });
    await saveMedia(i, { finalized: true });
  }
  await waitAvailable(task.api, cur.urn!, task.signal);
}

/** Starts a video upload; saves its URN, the parts' upload instructions and the upload token. */
async function initVideoUpload({ task, owner, saveMedia }: Uploads, i: number, m: Media): Promise<void> {
  const res = await task.api.call({
    method: 'POST',
    url: `${LINKEDIN_API}/rest/videos?action=initializeUpload`,
    headers: { ...HEADERS, 'content-type': 'application/json' },
    body: JSON.stringify({
      initializeUploadRequest: { owner, fileSizeBytes: m.sizeBytes, uploadCaptions: false, uploadThumbnail: false },
    }),
  });
  const v = res.json?.value;
  if (typeof v?.video !== 'string' || !Array.isArray(v.uploadInstructions))
    throw new PlatformError('linkedin answered videos initializeUpload without value.video and value.uploadInstructions', res.status, true);
  const parts = v.uploadInstructions.map((p: any) => ({
    url: String(p.uploadUrl),
    first: Number(p.firstByte),
    last: Number(p.lastByte),
  }));
  await saveMedia(i, { urn: v.video, parts, upload_token: typeof v.uploadToken === 'string' ? v.uploadToken : '', etags: [] });
}

/** The post with the uploaded media (none: a text-only post); its URN. */
async function createPost({ task, owner, media }: Uploads): Promise<string> {
  const content =
    media.length > 1
      ? { multiImage: { images: media.map((s) => ({ id: s.urn, altText: '' })) } }
      : media.length
        ? { media: { id: media[0].urn } }
        : undefined;
  const res = await task.api.call({
    method: 'POST',
    url: `${LINKEDIN_API}/rest/posts`,
    headers: { ...HEADERS, 'content-type': 'application/json' },
    body: JSON.stringify({
      author: owner,
      commentary: task.caption,
      visibility: 'PUBLIC',
      distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
      content,
      lifecycleState: 'PUBLISHED',
      isReshareDisabledByAuthor: false,
    }),
  });
  const urn = res.headers.get('x-restli-id') ?? res.json?.id;
  if (typeof urn !== 'string' || !urn) throw new PlatformError('linkedin answered POST /rest/posts without x-restli-id', res.status, false);
  return urn;
}
