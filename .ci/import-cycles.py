#!/usr/bin/env python3
"""Reports import circles between the modules of a crate's `src/`.

A module is a file (`a/b.rs` is `a::b`, `a/mod.rs` is `a`). File X imports
module Y when one of its lines names `crate::Y...` (or `super::...`, resolved
from X's place), in a `use` line or in a path. `mod` declarations and `pub use`
re-exports in a directory's `mod.rs` do not count: they are how a parent
publishes its children, not a dependency on them.

Two levels are checked:
- top-level modules (`tasks`, `workflows`, `auth`, ...): the graph must have no
  cycle at all;
- files: no two files may import each other.

Usage: import-cycles.py CRATE_SRC_DIR [...]; exits 1 when it finds a circle.
"""
import re
import sys
from pathlib import Path

PATH_RE = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_GROUP_RE = re.compile(r"\buse\s+(crate|super)::\{([^;]*)\}", re.S)


def module_of(src: Path, file: Path) -> tuple:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//")[0] for line in text.splitlines())


def references(src: Path, file: Path, modules: set) -> set:
    me = module_of(src, file)
    is_mod_file = file.name in ("mod.rs", "lib.rs")
    text = strip_comments(file.read_text())
    if is_mod_file:
        # Re-exports and child declarations publish children; they are not deps.
        text = re.sub(r"\bpub(\([^)]*\))?\s+use\s+[^;]*;", "", text, flags=re.S)
    paths = []
    for root, group in USE_GROUP_RE.findall(text):
        for item in re.split(r",(?![^{]*\})", group):
            item = item.strip()
            if item:
                paths.append((root, "::" + item.split("::{")[0].split(" as ")[0]))
    text = USE_GROUP_RE.sub("", text)
    paths += PATH_RE.findall(text)
    found = set()
    for root, rest in paths:
        segs = [s for s in rest.split("::") if s]
        base = list(me) if root == "super" else []
        if root == "super":
            base = base[:-1]
        target = base + segs
        # Longest prefix that names a module file.
        for n in range(len(target), 0, -1):
            cand = tuple(target[:n])
            if cand in modules:
                if cand != me:
                    found.add(cand)
                break
    # A module referring to its own children is not a dependency.
    return {m for m in found if m[: len(me)] != me}


def find_cycle(graph: dict):
    color, stack = {}, []

    def visit(n):
        color[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if color.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if color.get(m) is None:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        color[n] = 2
        return None

    for n in sorted(graph):
        if color.get(n) is None:
            c = visit(n)
            if c:
                return c
    return None


def check(src: Path) -> int:
    files = sorted(src.rglob("*.rs"))
    modules = {module_of(src, f): f for f in files}
    file_graph = {m: references(src, f, set(modules)) for m, f in modules.items()}
    failures = 0
    for a, deps in sorted(file_graph.items()):
        for b in sorted(deps):
            if a < b and a in file_graph.get(b, ()):
                print(f"{src}: {'::'.join(a)} <-> {'::'.join(b)}")
                failures += 1
    top = {}
    for a, deps in file_graph.items():
        if not a:
            continue
        for b in deps:
            if b and b[0] != a[0]:
                top.setdefault(a[0], set()).add(b[0])
    graph = dict(top)
    while True:
        cycle = find_cycle(graph)
        if not cycle:
            break
        print(f"{src}: cycle {' -> '.join(cycle)}")
        failures += 1
        graph[cycle[-2]] = graph[cycle[-2]] - {cycle[-1]}
    return failures


def main() -> int:
    total = sum(check(Path(arg)) for arg in sys.argv[1:])
    if total:
        print(f"{total} import circle(s)")
        return 1
    print("no import circles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
