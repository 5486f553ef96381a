// POST /editor/media: JSON with inline base64 (or a data URL), or multipart/form-data with a
// streamed file part; and the import of a file from an HTTPS URL (the MCP tool
// upload_editor_media_from_url). All end in media.ts's ingest() and projects.ts's commitUpload().
import fs from 'node:fs/promises';
import type { ValidateFunction } from 'ajv';
import type { components } from '../../../generated/openapi.d.ts';
import requestValidators from '../../../generated/request-validators.cjs';
import type { AppContext } from '../../context.ts';
import { badRequest, type FieldError } from '../../errors.ts';
import type { UploadPart } from '../../handlers.ts';
import {
  decodeInlineData,
  ingest,
  JSON_UPLOAD_MAX_BYTES,
  receiveBuffer,
  receiveStream,
  TooLarge,
  type EditorMediaType,
  type Received,
} from './media.ts';
import { checkUploadTarget, commitUpload } from './projects.ts';
import { fetchMedia, urlFilename } from './resources.ts';

type S = components['schemas'];

export async function uploadJson(ctx: AppContext, orgId: string, body: S['UploadEditorMediaRequest']): Promise<S['EditorMediaUpload']> {
  await checkUploadTarget(ctx, orgId, body);
  const { bytes, dataUrlType } = decodeInlineData(
    body.media.data,
    'body.media.data',
    Math.min(JSON_UPLOAD_MAX_BYTES, ctx.config.editorUploadMaxBytes),
  );
  if (dataUrlType && body.media.content_type && dataUrlType !== body.media.content_type.toLowerCase()) {
    throw badRequest(`Invalid request: the data URL says ${dataUrlType} but content_type says ${body.media.content_type}`, [
      { field: 'body.media.content_type', message: `disagrees with the data URL's type ${dataUrlType}` },
    ]);
  }
  const declared = body.media.content_type ?? dataUrlType;
  const { row } = await ingest(ctx, await receiveBuffer(ctx, bytes), {
    orgId,
    filename: body.media.filename,
    declaredType: declared,
    declaredField: body.media.content_type ? 'body.media.content_type' : 'body.media.data',
    mediaType: body.media_type,
    title: body.title,
    source: 'upload',
    field: 'body.media.data',
  });
  return commitUpload(ctx, orgId, row, body);
}

const validators = requestValidators as unknown as Record<string, ValidateFunction>;

