// Reads a dataset of gpuperf's Parquet export with two independent readers and runs the
// queries of docs/parquet.md (tests/e2e/parquet_export_test.sh runs it from the directory
// the readers are installed in: scripts/install-sql-engines.sh).
//   node parquet_check.mjs DATASET DOCS.md > answers.json
// DuckDB makes one view per table and runs every "-- query: NAME" block of the doc as
// written; hyparquet opens every file of every table and reads every row. Both readers' row
// counts must equal the dataset's _gpuperf.json, else it exits 1 saying which differ.
import { DuckDBInstance } from '@duckdb/node-api';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import fs from 'node:fs';
import path from 'node:path';

const [dataset, docs] = process.argv.slice(2);
const manifest = JSON.parse(fs.readFileSync(path.join(dataset, '_gpuperf.json'), 'utf8'));
const problems = [];

const db = await DuckDBInstance.create(':memory:');
const sql = await db.connect();
const counts = {};
for (const table of Object.keys(manifest.tables)) {
  const files = path.join(dataset, table, '*', '*.parquet').replaceAll("'", "''");
  await sql.run(`CREATE VIEW ${table} AS SELECT * FROM read_parquet('${files}', hive_partitioning = true)`);
  const duck = Number((await sql.runAndReadAll(`SELECT count(*) AS n FROM ${table}`)).getRowObjects()[0].n);
  const columns = (await sql.runAndReadAll(`DESCRIBE ${table}`)).getRowObjects().map((r) => r.column_name);

  let rows = 0;
  for (const part of fs.readdirSync(path.join(dataset, table))) {
    for (const name of fs.readdirSync(path.join(dataset, table, part))) {
      const file = await asyncBufferFromFile(path.join(dataset, table, part, name));
      const metadata = await parquetMetadataAsync(file);
      const read = await parquetReadObjects({ file, compressors });
      if (read.length !== Number(metadata.num_rows)) {
        problems.push(`${table}/${part}/${name}: hyparquet read ${read.length} rows of ${metadata.num_rows}`);
      }
      const names = metadata.schema.slice(1).map((s) => s.name);
      if (names.join() !== columns.join()) {
        problems.push(`${table}/${part}/${name}: columns ${names} differ from DuckDB's ${columns}`);
      }
      rows += read.length;
    }
  }
  counts[table] = { manifest: manifest.tables[table].rows, duckdb: duck, hyparquet: rows };
  if (duck !== manifest.tables[table].rows || rows !== manifest.tables[table].rows) {
    problems.push(`${table}: rows ${JSON.stringify(counts[table])}`);
  }
}

const answers = {};
const text = fs.readFileSync(docs, 'utf8');
for (const block of text.matchAll(/```sql\n-- query: (\w+)\n([\s\S]*?)```/g)) {
  const reader = await sql.runAndReadAll(block[2]);
  answers[block[1]] = reader.getRowObjectsJson();
}
if (Object.keys(answers).length < 3) problems.push(`only ${Object.keys(answers).length} queries found in ${docs}`);

console.log(JSON.stringify({ counts, answers }));
if (problems.length) {
  for (const p of problems) console.error(`parquet_check: ${p}`);
  process.exit(1);
}
