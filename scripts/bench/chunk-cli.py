"""The text-splitter side of scripts/bench/chunk-cli.sh, and the corpus it shares with edgerag.

  chunk-cli.py corpus OUT MB SRC...   copy up to MB megabytes of each language's files found under
                                      SRC (sorted, UTF-8, <= 1 MiB) to OUT/<language>/
  chunk-cli.py split DIR CAPACITY     chunk every file under DIR with semantic-text-splitter
                                      (CodeSplitter for code, MarkdownSplitter, TextSplitter) and
                                      print one JSON line per chunk, like `edgerag chunk --format jsonl`
  chunk-cli.py ratio HYPERFINE_JSON   print the edgerag / text-splitter throughput ratio
"""
import json
import os
import shutil
import sys

LANGUAGES = {".rs": "rust", ".py": "python", ".js": "javascript", ".md": "markdown"}
MAX_FILE = 1 << 20


def corpus(out, mb, sources):
    budget = int(float(mb) * 1e6)
    files = {lang: [] for lang in LANGUAGES.values()}
    for src in sources:
        for root, dirs, names in os.walk(src):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("target", "build", "dist"))
            for name in sorted(names):
                lang = LANGUAGES.get(os.path.splitext(name)[1])
                if lang:
                    files[lang].append(os.path.join(root, name))
    for lang, paths in files.items():
        dest = os.path.join(out, lang)
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        size = 0
        for n, path in enumerate(paths):
            if size >= budget:
                break
            try:
                data = open(path, "rb").read()
                data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if not data or len(data) > MAX_FILE or b"\0" in data:
                continue
            with open(os.path.join(dest, "%05d%s" % (n, os.path.splitext(path)[1])), "wb") as f:
                f.write(data)
            size += len(data)
        print("%s: %d files, %.1f MB" % (lang, len(os.listdir(dest)), size / 1e6), file=sys.stderr)


def split(directory, capacity):
    from semantic_text_splitter import CodeSplitter, MarkdownSplitter, TextSplitter
    import tree_sitter_javascript
    import tree_sitter_python
    import tree_sitter_rust

    capacity = int(capacity)
    splitters = {
        ".rs": CodeSplitter(tree_sitter_rust.language(), capacity),
        ".py": CodeSplitter(tree_sitter_python.language(), capacity),
        ".js": CodeSplitter(tree_sitter_javascript.language(), capacity),
        ".md": MarkdownSplitter(capacity),
    }
    text_splitter = TextSplitter(capacity)
    out = sys.stdout
    for root, dirs, names in os.walk(directory):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            splitter = splitters.get(os.path.splitext(name)[1], text_splitter)
            for index, (start, chunk) in enumerate(splitter.chunk_indices(text)):
                out.write(json.dumps({"path": path, "chunkIndex": index, "start": start, "text": chunk}))
                out.write("\n")


def ratio(path):
    results = {r["command"]: r for r in json.load(open(path))["results"]}
    ours, theirs = results["edgerag"], results["text-splitter"]
    r = theirs["mean"] / ours["mean"]
    print("edgerag %.3f s ± %.3f, text-splitter %.3f s ± %.3f: edgerag is %.2fx the throughput; goal ≥ 1.5x: %s"
          % (ours["mean"], ours["stddev"], theirs["mean"], theirs["stddev"], r, "met" if r >= 1.5 else "NOT MET"))


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    {"corpus": lambda: corpus(args[0], args[1], args[2:]),
     "split": lambda: split(*args),
     "ratio": lambda: ratio(*args)}[command]()