/** Field errors of the multipart form, checked with the JSON body's compiled validator. */
function checkForm(form: Record<string, unknown>): FieldError[] {
  const v = validators.uploadEditorMedia;
  const candidate = { ...form };
  if (!v(candidate)) {
    return (v.errors ?? [])
      .filter((e) => !['oneOf', 'anyOf', 'if'].includes(e.keyword))
      .map((e) => {
        const path = e.instancePath
          .split('/')
          .slice(1)
          .map((p) => (/^\d+$/.test(p) ? `[${p}]` : p))
          .join('.')
          .replace(/\.\[/g, '[');
        let field = path ? `body.${path}` : 'body';
        let message = e.message ?? 'is invalid';
        if (e.keyword === 'additionalProperties') {
          field = `${field}.${(e.params as { additionalProperty: string }).additionalProperty}`.replace('body.body', 'body');
          message = 'is not a known field';
        } else if (e.keyword === 'required') {
          field = `${field}.${(e.params as { missingProperty: string }).missingProperty}`;
          message = 'is required';
        } else if (e.keyword === 'enum') {
          message = `must be one of: ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((x) => JSON.stringify(x)).join(', ')}`;
        }
        return { field: field.replace(/^body\.media(\.(filename|content_type|data))?$/, 'body.file'), message };
      });
  }
  return [];
}

/** The form's integer fields (as in the JSON body, each an IntegerId). */
const INTEGER_FIELDS = new Set(['video_id']);

/**
 * A form field's text as the JSON body would carry it. An integer is a number only when written
 * as JSON writes that number (no leading zero, sign, fraction or exponent, as path parameters are
 * read); anything else stays text, and checkForm() (the JSON body's validator: type and IntegerId
 * bounds) refuses it naming the field.
 */
const coerce = (name: string, value: string): unknown => {
  if (INTEGER_FIELDS.has(name)) {
    const n = Number(value);
    return Number.isInteger(n) && String(n) === value ? n : value;
  }
  if (name === 'add_to_editor') return value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;
  if (name === 'placement') {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
};

/**
 * The multipart form: fields media_type, title, video_id, add_to_editor, placement (JSON) and one
 * file part named `file`, streamed to a temporary file with a byte limit. Nothing is stored
 * unless every field is valid and the bytes are what they claim.
 */
export async function uploadMultipart(ctx: AppContext, orgId: string, parts: AsyncIterable<UploadPart>): Promise<S['EditorMediaUpload']> {
  const form: Record<string, unknown> = {};
  let received: (Received & { filename: string; mimetype: string }) | undefined;
  const max = ctx.config.editorUploadMaxBytes;
  try {
    for await (const part of parts) {
      if (part.kind === 'field') {
        if (part.name in form)
          throw badRequest(`Invalid request: body.${part.name} is given twice`, [
            { field: `body.${part.name}`, message: 'is given more than once' },
          ]);
        form[part.name] = coerce(part.name, part.value);
        continue;
      }
      if (part.name !== 'file') {
        part.stream.resume();
        throw badRequest(`Invalid request: the file part must be named "file", not "${part.name}"`, [
          { field: `body.${part.name}`, message: 'is not a known field; send the file as the part named file' },
        ]);
      }
      if (received) {
        part.stream.resume();
        throw badRequest('Invalid request: send exactly one file part', [{ field: 'body.file', message: 'is given more than once' }]);
      }
      try {
        const r = await receiveStream(ctx, part.stream, max);
        received = { ...r, filename: part.filename, mimetype: part.mimetype };
      } catch (err) {
        if (err instanceof TooLarge || (err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
          throw badRequest(
            `Invalid request: body.file is larger than ${max} bytes, the most an upload may have`,
            [{ field: 'body.file', message: `is larger than ${max} bytes` }],
            { limit_bytes: max },
          );
        }
        throw err;
      }
    }
    if (!received)
      throw badRequest('Invalid request: body.file is required (a file part named file)', [{ field: 'body.file', message: 'is required' }]);
    const errors = checkForm({ ...form, media: { filename: received.filename || 'upload', data: 'AAAA' } });
    if (errors.length) throw badRequest(`Invalid request: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`, errors);
    const target = form as {
      add_to_editor?: boolean;
      video_id?: number;
      placement?: S['EditorMediaPlacement'];
      media_type?: EditorMediaType;
      title?: string;
    };
    await checkUploadTarget(ctx, orgId, target);
    const declared = received.mimetype && received.mimetype !== 'application/octet-stream' ? received.mimetype : undefined;
    const { row } = await ingest(ctx, received, {
      orgId,
      filename: received.filename,
      declaredType: declared,
      declaredField: 'body.file',
      mediaType: target.media_type,
      title: target.title,
      source: 'upload',
      field: 'body.file',
    });
    received = undefined; // ingest removed the temporary file
    return await commitUpload(ctx, orgId, row, target);
  } finally {
    if (received) await fs.rm(received.file, { force: true });
  }
}

/** upload_editor_media_from_url (MCP): a direct HTTPS URL into the library, optionally placed. */
export async function importEditorMediaFromUrl(
  ctx: AppContext,
  orgId: string,
  args: S['UploadEditorMediaFromUrlInput'],
  signal?: AbortSignal,
): Promise<S['EditorMediaUpload']> {
  await checkUploadTarget(ctx, orgId, args);
  const bytes = await fetchMedia(ctx, args.url, 'arguments.url', signal);
  const { row } = await ingest(ctx, await receiveBuffer(ctx, bytes), {
    orgId,
    filename: urlFilename(args.url),
    mediaType: args.media_type,
    title: args.title,
    source: 'url',
    field: 'arguments.url',
  });
  return commitUpload(ctx, orgId, row, args);
}
