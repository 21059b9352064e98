// Checks every .cypher file under a folder with Neo4j's own Cypher parser and semantic analysis
// (the one behind Neo4j's editors), so a query that FalkorDB accepts but Neo4j 5 would reject
// fails CI here, where no Neo4j server can run.
//
// Also refuses a deleting statement that matches by a label scan (see labelScansInDeletes).
//
// Usage: node lint.mjs <folder> [--warnings]
// Prints each error as `file:line:col: message` and exits 1 if there was any.
// No schema is given, so "parameter not defined" errors and schema-based warnings are dropped;
// other warnings (deprecations, cartesian products) are printed only with --warnings.

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isNotParamError, lintCypherQuery } from '@neo4j-cypher/language-support';

const ERROR = 1; // LSP DiagnosticSeverity.Error

const args = process.argv.slice(2);
const showWarnings = args.includes('--warnings');
const roots = args.filter((arg) => !arg.startsWith('--'));
if (roots.length !== 1) {
  console.error('usage: node lint.mjs <folder> [--warnings]');
  process.exit(2);
}
const root = roots[0];

/** Every `.cypher` file under `dir`, sorted so the output is stable. */
function cypherFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return cypherFiles(path);
      return entry.isFile() && entry.name.endsWith('.cypher') ? [path] : [];
    });
}

/**
 * Splits a file into statements on `;`, skipping semicolons inside comments, strings and
 * backticked names (a `;` in a `//` comment must not cut a statement). Each statement keeps its
 * comments and its offset in the file, so reported positions are the file's own; chunks
 * holding only comments or blanks are dropped.
 */
function splitStatements(text) {
  const statements = [];
  let start = 0;
  let hasCode = false;
  const close = (end) => {
    if (hasCode) statements.push({ text: text.slice(start, end), offset: start });
    start = end + 1;
    hasCode = false;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (c === "'" || c === '"' || c === '`') {
      hasCode = true;
      i += 1;
      while (i < text.length && text[i] !== c) i += c !== '`' && text[i] === '\\' ? 2 : 1;
      i += 1;
    } else {
      if (c === ';') close(i);
      else if (!/\s/.test(c)) hasCode = true;
      i += 1;
    }
  }
  close(text.length);
  return statements;
}

/** 0-based line and column of `offset` in `text`. */
function lineAndColumn(text, offset) {
  const before = text.slice(0, offset);
  const line = before.split('\n').length - 1;
  return { line, column: offset - (before.lastIndexOf('\n') + 1) };
}

/** Diagnostics that only say the (absent) schema does not declare a parameter, label, etc. */
function needsSchema(diagnostic) {
  return (
    !isNotParamError(diagnostic) ||
    diagnostic.message.includes(' is not present in the database.')
  );
}

let files;
try {
  files = cypherFiles(root);
} catch (error) {
  console.error(`cypher-lint: cannot read ${root}: ${error.message}`);
  process.exit(2);
}
if (files.length === 0) {
  console.error(`cypher-lint: no .cypher files under ${root}`);
  process.exit(1);
}

/**
 * Statements that delete must reach every pattern through an index seek (a node with a
 * property map) or from a node already bound: FalkorDB 4.16.3 crashes (SIGSEGV in
 * UndoLog_DeleteNode) on a delete over a label scan after an earlier delete in a graph with
 * many nodes of another label, which every deleting canon statement avoids this way.
 * Returns `{line, message}` for each MATCH line that does neither.
 */
function labelScansInDeletes(statement) {
  const code = statement.replace(/\/\/[^\n]*/g, '');
  if (!/\bDELETE\b/i.test(code)) return [];
  const found = [];
  code.split('\n').forEach((line, at) => {
    const clause = /^\s*(?:OPTIONAL\s+)?MATCH\s+(.*)$/i.exec(line);
    if (!clause) return;
    const nodes = [...clause[1].matchAll(/\(([^()]*)\)/g)].map((node) => node[1]);
    const seeks = nodes.some((node) => node.includes('{') || /^\s*\w+\s*$/.test(node));
    if (!seeks) {
      found.push({
        line: at,
        message:
          'a statement that deletes must find each pattern by a property map (an index seek) or from a bound node, not a label scan (FalkorDB 4.16 crashes deleting after one)',
      });
    }
  });
  return found;
}

let errors = 0;
let statementCount = 0;
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const fromCwd = relative(process.cwd(), file);
  const name = fromCwd.startsWith('..') ? file : fromCwd;
  for (const statement of splitStatements(text)) {
    statementCount += 1;
    const origin = lineAndColumn(text, statement.offset);
    for (const scan of labelScansInDeletes(statement.text)) {
      console.log(`${name}:${origin.line + scan.line + 1}:1: ${scan.message}`);
      errors += 1;
    }
    const { diagnostics } = lintCypherQuery(statement.text, {}, { consoleCommandsEnabled: false });
    for (const diagnostic of diagnostics) {
      if (needsSchema(diagnostic)) continue;
      const isError = diagnostic.severity === ERROR;
      if (!isError && !showWarnings) continue;
      const { line, character } = diagnostic.range.start;
      const fileLine = origin.line + line + 1;
      const fileColumn = (line === 0 ? origin.column : 0) + character + 1;
      const kind = isError ? '' : 'warning: ';
      console.log(`${name}:${fileLine}:${fileColumn}: ${kind}${diagnostic.message}`);
      if (isError) errors += 1;
    }
  }
}

console.log(
  `cypher-lint: ${statementCount} statements in ${files.length} files, ${errors} error(s)`,
);
process.exit(errors > 0 ? 1 : 0);
