#!/usr/bin/env python3
"""Writes __wasm_split_manifest.json as cargo-leptos --split does: for each
lazily loaded split, the files (stems) it needs. With it the server's
HydrationScripts adds <link rel=preload> for the chunks of the pages it
rendered, so the browser fetches them with the shell, not after it.
Usage: wasm_split_manifest.py SITE_PKG_DIR"""
import json
import os
import sys

from wasm_split import modules, splits

pkg = sys.argv[1]
manifest = {name: [f.removesuffix(".wasm") for f in files] for name, files in splits(modules(pkg)).items()}
with open(os.path.join(pkg, "__wasm_split_manifest.json"), "w", encoding="utf-8") as out:
    json.dump(manifest, out, indent=1, sort_keys=True)
