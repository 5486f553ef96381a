// Editing an editor video: PATCH /editor/videos/{id} with a list of operations, applied together
// against the version you read (a concurrent edit makes it 409 instead of overwriting).
//   MEDIA_API_BASE_URL=… MEDIA_API_KEY=… node sdk/examples/edits.ts
import { applyEditorEdits, createEditorVideo, getEditorVideo } from '../src/index.ts';
import { connect, runIfMain } from './connect.ts';

export async function edits() {
  const client = connect();
  const { data: created } = await createEditorVideo({ client, throwOnError: true, body: { title: 'Draft', aspect_ratio: '9:16' } });
  const { data: video } = await getEditorVideo({ client, throwOnError: true, path: { id: created.id } });

  const { data: result } = await applyEditorEdits({
    client,
    throwOnError: true,
    path: { id: video.id },
    body: {
      expected_version: video.version,
      operations: [
        { type: 'set_title', title: 'Summer sale' },
        { type: 'add_text', text: '20% off everything', from_seconds: 0, duration_seconds: 3 },
      ],
    },
  });
  return {
    id: result.video.id,
    title: result.video.title,
    version_before: video.version,
    version: result.version,
    applied: result.applied_operations.map((op) => ({ index: op.index, type: op.type, item_ids: op.item_ids })),
    texts: result.video.items.filter((item) => item.type === 'text').map((item) => item.text),
  };
}

runIfMain(import.meta, edits);
