#!/usr/bin/env python3
"""lint-calls.py DIR...: fail when the files of a folder call each other in a
cycle (a.c calls a function defined in b.c, which calls back into a.c,
directly or through others). Within a folder, each file's callers must be
above it: a file reads on its own, top-down (docs/DESIGN.md). Function
definitions are found by their shape at column 0; calls by name."""
import glob, os, re, sys

DEF = re.compile(r'^[A-Za-z_][\w \*]*?\b([a-z]\w*)\(', re.M)

def cycles(folder):
    files = sorted(glob.glob(os.path.join(folder, '*.c')))
    defs = {}
    for f in files:
        text = open(f).read()
        for m in DEF.finditer(text):
            line_end = text.find('\n', m.end())
            line = text[m.start():line_end]
            if line.startswith('static') or line.rstrip().endswith(';'):
                continue
            defs.setdefault(m.group(1), f)
    graph = {f: set() for f in files}
    for f in files:
        text = open(f).read()
        for name, df in defs.items():
            if df != f and re.search(r'\b%s\s*\(' % re.escape(name), text):
                graph[f].add(df)
    found, color, stack = [], {}, []
    def dfs(u):
        color[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if color.get(v) == 1:
                found.append(stack[stack.index(v):] + [v])
            elif not color.get(v):
                dfs(v)
        color[u] = 2
        stack.pop()
    for u in files:
        if not color.get(u):
            dfs(u)
    return found

bad = 0
for d in sys.argv[1:]:
    for c in cycles(d):
        print('lint: files call each other in a cycle: ' + ' -> '.join(os.path.relpath(x) for x in c))
        bad = 1
sys.exit(bad)
