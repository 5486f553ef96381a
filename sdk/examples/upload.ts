// A local file uploaded as multipart/form-data (POST /editor/media/file; up to 500 MB) and placed
// on a new editor video's timeline in the same call.
//   MEDIA_API_BASE_URL=… MEDIA_API_KEY=… node sdk/examples/upload.ts ./clip.mp4
import fs from 'node:fs/promises';
import path from 'node:path';
import { createEditorVideo, uploadEditorMediaFile } from '../src/index.ts';
import { connect, runIfMain } from './connect.ts';

export async function upload(file: string) {
  const client = connect();
  const { data: project } = await createEditorVideo({ client, throwOnError: true, body: { title: 'SDK upload example', aspect_ratio: '16:9' } });

  // A File (or Blob) becomes the `file` part; the other fields become form fields (placement as JSON).
  const bytes = await fs.readFile(file);
  const { data } = await uploadEditorMediaFile({
    client,
    throwOnError: true,
    body: {
      file: new File([bytes], path.basename(file)),
      title: 'Uploaded with the SDK',
      add_to_editor: true,
      video_id: project.id,
      placement: { from_seconds: 0, fit: 'contain' },
    },
  });
  return {
    video_id: data.video_id,
    version: data.version,
    media: { id: data.media.id, media_type: data.media.media_type, filename: data.media.filename, size_bytes: data.media.size_bytes, status: data.media.status },
    editor_item: data.editor_item && { item_id: data.editor_item.item_id, type: data.editor_item.type, media_id: data.editor_item.media_id },
  };
}

runIfMain(import.meta, () => {
  const file = process.argv[2];
  if (!file) throw new Error('usage: node sdk/examples/upload.ts FILE');
  return upload(file);
});
