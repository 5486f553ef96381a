// Integer ids and their columns: after every migration no id column is narrower than bigint (the
// contract's ids go up to 2^53−1), and src/db/ids.ts refuses, before any SQL, each value a column
// cannot hold, with the caller's error.
import t from 'tap';
import { connect } from '../../src/db/client.ts';
import { holdsId, rowId } from '../../src/db/ids.ts';
import { brandKits, customAvatars, editorVideos, organizations, videos } from '../../src/db/schema/index.ts';
import { createTestDatabase } from '../helpers/db.ts';

const url = await createTestDatabase(t);
const { sql } = connect(url, 5);
t.teardown(() => sql.end());

t.test('every integer id column of the migrated database is a bigint', async (t) => {
  const narrow = await sql`
    select table_name || '.' || column_name as col, data_type as type from information_schema.columns
    where table_schema = 'public' and data_type in ('smallint', 'integer') and (column_name = 'id' or column_name like '%\_id')
    order by 1`;
  t.same([...narrow], [], 'no id column is integer or smallint');
  const [seq] = await sql`select data_type::text as type from pg_sequences where sequencename = 'brand_kits_id_seq'`;
  t.equal(seq.type, 'bigint', "brand_kits' identity sequence is bigint");
});

t.test('holdsId: an integer from 1 to the largest value the column holds as a JavaScript number', async (t) => {
  for (const column of [brandKits.id, videos.id, editorVideos.videoId]) {
    for (const id of [1, 2147483647, 2147483648, Number.MAX_SAFE_INTEGER]) t.ok(holdsId(column, id), `${column.name}: ${id}`);
    for (const id of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, Infinity, NaN, '1', 1n, null, undefined])
      t.notOk(holdsId(column, id), `${column.name}: ${typeof id} ${String(id)} is refused`);
  }
  // A 32-bit column (organizations.credits is one) holds nothing past 2^31−1.
  t.ok(holdsId(organizations.credits, 2147483647));
  t.notOk(holdsId(organizations.credits, 2147483648), 'an integer column refuses 2^31');
  t.throws(() => holdsId(customAvatars.id, 1), /not an integer id column/, 'a uuid column is no integer id column');
});

t.test("rowId: the id, or the caller's error thrown before any SQL", async (t) => {
  t.equal(
    rowId(brandKits.id, 2147483648, () => new Error('missing')),
    2147483648,
  );
  t.throws(() => rowId(brandKits.id, 0, () => new Error('missing')), /missing/);
  t.throws(() => rowId(organizations.credits, 2147483648, () => new Error('missing')), /missing/);
});
