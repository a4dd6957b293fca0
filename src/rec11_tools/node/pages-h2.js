// Serve a built site over HTTP/2 with TLS, as GitHub Pages serves it, for Lighthouse.
//
//   node pages-h2.js SITE_DIR CERT.pem KEY.pem GZIP_TYPES
//
// Prints the port it listens on (127.0.0.1) on one line, then serves until it is killed.
// Files whose extension is in GZIP_TYPES (comma-separated: ".html,.css,...") are gzipped
// when the browser accepts it, as rec11_tools.pagespeed.PagesLikeHandler does over
// HTTP/1.1. The protocol matters to Lighthouse's simulated network: over HTTP/1.1 it gives
// each origin six connections, and each request waits a round trip for one; over HTTP/2
// every request shares one connection that is already open.
"use strict";
const fs = require("fs");
const http2 = require("http2");
const path = require("path");
const zlib = require("zlib");

const [siteArg, certFile, keyFile, gzipTypes] = process.argv.slice(2);
if (gzipTypes === undefined) {
  process.stderr.write("usage: node pages-h2.js SITE_DIR CERT.pem KEY.pem GZIP_TYPES\n");
  process.exit(2);
}
const site = path.resolve(siteArg);

const GZIP = new Set(gzipTypes.split(","));
const TYPES = {
  ".html": "text/html", ".css": "text/css", ".js": "text/javascript", ".json": "application/json",
  ".svg": "image/svg+xml", ".png": "image/png", ".woff": "font/woff", ".woff2": "font/woff2",
  ".ttf": "font/ttf", ".otf": "font/otf", ".eot": "application/vnd.ms-fontobject",
  ".txt": "text/plain", ".md": "text/markdown", ".ipynb": "application/x-ipynb+json",
  ".pdf": "application/pdf", ".inv": "application/octet-stream", ".xml": "text/xml",
};
const gzipped = new Map(); // path -> compressed body: each file is compressed once

function fileFor(urlPath) {
  const file = path.join(site, decodeURIComponent(urlPath));
  if (file !== site && !file.startsWith(site + path.sep)) return null; // outside the site
  try {
    return fs.statSync(file).isDirectory() ? path.join(file, "index.html") : file;
  } catch {
    return null;
  }
}

const server = http2.createSecureServer(
  { cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) },
  (req, res) => {
    const file = fileFor(new URL(req.url, "https://127.0.0.1").pathname);
    let body;
    try {
      body = fs.readFileSync(file);
    } catch {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found\n");
      return;
    }
    const ext = path.extname(file);
    const headers = { "content-type": TYPES[ext] || "application/octet-stream" };
    if (GZIP.has(ext) && /\bgzip\b/.test(req.headers["accept-encoding"] || "")) {
      if (!gzipped.has(file)) gzipped.set(file, zlib.gzipSync(body, { level: 6 }));
      body = gzipped.get(file);
      headers["content-encoding"] = "gzip";
    }
    headers["content-length"] = body.length;
    res.writeHead(200, headers);
    res.end(body);
  },
);
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
