// esbuild settings of plotly.js's own build (its esbuild-config.js), for entry.js.
const fs = require("fs");
const path = require("path");
const esbuild = require("esbuild");

const out = process.argv[2];
const version = require("plotly.js/package.json").version;
const banner = `/**
* plotly.js (tempsup 2-D: scatter, bar, heatmap - minified) v${version}
* Copyright 2012-2026, Plotly, Inc.
* All rights reserved.
* Licensed under the MIT license
*/`;

esbuild
  .build({
    entryPoints: [path.join(__dirname, "entry.js")],
    outfile: out,
    format: "iife",
    globalName: "Plotly", // a classic script: window.Plotly
    bundle: true,
    minify: true,
    target: "es2016",
    alias: { regl: "@plotly/regl", stream: "stream-browserify" },
    loader: { ".css": "empty" }, // maplibre's stylesheet, for map traces only
    define: { global: "window", "define.amd": "false", "process.env.NODE_DEBUG": "false" },
    banner: { js: banner },
    legalComments: "eof",
    logLevel: "info",
  })
  .then(() => fs.chmodSync(out, 0o644))
  .catch(() => process.exit(1));
