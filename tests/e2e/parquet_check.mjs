// Reads a dataset of gpuperf's Parquet export with two independent readers and runs the
// queries of docs/parquet.md (tests/e2e/parquet_export_test.sh runs it from the directory
// the readers are installed in: scripts/install-sql-engines.sh).
//   node parquet_check.mjs DATASET DOCS.md > answers.json
// DuckDB makes one view per table and runs every "-- query: NAME" block of the doc as
// written; hyparquet opens every file of every table and reads every row. Both readers' row
// counts must equal the dataset's _gpuperf.json, and both readers must see the same values
// (per column: the sum of an integer column, the count and total length of a string column,
// the nulls), else it exits 1 saying which differ.
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
  const described = (await sql.runAndReadAll(`DESCRIBE ${table}`)).getRowObjects();
  const columns = described.map((r) => r.column_name);
  // What DuckDB reads in each column, to compare with hyparquet's values below.
  const duckValues = {};
  for (const { column_name: c, column_type: type } of described) {
    const text = type === 'VARCHAR';
    const summary = text ? `count("${c}")::VARCHAR || ' ' || coalesce(sum(length("${c}")), 0)::VARCHAR`
                         : `coalesce(sum("${c}")::HUGEINT, 0)::VARCHAR`;
    const row = (await sql.runAndReadAll(
      `SELECT ${summary} AS v, (count(*) - count("${c}"))::VARCHAR AS nulls FROM ${table}`)).getRowObjects()[0];
    duckValues[c] = `${row.v} nulls ${row.nulls}`;
  }
  const sums = Object.fromEntries(columns.map((c) => [c, { sum: 0n, count: 0n, length: 0n, nulls: 0n }]));

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
      for (const row of read) {
        for (const c of columns) {
          const v = row[c], s = sums[c];
          if (v === null || v === undefined) ++s.nulls;
          else if (typeof v === 'string') { ++s.count; s.length += BigInt([...v].length); }
          else s.sum += BigInt(v);
        }
      }
    }
  }
  for (const { column_name: c, column_type: type } of described) {
    const s = sums[c];
    const hyp = `${type === 'VARCHAR' ? `${s.count} ${s.length}` : s.sum} nulls ${s.nulls}`;
    if (hyp !== duckValues[c]) problems.push(`${table}.${c}: DuckDB reads ${duckValues[c]}, hyparquet ${hyp}`);
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
